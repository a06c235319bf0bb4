//! The runbooks API under `/api/v1/runbooks`.

use axum::Json;
use axum::extract::Path;
use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::actions;
use super::db::{self, Runbook};
use super::domain::RunbookDraft;
use crate::auth::domain::UserRole;
use crate::error::{AppError, AppResult};
use crate::http::access::{Responder, Viewer};
use crate::teams;

/// What the team rule calls a runbook in a refusal.
const WHAT: &str = "runbook";
use crate::http::extract::{ApiJson, ApiQuery, IfMatch, parse_id, query_text, with_etag};
use crate::http::request::ApiRequest;
use crate::http::write;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RunbookQuery {
    /// One service's runbooks, by name
    pub service: Option<String>,
    /// One routing rule's runbooks
    pub rule_id: Option<String>,
    /// The runbooks of one team's services and rules, by its slug
    pub team: Option<String>,
}

impl RunbookQuery {
    pub async fn list(&self, e: impl sqlx::PgExecutor<'_>) -> AppResult<Vec<Runbook>> {
        let rule_id = query_text(&self.rule_id)
            .map(|r| {
                r.parse::<i64>()
                    .map_err(|_| AppError::invalid("rule_id", "a routing rule's id, a number"))
            })
            .transpose()?;
        let service = query_text(&self.service);
        let team = query_text(&self.team);
        let filter = db::Filter {
            service: service.as_deref(),
            rule_id,
            id: None,
            team: team.as_deref(),
        };
        db::list(e, filter).await
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct RunbookList {
    pub items: Vec<Runbook>,
}

/// Runbooks: services' first (by service), then routing rules' (in the rules' order).
#[utoipa::path(get, path = "/api/v1/runbooks", operation_id = "listRunbooks", tag = "runbooks", params(RunbookQuery),
    responses((status = 200, description = "OK", body = RunbookList), (status = 422, description = "A bad filter", body = crate::error::ErrorBody)))]
pub async fn list(
    ApiRequest(state, _): ApiRequest<Viewer>,
    ApiQuery(q): ApiQuery<RunbookQuery>,
) -> AppResult<Json<RunbookList>> {
    Ok(Json(RunbookList {
        items: q.list(&state.pool).await?,
    }))
}

/// Add a runbook to a service or a routing rule.
#[utoipa::path(post, path = "/api/v1/runbooks", operation_id = "createRunbook", tag = "runbooks",
    request_body = RunbookDraft,
    responses((status = 201, description = "Created; Location names it", body = Runbook),
              (status = 422, description = "A field is wrong (no owner or two, an unknown service or rule, a long step …), named in details", body = crate::error::ErrorBody),
              crate::http::openapi::NotYours))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<RunbookDraft>,
) -> AppResult<Response> {
    let to = actions::team_of(&mut *state.pool.acquire().await?, &body.value).await?;
    teams::actions::may_configure(&state, &auth, WHAT, &[to], UserRole::Admin).await?;
    let r = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::create(tx, &auth.actor, &body.value))
    })
    .await?;
    let mut res = with_etag(StatusCode::CREATED, r.version, &r);
    if let Ok(v) = HeaderValue::from_str(&format!("/api/v1/runbooks/{}", r.id)) {
        res.headers_mut().insert(LOCATION, v);
    }
    Ok(res)
}

/// One runbook.
#[utoipa::path(get, path = "/api/v1/runbooks/{id}", operation_id = "getRunbook", tag = "runbooks",
    params(("id" = i64, Path, description = "The runbook's id")),
    responses((status = 200, description = "With an ETag header", body = Runbook), crate::http::openapi::NotFound))]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let r = db::get(&state.pool, parse_id(&id, "runbook")?).await?;
    Ok(with_etag(StatusCode::OK, r.version, &r))
}

/// Replace a runbook (name, link, owner and steps). Incidents keep the checks of the positions
/// that remain.
#[utoipa::path(put, path = "/api/v1/runbooks/{id}", operation_id = "updateRunbook", tag = "runbooks",
    params(("id" = i64, Path, description = "The runbook's id"), ("If-Match" = String, Header)),
    request_body = RunbookDraft,
    responses((status = 200, description = "OK", body = Runbook), crate::http::openapi::NotYours, crate::http::openapi::Replacing))]
pub async fn update(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<RunbookDraft>,
) -> AppResult<Response> {
    let id = parse_id(&id, "runbook")?;
    let current = db::get(&state.pool, id).await?;
    let to = actions::team_of(&mut *state.pool.acquire().await?, &body.value).await?;
    let owners = [current.team_id, to];
    teams::actions::may_configure(&state, &auth, WHAT, &owners, UserRole::Admin).await?;
    // Checked against this version: a change of owner meanwhile makes it stale, not allowed.
    let version = AppError::checked_version(version, current.version)?;
    write::versioned(&state.pool, StatusCode::OK, |tx, _| {
        Box::pin(actions::update(tx, &auth.actor, id, version, &body.value))
    })
    .await
}

/// Delete a runbook, and every incident's checks of it.
#[utoipa::path(delete, path = "/api/v1/runbooks/{id}", operation_id = "deleteRunbook", tag = "runbooks",
    params(("id" = i64, Path, description = "The runbook's id")),
    responses(crate::http::openapi::Deleting, crate::http::openapi::NotYours))]
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "runbook")?;
    let owner = [db::get(&state.pool, id).await?.team_id];
    teams::actions::may_configure(&state, &auth, WHAT, &owner, UserRole::Admin).await?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, id))
    })
    .await
}

impl write::Versioned for Runbook {
    fn version(&self) -> i32 {
        self.version
    }
}
