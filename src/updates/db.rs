//! The stakeholder_updates table.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;

use crate::error::AppResult;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Update {
    pub id: i64,
    /// internal, executives or customers
    pub audience: String,
    pub body: String,
    pub sent_at: DateTime<Utc>,
    pub author: String,
    pub recorded_at: DateTime<Utc>,
}

pub struct NewUpdate<'a> {
    pub incident_id: i64,
    pub audience: &'a str,
    pub body: &'a str,
    pub sent_at: DateTime<Utc>,
    pub author: &'a str,
    pub author_id: Option<i64>,
}

pub async fn insert(e: impl PgExecutor<'_>, u: &NewUpdate<'_>) -> AppResult<Update> {
    Ok(sqlx::query_as!(
        Update,
        r#"insert into stakeholder_updates (incident_id, audience, body, sent_at, author, author_id)
           values ($1, $2, $3, $4, $5, $6)
           returning id, audience, body, sent_at, author, recorded_at"#,
        u.incident_id,
        u.audience,
        u.body,
        u.sent_at,
        u.author,
        u.author_id
    )
    .fetch_one(e)
    .await?)
}

pub async fn for_incident(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Vec<Update>> {
    Ok(sqlx::query_as!(
        Update,
        r#"select id, audience, body, sent_at, author, recorded_at
           from stakeholder_updates where incident_id = $1 order by sent_at, id"#,
        incident_id
    )
    .fetch_all(e)
    .await?)
}

/// When each of these incidents' updates went out, as (incident id, sent at).
pub async fn sent_for(
    e: impl PgExecutor<'_>,
    incident_ids: &[i64],
) -> AppResult<Vec<(i64, DateTime<Utc>)>> {
    Ok(sqlx::query!(
        "select incident_id, sent_at from stakeholder_updates where incident_id = any($1)",
        incident_ids
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.incident_id, r.sent_at))
    .collect())
}
