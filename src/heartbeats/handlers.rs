//! `/api/v1/heartbeats`: heartbeat monitors (responders make, change and remove them; everyone
//! signed in reads them, with each one's last ping and health).

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use super::actions::{self, MonitorDraft, MonitorWithKey};
use super::db::{self, Monitor};
use super::domain::Health;
use crate::error::{AppError, AppResult};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{ApiJson, IfMatch, with_etag};
use crate::http::request::ApiRequest;
use crate::http::write;

/// A monitor with its health now and where its job pings.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Heartbeat {
    #[serde(flatten)]
    pub monitor: Monitor,
    pub health: Health,
    /// Quell's ping address (GET or POST, the key as `Authorization: Bearer` or `?key=`)
    pub ping_url: String,
    /// Opsgenie's ping address (`Authorization: GenieKey <key>`)
    pub opsgenie_ping_url: String,
}

impl Heartbeat {
    pub fn of(monitor: Monitor, base_url: &str, now: DateTime<Utc>) -> Self {
        let health = Health::of(
            monitor.enabled,
            &monitor.state,
            monitor.last_ping_at,
            monitor.interval_minutes,
            now,
        );
        let base = base_url.trim_end_matches('/');
        Self {
            ping_url: format!("{base}/hooks/heartbeat/{}", monitor.id),
            opsgenie_ping_url: format!(
                "{base}/v2/heartbeats/{}/ping",
                monitor.name.replace(' ', "%20")
            ),
            health,
            monitor,
        }
    }
}

impl write::Versioned for Heartbeat {
    fn version(&self) -> i32 {
        self.monitor.version
    }
}

pub fn parse_id(raw: &str) -> AppResult<Uuid> {
    Uuid::parse_str(raw.trim())
        .map_err(|_| AppError::NotFound(format!("There is no heartbeat monitor {raw:?}.")))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct HeartbeatList {
    /// Those down first, then by name
    pub items: Vec<Heartbeat>,
}

/// Every heartbeat monitor with its last ping and health.
#[utoipa::path(get, path = "/api/v1/heartbeats", operation_id = "listHeartbeats", tag = "alerts",
    responses((status = 200, description = "OK", body = HeartbeatList)))]
pub async fn list(ApiRequest(state, _): ApiRequest<Viewer>) -> AppResult<Json<HeartbeatList>> {
    let now = crate::clock::now(&state.pool).await?;
    let items = db::list(&state.pool)
        .await?
        .into_iter()
        .map(|m| Heartbeat::of(m, &state.config.base_url, now))
        .collect();
    Ok(Json(HeartbeatList { items }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct HeartbeatWithKey {
    #[serde(flatten)]
    pub heartbeat: Heartbeat,
    /// Send it with every ping; it is not shown again
    pub key: String,
}

/// Make a monitor; its key is in the answer, this once.
#[utoipa::path(post, path = "/api/v1/heartbeats", operation_id = "createHeartbeat", tag = "alerts",
    request_body = MonitorDraft,
    responses((status = 201, description = "Created, with the key this once", body = HeartbeatWithKey),
              (status = 409, description = "The name is taken", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<MonitorDraft>,
) -> AppResult<Response> {
    let made: MonitorWithKey = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::create(tx, &auth.actor, &body.value))
    })
    .await?;
    let now = crate::clock::now(&state.pool).await?;
    let version = made.monitor.version;
    let shown = HeartbeatWithKey {
        heartbeat: Heartbeat::of(made.monitor, &state.config.base_url, now),
        key: made.key,
    };
    Ok(with_etag(StatusCode::CREATED, version, &shown))
}

/// One monitor, with an ETag.
#[utoipa::path(get, path = "/api/v1/heartbeats/{id}", operation_id = "getHeartbeat", tag = "alerts",
    params(("id" = String, Path, description = "Monitor id (a UUID)")),
    responses((status = 200, description = "OK", body = Heartbeat), crate::http::openapi::NotFound))]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let m = db::get(&state.pool, parse_id(&id)?).await?;
    let now = crate::clock::now(&state.pool).await?;
    let version = m.version;
    Ok(with_etag(
        StatusCode::OK,
        version,
        &Heartbeat::of(m, &state.config.base_url, now),
    ))
}

/// Replace a monitor's settings (`If-Match` with its ETag refuses a change made from an older
/// copy); its key stays.
#[utoipa::path(put, path = "/api/v1/heartbeats/{id}", operation_id = "replaceHeartbeat", tag = "alerts",
    params(("id" = String, Path, description = "Monitor id (a UUID)"), ("If-Match" = Option<String>, Header)),
    request_body = MonitorDraft,
    responses((status = 200, description = "OK, with the new ETag", body = Heartbeat), crate::http::openapi::NotFound,
              (status = 409, description = "Changed meanwhile, or the name is taken", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn replace(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<MonitorDraft>,
) -> AppResult<Response> {
    let id = parse_id(&id)?;
    let base = state.config.base_url.clone();
    write::versioned(&state.pool, StatusCode::OK, |tx, _| {
        let (base, draft, actor) = (base.clone(), &body.value, &auth.actor);
        Box::pin(async move {
            let m = actions::update(&mut *tx, actor, id, draft, version).await?;
            let now = crate::clock::now(&mut *tx).await?;
            Ok(Heartbeat::of(m, &base, now))
        })
    })
    .await
}

/// Remove a monitor (`If-Match` as for a change). An alert it raised stays with its incident.
#[utoipa::path(delete, path = "/api/v1/heartbeats/{id}", operation_id = "deleteHeartbeat", tag = "alerts",
    params(("id" = String, Path, description = "Monitor id (a UUID)"), ("If-Match" = Option<String>, Header)),
    responses((status = 204, description = "Removed"), crate::http::openapi::NotFound,
              (status = 409, description = "Changed meanwhile", body = crate::error::ErrorBody)))]
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    IfMatch(version): IfMatch,
) -> AppResult<StatusCode> {
    let id = parse_id(&id)?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, id, version))
    })
    .await
}
