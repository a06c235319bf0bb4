//! The idempotency_keys table.

use serde_json::Value;
use sqlx::PgExecutor;

use crate::error::AppResult;

pub struct Stored {
    pub request: Value,
    pub response_status: Option<i16>,
    pub response_body: Option<Value>,
}

/// Inserts the key; false when it exists. A concurrent insert of the same key blocks here until
/// the other transaction ends.
pub async fn try_claim(
    e: impl PgExecutor<'_>,
    scope: &str,
    key: &str,
    request: &Value,
) -> AppResult<bool> {
    let inserted = sqlx::query!(
        r#"insert into idempotency_keys (scope, key, request) values ($1, $2, $3)
           on conflict (scope, key) do nothing"#,
        scope,
        key,
        request
    )
    .execute(e)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

pub async fn find(e: impl PgExecutor<'_>, scope: &str, key: &str) -> AppResult<Option<Stored>> {
    Ok(sqlx::query_as!(
        Stored,
        r#"select request, response_status, response_body from idempotency_keys
           where scope = $1 and key = $2"#,
        scope,
        key
    )
    .fetch_optional(e)
    .await?)
}

pub async fn store_response(
    e: impl PgExecutor<'_>,
    scope: &str,
    key: &str,
    status: i16,
    body: &Value,
) -> AppResult<()> {
    sqlx::query!(
        r#"update idempotency_keys set response_status = $3, response_body = $4
           where scope = $1 and key = $2"#,
        scope,
        key,
        status,
        body
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Forgets keys older than a day: a retry that late is a new request.
pub async fn purge_old(e: impl PgExecutor<'_>) -> AppResult<u64> {
    Ok(
        sqlx::query!("delete from idempotency_keys where created_at < now() - interval '1 day'")
            .execute(e)
            .await?
            .rows_affected(),
    )
}
