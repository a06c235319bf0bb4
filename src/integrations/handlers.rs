//! `/api/v1/integrations` for admins: create (the key is returned once), list, rename, enable or
//! disable, rotate the key.

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::actions::{self, WithSecrets};
use super::db::{self, Integration};
use crate::error::{AppError, AppResult};
use crate::http::access::Admin;
use crate::http::extract::ApiJson;
use crate::http::request::ApiRequest;

#[derive(Serialize, utoipa::ToSchema)]
pub struct IntegrationList {
    pub items: Vec<Integration>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct IntegrationWithKey {
    #[serde(flatten)]
    pub integration: Integration,
    /// The secret key, shown this once: a bearer token, or PagerDuty's `routing_key`
    pub key: String,
    /// Generic integrations: the Standard Webhooks signing secret, shown this once
    pub signing_secret: Option<String>,
}

impl From<WithSecrets> for IntegrationWithKey {
    fn from(w: WithSecrets) -> Self {
        Self {
            integration: w.integration,
            key: w.key,
            signing_secret: w.signing_secret,
        }
    }
}

pub fn parse_uuid(raw: &str) -> AppResult<Uuid> {
    Uuid::parse_str(raw)
        .map_err(|_| AppError::NotFound(format!("There is no integration {raw:?}.")))
}

/// Every alert source.
#[utoipa::path(get, path = "/api/v1/integrations", operation_id = "listIntegrations", tag = "alerts",
    responses((status = 200, description = "OK", body = IntegrationList), crate::http::openapi::AdminsOnly))]
pub async fn list(ApiRequest(state, _): ApiRequest<Admin>) -> AppResult<Json<IntegrationList>> {
    Ok(Json(IntegrationList {
        items: db::list(&state.pool).await?,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewIntegration {
    name: String,
    /// alertmanager, grafana, pagerduty-events-v2, generic or opsgenie
    format: String,
    /// mitigate (default), resolve or nothing: what happens when every alert of an incident has resolved
    on_all_resolved: Option<String>,
    /// when its alerts count as flapping (default: more than 3 fires within 30 minutes, settled after 10 minutes resolved)
    flapping: Option<crate::integrations::domain::Flapping>,
}

/// Add an alert source. The key (and a generic integration's signing secret) is returned once.
#[utoipa::path(post, path = "/api/v1/integrations", operation_id = "createIntegration", tag = "alerts", request_body = NewIntegration,
    responses((status = 201, description = "Created; the key is in the body, this once", body = IntegrationWithKey),
              (status = 409, description = "The name is taken", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Admin>,
    body: ApiJson<NewIntegration>,
) -> AppResult<Response> {
    let b = body.value;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let created = actions::create(
        &mut tx,
        &auth.actor,
        &b.name,
        &b.format,
        b.on_all_resolved.as_deref(),
        b.flapping,
        None,
    )
    .await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(IntegrationWithKey::from(created))).into_response())
}

/// One alert source.
#[utoipa::path(get, path = "/api/v1/integrations/{id}", operation_id = "getIntegration", tag = "alerts",
    params(("id" = String, Path, description = "Integration id (a UUID)")),
    responses((status = 200, description = "OK", body = Integration), crate::http::openapi::NotFound))]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Admin>,
    Path(id): Path<String>,
) -> AppResult<Json<Integration>> {
    Ok(Json(db::get(&state.pool, parse_uuid(&id)?).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IntegrationPatch {
    name: Option<String>,
    /// false refuses its alerts with 401 until enabled again
    enabled: Option<bool>,
    on_all_resolved: Option<String>,
    /// when its alerts count as flapping; all three figures together
    flapping: Option<crate::integrations::domain::Flapping>,
}

/// Rename, disable or enable, or change what happens when all alerts resolve.
#[utoipa::path(patch, path = "/api/v1/integrations/{id}", operation_id = "updateIntegration", tag = "alerts", request_body = IntegrationPatch,
    params(("id" = String, Path, description = "Integration id (a UUID)")),
    responses((status = 200, description = "OK", body = Integration), crate::http::openapi::NotFound,
              (status = 409, description = "The name is taken", body = crate::error::ErrorBody), crate::http::openapi::Invalid))]
pub async fn patch(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
    body: ApiJson<IntegrationPatch>,
) -> AppResult<Json<Integration>> {
    let id = parse_uuid(&id)?;
    let b = body.value;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let after = actions::update(
        &mut tx,
        &auth.actor,
        id,
        b.name.as_deref(),
        b.enabled,
        b.on_all_resolved.as_deref(),
        b.flapping,
    )
    .await?;
    tx.commit().await?;
    Ok(Json(after))
}

/// Replace the key (and signing secret); the old ones stop working at once.
#[utoipa::path(post, path = "/api/v1/integrations/{id}/rotate", operation_id = "rotateIntegrationKey", tag = "alerts",
    params(("id" = String, Path, description = "Integration id (a UUID)")),
    responses((status = 200, description = "The new key, this once", body = IntegrationWithKey), crate::http::openapi::NotFound))]
pub async fn rotate(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
) -> AppResult<Json<IntegrationWithKey>> {
    let id = parse_uuid(&id)?;
    let rotated = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::rotate(tx, &auth.actor, id))
    })
    .await?;
    Ok(Json(rotated.into()))
}
