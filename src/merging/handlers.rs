//! `POST /api/v1/incidents/{key}/merge` and `…/split`: both need `If-Match` with the ETag of the
//! incident the path names (`*` to take whatever it is now).

use axum::Json;
use axum::extract::Path;
use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::actions::{self, Merged, Split, SplitDraft};
use crate::error::AppResult;
use crate::http::access::Responder;
use crate::http::extract::{ApiJson, IfMatch};
use crate::http::request::ApiRequest;
use crate::incident_ref::domain::SeenBy;

pub use crate::http::extract::incident_key as path_key;

fn located(
    status: StatusCode,
    key: impl std::fmt::Display,
    body: impl serde::Serialize,
) -> Response {
    let mut res = (status, Json(body)).into_response();
    if let Ok(v) = HeaderValue::from_str(&format!("/api/v1/incidents/{key}")) {
        res.headers_mut().insert(LOCATION, v);
    }
    res
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeBody {
    /// The incident this one duplicates, which it merges into: `INC-184` or `184`
    pub into: String,
}

/// Merge this incident into another it duplicates: its alerts (with their groups, so the next
/// ones join the other) move, roles the other has nobody in are given to whoever held them
/// here, the other takes the worse severity, both timelines link the two, and this one is
/// resolved as a duplicate — its SLA timers and paging stop. `Location` names the one kept.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/merge", operation_id = "mergeIncident", tag = "incidents",
    params(("key" = String, Path, description = "The incident merged away, e.g. INC-1188"), ("If-Match" = String, Header, description = "Its ETag, or `*`")),
    request_body = MergeBody,
    responses((status = 200, description = "Merged", body = Merged), crate::http::openapi::NotFound,
              (status = 409, description = "This incident is resolved already", body = crate::error::ErrorBody),
              (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody),
              (status = 428, description = "If-Match is missing", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn merge(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<MergeBody>,
) -> AppResult<Response> {
    let sees = SeenBy::of(&auth.user);
    let key = path_key(&key)?;
    let from = crate::related::actions::incident(&state.pool, key, sees).await?;
    let into = &body.value.into;
    let merged = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::merge(
            tx,
            &from,
            into,
            version,
            (&auth.actor, sees),
        ))
    })
    .await?;
    Ok(located(StatusCode::OK, merged.into, merged))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitBody {
    /// The alerts to move out, by id (as `GET /api/v1/incidents/{key}/alerts` lists them)
    #[serde(default)]
    pub alerts: Vec<i64>,
    /// Or whole lines of the incident page, by their summary: every alert of each
    #[serde(default)]
    pub lines: Vec<String>,
    /// The new incident's title (default: the first alert's summary)
    #[serde(default)]
    pub title: String,
    /// Its severity (default: this incident's)
    #[serde(default)]
    pub severity: String,
}

/// Move alerts out of this incident into a new one of the same service (and access), which
/// pages as a new incident does; both timelines link the two. `Location` names the new one.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/split", operation_id = "splitIncident", tag = "incidents",
    params(("key" = String, Path, description = "The incident the alerts leave, e.g. INC-1187"), ("If-Match" = String, Header, description = "Its ETag, or `*`")),
    request_body = SplitBody,
    responses((status = 201, description = "Split off", body = Split), crate::http::openapi::NotFound,
              (status = 409, description = "This incident is resolved", body = crate::error::ErrorBody),
              (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody),
              (status = 428, description = "If-Match is missing", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn split(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<SplitBody>,
) -> AppResult<Response> {
    let sees = SeenBy::of(&auth.user);
    let key = path_key(&key)?;
    let from = crate::related::actions::incident(&state.pool, key, sees).await?;
    let b = &body.value;
    let draft = SplitDraft {
        alerts: b.alerts.clone(),
        lines: b.lines.clone(),
        title: b.title.clone(),
        severity: b.severity.clone(),
    };
    let split: Split = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::split(tx, &from, &draft, version, &auth.actor))
    })
    .await?;
    Ok(located(StatusCode::CREATED, split.new, split))
}
