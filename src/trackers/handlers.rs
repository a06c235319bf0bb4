//! `/api/v1/work-item-trackers`: read by anyone signed in, changed by admins. The page uses the
//! same `save` and `remove`.

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::db::{self, Tracker};
use super::domain;
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};
use crate::http::access::{Admin, Viewer};
use crate::http::extract::ApiJson;
use crate::http::extract::parse_id;
use crate::http::request::ApiRequest;
use crate::state::AppState;

#[derive(Serialize, utoipa::ToSchema)]
pub struct TrackerList {
    pub items: Vec<Tracker>,
}

/// The trackers whose work items become links.
#[utoipa::path(get, path = "/api/v1/work-item-trackers", operation_id = "listWorkItemTrackers", tag = "postmortems",
    responses((status = 200, description = "OK", body = TrackerList)))]
pub async fn list(ApiRequest(state, _): ApiRequest<Viewer>) -> AppResult<Json<TrackerList>> {
    Ok(Json(TrackerList {
        items: db::all(&state.pool).await?,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TrackerDraft {
    /// `AB#`, `LIN-`, `JIRA-`: letters, then `#` or `-`
    pub prefix: String,
    pub name: String,
    /// An http(s) URL with `{n}` where the number goes
    pub url_template: String,
}

/// Adds a tracker (`id` = None) or changes one; checked, audited, in one transaction.
pub async fn save(
    state: &AppState,
    actor: &Actor,
    id: Option<i64>,
    d: &TrackerDraft,
) -> AppResult<Tracker> {
    let prefix = domain::check_prefix(&d.prefix)?;
    let name = domain::check_name(&d.name)?;
    let template = domain::check_template(&d.url_template)?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let tracker = match id {
        None => db::insert(&mut *tx, &prefix, &name, &template).await?,
        Some(id) => db::update(&mut *tx, id, &prefix, &name, &template)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("There is no tracker {id}.")))?,
    };
    audit::created(
        &mut tx,
        actor,
        if id.is_none() {
            "tracker.create"
        } else {
            "tracker.update"
        },
        &tracker.prefix,
        json!({ "name": tracker.name, "url_template": tracker.url_template }),
    )
    .await?;
    tx.commit().await?;
    Ok(tracker)
}

pub async fn remove(state: &AppState, actor: &Actor, id: i64) -> AppResult<()> {
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let prefix = db::delete(&mut *tx, id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no tracker {id}.")))?;
    audit::record(&mut tx, actor, "tracker.delete", &prefix, None, None).await?;
    tx.commit().await?;
    Ok(())
}

/// Add a tracker: work items written `<prefix><number>` link to its URL.
#[utoipa::path(post, path = "/api/v1/work-item-trackers", operation_id = "createWorkItemTracker", tag = "postmortems", request_body = TrackerDraft,
    responses((status = 201, description = "Created", body = Tracker),
              (status = 409, description = "The prefix is taken", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Admin>,
    body: ApiJson<TrackerDraft>,
) -> AppResult<Response> {
    let t = save(&state, &auth.actor, None, &body.value).await?;
    Ok((StatusCode::CREATED, Json(t)).into_response())
}

/// Change a tracker's prefix, name or link template.
#[utoipa::path(put, path = "/api/v1/work-item-trackers/{id}", operation_id = "updateWorkItemTracker", tag = "postmortems", request_body = TrackerDraft,
    params(("id" = i64, Path, description = "Tracker id")),
    responses((status = 200, description = "OK", body = Tracker),
              crate::http::openapi::NotFound,
              (status = 409, description = "The prefix is taken", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn update(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
    body: ApiJson<TrackerDraft>,
) -> AppResult<Json<Tracker>> {
    let id = parse_id(&id, "tracker")?;
    Ok(Json(
        save(&state, &auth.actor, Some(id), &body.value).await?,
    ))
}

/// Remove a tracker; its work items stay as text.
#[utoipa::path(delete, path = "/api/v1/work-item-trackers/{id}", operation_id = "deleteWorkItemTracker", tag = "postmortems",
    params(("id" = i64, Path, description = "Tracker id")),
    responses(crate::http::openapi::Deleting))]
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "tracker")?;
    remove(&state, &auth.actor, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
