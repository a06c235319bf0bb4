//! `/api/v1/incidents/{key}/responders`: who was asked for by hand, and asking; and
//! `…/responders/{id}/accept`, the person paged answering while signed in.

use axum::Json;
use axum::extract::Path;
use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::actions;
use super::db::{self, Request};
use super::domain::AskDraft;
use crate::error::{AppError, AppResult};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{ApiJson, incident_key, parse_id};
use crate::http::request::ApiRequest;
use crate::incident_ref::db::IncidentRef;
use crate::incident_ref::domain::SeenBy;

/// The incident of a path, if `sees` may see it.
pub(super) async fn incident(
    e: impl sqlx::PgExecutor<'_>,
    raw: &str,
    sees: SeenBy,
) -> AppResult<IncidentRef> {
    let key = incident_key(raw)?;
    crate::incident_ref::db::by_key(e, key, sees)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no incident {key}.")))
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ResponderRequestList)]
pub struct RequestList {
    pub items: Vec<Request>,
}

/// The responders asked for by hand, newest first: who asked for whom and why, each person
/// paged with their answer, and every message sent to them with its delivery state.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/responders", operation_id = "listResponderRequests", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-1187")),
    responses((status = 200, description = "Newest first", body = RequestList), crate::http::openapi::NotFound))]
pub async fn list(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<RequestList>> {
    let mut conn = state.pool.acquire().await?;
    let i = incident(&mut *conn, &key, SeenBy::of(&auth.user)).await?;
    Ok(Json(RequestList {
        items: db::for_incident(&mut conn, i.id).await?,
    }))
}

/// Add a responder: page a person, a schedule's on-call person, or an escalation policy (its
/// first step now, each next step after the step's delay until someone it paged accepts). Each
/// person is reached by their contact rules with a signed link that accepts the request —
/// helping, without taking the incident over. `Location` names the request.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/responders", operation_id = "addResponder", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-1187")),
    request_body = AskDraft,
    responses((status = 201, description = "Asked; `people` says who was paged (empty: nobody could be reached, and `state` is ended)", body = Request),
              crate::http::openapi::NotFound,
              (status = 409, description = "The incident is resolved", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn add(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    body: ApiJson<AskDraft>,
) -> AppResult<Response> {
    let i = incident(&state.pool, &key, SeenBy::of(&auth.user)).await?;
    let made = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::add(tx, &i, &body.value, &auth.actor))
    })
    .await?;
    let mut res = (StatusCode::CREATED, Json(&made)).into_response();
    let at = format!("/api/v1/incidents/{}/responders#{}", i.key, made.id);
    if let Ok(v) = HeaderValue::from_str(&at) {
        res.headers_mut().insert(LOCATION, v);
    }
    Ok(res)
}

/// Accept a page you were sent for this request (as its signed link does): the request is
/// answered, its messages not yet sent are called off, and the incident stays as it is.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/responders/{id}/accept", operation_id = "acceptResponderRequest", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-1187"), ("id" = i64, Path, description = "The request's id")),
    responses((status = 200, description = "Accepted", body = Request), crate::http::openapi::NotFound,
              (status = 403, description = "The request did not page you", body = crate::error::ErrorBody),
              (status = 409, description = "Accepted already, or ended", body = crate::error::ErrorBody)))]
pub async fn accept(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, id)): Path<(String, String)>,
) -> AppResult<Json<Request>> {
    let i = incident(&state.pool, &key, SeenBy::of(&auth.user)).await?;
    let id = parse_id(&id, "responder request")?;
    let me = (auth.user.id, auth.user.name.as_str());
    let done = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::accept(tx, &i, id, me, &auth.actor))
    })
    .await?;
    Ok(Json(done))
}
