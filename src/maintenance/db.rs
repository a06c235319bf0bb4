//! Queries on maintenance windows, their services, their timers (the next start or end) and
//! the incidents a quiet window opened without paging.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;

use crate::error::AppResult;

/// A window as stored.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct WindowRow {
    pub id: i64,
    pub name: String,
    /// silence or quiet
    pub mode: String,
    /// The first occurrence's start on the zone's wall clock, e.g. 2026-12-24T22:00:00
    #[schema(value_type = String)]
    pub local_start: NaiveDateTime,
    pub time_zone: String,
    pub duration_minutes: i32,
    pub weekly: bool,
    /// ISO weekdays (1 = Monday) a weekly window starts on
    pub weekdays: Vec<i16>,
    #[schema(value_type = Option<String>)]
    pub repeat_until: Option<NaiveDate>,
    pub comment: String,
    pub created_by: String,
    /// The services it covers, by name
    pub services: Vec<String>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub cancelled_by: Option<String>,
    #[serde(skip)]
    pub next_edge_at: Option<DateTime<Utc>>,
    #[serde(skip)]
    pub next_edge: Option<String>,
    #[serde(skip)]
    pub edge_occurrence: Option<DateTime<Utc>>,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Every window (or the one with `id`), newest first, with its services' names.
pub async fn list(e: impl PgExecutor<'_>, id: Option<i64>) -> AppResult<Vec<WindowRow>> {
    Ok(sqlx::query_as!(
        WindowRow,
        r#"select w.id, w.name, w.mode, w.local_start, w.time_zone, w.duration_minutes, w.weekly,
                  w.weekdays, w.repeat_until, w.comment, w.created_by,
                  coalesce((select array_agg(s.name order by s.name)
                            from maintenance_window_services m join services s on s.id = m.service_id
                            where m.window_id = w.id), '{}') as "services!",
                  w.cancelled_at, w.cancelled_by, w.next_edge_at, w.next_edge, w.edge_occurrence,
                  w.version, w.created_at, w.updated_at
           from maintenance_windows w
           where $1::int8 is null or w.id = $1
           order by w.id desc"#,
        id
    )
    .fetch_all(e)
    .await?)
}

pub struct NewWindow<'a> {
    pub name: &'a str,
    pub mode: &'a str,
    pub local_start: NaiveDateTime,
    pub time_zone: &'a str,
    pub duration_minutes: i32,
    pub weekly: bool,
    pub weekdays: &'a [i16],
    pub repeat_until: Option<NaiveDate>,
    pub comment: &'a str,
    pub created_by: &'a str,
    pub services: &'a [i64],
    pub next_edge_at: Option<DateTime<Utc>>,
    pub next_edge: Option<&'a str>,
    pub edge_occurrence: Option<DateTime<Utc>>,
}

pub async fn insert(conn: &mut sqlx::PgConnection, w: &NewWindow<'_>) -> AppResult<i64> {
    let id = sqlx::query_scalar!(
        r#"insert into maintenance_windows (name, mode, local_start, time_zone, duration_minutes,
               weekly, weekdays, repeat_until, comment, created_by, next_edge_at, next_edge,
               edge_occurrence)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) returning id"#,
        w.name,
        w.mode,
        w.local_start,
        w.time_zone,
        w.duration_minutes,
        w.weekly,
        w.weekdays,
        w.repeat_until,
        w.comment,
        w.created_by,
        w.next_edge_at,
        w.next_edge,
        w.edge_occurrence,
    )
    .fetch_one(&mut *conn)
    .await?;
    sqlx::query!(
        r#"insert into maintenance_window_services (window_id, service_id)
           select $1, unnest($2::int8[]) on conflict do nothing"#,
        id,
        w.services
    )
    .execute(conn)
    .await?;
    Ok(id)
}

/// Cancels a window from now (`None` when its version is not `version` or it was cancelled).
pub async fn cancel(
    e: impl PgExecutor<'_>,
    id: i64,
    version: i32,
    by: &str,
) -> AppResult<Option<i64>> {
    Ok(sqlx::query_scalar!(
        r#"update maintenance_windows
           set cancelled_at = now(), cancelled_by = $3, version = version + 1, updated_at = now()
           where id = $1 and version = $2 and cancelled_at is null
           returning id"#,
        id,
        version,
        by
    )
    .fetch_optional(e)
    .await?)
}

