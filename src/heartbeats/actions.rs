//! Changes to heartbeat monitors, each with its audit row in the same transaction, and the
//! pings their jobs send. A new key comes from the operating system's random source and is
//! shown once; only its hash stays.

use argon2::password_hash::rand_core::{OsRng, RngCore};
use serde::Deserialize;
use sqlx::PgConnection;
use uuid::Uuid;

use super::db::{self, Monitor, NewMonitor, Pinged};
use super::domain::{check_description, check_name, check_severity, check_times};
use crate::audit::{self, Actor};
use crate::auth::domain::token_hash;
use crate::error::{AppError, AppResult};

/// A monitor as a person describes it (create: every field the defaults do not give; change:
/// the whole monitor again).
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MonitorDraft {
    /// Unique; part of Opsgenie's ping address
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The service it watches (its name)
    pub service: String,
    /// A ping is expected at least this often, 1 to 10080 minutes
    pub interval_minutes: i32,
    /// Waited for after the interval, 0 to 1440 minutes (default 0)
    #[serde(default)]
    pub grace_minutes: i32,
    /// The missed-ping alert's severity word: critical, error (default), warning, info
    #[serde(default)]
    pub severity: Option<String>,
    /// false pauses it: pings are recorded, nothing is missed (default true)
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// A monitor with its key, shown this once.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct MonitorWithKey {
    #[serde(flatten)]
    pub monitor: Monitor,
    /// Send it with every ping; it is not shown again
    pub key: String,
}

fn new_key() -> String {
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    crate::integrations::domain::key_from_bytes(&bytes)
}

/// The checked fields and the service's id.
struct Checked {
    name: String,
    description: String,
    service_id: i64,
    severity: String,
}

async fn check(conn: &mut PgConnection, d: &MonitorDraft) -> AppResult<Checked> {
    let name = check_name(&d.name)?;
    check_times(d.interval_minutes, d.grace_minutes)?;
    let severity = check_severity(d.severity.as_deref().unwrap_or("error"))?;
    let description = check_description(&d.description)?;
    let service = crate::services::db::find_by_name(&mut *conn, d.service.trim())
        .await?
        .ok_or_else(|| {
            AppError::invalid(
                "service",
                format!("there is no service named {:?}", d.service.trim()),
            )
        })?;
    Ok(Checked {
        name,
        description,
        service_id: service.id,
        severity,
    })
}

/// The integration missed heartbeats come from, made (by Quell, nobody knowing its key) the
/// first time it is needed.
pub async fn source(conn: &mut PgConnection) -> AppResult<Uuid> {
    if let Some(id) = db::source_id(&mut *conn).await? {
        return Ok(id);
    }
    if let Some(id) = db::source(&mut *conn).await? {
        return Ok(id);
    }
    let quell = Actor::system("Quell");
    let made = crate::integrations::actions::create(
        &mut *conn,
        &quell,
        "Quell heartbeats",
        "generic",
        None,
        None,
        None,
    )
    .await?;
    db::set_source(&mut *conn, made.integration.id).await?;
    Ok(made.integration.id)
}

pub async fn create(
    conn: &mut PgConnection,
    actor: &Actor,
    d: &MonitorDraft,
) -> AppResult<MonitorWithKey> {
    let c = check(conn, d).await?;
    source(conn).await?;
    let key = new_key();
    let prefix: String = key.chars().take(6).collect();
    let monitor = db::insert(
        conn,
        &NewMonitor {
            name: &c.name,
            description: &c.description,
            service_id: c.service_id,
            interval_minutes: d.interval_minutes,
            grace_minutes: d.grace_minutes,
            severity: &c.severity,
            key_hash: &token_hash(&key),
            key_prefix: &prefix,
            enabled: d.enabled.unwrap_or(true),
            created_by: &actor.name,
        },
    )
    .await?;
    audit::created(conn, actor, "heartbeat.create", &monitor.name, &monitor).await?;
    Ok(MonitorWithKey { monitor, key })
}

fn check_version(stored: i32, expected: Option<i32>) -> AppResult<()> {
    match expected {
        Some(v) if v != stored => Err(AppError::Stale {
            current_version: stored,
        }),
        _ => Ok(()),
    }
}

/// Replaces a monitor's settings (`version` from `If-Match`; `None` takes whatever is there).
pub async fn update(
    conn: &mut PgConnection,
    actor: &Actor,
    id: Uuid,
    d: &MonitorDraft,
    version: Option<i32>,
) -> AppResult<Monitor> {
    check_version(db::lock(conn, id).await?, version)?;
    let before = db::get(&mut *conn, id).await?;
    let c = check(conn, d).await?;
    let after = db::update(
        conn,
        id,
        &db::Settings {
            name: &c.name,
            description: &c.description,
            service_id: c.service_id,
            interval_minutes: d.interval_minutes,
            grace_minutes: d.grace_minutes,
            severity: &c.severity,
            // A replacement says the whole monitor: left out, it is watched, as when made.
            enabled: d.enabled.unwrap_or(true),
        },
    )
    .await?;
    audit::changed(
        conn,
        actor,
        "heartbeat.update",
        &after.name,
        &before,
        &after,
    )
    .await?;
    Ok(after)
}

pub async fn delete(
    conn: &mut PgConnection,
    actor: &Actor,
    id: Uuid,
    version: Option<i32>,
) -> AppResult<()> {
    check_version(db::lock(conn, id).await?, version)?;
    let before = db::get(&mut *conn, id).await?;
    db::delete(&mut *conn, id).await?;
    audit::deleted(conn, actor, "heartbeat.delete", &before.name, &before).await
}

/// Which monitor a ping names.
#[derive(Debug, Clone, Copy)]
pub enum Named<'a> {
    Id(&'a str),
    Name(&'a str),
}

/// Records a ping: the monitor must be named rightly and the key be its own; anything else is
/// refused alike, so a wrong guess learns nothing of which monitors exist.
pub async fn ping(conn: &mut PgConnection, named: Named<'_>, key: &str) -> AppResult<Pinged> {
    let hash = token_hash(key.trim());
    let found = match named {
        Named::Id(id) => match Uuid::parse_str(id.trim()) {
            Ok(id) => db::ping(conn, Some(id), None, &hash).await?,
            Err(_) => None,
        },
        Named::Name(name) => db::ping(conn, None, Some(name.trim()), &hash).await?,
    };
    found.ok_or_else(|| AppError::Unauthorized("the heartbeat or its key is wrong".into()))
}

/// Marks down up to `limit` monitors whose ping is missing (each claimed by one replica).
pub async fn take_missed(conn: &mut PgConnection, limit: i64) -> AppResult<Vec<db::Missed>> {
    db::take_missed(conn, limit).await
}
