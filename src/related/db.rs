//! Queries on related incidents.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;

use crate::domain::IncidentKey;
use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;

pub use crate::incident_ref::db::IncidentRef;

/// The incident with this key, if there is one `seen_by` may see.
pub async fn find(
    e: impl PgExecutor<'_>,
    key: IncidentKey,
    seen_by: SeenBy,
) -> AppResult<Option<IncidentRef>> {
    crate::incident_ref::db::by_key(e, key, seen_by).await
}

/// An incident related to the one asked about, with the link's note.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Related {
    /// `INC-184`
    #[schema(value_type = String)]
    pub key: IncidentKey,
    pub title: String,
    pub severity: String,
    pub status: String,
    pub service: Option<String>,
    pub detected_at: DateTime<Utc>,
    pub note: String,
    pub linked_by: String,
    pub linked_at: DateTime<Utc>,
}

/// The incidents linked to `incident_id` that `seen_by` may see, whichever side made the link,
/// oldest link first.
pub async fn list(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    seen_by: SeenBy,
) -> AppResult<Vec<Related>> {
    Ok(sqlx::query_as!(
        Related,
        r#"select i.number as "key!: IncidentKey", i.title, i.severity, i.status,
                  s.name as "service?", i.detected_at, l.note, l.linked_by, l.linked_at
           from incident_links l
           join incidents i
             on i.id = case when l.incident_id = $1 then l.related_id else l.incident_id end
           left join services s on s.id = i.service_id
           where (l.incident_id = $1 or l.related_id = $1)
             and incident_visible(i.restricted, i.id, $2)
           order by l.linked_at, i.number"#,
        incident_id,
        seen_by.sql()
    )
    .fetch_all(e)
    .await?)
}

/// Links two incidents; `false` when they were linked already.
pub async fn insert(
    e: impl PgExecutor<'_>,
    a: i64,
    b: i64,
    note: &str,
    by: &str,
    at: DateTime<Utc>,
) -> AppResult<bool> {
    let done = sqlx::query!(
        r#"insert into incident_links (incident_id, related_id, note, linked_by, linked_at)
           values (least($1::bigint, $2::bigint), greatest($1::bigint, $2::bigint), $3, $4, $5)
           on conflict do nothing"#,
        a,
        b,
        note,
        by,
        at
    )
    .execute(e)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Links two incidents with a note, or gives an existing link this note.
pub async fn upsert(
    e: impl PgExecutor<'_>,
    a: i64,
    b: i64,
    note: &str,
    by: &str,
    at: DateTime<Utc>,
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into incident_links (incident_id, related_id, note, linked_by, linked_at)
           values (least($1::bigint, $2::bigint), greatest($1::bigint, $2::bigint), $3, $4, $5)
           on conflict (incident_id, related_id) do update
           set note = excluded.note, linked_by = excluded.linked_by,
               linked_at = excluded.linked_at"#,
        a,
        b,
        note,
        by,
        at
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Removes the link between two incidents; the note it had, or `None` when there was none.
pub async fn delete(e: impl PgExecutor<'_>, a: i64, b: i64) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar!(
        r#"delete from incident_links
           where incident_id = least($1::bigint, $2::bigint)
             and related_id = greatest($1::bigint, $2::bigint)
           returning note"#,
        a,
        b
    )
    .fetch_optional(e)
    .await?)
}

/// An incident that may be related: same service or one it depends on, text that matches.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Suggestion {
    /// `INC-184`
    #[schema(value_type = String)]
    pub key: IncidentKey,
    pub title: String,
    pub severity: String,
    pub status: String,
    pub service: Option<String>,
    pub detected_at: DateTime<Utc>,
    /// How well its title, summary and impact match (PostgreSQL's ts_rank)
    pub rank: f32,
}

/// Incidents of `service_id` or anything it depends on (all the way down), other than the
/// incident itself and those already linked to it, whose title, summary or impact match `terms`
/// (a `to_tsquery`, see [`super::domain::search_terms`]); best match first, then the newest,
/// among the 50 most recent matches in each service's 200 most recent incidents.
pub async fn suggestions(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    service_id: i64,
    terms: &str,
    seen_by: SeenBy,
    limit: i64,
) -> AppResult<Vec<Suggestion>> {
    Ok(sqlx::query_as!(
        Suggestion,
        r#"with recursive scope(id) as (
               select $2::bigint
               union
               select sd.depends_on_id from service_dependencies sd join scope on sd.service_id = scope.id
           ), q as materialized (select to_tsquery('english', $3) as q),
           -- Each service's 200 most recent incidents, newest first from the index on
           -- (service_id, detected_at), and among them its 50 most recent matches: ranking every
           -- match of a busy service's years of history would cost more than the page. 200, not
           -- 500: a generic plan guesses a service holds 0.5 % of the incidents (500 at 100k),
           -- and with a limit at that guess it read the whole service by bitmap and sorted it
           -- (9,800 incidents, 30 ms on the incident page) instead of walking the index. The
           -- service is named as a range and the match is the function, not the operator, so
           -- the GIN index is not a way in: a generic plan (which cannot know how common the
           -- terms are) would otherwise AND the whole service with every match of a common word
           -- (27 ms at 100k incidents) where this walk stops after a few rows.
           candidates as (
               select c.* from scope, q, lateral (
                   select w.id, w.number, w.title, w.severity, w.status, w.service_id,
                          w.detected_at, ts_rank(w.search, q.q) as rank
                   from (select i.id, i.number, i.title, i.severity, i.status, i.service_id,
                                i.detected_at, i.search, i.restricted
                         from incidents i
                         where i.service_id >= scope.id and i.service_id <= scope.id
                         order by i.service_id, i.detected_at desc
                         limit 200) w
                   where w.id <> $1 and ts_match_vq(w.search, q.q)
                     and incident_visible(w.restricted, w.id, $5)
                   limit 50) c)
           select c.number as "key!: IncidentKey", c.title, c.severity, c.status,
                  s.name as "service?", c.detected_at, c.rank as "rank!"
           from candidates c
           left join services s on s.id = c.service_id
           where not exists (
                 select from incident_links l
                 where l.incident_id = least($1, c.id) and l.related_id = greatest($1, c.id))
           order by c.rank desc, c.detected_at desc
           limit $4"#,
        incident_id,
        service_id,
        terms,
        limit,
        seen_by.sql()
    )
    .fetch_all(e)
    .await?)
}
