//! The one clock Quell trusts: the database's. Replicas' own clocks may drift; deadlines,
//! "never in the future" checks and durations all use `now()` from PostgreSQL.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;

use crate::error::AppResult;

/// The database's `now()`: the start time of the current transaction.
pub async fn now(e: impl PgExecutor<'_>) -> AppResult<DateTime<Utc>> {
    Ok(sqlx::query_scalar!(r#"select now() as "now!""#)
        .fetch_one(e)
        .await?)
}
