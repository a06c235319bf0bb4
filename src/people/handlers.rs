//! People under `/api/v1/people`: the responders roles are assigned to.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::db;
use super::domain::PersonDraft;
use crate::error::AppResult;
use crate::http::extract::{ApiJson, IdempotencyKey};
use crate::idempotency;
use crate::state::AppState;

pub async fn list(State(state): State<AppState>) -> AppResult<Json<Value>> {
    Ok(Json(json!({ "items": db::list(&state.pool).await? })))
}

pub async fn create(
    State(state): State<AppState>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<PersonDraft>,
) -> AppResult<Response> {
    const SCOPE: &str = "POST /api/v1/people";
    let mut tx = state.pool.begin().await?;
    if let Some(k) = &idem
        && let Some(replay) = idempotency::claim(&mut tx, SCOPE, k, &body.raw).await?
    {
        return Ok(replay.into_response());
    }
    let person = db::insert(&mut *tx, &body.value.validated()?).await?;
    let view = json!(person);
    if let Some(k) = &idem {
        idempotency::remember(&mut tx, SCOPE, k, StatusCode::CREATED, &view).await?;
    }
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}
