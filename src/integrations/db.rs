//! Queries on the integrations table. Keys are looked up by their SHA-256 only.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;
use uuid::Uuid;

use super::domain::{Flapping, Format, OnAllResolved};
use crate::error::{AppError, AppResult};

/// An integration as admins see it: never its key.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Integration {
    pub id: Uuid,
    pub name: String,
    pub format: Format,
    /// The first characters of the key, to tell keys apart
    pub key_prefix: String,
    /// Whether Standard Webhooks signatures are accepted (generic integrations)
    pub signed: bool,
    pub on_all_resolved: OnAllResolved,
    /// When its alerts count as flapping, and how long one must stay resolved
    pub flapping: Flapping,
    pub enabled: bool,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub key_rotated_at: DateTime<Utc>,
    /// Where its sender posts, relative to Quell's address
    pub endpoint: String,
}

/// What the ingest path needs to check a request and act on its alerts.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub id: Uuid,
    pub name: String,
    pub format: Format,
    pub key_hash: Vec<u8>,
    pub signing_secret: Option<String>,
    pub on_all_resolved: OnAllResolved,
    pub flapping: Flapping,
    pub enabled: bool,
}

struct Row {
    id: Uuid,
    name: String,
    format: String,
    key_prefix: String,
    signed: bool,
    on_all_resolved: String,
    flap_threshold: i32,
    flap_window_minutes: i32,
    flap_settle_minutes: i32,
    enabled: bool,
    version: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    key_rotated_at: DateTime<Utc>,
}

fn bad(e: crate::domain::DomainError) -> AppError {
    AppError::Internal(format!("{e:?}"))
}

impl TryFrom<Row> for Integration {
    type Error = AppError;
    fn try_from(r: Row) -> AppResult<Self> {
        let format = Format::parse(&r.format).map_err(bad)?;
        Ok(Self {
            endpoint: format.endpoint(&r.id.to_string()),
            id: r.id,
            name: r.name,
            format,
            key_prefix: r.key_prefix,
            signed: r.signed,
            on_all_resolved: OnAllResolved::parse(&r.on_all_resolved).map_err(bad)?,
            flapping: Flapping {
                threshold: r.flap_threshold,
                window_minutes: r.flap_window_minutes,
                settle_minutes: r.flap_settle_minutes,
            },
            enabled: r.enabled,
            version: r.version,
            created_at: r.created_at,
            updated_at: r.updated_at,
            key_rotated_at: r.key_rotated_at,
        })
    }
}

pub struct NewIntegration<'a> {
    pub name: &'a str,
    pub format: Format,
    pub key_hash: &'a [u8],
    pub key_prefix: &'a str,
    pub signing_secret: Option<&'a str>,
    pub on_all_resolved: OnAllResolved,
    pub flapping: Flapping,
}

pub async fn insert(e: impl PgExecutor<'_>, n: &NewIntegration<'_>) -> AppResult<Integration> {
    sqlx::query_as!(
        Row,
        r#"insert into integrations (name, format, key_hash, key_prefix, signing_secret, on_all_resolved,
                                    flap_threshold, flap_window_minutes, flap_settle_minutes)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           returning id, name, format, key_prefix, signing_secret is not null as "signed!",
                     on_all_resolved, flap_threshold, flap_window_minutes, flap_settle_minutes,
                  enabled, version, created_at, updated_at, key_rotated_at"#,
        n.name,
        n.format.as_str(),
        n.key_hash,
        n.key_prefix,
        n.signing_secret,
        n.on_all_resolved.as_str(),
        n.flapping.threshold,
        n.flapping.window_minutes,
        n.flapping.settle_minutes,
    )
    .fetch_one(e)
    .await
    .map_err(AppError::on_unique(
        "integrations_name_key",
        format!("An integration named {:?} already exists.", n.name),
    ))?
    .try_into()
}

