//! Channels and the notifications outbox.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::PgExecutor;

use crate::error::{AppError, AppResult};

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Channel {
    pub id: i64,
    pub name: String,
    /// webhook or slack
    pub kind: String,
    pub url: String,
    pub enabled: bool,
    pub created_at: DateTime<Utc>,
}

pub async fn insert_channel(
    e: impl PgExecutor<'_>,
    name: &str,
    kind: &str,
    url: &str,
    secret: Option<&str>,
) -> AppResult<Channel> {
    sqlx::query_as!(
        Channel,
        r#"insert into notification_channels (name, kind, url, secret) values ($1, $2, $3, $4)
           returning id, name, kind, url, enabled, created_at"#,
        name,
        kind,
        url,
        secret
    )
    .fetch_one(e)
    .await
    .map_err(AppError::on_unique(
        "notification_channels_name_key",
        format!("A channel named {name:?} exists."),
    ))
}

pub async fn channels(e: impl PgExecutor<'_>) -> AppResult<Vec<Channel>> {
    Ok(sqlx::query_as!(
        Channel,
        "select id, name, kind, url, enabled, created_at from notification_channels order by name"
    )
    .fetch_all(e)
    .await?)
}

pub async fn delete_channel(e: impl PgExecutor<'_>, id: i64) -> AppResult<bool> {
    Ok(
        sqlx::query!("delete from notification_channels where id = $1", id)
            .execute(e)
            .await?
            .rows_affected()
            > 0,
    )
}

/// Queues `payload` for every enabled channel, in the caller's transaction.
pub async fn enqueue(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    event: &str,
    payload: &Value,
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into notifications (channel_id, incident_id, event, payload)
           select id, $1, $2, $3 from notification_channels where enabled"#,
        incident_id,
        event,
        payload
    )
    .execute(e)
    .await?;
    Ok(())
}

/// A notification taken for delivery, with where it goes.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: i64,
    pub attempts: i32,
    pub payload: Value,
    pub kind: String,
    pub url: String,
    pub secret: Option<String>,
}

/// Takes up to `limit` due notifications under a lease: their next attempt moves `lease_secs`
/// ahead, so no other sender takes them meanwhile, and a sender that dies leaves them to be
/// retried when the lease ends.
pub async fn claim(e: impl PgExecutor<'_>, limit: i64, lease_secs: f64) -> AppResult<Vec<Claimed>> {
    Ok(sqlx::query_as!(
        Claimed,
        r#"with taken as (
               update notifications n
               set attempts = n.attempts + 1,
                   next_attempt_at = now() + make_interval(secs => $2)
               where n.id in (select id from notifications
                              where state = 'pending' and next_attempt_at <= now()
                              order by next_attempt_at limit $1
                              for update skip locked)
               returning n.id, n.attempts, n.payload, n.channel_id)
           select t.id as "id!", t.attempts as "attempts!", t.payload as "payload!",
                  c.kind, c.url, c.secret
           from taken t join notification_channels c on c.id = t.channel_id"#,
        limit,
        lease_secs
    )
    .fetch_all(e)
    .await?)
}

pub async fn delivered(e: impl PgExecutor<'_>, id: i64) -> AppResult<()> {
    sqlx::query!(
        r#"update notifications set state = 'delivered', delivered_at = now(), last_error = null
           where id = $1"#,
        id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Records a failed attempt: retried after `retry_in_secs`, or given up (`None`).
pub async fn failed(
    e: impl PgExecutor<'_>,
    id: i64,
    error: &str,
    retry_in_secs: Option<f64>,
) -> AppResult<()> {
    sqlx::query!(
        r#"update notifications
           set last_error = $2,
               state = case when $3::float8 is null then 'failed' else 'pending' end,
               next_attempt_at = now() + make_interval(secs => coalesce($3, 0))
           where id = $1"#,
        id,
        error,
        retry_in_secs
    )
    .execute(e)
    .await?;
    Ok(())
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Delivery {
    pub id: i64,
    pub channel: String,
    pub event: String,
    /// pending, delivered or failed
    pub state: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
}

pub async fn for_incident(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Vec<Delivery>> {
    Ok(sqlx::query_as!(
        Delivery,
        r#"select n.id, c.name as channel, n.event, n.state, n.attempts, n.last_error,
                  n.created_at, n.delivered_at
           from notifications n join notification_channels c on c.id = n.channel_id
           where n.incident_id = $1 order by n.id"#,
        incident_id
    )
    .fetch_all(e)
    .await?)
}