/// Sets the next start or end the engine acts on (none: nothing more).
pub async fn set_edge(
    e: impl PgExecutor<'_>,
    id: i64,
    at: Option<DateTime<Utc>>,
    edge: Option<&str>,
    occurrence: Option<DateTime<Utc>>,
) -> AppResult<()> {
    sqlx::query!(
        r#"update maintenance_windows set next_edge_at = $2, next_edge = $3, edge_occurrence = $4
           where id = $1"#,
        id,
        at,
        edge,
        occurrence
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Windows whose next start or end is due, claimed by one replica (`SKIP LOCKED`).
pub async fn claim_due(e: impl PgExecutor<'_>, limit: i64) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select id from maintenance_windows
           where next_edge_at <= now()
           order by next_edge_at, id
           limit $1
           for no key update skip locked"#,
        limit
    )
    .fetch_all(e)
    .await?)
}

/// Seconds until the next start or end any window waits for.
pub async fn next_due(e: impl PgExecutor<'_>) -> AppResult<Option<f64>> {
    Ok(sqlx::query_scalar!(
        r#"select extract(epoch from min(next_edge_at) - now())::float8 from maintenance_windows"#
    )
    .fetch_one(e)
    .await?)
}

/// The number every change to windows moves on.
pub async fn revision(e: impl PgExecutor<'_>) -> AppResult<i64> {
    Ok(sqlx::query_scalar!("select n from maintenance_revision")
        .fetch_one(e)
        .await?)
}

/// Open incidents of the window's services, and those it kept quiet that are not resolved.
pub async fn touched(e: impl PgExecutor<'_>, window_id: i64) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select i.id as "id!" from incidents i
           join maintenance_window_services m on m.service_id = i.service_id
           where m.window_id = $1 and i.status <> 'resolved'
           union
           select i.id from incidents i join incident_quiet q on q.incident_id = i.id
           where q.window_id = $1 and i.status <> 'resolved'
           order by 1 -- every incident: the engine writes on all of them"#,
        window_id
    )
    .fetch_all(e)
    .await?)
}

/// Notes incidents a quiet window opened without paging.
pub async fn kept_quiet(
    e: impl PgExecutor<'_>,
    incidents: &[i64],
    windows: &[i64],
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into incident_quiet (incident_id, window_id)
           select * from unnest($1::int8[], $2::int8[]) on conflict do nothing"#,
        incidents,
        windows
    )
    .execute(e)
    .await?;
    Ok(())
}

/// The incidents a window kept quiet that are still triggered (nobody acknowledged them), with
/// their services, marked paged now.
pub async fn quiet_to_page(
    e: impl PgExecutor<'_>,
    window_id: i64,
) -> AppResult<Vec<(i64, Option<i64>)>> {
    Ok(sqlx::query!(
        r#"update incident_quiet q set paged_at = now()
           from incidents i
           where q.window_id = $1 and q.paged_at is null and i.id = q.incident_id
             and i.status = 'triggered' -- every incident: the engine pages for all of them
           returning i.id, i.service_id"#,
        window_id
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.id, r.service_id))
    .collect())
}

/// A quiet incident someone paged by hand (reassigned): its window's end pages nobody again.
pub async fn paged_by_hand(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<()> {
    sqlx::query!(
        "update incident_quiet set paged_at = now() where incident_id = $1 and paged_at is null",
        incident_id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Quiet incidents a lane opened just as their window ended (after the engine paged the
/// others): paged now, marked.
pub async fn quiet_stranded(e: impl PgExecutor<'_>) -> AppResult<Vec<(i64, Option<i64>)>> {
    Ok(sqlx::query!(
        r#"update incident_quiet q set paged_at = now()
           from incidents i, maintenance_windows w
           where q.paged_at is null and i.id = q.incident_id and w.id = q.window_id
             and i.status = 'triggered' -- every incident: the engine pages for all of them
             and maintenance_window_idle(w.next_edge, w.next_edge_at)
           returning i.id, i.service_id"#
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.id, r.service_id))
    .collect())
}

/// Locks a window against the engine while a person changes it.
pub async fn lock(e: impl PgExecutor<'_>, id: i64) -> AppResult<()> {
    sqlx::query!(
        "select id from maintenance_windows where id = $1 for no key update",
        id
    )
    .fetch_optional(e)
    .await?;
    Ok(())
}
