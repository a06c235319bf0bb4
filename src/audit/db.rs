//! Queries on the audit log and the tally of refused attempts.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::{PgExecutor, PgPool};

use super::Actor;
use crate::error::AppResult;

pub async fn append(
    e: impl PgExecutor<'_>,
    actor: &Actor,
    action: &str,
    target: &str,
    outcome: &str,
    before: Option<Value>,
    after: Option<Value>,
) -> AppResult<i64> {
    Ok(sqlx::query_scalar!(
        r#"insert into audit_log
               (actor_id, actor, action, target, outcome, before, after, request_id, client_addr)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           returning id"#,
        actor.person_id,
        actor.name,
        action,
        target,
        outcome,
        before,
        after,
        actor.request_id,
        actor.client_addr,
    )
    .fetch_one(e)
    .await?)
}

/// Records a refused attempt. The first refusal of a kind, subject and address in a minute
/// appends an audit row; the rest of that minute only count.
pub async fn refusal(pool: &PgPool, actor: &Actor, action: &str, subject: &str) -> AppResult<()> {
    let addr = actor.client_addr.clone().unwrap_or_default();
    let counted = sqlx::query!(
        r#"update audit_refusal_tally set count = count + 1, last_at = now()
           where action = $1 and subject = $2 and client_addr = $3
             and window_start = date_trunc('minute', now())"#,
        action,
        subject,
        addr
    )
    .execute(pool)
    .await?;
    if counted.rows_affected() > 0 {
        return Ok(());
    }
    let mut tx = pool.begin().await?;
    let id = append(&mut *tx, actor, action, subject, "refused", None, None).await?;
    sqlx::query!(
        r#"insert into audit_refusal_tally (audit_id, action, subject, client_addr, window_start)
           values ($1, $2, $3, $4, date_trunc('minute', now()))
           on conflict (action, subject, client_addr, window_start)
           do update set count = audit_refusal_tally.count + 1, last_at = now()"#,
        id,
        action,
        subject,
        addr
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Entry {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: String,
    /// `ok` or `refused`
    pub outcome: String,
    /// For refusals: how many attempts this row stands for (all within its minute)
    pub count: i32,
    #[schema(value_type = Option<Object>)]
    pub before: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub after: Option<Value>,
    pub request_id: Option<String>,
    pub client_addr: Option<String>,
}

#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub action: Option<String>,
    pub actor: Option<String>,
    pub outcome: Option<String>,
    pub before_id: Option<i64>,
}

/// Newest first.
pub async fn list(e: impl PgExecutor<'_>, f: &Filter, limit: i64) -> AppResult<Vec<Entry>> {
    Ok(sqlx::query_as!(
        Entry,
        r#"select a.id, a.at, a.actor, a.action, a.target, a.outcome,
                  coalesce(t.count, 1) as "count!", a.before, a.after, a.request_id, a.client_addr
           from audit_log a left join audit_refusal_tally t on t.audit_id = a.id
           where ($1::text is null or a.action like $1 || '%')
             and ($2::text is null or a.actor ilike '%' || $2 || '%')
             and ($3::text is null or a.outcome = $3)
             and ($4::bigint is null or a.id < $4)
           order by a.id desc
           limit $5"#,
        f.action,
        f.actor,
        f.outcome,
        f.before_id,
        limit
    )
    .fetch_all(e)
    .await?)
}
