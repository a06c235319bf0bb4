//! The shapes an API change shares: one transaction (run again if PostgreSQL broke it off to
//! end a deadlock, `transaction::write`), then the answer — the stored value with its ETag,
//! or 204 for a deletion. A handler parses its request and names its action; this does the rest.

use axum::http::StatusCode;
use axum::response::Response;
use sqlx::PgPool;

use super::extract::with_etag;
use crate::error::AppResult;
use crate::transaction::{Attempt, Within};

/// A stored value with a version, answered with its ETag.
pub trait Versioned: serde::Serialize {
    fn version(&self) -> i32;
}

/// Runs `change` in a transaction of its own and answers `status` (201 for a create, 200 for a
/// replace) with the value it stored and that value's ETag.
pub async fn versioned<'a, T, F>(
    pool: &PgPool,
    status: StatusCode,
    change: F,
) -> AppResult<Response>
where
    T: Versioned,
    F: for<'t> FnMut(&'t mut sqlx::PgConnection, Within<'t, 'a>) -> Attempt<'t, T>,
{
    let stored = crate::transaction::write(pool, change).await?;
    Ok(with_etag(status, stored.version(), &stored))
}

/// Runs a deletion in a transaction of its own and answers 204.
pub async fn removed<'a, T, F>(pool: &PgPool, change: F) -> AppResult<StatusCode>
where
    F: for<'t> FnMut(&'t mut sqlx::PgConnection, Within<'t, 'a>) -> Attempt<'t, T>,
{
    crate::transaction::write(pool, change).await?;
    Ok(StatusCode::NO_CONTENT)
}
