//! Queries on heartbeat monitors. Keys are looked up by their SHA-256 only.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use crate::error::{AppError, AppResult};

/// A monitor as stored: never its key.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Monitor {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    /// The service it watches, which owns its incidents
    pub service: String,
    /// A ping is expected at least this often
    pub interval_minutes: i32,
    /// How long after the interval a missing ping is still waited for
    pub grace_minutes: i32,
    /// The missed-ping alert's severity word (critical, error, warning, info)
    pub severity: String,
    /// The first characters of its key, to tell keys apart
    pub key_prefix: String,
    pub enabled: bool,
    /// The engine's word: waiting (no ping yet), up, down (missed)
    #[serde(skip)]
    pub state: String,
    pub last_ping_at: Option<DateTime<Utc>>,
    pub pings: i64,
    /// When it is missed unless pinged first
    pub due_at: DateTime<Utc>,
    /// Since when its pings are missing, while down
    pub down_since: Option<DateTime<Utc>>,
    pub created_by: String,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

pub struct NewMonitor<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub service_id: i64,
    pub interval_minutes: i32,
    pub grace_minutes: i32,
    pub severity: &'a str,
    pub key_hash: &'a [u8],
    pub key_prefix: &'a str,
    pub enabled: bool,
    pub created_by: &'a str,
}

fn taken(name: &str) -> impl FnOnce(sqlx::Error) -> AppError {
    AppError::on_unique(
        "heartbeat_monitors_name_key",
        format!("A heartbeat monitor named {name:?} already exists."),
    )
}

pub async fn insert(conn: &mut PgConnection, n: &NewMonitor<'_>) -> AppResult<Monitor> {
    let id = sqlx::query_scalar!(
        r#"insert into heartbeat_monitors (name, description, service_id, interval_minutes,
                                           grace_minutes, severity, key_hash, key_prefix, enabled,
                                           created_by, due_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
                   now() + make_interval(mins => $4::int4 + $5::int4))
           returning id"#,
        n.name,
        n.description,
        n.service_id,
        n.interval_minutes,
        n.grace_minutes,
        n.severity,
        n.key_hash,
        n.key_prefix,
        n.enabled,
        n.created_by,
    )
    .fetch_one(&mut *conn)
    .await
    .map_err(taken(n.name))?;
    get(&mut *conn, id).await
}

/// Every monitor (`id` `None`, those down first, then by name) or one.
async fn select(e: impl PgExecutor<'_>, id: Option<Uuid>) -> AppResult<Vec<Monitor>> {
    Ok(sqlx::query_as!(
        Monitor,
        r#"select m.id, m.name, m.description, s.name as service, m.interval_minutes,
                  m.grace_minutes, m.severity, m.key_prefix, m.enabled, m.state, m.last_ping_at,
                  m.pings, m.due_at, m.down_since, m.created_by, m.version, m.created_at,
                  m.updated_at
           from heartbeat_monitors m join services s on s.id = m.service_id
           where $1::uuid is null or m.id = $1
           order by (m.state = 'down') desc, m.name
           limit 1000"#,
        id
    )
    .fetch_all(e)
    .await?)
}

pub async fn list(e: impl PgExecutor<'_>) -> AppResult<Vec<Monitor>> {
    select(e, None).await
}

pub async fn find(e: impl PgExecutor<'_>, id: Uuid) -> AppResult<Option<Monitor>> {
    Ok(select(e, Some(id)).await?.into_iter().next())
}

pub async fn get(e: impl PgExecutor<'_>, id: Uuid) -> AppResult<Monitor> {
    find(e, id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no heartbeat monitor {id}.")))
}

/// Locks the monitor for a change; its version as stored.
pub async fn lock(conn: &mut PgConnection, id: Uuid) -> AppResult<i32> {
    sqlx::query_scalar!(
        "select version from heartbeat_monitors where id = $1 for update",
        id
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| AppError::NotFound(format!("There is no heartbeat monitor {id}.")))
}

pub struct Settings<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub service_id: i64,
    pub interval_minutes: i32,
    pub grace_minutes: i32,
    pub severity: &'a str,
    pub enabled: bool,
}

/// New settings; the due time follows the new interval and grace from the last ping (or now,
/// for a monitor turned on again or never pinged).
pub async fn update(conn: &mut PgConnection, id: Uuid, s: &Settings<'_>) -> AppResult<Monitor> {
    sqlx::query!(
        r#"update heartbeat_monitors
           set name = $2, description = $3, service_id = $4, interval_minutes = $5,
               grace_minutes = $6, severity = $7,
               due_at = case when enabled = $8 and last_ping_at is not null
                             then last_ping_at + make_interval(mins => $5::int4 + $6::int4)
                             else now() + make_interval(mins => $5::int4 + $6::int4) end,
               state = case when not enabled and $8 then 'waiting' else state end,
               down_since = case when not enabled and $8 then null else down_since end,
               enabled = $8, version = version + 1, updated_at = now()
           where id = $1"#,
        id,
        s.name,
        s.description,
        s.service_id,
        s.interval_minutes,
        s.grace_minutes,
        s.severity,
        s.enabled,
    )
    .execute(&mut *conn)
    .await
    .map_err(taken(s.name))?;
    get(&mut *conn, id).await
}

