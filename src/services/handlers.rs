//! Services CRUD under `/api/v1/services`.

use axum::Json;
use axum::extract::Path;
use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use super::actions;
use super::db::{self, Service};
use super::domain::ServiceDraft;
use crate::error::{AppError, AppResult};
use crate::http::access::{Admin, Viewer};
use crate::http::extract::{ApiJson, ApiQuery, IdempotencyKey, IfMatch, double_option, with_etag};
use crate::http::request::ApiRequest;
use crate::http::write;
use crate::idempotency;

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ServiceList {
    pub items: Vec<Service>,
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ServiceQuery {
    /// Only the services this team owns, by its slug
    pub team: Option<String>,
}

impl ServiceQuery {
    pub async fn list(&self, e: impl sqlx::PgExecutor<'_>) -> AppResult<Vec<Service>> {
        let team = crate::http::extract::query_text(&self.team);
        let filter = db::Filter {
            team: team.as_deref(),
            ..Default::default()
        };
        db::select(e, filter).await
    }
}

/// All services (or one team's), most critical tier first.
#[utoipa::path(
    get,
    path = "/api/v1/services", operation_id = "listServices",
    tag = "services", params(ServiceQuery),
    responses((status = 200, description = "OK", body = ServiceList))
)]
pub async fn list(
    ApiRequest(state, _): ApiRequest<Viewer>,
    ApiQuery(q): ApiQuery<ServiceQuery>,
) -> AppResult<Json<ServiceList>> {
    Ok(Json(ServiceList {
        items: q.list(&state.pool).await?,
    }))
}

/// Add a service.
#[utoipa::path(
    post,
    path = "/api/v1/services", operation_id = "createService",
    tag = "services",
    params(("Idempotency-Key" = Option<String>, Header)),
    request_body = ServiceDraft,
    responses((status = 201, description = "Created", body = Service), (status = 409, description = "The name is taken", body = crate::error::ErrorBody), crate::http::openapi::Invalid)
)]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Admin>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<ServiceDraft>,
) -> AppResult<Response> {
    let draft = body.value.clone().validated()?;
    let created = idempotency::create_once(
        &state.pool,
        "POST /api/v1/services",
        idem.as_ref(),
        &body.raw,
        async |tx| actions::create(tx, &auth.actor, &draft).await,
    )
    .await?;
    Ok(created.respond(|service| {
        let mut res = with_etag(StatusCode::CREATED, service.version, &service);
        if let Ok(v) = HeaderValue::from_str(&format!("/api/v1/services/{}", service.name)) {
            res.headers_mut().insert(LOCATION, v);
        }
        res
    }))
}

