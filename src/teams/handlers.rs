//! The teams API under `/api/v1/teams`: managers and admins make and delete teams; a team's
//! leads (and its members, where the team allows it) change it and its membership.

use axum::Json;
use axum::extract::Path;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::actions::{self, Asking};
use super::db::{self, Team};
use super::domain::{TeamDraft, TeamRole};
use crate::error::AppResult;
use crate::http::access::{Auth, Manager, MinRole, Responder, Viewer};
use crate::http::extract::{ApiJson, IdempotencyKey, IfMatch, with_etag};
use crate::http::request::ApiRequest;
use crate::http::write;
use crate::idempotency;
use crate::state::AppState;

/// Who is asking, as the team rule reads them.
pub fn asking<R: MinRole>(auth: &Auth<R>) -> Asking<'_> {
    Asking {
        role: auth.user.role,
        handle: Some(&auth.user.handle),
    }
}

/// The team, if the person may change it; else 403 naming it, tallied in the audit log.
pub async fn managed<R: MinRole>(state: &AppState, auth: &Auth<R>, slug: &str) -> AppResult<Team> {
    let team = db::get(&state.pool, slug).await?;
    match actions::check_may_lead(&team, &asking(auth)) {
        Ok(()) => Ok(team),
        Err(refused) => Err(auth.refused(state, refused).await),
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TeamList {
    pub items: Vec<Team>,
}

/// Every team, by name, with its members.
#[utoipa::path(get, path = "/api/v1/teams", operation_id = "listTeams", tag = "teams",
    responses((status = 200, description = "By name", body = TeamList)))]
pub async fn list(ApiRequest(state, _): ApiRequest<Viewer>) -> AppResult<Json<TeamList>> {
    Ok(Json(TeamList {
        items: db::list(&state.pool, None).await?,
    }))
}

/// Add a team (managers and admins). Its slug, made from the name when left out, names it in
/// addresses.
#[utoipa::path(post, path = "/api/v1/teams", operation_id = "createTeam", tag = "teams",
    params(("Idempotency-Key" = Option<String>, Header)),
    request_body = TeamDraft,
    responses((status = 201, description = "Created, with an ETag", body = Team),
              (status = 409, description = "The name or slug is another team's", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Manager>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<TeamDraft>,
) -> AppResult<Response> {
    let draft = body.value.clone().validated()?;
    let created = idempotency::create_once(
        &state.pool,
        "POST /api/v1/teams",
        idem.as_ref(),
        &body.raw,
        async |tx| actions::create(tx, &auth.actor, &draft).await,
    )
    .await?;
    Ok(created.respond(|team| {
        let mut res = with_etag(StatusCode::CREATED, team.version, &team);
        if let Ok(v) = HeaderValue::from_str(&format!("/api/v1/teams/{}", team.slug)) {
            res.headers_mut().insert(LOCATION, v);
        }
        res
    }))
}

/// One team, with its members.
#[utoipa::path(get, path = "/api/v1/teams/{slug}", operation_id = "getTeam", tag = "teams",
    params(("slug" = String, Path, description = "The team's slug, e.g. payments")),
    responses((status = 200, description = "With an ETag header", body = Team), crate::http::openapi::NotFound))]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(slug): Path<String>,
) -> AppResult<Response> {
    let team = db::get(&state.pool, &slug).await?;
    Ok(with_etag(StatusCode::OK, team.version, &team))
}

/// Replace a team's name, slug, description and settings (If-Match with its ETag): its leads,
/// its members where it lets them, managers and admins.
#[utoipa::path(put, path = "/api/v1/teams/{slug}", operation_id = "updateTeam", tag = "teams",
    params(("slug" = String, Path, description = "The team's slug"), ("If-Match" = String, Header)),
    request_body = TeamDraft,
    responses((status = 200, description = "OK", body = Team),
              (status = 403, description = "Not one of the team's leads (nor a manager)", body = crate::error::ErrorBody),
              (status = 409, description = "The name or slug is another team's", body = crate::error::ErrorBody),
              crate::http::openapi::Replacing))]
pub async fn update(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(slug): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<TeamDraft>,
) -> AppResult<Response> {
    let team = managed(&state, &auth, &slug).await?;
    write::versioned(&state.pool, StatusCode::OK, |tx, _| {
        Box::pin(actions::update(
            tx,
            &auth.actor,
            &team,
            version,
            &body.value,
        ))
    })
    .await
}

/// Delete a team (managers and admins); what it owned is then the installation's.
#[utoipa::path(delete, path = "/api/v1/teams/{slug}", operation_id = "deleteTeam", tag = "teams",
    params(("slug" = String, Path, description = "The team's slug")),
    responses(crate::http::openapi::Deleting))]
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path(slug): Path<String>,
) -> AppResult<StatusCode> {
    let team = db::get(&state.pool, &slug).await?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, &team))
    })
    .await
}

/// A member's part, as sent.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Membership {
    /// `member` or `lead`
    pub role: String,
}

/// Put a person in the team, or change their part in it.
#[utoipa::path(put, path = "/api/v1/teams/{slug}/members/{handle}", operation_id = "setTeamMember", tag = "teams",
    params(("slug" = String, Path, description = "The team's slug"), ("handle" = String, Path, description = "The person's handle")),
    request_body = Membership,
    responses((status = 200, description = "The team as it is now", body = Team),
              (status = 403, description = "Not one of the team's leads (nor a manager)", body = crate::error::ErrorBody),
              crate::http::openapi::NotFound, crate::http::openapi::Invalid))]
pub async fn set_member(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((slug, handle)): Path<(String, String)>,
    body: ApiJson<Membership>,
) -> AppResult<Response> {
    let role = TeamRole::parse("role", &body.value.role)?;
    let team = managed(&state, &auth, &slug).await?;
    write::versioned(&state.pool, StatusCode::OK, |tx, _| {
        Box::pin(actions::set_member(tx, &auth.actor, &team, &handle, role))
    })
    .await
}

/// Take a person out of the team.
#[utoipa::path(delete, path = "/api/v1/teams/{slug}/members/{handle}", operation_id = "removeTeamMember", tag = "teams",
    params(("slug" = String, Path, description = "The team's slug"), ("handle" = String, Path, description = "The person's handle")),
    responses((status = 200, description = "The team as it is now", body = Team),
              (status = 403, description = "Not one of the team's leads (nor a manager)", body = crate::error::ErrorBody),
              crate::http::openapi::NotFound))]
pub async fn remove_member(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((slug, handle)): Path<(String, String)>,
) -> AppResult<Response> {
    let team = managed(&state, &auth, &slug).await?;
    write::versioned(&state.pool, StatusCode::OK, |tx, _| {
        Box::pin(actions::remove_member(tx, &auth.actor, &team, &handle))
    })
    .await
}