pub async fn delete(e: impl PgExecutor<'_>, id: Uuid) -> AppResult<()> {
    sqlx::query!("delete from heartbeat_monitors where id = $1", id)
        .execute(e)
        .await?;
    Ok(())
}

/// A ping that found its monitor: whether the monitor was down (its alert then resolves).
pub struct Pinged {
    pub id: Uuid,
    pub name: String,
    pub was_down: bool,
}

/// Records a ping of the monitor named by id or by name whose key hashes to `key_hash`; `None`
/// when no monitor has both.
pub async fn ping(
    conn: &mut PgConnection,
    id: Option<Uuid>,
    name: Option<&str>,
    key_hash: &[u8],
) -> AppResult<Option<Pinged>> {
    Ok(sqlx::query_as!(
        Pinged,
        r#"with old as (
               select id, state from heartbeat_monitors
               where key_hash = $3 and (id = $1 or name = $2)
               for update)
           update heartbeat_monitors m
           set last_ping_at = now(), pings = pings + 1, state = 'up', down_since = null,
               due_at = now() + make_interval(mins => interval_minutes + grace_minutes)
           from old where m.id = old.id
           returning m.id, m.name, (old.state = 'down') as "was_down!""#,
        id,
        name,
        key_hash,
    )
    .fetch_optional(conn)
    .await?)
}

/// A monitor whose ping is missing, as its alert tells it.
pub struct Missed {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    pub service: String,
    pub severity: String,
    pub interval_minutes: i32,
    pub grace_minutes: i32,
    pub last_ping_at: Option<DateTime<Utc>>,
}

/// Marks down up to `limit` monitors past their due time, claimed `SKIP LOCKED` so each is
/// missed by one replica, once.
pub async fn take_missed(conn: &mut PgConnection, limit: i64) -> AppResult<Vec<Missed>> {
    Ok(sqlx::query_as!(
        Missed,
        r#"with due as (
               select id from heartbeat_monitors
               where enabled and state <> 'down' and due_at <= now()
               order by due_at limit $1
               for update skip locked)
           update heartbeat_monitors m set state = 'down', down_since = now()
           from due where m.id = due.id
           returning m.id, m.name, m.description,
                     (select s.name from services s where s.id = m.service_id) as "service!",
                     m.severity, m.interval_minutes, m.grace_minutes, m.last_ping_at"#,
        limit
    )
    .fetch_all(conn)
    .await?)
}

/// Seconds until the next monitor is due.
pub async fn next_due(e: impl PgExecutor<'_>) -> AppResult<Option<f64>> {
    Ok(sqlx::query_scalar!(
        r#"select extract(epoch from min(due_at) - now())::float8 from heartbeat_monitors
           where enabled and state <> 'down'"#
    )
    .fetch_one(e)
    .await?)
}

/// The integration missed heartbeats come from: `None` until the first monitor made it.
pub async fn source_id(e: impl PgExecutor<'_>) -> AppResult<Option<Uuid>> {
    Ok(
        sqlx::query_scalar!("select integration_id from heartbeat_settings where id")
            .fetch_one(e)
            .await?,
    )
}

/// The same, locked while it is read (to make it once).
pub async fn source(conn: &mut PgConnection) -> AppResult<Option<Uuid>> {
    Ok(
        sqlx::query_scalar!("select integration_id from heartbeat_settings where id for update")
            .fetch_one(conn)
            .await?,
    )
}

pub async fn set_source(e: impl PgExecutor<'_>, integration_id: Uuid) -> AppResult<()> {
    sqlx::query!(
        "update heartbeat_settings set integration_id = $1 where id",
        integration_id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// The open alerts of Quell's heartbeats whose monitor is gone or paused: nothing will ping them
/// resolved, so the engine resolves them.
pub async fn orphaned(conn: &mut PgConnection, source: Uuid) -> AppResult<Vec<String>> {
    Ok(sqlx::query_scalar!(
        r#"select a.dedup_key from alerts a
           where a.integration_id = $1 and a.status <> 'resolved' and a.retained_from = 'infinity'
             and not exists (select 1 from heartbeat_monitors m
                             where m.enabled and a.dedup_key = 'heartbeat:' || m.id::text)
           limit 100"#,
        source
    )
    .fetch_all(conn)
    .await?)
}
