//! `/api/v1/routing-rules` for admins: the ordered list, adding, replacing, deleting,
//! reordering, and previewing a draft over last week's alerts.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::actions::{self, Preview, RuleDraft};
use super::db::{self, RuleRecord};
use crate::auth::domain::UserRole;
use crate::error::{AppError, AppResult};
use crate::http::access::{Admin, Auth, Responder};
use crate::http::extract::parse_id;
use crate::http::extract::{ApiJson, ApiQuery, IfMatch};
use crate::http::request::ApiRequest;
use crate::http::write;
use crate::state::AppState;
use crate::teams;
use crate::teams::domain::TeamQuery;

/// What the team rule calls a rule in a refusal.
const WHAT: &str = "routing rule";

#[derive(Serialize, utoipa::ToSchema)]
pub struct RuleList {
    /// In the order they are tried; the default rule is last
    pub items: Vec<RuleRecord>,
}

/// The rules in the order they are tried.
#[utoipa::path(get, path = "/api/v1/routing-rules", operation_id = "listRoutingRules", tag = "alerts",
    params(TeamQuery),
    responses((status = 200, description = "OK", body = RuleList)))]
pub async fn list(
    State(state): State<AppState>,
    _auth: Auth<Responder>,
    ApiQuery(q): ApiQuery<TeamQuery>,
) -> AppResult<Json<RuleList>> {
    let mut items = db::list(&state.pool).await?;
    items.retain(|r| q.keeps(r.team.as_deref()));
    Ok(Json(RuleList { items }))
}

/// Add a rule, tried after the others and before the default one.
#[utoipa::path(post, path = "/api/v1/routing-rules", operation_id = "createRoutingRule", tag = "alerts", request_body = RuleDraft,
    responses((status = 201, description = "Created", body = RuleRecord), (status = 422, description = "A condition or field is wrong; details.fields names it", body = crate::error::ErrorBody), crate::http::openapi::NotYours))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<RuleDraft>,
) -> AppResult<Response> {
    let to = teams::actions::named(&state.pool, &body.value.team).await?;
    teams::actions::may_configure(&state, &auth, WHAT, &[to], UserRole::Admin).await?;
    if !auth.user.role.allows(UserRole::Admin) {
        actions::check_team_rule(&state.pool, &body.value, to).await?;
    }
    write::versioned(&state.pool, StatusCode::CREATED, |tx, _| {
        Box::pin(actions::create(tx, &auth.actor, &body.value))
    })
    .await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Order {
    /// Every rule id but the default rule's, in the order they should be tried
    pub order: Vec<i64>,
}

/// Reorder the rules.
#[utoipa::path(put, path = "/api/v1/routing-rules", operation_id = "reorderRoutingRules", tag = "alerts", request_body = Order,
    responses((status = 200, description = "The rules in their new order", body = RuleList), (status = 422, description = "The order leaves out or repeats a rule", body = crate::error::ErrorBody)))]
pub async fn reorder(
    ApiRequest(state, auth): ApiRequest<Admin>,
    body: ApiJson<Order>,
) -> AppResult<Json<RuleList>> {
    let items = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::reorder(tx, &auth.actor, &body.value.order))
    })
    .await?;
    Ok(Json(RuleList { items }))
}

/// Replace a rule (If-Match with its ETag).
#[utoipa::path(put, path = "/api/v1/routing-rules/{id}", operation_id = "replaceRoutingRule", tag = "alerts", request_body = RuleDraft,
    params(("id" = i64, Path, description = "Rule id"), ("If-Match" = String, Header, description = "The rule's ETag")),
    responses((status = 200, description = "OK", body = RuleRecord), crate::http::openapi::NotFound,
              (status = 412, description = "Changed since you read it", body = crate::error::ErrorBody), (status = 422, description = "A condition or field is wrong", body = crate::error::ErrorBody),
              (status = 428, description = "If-Match is missing", body = crate::error::ErrorBody), crate::http::openapi::NotYours))]
pub async fn update(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<RuleDraft>,
) -> AppResult<Response> {
    let id = parse_id(&id, "routing rule")?;
    let current = actions::find(&state.pool, id).await?;
    let to = teams::actions::named(&state.pool, &body.value.team).await?;
    let owners = [current.team_id, to];
    teams::actions::may_configure(&state, &auth, WHAT, &owners, UserRole::Admin).await?;
    if !auth.user.role.allows(UserRole::Admin) {
        actions::check_team_rule(&state.pool, &body.value, to).await?;
    }
    // Checked against this version: a change of owner meanwhile makes it stale, not allowed.
    let version = AppError::checked_version(version, current.version)?;
    write::versioned(&state.pool, StatusCode::OK, |tx, _| {
        Box::pin(actions::update(tx, &auth.actor, id, version, &body.value))
    })
    .await
}

/// Delete a rule (not the default one).
#[utoipa::path(delete, path = "/api/v1/routing-rules/{id}", operation_id = "deleteRoutingRule", tag = "alerts",
    params(("id" = i64, Path, description = "Rule id")),
    responses(crate::http::openapi::Deleting, (status = 409, description = "The default rule stays", body = crate::error::ErrorBody), crate::http::openapi::NotYours))]
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "routing rule")?;
    let current = actions::find(&state.pool, id).await?;
    let owner = [current.team_id];
    teams::actions::may_configure(&state, &auth, WHAT, &owner, UserRole::Admin).await?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, id))
    })
    .await
}

/// What a draft rule would have done to the alerts of the last 7 days. Nothing is saved.
#[utoipa::path(post, path = "/api/v1/routing-rules/preview", operation_id = "previewRoutingRule", tag = "alerts", request_body = RuleDraft,
    responses((status = 200, description = "OK", body = Preview), (status = 422, description = "A condition or field is wrong", body = crate::error::ErrorBody)))]
pub async fn preview(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<RuleDraft>,
) -> AppResult<Json<Preview>> {
    let mut conn = state.pool.acquire().await?;
    let sees = crate::incident_ref::domain::SeenBy::of(&auth.user);
    Ok(Json(actions::preview(&mut conn, &body.value, sees).await?))
}

impl write::Versioned for RuleRecord {
    fn version(&self) -> i32 {
        self.version
    }
}
