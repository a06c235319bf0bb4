//! `/api/v1/maintenance-windows`: planned work on services (responders plan and cancel it).

use axum::Json;
use axum::extract::Path;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::Response;
use serde::Serialize;

use super::actions::{self, WindowDraft, WindowView};
use crate::error::AppResult;
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{ApiJson, IfMatch, parse_id, with_etag};
use crate::http::request::ApiRequest;
use crate::http::write;

#[derive(Serialize, utoipa::ToSchema)]
pub struct WindowList {
    /// Newest first
    pub items: Vec<WindowView>,
}

/// Every maintenance window, with where it stands now and its next occurrences.
#[utoipa::path(get, path = "/api/v1/maintenance-windows", operation_id = "listMaintenanceWindows", tag = "alerts",
    responses((status = 200, description = "OK", body = WindowList)))]
pub async fn list(ApiRequest(state, _): ApiRequest<Viewer>) -> AppResult<Json<WindowList>> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(WindowList {
        items: actions::list(&mut conn).await?,
    }))
}

/// Plan a window: once, or weekly on chosen weekdays at a wall-clock time in a named zone.
#[utoipa::path(post, path = "/api/v1/maintenance-windows", operation_id = "createMaintenanceWindow", tag = "alerts",
    request_body = WindowDraft,
    responses((status = 201, description = "Created, with an ETag", body = WindowView), crate::http::openapi::Invalid))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<WindowDraft>,
) -> AppResult<Response> {
    let made = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::create(tx, &auth.actor, &body.value))
    })
    .await?;
    let mut res = with_etag(StatusCode::CREATED, made.window.version, &made);
    if let Ok(v) = HeaderValue::from_str(&format!("/api/v1/maintenance-windows/{}", made.window.id))
    {
        res.headers_mut().insert(LOCATION, v);
    }
    Ok(res)
}

/// One window.
#[utoipa::path(get, path = "/api/v1/maintenance-windows/{id}", operation_id = "getMaintenanceWindow", tag = "alerts",
    params(("id" = i64, Path, description = "Window id")),
    responses((status = 200, description = "With an ETag", body = WindowView), crate::http::openapi::NotFound))]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let id = parse_id(&id, "maintenance window")?;
    let mut conn = state.pool.acquire().await?;
    let w = actions::find(&mut conn, id).await?;
    Ok(with_etag(StatusCode::OK, w.window.version, &w))
}

/// Cancel a window from now (If-Match): one going on ends now, later ones do not happen.
#[utoipa::path(post, path = "/api/v1/maintenance-windows/{id}/cancel", operation_id = "cancelMaintenanceWindow", tag = "alerts",
    params(("id" = i64, Path, description = "Window id"), ("If-Match" = String, Header, description = "The window's ETag, or *")),
    responses((status = 200, description = "Cancelled", body = WindowView),
              (status = 409, description = "Already over", body = crate::error::ErrorBody),
              crate::http::openapi::Replacing))]
pub async fn cancel(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    IfMatch(version): IfMatch,
) -> AppResult<Response> {
    let id = parse_id(&id, "maintenance window")?;
    write::versioned(&state.pool, StatusCode::OK, |tx, _| {
        Box::pin(actions::cancel(tx, &auth.actor, id, version))
    })
    .await
}

impl write::Versioned for WindowView {
    fn version(&self) -> i32 {
        self.window.version
    }
}