/// One service.
#[utoipa::path(
    get,
    path = "/api/v1/services/{name}", operation_id = "getService",
    tag = "services",
    params(("name" = String, Path, description = "Service name, e.g. payments-gateway")),
    responses((status = 200, description = "With an ETag header", body = Service), crate::http::openapi::NotFound)
)]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(name): Path<String>,
) -> AppResult<Response> {
    let service = db::get_by_name(&state.pool, &name).await?;
    Ok(with_etag(StatusCode::OK, service.version, &service))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchService {
    name: Option<String>,
    tier: Option<i64>,
    team: Option<String>,
    description: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    slo_target_percent: Option<Option<f64>>,
    #[serde(default, deserialize_with = "double_option")]
    avg_requests_per_second: Option<Option<f64>>,
    #[serde(default, deserialize_with = "double_option")]
    peak_requests_per_second: Option<Option<f64>>,
    #[serde(default, deserialize_with = "double_option")]
    peak_latency_seconds: Option<Option<f64>>,
    #[serde(default, deserialize_with = "double_option")]
    runbook_url: Option<Option<String>>,
    /// The whole list of services it depends on, by name
    depends_on: Option<Vec<String>>,
}

/// Edit a service; fields left out stay as they are, `null` clears an optional one.
#[utoipa::path(
    patch,
    path = "/api/v1/services/{name}", operation_id = "updateService",
    tag = "services",
    params(("name" = String, Path, description = "Service name, e.g. payments-gateway"), ("If-Match" = String, Header)),
    request_body = PatchService,
    responses((status = 200, description = "OK", body = Service), crate::http::openapi::NotFound, (status = 409, description = "Conflict; the message says why", body = crate::error::ErrorBody), (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody), crate::http::openapi::Invalid, (status = 428, description = "If-Match is missing", body = crate::error::ErrorBody))
)]
pub async fn patch(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(name): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<PatchService>,
) -> AppResult<Response> {
    let current = db::get_by_name(&state.pool, &name).await?;
    let p = body.value;
    let d = current.draft();
    let draft = ServiceDraft {
        name: p.name.unwrap_or(d.name),
        tier: p.tier.unwrap_or(d.tier),
        team: p.team.unwrap_or(d.team),
        description: p.description.unwrap_or(d.description),
        slo_target_percent: p.slo_target_percent.unwrap_or(d.slo_target_percent),
        avg_requests_per_second: p
            .avg_requests_per_second
            .unwrap_or(d.avg_requests_per_second),
        peak_requests_per_second: p
            .peak_requests_per_second
            .unwrap_or(d.peak_requests_per_second),
        peak_latency_seconds: p.peak_latency_seconds.unwrap_or(d.peak_latency_seconds),
        runbook_url: p.runbook_url.unwrap_or(d.runbook_url),
        depends_on: p.depends_on.or(d.depends_on),
    }
    .validated()?;
    let expected = version.unwrap_or(current.version);
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let updated = actions::update(&mut tx, &auth.actor, &current, expected, &draft)
        .await?
        .ok_or(AppError::Stale {
            current_version: current.version,
        })?;
    tx.commit().await?;
    Ok(with_etag(StatusCode::OK, updated.version, &updated))
}

/// Delete a service no incident refers to.
#[utoipa::path(
    delete,
    path = "/api/v1/services/{name}", operation_id = "deleteService",
    tag = "services",
    params(("name" = String, Path, description = "Service name, e.g. payments-gateway")),
    responses(crate::http::openapi::Deleting, (status = 409, description = "Incidents refer to it", body = crate::error::ErrorBody))
)]
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(name): Path<String>,
) -> AppResult<StatusCode> {
    let service = db::get_by_name(&state.pool, &name).await?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, &service))
    })
    .await
}

/// The call and chat links a Sev1 or Sev2 of the service starts with.
#[utoipa::path(
    get,
    path = "/api/v1/services/{name}/bridge", operation_id = "getServiceBridge",
    tag = "services",
    params(("name" = String, Path, description = "Service name, e.g. payments-gateway")),
    responses((status = 200, description = "The default bridge (empty fields when unset)", body = crate::bridge::domain::Bridge), crate::http::openapi::NotFound)
)]
pub async fn bridge(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(name): Path<String>,
) -> AppResult<Json<crate::bridge::domain::Bridge>> {
    let s = db::get_by_name(&state.pool, &name).await?;
    Ok(Json(
        crate::bridge::db::of_service(&state.pool, s.id).await?,
    ))
}

/// Set the call and chat links a Sev1 or Sev2 of the service starts with (both blank removes
/// them). Incidents already open keep theirs.
#[utoipa::path(
    put,
    path = "/api/v1/services/{name}/bridge", operation_id = "setServiceBridge",
    tag = "services",
    params(("name" = String, Path, description = "Service name, e.g. payments-gateway")),
    request_body = crate::bridge::domain::Links,
    responses((status = 200, description = "Set", body = crate::bridge::domain::Bridge), crate::http::openapi::NotFound, (status = 422, description = "A link is not an http(s) URL; details.fields names it", body = crate::error::ErrorBody))
)]
pub async fn set_bridge(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(name): Path<String>,
    body: ApiJson<crate::bridge::domain::Links>,
) -> AppResult<Json<crate::bridge::domain::Bridge>> {
    let bridge = body.value.checked()?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let s = db::get_by_name(&mut *tx, &name).await?;
    actions::set_bridge(&mut tx, &auth.actor, &s, &bridge).await?;
    tx.commit().await?;
    Ok(Json(bridge))
}
