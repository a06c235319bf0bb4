//! Reading and appending timeline events. Every state change appends its event in the same
//! transaction as the change.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgExecutor;

use super::domain::Kind;
use crate::error::{AppError, AppResult};

#[derive(Debug, Clone)]
pub struct NewEvent<'a> {
    pub incident_id: i64,
    pub occurred_at: DateTime<Utc>,
    pub kind: Kind,
    pub author: &'a str,
    pub body: &'a str,
    pub details: Value,
    /// The incident's version after the change; `None` for notes.
    pub incident_version: Option<i32>,
}

impl<'a> NewEvent<'a> {
    /// An entry `author` writes at `at`, with no text of its own and no incident version.
    pub fn by(
        author: &'a str,
        incident_id: i64,
        at: DateTime<Utc>,
        kind: Kind,
        details: Value,
    ) -> Self {
        Self {
            incident_id,
            occurred_at: at,
            kind,
            author,
            body: "",
            details,
            incident_version: None,
        }
    }

    /// An entry Quell itself writes: a timer, an engine, an alert's effect.
    pub fn by_quell(incident_id: i64, at: DateTime<Utc>, kind: Kind, details: Value) -> Self {
        Self::by(QUELL, incident_id, at, kind, details)
    }

    /// The same entry with `body` as its text.
    pub fn saying(self, body: &'a str) -> Self {
        Self { body, ..self }
    }
}

/// The author of what Quell writes itself.
pub const QUELL: &str = "Quell";

#[derive(Debug, Clone)]
pub struct Event {
    pub id: i64,
    pub occurred_at: DateTime<Utc>,
    pub recorded_at: DateTime<Utc>,
    pub kind: Kind,
    pub author: String,
    pub body: String,
    pub details: Value,
    pub incident_version: Option<i32>,
}

struct EventRow {
    id: i64,
    occurred_at: DateTime<Utc>,
    recorded_at: DateTime<Utc>,
    kind: String,
    author: String,
    body: String,
    details: Value,
    incident_version: Option<i32>,
}

impl TryFrom<EventRow> for Event {
    type Error = AppError;
    fn try_from(r: EventRow) -> AppResult<Self> {
        let kind = Kind::from_db(&r.kind)
            .ok_or_else(|| AppError::Internal(format!("unknown timeline kind {}", r.kind)))?;
        Ok(Self {
            id: r.id,
            occurred_at: r.occurred_at,
            recorded_at: r.recorded_at,
            kind,
            author: r.author,
            body: r.body,
            details: r.details,
            incident_version: r.incident_version,
        })
    }
}

pub async fn append(e: impl PgExecutor<'_>, ev: NewEvent<'_>) -> AppResult<Event> {
    let row = sqlx::query_as!(
        EventRow,
        r#"insert into timeline_events
               (incident_id, occurred_at, kind, author, body, details, incident_version)
           values ($1, $2, $3, $4, $5, $6, $7)
           returning id, occurred_at, recorded_at, kind, author, body, details, incident_version"#,
        ev.incident_id,
        ev.occurred_at,
        ev.kind.as_str(),
        ev.author,
        ev.body,
        ev.details,
        ev.incident_version,
    )
    .fetch_one(e)
    .await?;
    row.try_into()
}

/// Appends several events in one statement (opening a batch of incidents), in their order.
pub async fn append_many(e: impl PgExecutor<'_>, events: &[NewEvent<'_>]) -> AppResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let incident_id: Vec<i64> = events.iter().map(|ev| ev.incident_id).collect();
    let occurred_at: Vec<DateTime<Utc>> = events.iter().map(|ev| ev.occurred_at).collect();
    let kind: Vec<&str> = events.iter().map(|ev| ev.kind.as_str()).collect();
    let author: Vec<&str> = events.iter().map(|ev| ev.author).collect();
    let body: Vec<&str> = events.iter().map(|ev| ev.body).collect();
    let details: Vec<&Value> = events.iter().map(|ev| &ev.details).collect();
    let version: Vec<Option<i32>> = events.iter().map(|ev| ev.incident_version).collect();
    sqlx::query!(
        r#"insert into timeline_events
               (incident_id, occurred_at, kind, author, body, details, incident_version)
           select i, t, k, a, b, d, v
           from unnest($1::int8[], $2::timestamptz[], $3::text[], $4::text[], $5::text[],
                       $6::jsonb[], $7::int4[]) with ordinality as e(i, t, k, a, b, d, v, n)
           order by n"#,
        &incident_id,
        &occurred_at,
        &kind as &[&str],
        &author as &[&str],
        &body as &[&str],
        &details as &[&Value],
        &version as &[Option<i32>],
    )
    .execute(e)
    .await?;
    Ok(())
}

