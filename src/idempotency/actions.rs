//! Claiming a key in the create's own transaction, and replaying the answer it stored.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use sqlx::{PgConnection, PgPool};

use super::db;
use super::domain::Key;
use crate::error::{AppError, AppResult};

/// A stored answer to send again.
pub struct Replay {
    pub status: StatusCode,
    pub body: Value,
}

impl IntoResponse for Replay {
    fn into_response(self) -> Response {
        let mut res = (self.status, Json(self.body)).into_response();
        res.headers_mut().insert(
            "idempotent-replayed",
            "true".parse().expect("static header"),
        );
        res
    }
}

/// Claims `key` for this request. `Ok(Some(replay))` when the same request was already answered;
/// 422 when the key was used for another body.
async fn claim(
    conn: &mut PgConnection,
    scope: &str,
    key: &Key,
    request: &Value,
) -> AppResult<Option<Replay>> {
    if db::try_claim(&mut *conn, scope, key, request).await? {
        return Ok(None);
    }
    let stored = db::find(&mut *conn, scope, key)
        .await?
        .ok_or_else(|| AppError::Internal("idempotency key vanished".into()))?;
    if &stored.request != request {
        return Err(AppError::IdempotencyKeyReused);
    }
    match (stored.response_status, stored.response_body) {
        (Some(status), Some(body)) => Ok(Some(Replay {
            status: StatusCode::from_u16(status as u16)
                .map_err(|e| AppError::Internal(e.to_string()))?,
            body,
        })),
        _ => Err(AppError::Internal(
            "idempotency key without an answer".into(),
        )),
    }
}

/// Stores the answer of a claimed key, in the same transaction as the create.
async fn remember(
    conn: &mut PgConnection,
    scope: &str,
    key: &Key,
    status: StatusCode,
    body: &Value,
) -> AppResult<()> {
    db::store_response(conn, scope, key, status.as_u16() as i16, body).await
}

/// What a create with an optional `Idempotency-Key` produced.
pub enum Created<T> {
    /// Made now; answer 201 with it.
    Fresh(T),
    /// The same request was answered before; send that answer again.
    Replayed(Replay),
}

impl<T> Created<T> {
    /// The response: `fresh` builds it for a new resource, a replay is sent as stored.
    pub fn respond(self, fresh: impl FnOnce(T) -> Response) -> Response {
        match self {
            Self::Fresh(t) => fresh(t),
            Self::Replayed(r) => r.into_response(),
        }
    }
}

/// Runs `create` in one transaction with the claim of `key` and the record of its answer (201
/// with `create`'s result as the body).
pub async fn create_once<T, F>(
    pool: &PgPool,
    scope: &str,
    key: Option<&Key>,
    request: &Value,
    create: F,
) -> AppResult<Created<T>>
where
    T: Serialize,
    F: AsyncFnOnce(&mut PgConnection) -> AppResult<T>,
{
    let mut tx = crate::transaction::begin(pool).await?;
    if let Some(k) = key
        && let Some(replay) = claim(&mut tx, scope, k, request).await?
    {
        return Ok(Created::Replayed(replay));
    }
    let created = create(&mut tx).await?;
    if let Some(k) = key {
        let body = serde_json::to_value(&created).map_err(|e| AppError::Internal(e.to_string()))?;
        remember(&mut tx, scope, k, StatusCode::CREATED, &body).await?;
    }
    tx.commit().await?;
    Ok(Created::Fresh(created))
}
