//! The incident_claims table.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;

use crate::error::AppResult;

/// A claim with its claimant.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Claim {
    pub id: i64,
    pub subject: String,
    /// The claimant's handle and name
    pub handle: String,
    pub name: String,
    #[serde(skip)]
    pub person_id: i64,
    pub claimed_at: DateTime<Utc>,
    pub renewed_at: DateTime<Utc>,
    /// When it lapses unless renewed
    pub expires_at: DateTime<Utc>,
    pub released_at: Option<DateTime<Utc>>,
    pub released_by: Option<String>,
}

/// Claims still held: not released and not lapsed, oldest first.
pub async fn held(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Vec<Claim>> {
    Ok(sqlx::query_as!(
        Claim,
        r#"select c.id, c.subject, p.handle, p.name, c.person_id, c.claimed_at, c.renewed_at,
                  c.expires_at, c.released_at, c.released_by
           from incident_claims c join people p on p.id = c.person_id
           where c.incident_id = $1 and c.released_at is null and c.expires_at > now()
           order by c.claimed_at, c.id"#,
        incident_id
    )
    .fetch_all(e)
    .await?)
}

/// One claim of the incident, in whatever state.
pub async fn find(e: impl PgExecutor<'_>, incident_id: i64, id: i64) -> AppResult<Option<Claim>> {
    Ok(sqlx::query_as!(
        Claim,
        r#"select c.id, c.subject, p.handle, p.name, c.person_id, c.claimed_at, c.renewed_at,
                  c.expires_at, c.released_at, c.released_by
           from incident_claims c join people p on p.id = c.person_id
           where c.incident_id = $1 and c.id = $2
           for update of c"#,
        incident_id,
        id
    )
    .fetch_optional(e)
    .await?)
}

pub async fn insert(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    person_id: i64,
    subject: &str,
    minutes: i64,
) -> AppResult<Claim> {
    Ok(sqlx::query_as!(
        Claim,
        r#"with c as (
             insert into incident_claims (incident_id, person_id, subject, expires_at)
             values ($1, $2, $3, now() + make_interval(mins => $4::int))
             returning *)
           select c.id, c.subject, p.handle, p.name, c.person_id, c.claimed_at, c.renewed_at,
                  c.expires_at, c.released_at, c.released_by
           from c join people p on p.id = c.person_id"#,
        incident_id,
        person_id,
        subject,
        minutes as i32
    )
    .fetch_one(e)
    .await?)
}

/// Holds the claim `minutes` longer from now.
pub async fn renew(e: impl PgExecutor<'_>, id: i64, minutes: i64) -> AppResult<()> {
    sqlx::query!(
        r#"update incident_claims
           set renewed_at = now(), expires_at = now() + make_interval(mins => $2::int)
           where id = $1"#,
        id,
        minutes as i32
    )
    .execute(e)
    .await?;
    Ok(())
}

pub async fn release(e: impl PgExecutor<'_>, id: i64, by: &str) -> AppResult<()> {
    sqlx::query!(
        "update incident_claims set released_at = now(), released_by = $2 where id = $1",
        id,
        by
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Releases every claim of the incident still held (not released, not lapsed) as `by`; returns
/// their ids.
pub async fn release_held(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    by: &str,
) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"update incident_claims set released_at = now(), released_by = $2
           where incident_id = $1 and released_at is null and expires_at > now()
           returning id"#,
        incident_id,
        by
    )
    .fetch_all(e)
    .await?)
}