/// The incident's timeline in the order things happened.
/// Forgets the key and title of the incident `key` in the link entries of other incidents'
/// timelines (it is now restricted, and those who read them may not see it); how many.
pub async fn unname_links_to(
    e: impl PgExecutor<'_>,
    key: &str,
    incident_id: i64,
) -> AppResult<u64> {
    Ok(sqlx::query!(
        r#"update timeline_events
           set details = (details - 'other' - 'title') || '{"restricted": true}'::jsonb
           where kind = 'related' and details->>'other' = $1 and incident_id <> $2"#,
        key,
        incident_id
    )
    .execute(e)
    .await?
    .rows_affected())
}

pub async fn for_incident(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Vec<Event>> {
    sqlx::query_as!(
        EventRow,
        r#"select id, occurred_at, recorded_at, kind, author, body, details, incident_version
           from timeline_events where incident_id = $1
           order by occurred_at, id"#,
        incident_id
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(Event::try_from)
    .collect()
}

/// State changes made after `version`: what another responder did since a form was loaded.
pub async fn changes_since(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    version: i32,
) -> AppResult<Vec<Event>> {
    sqlx::query_as!(
        EventRow,
        r#"select id, occurred_at, recorded_at, kind, author, body, details, incident_version
           from timeline_events
           where incident_id = $1 and incident_version > $2
           order by recorded_at, id"#,
        incident_id,
        version
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(Event::try_from)
    .collect()
}

/// Tells open pages of these incidents that something without a timeline entry changed (alerts
/// arrived), when the transaction commits. Every appended entry is announced by a trigger.
pub async fn announce_changes(e: impl PgExecutor<'_>, incident_ids: &[i64]) -> AppResult<()> {
    if incident_ids.is_empty() {
        return Ok(());
    }
    sqlx::query!(
        "select pg_notify('quell_live', id::text || ' 0') from unnest($1::bigint[]) as id",
        incident_ids
    )
    .execute(e)
    .await?;
    Ok(())
}

/// The newest entry's id, of one incident or of all (0 when there is none): what a page was
/// rendered with, so its stream starts right after.
pub async fn newest_id(e: impl PgExecutor<'_>, incident_id: Option<i64>) -> AppResult<i64> {
    // Two statements, so each keeps its own index plan.
    Ok(match incident_id {
        Some(id) => {
            sqlx::query_scalar!(
                r#"select coalesce(max(id), 0) as "id!" from timeline_events
                   where incident_id = $1"#,
                id
            )
            .fetch_one(e)
            .await?
        }
        None => {
            sqlx::query_scalar!(r#"select coalesce(max(id), 0) as "id!" from timeline_events"#)
                .fetch_one(e)
                .await?
        }
    })
}

/// Who acknowledged an incident, and when.
#[derive(Debug, Clone)]
pub struct Acknowledgement {
    pub by: String,
    pub at: DateTime<Utc>,
}

/// The incident's latest acknowledgement: its `acknowledged` entry, or a step that went past
/// acknowledging (resolved straight from triggered); `None` if it was never acknowledged.
pub async fn acknowledgement(
    e: impl PgExecutor<'_>,
    incident_id: i64,
) -> AppResult<Option<Acknowledgement>> {
    Ok(sqlx::query_as!(
        Acknowledgement,
        r#"select author as by, occurred_at as at from timeline_events
           where incident_id = $1
             and (kind = 'acknowledged' or details -> 'skipped' ? 'acknowledged')
           order by occurred_at desc, id desc
           limit 1"#,
        incident_id
    )
    .fetch_optional(e)
    .await?)
}
