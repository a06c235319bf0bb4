//! People under `/api/v1/people`: the responders roles are assigned to.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::db::{self, Person};
use super::domain::PersonDraft;
use crate::error::AppResult;
use crate::http::extract::{ApiJson, IdempotencyKey};
use crate::idempotency;
use crate::state::AppState;

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct PersonList {
    pub items: Vec<Person>,
}

/// Everyone who can hold a role.
#[utoipa::path(
    get,
    path = "/api/v1/people",
    tag = "people",
    responses((status = 200, description = "OK", body = PersonList))
)]
pub async fn list(State(state): State<AppState>) -> AppResult<Json<PersonList>> {
    Ok(Json(PersonList {
        items: db::list(&state.pool).await?,
    }))
}

/// Add a person.
#[utoipa::path(
    post,
    path = "/api/v1/people",
    tag = "people",
    params(("Idempotency-Key" = Option<String>, Header)),
    request_body = PersonDraft,
    responses((status = 201, description = "Created", body = Person), (status = 409, description = "The email or handle is taken", body = crate::error::ErrorBody), (status = 422, description = "A field is wrong; details.fields names it", body = crate::error::ErrorBody))
)]
pub async fn create(
    State(state): State<AppState>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<PersonDraft>,
) -> AppResult<Response> {
    let draft = body.value.clone().validated()?;
    let created = idempotency::create_once(
        &state.pool,
        "POST /api/v1/people",
        idem.as_deref(),
        &body.raw,
        async |tx| db::insert(tx, &draft).await,
    )
    .await?;
    Ok(created.respond(|person| (StatusCode::CREATED, Json(person)).into_response()))
}
