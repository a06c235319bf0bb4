//! The related-incidents API under `/api/v1/incidents/{key}/related`.

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::actions;
use super::db::{self, Related, Suggestion};
use crate::error::AppResult;
use crate::http::access::{Responder, Viewer};
use crate::http::extract::ApiJson;
use crate::http::request::ApiRequest;
use crate::http::write;
use crate::incident_ref::domain::SeenBy;

pub use crate::http::extract::incident_key as path_key;

#[derive(Serialize, utoipa::ToSchema)]
pub struct RelatedList {
    /// Linked incidents, oldest link first
    pub items: Vec<Related>,
    /// Incidents of the same service or one it depends on whose text matches, not linked yet;
    /// best first
    pub suggestions: Vec<Suggestion>,
}

/// The incidents related to this one, and suggestions.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/related", operation_id = "listRelatedIncidents", tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = RelatedList), crate::http::openapi::NotFound))]
pub async fn list(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<RelatedList>> {
    let sees = SeenBy::of(&auth.user);
    let this = actions::incident(&state.pool, path_key(&key)?, sees).await?;
    Ok(Json(RelatedList {
        items: db::list(&state.pool, this.id, sees).await?,
        suggestions: actions::suggestions(&state.pool, &this, sees).await?,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkBody {
    /// The other incident: `INC-184` or `184`
    pub incident: String,
    /// Why they are related (at most 1000 characters)
    #[serde(default)]
    pub note: String,
}

/// Link another incident to this one, with a note; both pages and both timelines show it.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/related", operation_id = "relateIncident", tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    request_body = LinkBody,
    responses((status = 201, description = "Linked; the other incident as this one lists it", body = Related),
              (status = 404, description = "No such incident", body = crate::error::ErrorBody),
              (status = 409, description = "Related already", body = crate::error::ErrorBody),
              (status = 422, description = "An unknown incident, the incident itself, or a note too long, named in details", body = crate::error::ErrorBody)))]
pub async fn link(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    body: ApiJson<LinkBody>,
) -> AppResult<Response> {
    let sees = SeenBy::of(&auth.user);
    let this = actions::incident(&state.pool, path_key(&key)?, sees).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let related = actions::link(
        &mut tx,
        &this,
        &body.value.incident,
        &body.value.note,
        (&auth.actor, sees),
    )
    .await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(related)).into_response())
}

/// Remove the link between two incidents; both timelines say so.
#[utoipa::path(delete, path = "/api/v1/incidents/{key}/related/{other}", operation_id = "unrelateIncident", tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("other" = String, Path, description = "The related incident's key")),
    responses((status = 204, description = "Unlinked"), (status = 404, description = "No such incident, or they are not related", body = crate::error::ErrorBody)))]
pub async fn unlink(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, other)): Path<(String, String)>,
) -> AppResult<StatusCode> {
    let sees = SeenBy::of(&auth.user);
    let this = actions::incident(&state.pool, path_key(&key)?, sees).await?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(actions::unlink(tx, &this, &other, (&auth.actor, sees)))
    })
    .await
}
