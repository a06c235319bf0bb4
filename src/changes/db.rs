//! Queries on changes.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::PgExecutor;
use uuid::Uuid;

use super::domain::{ChangeCursor, ChangeKind};
use crate::error::AppResult;

/// A change as the API and the pages show it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Change {
    pub id: i64,
    /// The changed service; null only for a sender's change that named no known service
    pub service: Option<String>,
    pub environment: String,
    /// deploy, config, feature_flag or infrastructure
    pub kind: String,
    pub summary: String,
    pub author: String,
    pub link: String,
    pub occurred_at: DateTime<Utc>,
    pub recorded_at: DateTime<Utc>,
    /// Who reported it: `api`, or the name of the integration that sent it
    pub source: String,
}

pub struct NewChange<'a> {
    pub service_id: Option<i64>,
    pub environment: &'a str,
    pub kind: ChangeKind,
    pub summary: &'a str,
    pub author: &'a str,
    pub link: &'a str,
    pub occurred_at: DateTime<Utc>,
    pub details: &'a Value,
    /// The integration that sent it, and what it sent; `None` for the API.
    pub sent: Option<(Uuid, &'a Value)>,
}

pub async fn insert(e: impl PgExecutor<'_>, c: &NewChange<'_>) -> AppResult<i64> {
    let (integration_id, raw) = c.sent.map_or((None, None), |(i, r)| (Some(i), Some(r)));
    Ok(sqlx::query_scalar!(
        r#"insert into changes (service_id, environment, kind, summary, author, link, occurred_at,
                                details, integration_id, raw)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           returning id"#,
        c.service_id,
        c.environment,
        c.kind.as_str(),
        c.summary,
        c.author,
        c.link,
        c.occurred_at,
        c.details,
        integration_id,
        raw,
    )
    .fetch_one(e)
    .await?)
}

/// Which changes a list shows; `None` means any.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub service: Option<String>,
    pub kind: Option<ChangeKind>,
    /// From this moment on (inclusive)
    pub from: Option<DateTime<Utc>>,
    /// Up to this moment (exclusive)
    pub until: Option<DateTime<Utc>>,
}

/// Newest first, after `after` when given.
pub async fn list(
    e: impl PgExecutor<'_>,
    f: &Filter,
    after: Option<ChangeCursor>,
    limit: i64,
) -> AppResult<Vec<Change>> {
    Ok(sqlx::query_as!(
        Change,
        r#"select c.id, s.name as "service?", c.environment, c.kind, c.summary, c.author, c.link,
                  c.occurred_at, c.recorded_at, coalesce(i.name, 'api') as "source!"
           from changes c
           left join services s on s.id = c.service_id
           left join integrations i on i.id = c.integration_id
           where ($1::text is null or s.name = $1)
             and ($2::text is null or c.kind = $2)
             and ($3::timestamptz is null or c.occurred_at >= $3)
             and ($4::timestamptz is null or c.occurred_at < $4)
             and ($5::timestamptz is null or (c.occurred_at, c.id) < ($5, $6))
           order by c.occurred_at desc, c.id desc
           limit $7"#,
        f.service,
        f.kind.map(ChangeKind::as_str),
        f.from,
        f.until,
        after.map(|c| c.occurred_at),
        after.map_or(0, |c| c.id),
        limit
    )
    .fetch_all(e)
    .await?)
}

pub async fn get(e: impl PgExecutor<'_>, id: i64) -> AppResult<Option<Change>> {
    Ok(sqlx::query_as!(
        Change,
        r#"select c.id, s.name as "service?", c.environment, c.kind, c.summary, c.author, c.link,
                  c.occurred_at, c.recorded_at, coalesce(i.name, 'api') as "source!"
           from changes c
           left join services s on s.id = c.service_id
           left join integrations i on i.id = c.integration_id
           where c.id = $1"#,
        id
    )
    .fetch_optional(e)
    .await?)
}
