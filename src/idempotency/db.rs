//! The idempotency_keys table.

use serde_json::Value;
use sqlx::PgExecutor;

use super::domain::Key;
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
    key: &Key,
    request: &Value,
) -> AppResult<bool> {
    let inserted = sqlx::query!(
        r#"insert into idempotency_keys (person_id, scope, key, request) values ($1, $2, $3, $4)
           on conflict (person_id, scope, key) do nothing"#,
        key.person_id,
        scope,
        key.key,
        request
    )
    .execute(e)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

pub async fn find(e: impl PgExecutor<'_>, scope: &str, key: &Key) -> AppResult<Option<Stored>> {
    Ok(sqlx::query_as!(
        Stored,
        r#"select request, response_status, response_body from idempotency_keys
           where person_id = $1 and scope = $2 and key = $3"#,
        key.person_id,
        scope,
        key.key
    )
    .fetch_optional(e)
    .await?)
}

pub async fn store_response(
    e: impl PgExecutor<'_>,
    scope: &str,
    key: &Key,
    status: i16,
    body: &Value,
) -> AppResult<()> {
    sqlx::query!(
        r#"update idempotency_keys set response_status = $4, response_body = $5
           where person_id = $1 and scope = $2 and key = $3"#,
        key.person_id,
        scope,
        key.key,
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