pub async fn list(e: impl PgExecutor<'_>) -> AppResult<Vec<Integration>> {
    sqlx::query_as!(
        Row,
        r#"select id, name, format, key_prefix, signing_secret is not null as "signed!",
                  on_all_resolved, flap_threshold, flap_window_minutes, flap_settle_minutes,
                  enabled, version, created_at, updated_at, key_rotated_at
           from integrations order by name"#
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(TryInto::try_into)
    .collect()
}

pub async fn get(e: impl PgExecutor<'_>, id: Uuid) -> AppResult<Integration> {
    sqlx::query_as!(
        Row,
        r#"select id, name, format, key_prefix, signing_secret is not null as "signed!",
                  on_all_resolved, flap_threshold, flap_window_minutes, flap_settle_minutes,
                  enabled, version, created_at, updated_at, key_rotated_at
           from integrations where id = $1"#,
        id
    )
    .fetch_optional(e)
    .await?
    .ok_or_else(|| AppError::NotFound(format!("There is no integration {id}.")))?
    .try_into()
}

/// A new key (and signing secret, for integrations that have one); the old ones stop working
/// when the transaction commits.
/// A new key; a signed integration's signing secret becomes `signing_secret` (`None` keeps it).
pub async fn rotate(
    e: impl PgExecutor<'_>,
    id: Uuid,
    key_hash: &[u8],
    key_prefix: &str,
    signing_secret: Option<&str>,
) -> AppResult<Integration> {
    sqlx::query_as!(
        Row,
        r#"update integrations
           set key_hash = $2, key_prefix = $3,
               signing_secret = case when signing_secret is null then null
                                     else coalesce($4, signing_secret) end,
               key_rotated_at = now(), updated_at = now(), version = version + 1
           where id = $1
           returning id, name, format, key_prefix, signing_secret is not null as "signed!",
                     on_all_resolved, flap_threshold, flap_window_minutes, flap_settle_minutes,
                  enabled, version, created_at, updated_at, key_rotated_at"#,
        id,
        key_hash,
        key_prefix,
        signing_secret,
    )
    .fetch_optional(e)
    .await?
    .ok_or_else(|| AppError::NotFound(format!("There is no integration {id}.")))?
    .try_into()
}

/// What an integration's settings become.
pub struct Settings<'a> {
    pub name: &'a str,
    pub enabled: bool,
    pub on_all_resolved: OnAllResolved,
    pub flapping: Flapping,
}

/// Renames, enables or disables, or changes what all-resolved does and when alerts flap.
pub async fn update(e: impl PgExecutor<'_>, id: Uuid, s: &Settings<'_>) -> AppResult<Integration> {
    let name = s.name;
    sqlx::query_as!(
        Row,
        r#"update integrations
           set name = $2, enabled = $3, on_all_resolved = $4, flap_threshold = $5,
               flap_window_minutes = $6, flap_settle_minutes = $7, updated_at = now(),
               version = version + 1
           where id = $1
           returning id, name, format, key_prefix, signing_secret is not null as "signed!",
                     on_all_resolved, flap_threshold, flap_window_minutes, flap_settle_minutes,
                  enabled, version, created_at, updated_at, key_rotated_at"#,
        id,
        name,
        s.enabled,
        s.on_all_resolved.as_str(),
        s.flapping.threshold,
        s.flapping.window_minutes,
        s.flapping.settle_minutes,
    )
    .fetch_optional(e)
    .await
    .map_err(AppError::on_unique(
        "integrations_name_key",
        format!("An integration named {name:?} already exists."),
    ))?
    .ok_or_else(|| AppError::NotFound(format!("There is no integration {id}.")))?
    .try_into()
}

/// The integrations a batch of requests names, by id or by key hash, in one query.
pub async fn credentials(
    e: impl PgExecutor<'_>,
    ids: &[Uuid],
    key_hashes: &[Vec<u8>],
) -> AppResult<Vec<Credentials>> {
    sqlx::query!(
        r#"select id, name, format, key_hash, signing_secret, on_all_resolved, enabled,
                  flap_threshold, flap_window_minutes, flap_settle_minutes
           from integrations where id = any($1) or key_hash = any($2)"#,
        ids,
        key_hashes,
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| {
        Ok(Credentials {
            id: r.id,
            name: r.name,
            format: Format::parse(&r.format).map_err(bad)?,
            key_hash: r.key_hash,
            signing_secret: r.signing_secret,
            on_all_resolved: OnAllResolved::parse(&r.on_all_resolved).map_err(bad)?,
            flapping: Flapping {
                threshold: r.flap_threshold,
                window_minutes: r.flap_window_minutes,
                settle_minutes: r.flap_settle_minutes,
            },
            enabled: r.enabled,
        })
    })
    .collect()
}

/// Alerts first received per integration in the last 24 hours, and the latest delivery, for the
/// admin list (bounded by the received-at index, however many alerts are kept).
pub async fn activity(
    e: impl PgExecutor<'_>,
) -> AppResult<Vec<(Uuid, i64, Option<DateTime<Utc>>)>> {
    Ok(sqlx::query!(
        r#"select integration_id, count(*) as "alerts!", max(last_received_at) as last
           from alerts where received_at > now() - interval '24 hours'
           group by integration_id"#
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.integration_id, r.alerts, r.last))
    .collect())
}
