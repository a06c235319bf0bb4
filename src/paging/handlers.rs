//! The paging API: `/api/v1/escalation-policies` (managers write), a service's policy, and
//! `/api/v1/on-call` (who each service's first step pages now).

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::actions;
use super::db::{self, StoredPolicy};
use super::domain::PolicyDraft;
use crate::auth::domain::UserRole;
use crate::error::{AppError, AppResult};
use crate::http::access::{Manager, Responder, Viewer};
use crate::teams;
use crate::teams::domain::TeamQuery;

/// What the team rule calls a policy in a refusal.
const WHAT: &str = "escalation policy";
use crate::http::extract::{ApiJson, ApiQuery, IfMatch, parse_id, with_etag};
use crate::http::request::ApiRequest;
use crate::http::write;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EscalationPolicyList)]
pub struct PolicyList {
    pub items: Vec<StoredPolicy>,
}

/// Every escalation policy, with the services that point at it.
#[utoipa::path(get, path = "/api/v1/escalation-policies", operation_id = "listEscalationPolicies", tag = "paging",
    params(TeamQuery),
    responses((status = 200, description = "By name", body = PolicyList)))]
pub async fn list(
    ApiRequest(state, _): ApiRequest<Viewer>,
    ApiQuery(q): ApiQuery<TeamQuery>,
) -> AppResult<Json<PolicyList>> {
    let mut items = db::list(&state.pool, None).await?;
    items.retain(|p| q.keeps(p.team.as_deref()));
    Ok(Json(PolicyList { items }))
}

/// Add an escalation policy: ordered steps, each paging people, schedules' on-call people and
/// channels, then waiting `delay_minutes` for an acknowledgement before the next.
#[utoipa::path(post, path = "/api/v1/escalation-policies", operation_id = "createEscalationPolicy", tag = "paging",
    request_body = PolicyDraft,
    responses((status = 201, description = "Created, with an ETag", body = StoredPolicy),
              (status = 409, description = "The name is taken", body = crate::error::ErrorBody),
              (status = 422, description = "A field is wrong (no steps, a delay out of range, an unknown person, schedule or channel), named in details", body = crate::error::ErrorBody),
              crate::http::openapi::NotYours))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<PolicyDraft>,
) -> AppResult<Response> {
    let to = teams::actions::named(&state.pool, &body.value.team).await?;
    teams::actions::may_configure(&state, &auth, WHAT, &[to], UserRole::Manager).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let id = actions::create(&mut tx, &auth.actor, &body.value).await?;
    let p = db::get(&mut *tx, id).await?;
    tx.commit().await?;
    Ok(with_etag(StatusCode::CREATED, p.version, &p))
}

/// One escalation policy.
#[utoipa::path(get, path = "/api/v1/escalation-policies/{id}", operation_id = "getEscalationPolicy", tag = "paging",
    params(("id" = i64, Path, description = "The policy's id")),
    responses((status = 200, description = "With an ETag", body = StoredPolicy), crate::http::openapi::NotFound))]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let p = db::get(&state.pool, parse_id(&id, "escalation policy")?).await?;
    Ok(with_etag(StatusCode::OK, p.version, &p))
}

/// Replace an escalation policy (If-Match with its ETag). Escalations already running keep the
/// steps they started with.
#[utoipa::path(put, path = "/api/v1/escalation-policies/{id}", operation_id = "updateEscalationPolicy", tag = "paging",
    params(("id" = i64, Path, description = "The policy's id"), ("If-Match" = String, Header)),
    request_body = PolicyDraft,
    responses((status = 200, description = "OK", body = StoredPolicy), crate::http::openapi::NotYours, crate::http::openapi::Replacing))]
pub async fn update(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<PolicyDraft>,
) -> AppResult<Response> {
    let id = parse_id(&id, "escalation policy")?;
    let current = db::get(&state.pool, id).await?;
    let to = teams::actions::named(&state.pool, &body.value.team).await?;
    let owners = [current.team_id, to];
    teams::actions::may_configure(&state, &auth, WHAT, &owners, UserRole::Manager).await?;
    // Checked against this version: a change of owner meanwhile makes it stale, not allowed.
    let version = AppError::checked_version(version, current.version)?;
    write::versioned(&state.pool, StatusCode::OK, |tx, _| {
        Box::pin(actions::update(tx, &auth.actor, id, version, &body.value))
    })
    .await
}

/// Delete an escalation policy; services pointing at it then page nobody.
#[utoipa::path(delete, path = "/api/v1/escalation-policies/{id}", operation_id = "deleteEscalationPolicy", tag = "paging",
    params(("id" = i64, Path, description = "The policy's id")),
    responses(crate::http::openapi::Deleting, crate::http::openapi::NotYours))]
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "escalation policy")?;
    let current = db::get(&state.pool, id).await?;
    let owner = [current.team_id];
    teams::actions::may_configure(&state, &auth, WHAT, &owner, UserRole::Manager).await?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, id))
    })
    .await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Assignment {
    /// The policy's name; null for none
    pub escalation_policy: Option<String>,
}

/// Point a service at an escalation policy (or at none): its new incidents page by it.
#[utoipa::path(put, path = "/api/v1/services/{name}/escalation-policy", operation_id = "setServiceEscalationPolicy", tag = "paging",
    params(("name" = String, Path, description = "The service's name")), request_body = Assignment,
    responses((status = 204, description = "Set"), (status = 404, description = "No such service", body = crate::error::ErrorBody),
              (status = 422, description = "No such policy", body = crate::error::ErrorBody)))]
pub async fn assign(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path(name): Path<String>,
    body: ApiJson<Assignment>,
) -> AppResult<StatusCode> {
    let mut tx = crate::transaction::begin(&state.pool).await?;
    actions::assign(
        &mut tx,
        &auth.actor,
        &name,
        body.value.escalation_policy.as_deref(),
    )
    .await?;
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct OnCallNow {
    pub items: Vec<actions::ServiceOnCall>,
}

/// Who each service's escalation policy pages first, right now.
#[utoipa::path(get, path = "/api/v1/on-call", operation_id = "listOnCallNow", tag = "paging",
    responses((status = 200, description = "By service", body = OnCallNow)))]
pub async fn on_call_now(ApiRequest(state, _): ApiRequest<Viewer>) -> AppResult<Json<OnCallNow>> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(OnCallNow {
        items: actions::on_call_now(&mut conn).await?,
    }))
}

impl write::Versioned for StoredPolicy {
    fn version(&self) -> i32 {
        self.version
    }
}
