//! Queries on silences, the alerts they hold, and the admin's longest length.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use super::domain::State;
use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;

/// A silence as stored and shown.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct SilenceRecord {
    pub id: i64,
    /// Each as amtool writes it, e.g. `service=~"pay.*"`; all must hold
    pub matchers: Vec<String>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// Why
    pub comment: String,
    pub created_by: String,
    /// Who ended it before its time
    pub expired_by: Option<String>,
    /// pending, active or expired, by the database's clock
    pub state: State,
    /// Alerts it held: stored without an incident, or joined to an open one without paging
    pub alerts: i64,
    /// Deliveries of those alerts (repeats and resends included)
    pub deliveries: i64,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

struct Row {
    id: i64,
    matchers: Value,
    starts_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
    comment: String,
    created_by: String,
    expired_by: Option<String>,
    now: DateTime<Utc>,
    alerts: i64,
    deliveries: i64,
    version: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

fn record(r: Row) -> SilenceRecord {
    SilenceRecord {
        id: r.id,
        matchers: serde_json::from_value(r.matchers).unwrap_or_default(),
        starts_at: r.starts_at,
        ends_at: r.ends_at,
        comment: r.comment,
        created_by: r.created_by,
        expired_by: r.expired_by,
        state: State::at(r.starts_at, r.ends_at, r.now),
        alerts: r.alerts,
        deliveries: r.deliveries,
        version: r.version,
        created_at: r.created_at,
        updated_at: r.updated_at,
    }
}

/// Silences latest ending first: the ones not yet over (`current`), or the ones over, at most
/// `limit`. What they held is counted for `seen_by`: an alert in an incident kept from them is
/// not, and a key counts once however it was held.
pub async fn list(
    e: impl PgExecutor<'_>,
    current: bool,
    limit: i64,
    seen_by: SeenBy,
) -> AppResult<Vec<SilenceRecord>> {
    records(e, Some(current), None, seen_by, limit).await
}

pub async fn find(
    e: impl PgExecutor<'_>,
    id: i64,
    seen_by: SeenBy,
) -> AppResult<Option<SilenceRecord>> {
    Ok(records(e, None, Some(id), seen_by, 1).await?.pop())
}

async fn records(
    e: impl PgExecutor<'_>,
    current: Option<bool>,
    id: Option<i64>,
    seen_by: SeenBy,
    limit: i64,
) -> AppResult<Vec<SilenceRecord>> {
    let rows = sqlx::query_as!(
        Row,
        r#"select s.id, s.matchers, s.starts_at, s.ends_at, s.comment, s.created_by, s.expired_by,
                  now() as "now!", s.version, s.created_at, s.updated_at,
                  c.alerts as "alerts!", c.deliveries as "deliveries!"
           from silences s
           cross join lateral (
               select count(distinct (x.integration_id, x.dedup_key)) as alerts,
                      coalesce(sum(x.n), 0)::int8 as deliveries
               from (select h.integration_id, h.dedup_key, h.deliveries as n
                     from silenced_alerts h
                     where h.silence_id = s.id
                       and not held_key_hidden(h.integration_id, h.dedup_key, $4)
                     union all
                     select a.integration_id, a.dedup_key, a.deliveries
                     from alerts a join incidents inc on inc.id = a.incident_id
                     where a.silence_id = s.id and incident_visible(inc.restricted, inc.id, $4)) x
           ) c
           where ($1::bool is null or (s.ends_at > now()) = $1)
             and ($2::int8 is null or s.id = $2)
           order by s.ends_at desc, s.id desc
           limit $3"#,
        current,
        id,
        limit,
        seen_by.sql(),
    )
    .fetch_all(e)
    .await?;
    Ok(rows.into_iter().map(record).collect())
}

pub struct NewSilence<'a> {
    pub matchers: &'a [String],
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub comment: &'a str,
    pub created_by: &'a str,
    pub created_by_person: Option<i64>,
}

pub async fn insert(e: impl PgExecutor<'_>, s: &NewSilence<'_>) -> AppResult<i64> {
    Ok(sqlx::query_scalar!(
        r#"insert into silences (matchers, starts_at, ends_at, comment, created_by, created_by_person)
           values ($1, $2, $3, $4, $5, $6) returning id"#,
        serde_json::json!(s.matchers),
        s.starts_at,
        s.ends_at,
        s.comment,
        s.created_by,
        s.created_by_person
    )
    .fetch_one(e)
    .await?)
}

/// Ends a silence now (one not yet started ends before it begins); `None` when it was already
/// over or its version is not `version`.
pub async fn expire(
    e: impl PgExecutor<'_>,
    id: i64,
    version: i32,
    by: &str,
) -> AppResult<Option<i64>> {
    Ok(sqlx::query_scalar!(
        r#"update silences
           set starts_at = least(starts_at, now()), ends_at = now(), expired_by = $3,
               version = version + 1, updated_at = now()
           where id = $1 and version = $2 and ends_at > now()
           returning id"#,
        id,
        version,
        by
    )
    .fetch_optional(e)
    .await?)
}

/// The number every change to silences moves on.
pub async fn revision(e: impl PgExecutor<'_>) -> AppResult<i64> {
    Ok(sqlx::query_scalar!("select n from silence_revision")
        .fetch_one(e)
        .await?)
}

/// A silence not yet over, as the lanes match with it.
pub struct Current {
    pub id: i64,
    pub matchers: Value,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
}

pub async fn current(e: impl PgExecutor<'_>) -> AppResult<Vec<Current>> {
    Ok(sqlx::query_as!(
        Current,
        "select id, matchers, starts_at, ends_at from silences where ends_at > now() order by id"
    )
    .fetch_all(e)
    .await?)
}

/// Alerts a silence holds, columns of one batch.
#[derive(Default)]
pub struct Held<'a> {
    /// The silence that holds it, or else
    pub silence_id: Vec<Option<i64>>,
    /// the maintenance window that does
    pub window_id: Vec<Option<i64>>,
    pub integration_id: Vec<Uuid>,
    pub dedup_key: Vec<&'a str>,
    pub group_key: Vec<&'a str>,
    pub summary: Vec<&'a str>,
    pub source: Vec<&'a str>,
    pub severity: Vec<&'a str>,
    pub labels: Vec<&'a Value>,
    pub details: Vec<&'a Value>,
    pub deliveries: Vec<i32>,
    pub raw: Vec<&'a Value>,
    pub source_url: Vec<Option<&'a str>>,
    pub starts_at: Vec<Option<DateTime<Utc>>>,
}

/// Stores held alerts in one statement; a key still firing under a silence counts another
/// delivery (and is held by the silence that matched it last).
pub async fn hold(conn: &mut PgConnection, h: &Held<'_>) -> AppResult<()> {
    sqlx::query!(
        r#"insert into silenced_alerts (silence_id, window_id, integration_id, dedup_key, group_key,
                                        status, summary, source, severity, labels, details,
                                        deliveries, raw, source_url, starts_at)
           select si, wi, i, k, g, 'firing', s, src, sev, l, d, n, raw, u, st
           from unnest($1::int8[], $12::int8[], $2::uuid[], $3::text[], $4::text[], $5::text[],
                       $6::text[], $7::text[], $8::jsonb[], $9::jsonb[], $10::int4[], $11::jsonb[],
                       $13::text[], $14::timestamptz[])
                as t(si, wi, i, k, g, s, src, sev, l, d, n, raw, u, st)
           order by i, k
           on conflict (integration_id, dedup_key) where status = 'firing'
           do update set last_received_at = now(), silence_id = excluded.silence_id,
                         window_id = excluded.window_id,
                         deliveries = silenced_alerts.deliveries + excluded.deliveries"#,
        &h.silence_id as &[Option<i64>],
        &h.integration_id,
        &h.dedup_key as &[&str],
        &h.group_key as &[&str],
        &h.summary as &[&str],
        &h.source as &[&str],
        &h.severity as &[&str],
        &h.labels as &[&Value],
        &h.details as &[&Value],
        &h.deliveries,
        &h.raw as &[&Value],
        &h.window_id as &[Option<i64>],
        &h.source_url as &[Option<&str>],
        &h.starts_at as &[Option<DateTime<Utc>>],
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Resolves held alerts by their senders' keys; keys held by no silence are no-ops.
pub async fn release(
    e: impl PgExecutor<'_>,
    integrations: &[Uuid],
    keys: &[String],
) -> AppResult<u64> {
    Ok(sqlx::query!(
        r#"update silenced_alerts h set status = 'resolved', resolved_at = now(), last_received_at = now()
           from unnest($1::uuid[], $2::text[]) as k(integration_id, dedup_key)
           where h.integration_id = k.integration_id and h.dedup_key = k.dedup_key
             and h.status = 'firing'"#,
        integrations,
        keys
    )
    .execute(e)
    .await?
    .rows_affected())
}

/// One alert a silence held, as its page lists them.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct HeldAlert {
    pub integration: String,
    pub dedup_key: String,
    pub summary: String,
    /// firing, acknowledged or resolved
    pub status: String,
    #[schema(value_type = Object)]
    pub labels: Value,
    pub received_at: DateTime<Utc>,
    pub last_received_at: DateTime<Utc>,
    pub deliveries: i32,
    /// The open incident it joined without paging, if it did (hidden when the incident is not
    /// open to the reader)
    #[schema(value_type = Option<String>)]
    pub incident: Option<crate::domain::IncidentKey>,
}

/// The alerts a silence held, newest first: those stored without an incident and those that
/// joined one the reader may see.
pub async fn held(
    e: impl PgExecutor<'_>,
    silence_id: i64,
    seen_by: SeenBy,
    limit: i64,
) -> AppResult<Vec<HeldAlert>> {
    Ok(sqlx::query_as!(
        HeldAlert,
        r#"select * from (
               select i.name as "integration!", h.dedup_key as "dedup_key!", h.summary as "summary!",
                      h.status as "status!", h.labels as "labels!", h.received_at as "received_at!",
                      h.last_received_at as "last_received_at!", h.deliveries as "deliveries!",
                      null::int8 as "incident: crate::domain::IncidentKey"
               from silenced_alerts h join integrations i on i.id = h.integration_id
               where h.silence_id = $1
                 and not held_key_hidden(h.integration_id, h.dedup_key, $2)
               union all
               select i.name, a.dedup_key, a.summary, a.status, a.labels, a.received_at,
                      a.last_received_at, a.deliveries, inc.number
               from alerts a
               join integrations i on i.id = a.integration_id
               join incidents inc on inc.id = a.incident_id
               where a.silence_id = $1 and incident_visible(inc.restricted, inc.id, $2)
           ) held
           order by "received_at!" desc
           limit $3"#,
        silence_id,
        seen_by.sql(),
        limit
    )
    .fetch_all(e)
    .await?)
}

/// Alerts silences held since `since`, newest first, as a preview tries them.
pub struct HeldSince {
    pub integration: String,
    pub integration_format: String,
    pub dedup_key: String,
    pub group_key: String,
    pub summary: String,
    pub source: String,
    pub severity: String,
    pub status: String,
    pub labels: Value,
    pub details: Value,
    pub received_at: DateTime<Utc>,
}

pub async fn held_since(
    e: impl PgExecutor<'_>,
    since: DateTime<Utc>,
    limit: i64,
    seen_by: SeenBy,
) -> AppResult<Vec<HeldSince>> {
    Ok(sqlx::query_as!(
        HeldSince,
        r#"select i.name as integration, i.format as integration_format, h.dedup_key, h.group_key,
                  h.summary, h.source, h.severity, h.status, h.labels, h.details, h.received_at
           from silenced_alerts h join integrations i on i.id = h.integration_id
           where h.received_at >= $1 and h.status <> 'released'
             and not held_key_hidden(h.integration_id, h.dedup_key, $3)
           order by h.received_at desc, h.id desc
           limit $2"#,
        since,
        limit,
        seen_by.sql()
    )
    .fetch_all(e)
    .await?)
}

/// The admin's longest silence, in hours, and the setting's version.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SilencePolicy {
    /// The longest a silence may last, in hours
    pub max_hours: i32,
    pub version: i32,
    pub updated_at: DateTime<Utc>,
}

pub async fn policy(e: impl PgExecutor<'_>) -> AppResult<SilencePolicy> {
    Ok(sqlx::query_as!(
        SilencePolicy,
        "select max_hours, version, updated_at from silence_policy"
    )
    .fetch_one(e)
    .await?)
}

pub async fn set_policy(
    e: impl PgExecutor<'_>,
    max_hours: i32,
    version: i32,
) -> AppResult<Option<SilencePolicy>> {
    Ok(sqlx::query_as!(
        SilencePolicy,
        r#"update silence_policy set max_hours = $1, version = version + 1, updated_at = now()
           where version = $2
           returning max_hours, version, updated_at"#,
        max_hours,
        version
    )
    .fetch_optional(e)
    .await?)
}

/// Silences over whose held alerts are not yet handed back, claimed by one replica
/// (`SKIP LOCKED`), at most `limit`.
pub async fn claim_ended(e: impl PgExecutor<'_>, limit: i64) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select id from silences
           where released_at is null and ends_at <= now()
           order by ends_at, id
           limit $1
           for no key update skip locked"#,
        limit
    )
    .fetch_all(e)
    .await?)
}

/// An alert still firing when its silence ended, handed back.
pub struct Released {
    pub integration_id: Uuid,
    pub dedup_key: String,
    pub group_key: String,
    pub summary: String,
    pub source: String,
    pub severity: String,
    pub labels: Value,
    pub details: Value,
    pub raw: Value,
    pub source_url: Option<String>,
    pub starts_at: Option<DateTime<Utc>>,
}

/// Marks these silences released and their held alerts that still fire `released`, returning
/// those alerts (a key another silence held meanwhile is left to it).
pub async fn release_ended(conn: &mut PgConnection, ids: &[i64]) -> AppResult<Vec<Released>> {
    sqlx::query!(
        "update silences set released_at = now() where id = any($1)",
        ids
    )
    .execute(&mut *conn)
    .await?;
    Ok(sqlx::query_as!(
        Released,
        r#"update silenced_alerts set status = 'released', resolved_at = now()
           where silence_id = any($1) and status = 'firing'
           returning integration_id, dedup_key, group_key, summary, source, severity, labels,
                     details, raw, source_url, starts_at"#,
        ids
    )
    .fetch_all(conn)
    .await?)
}

/// Seconds until the next silence ends whose held alerts are still to hand back.
pub async fn next_end(e: impl PgExecutor<'_>) -> AppResult<Option<f64>> {
    Ok(sqlx::query_scalar!(
        r#"select extract(epoch from min(ends_at) - now())::float8
           from silences where released_at is null"#
    )
    .fetch_one(e)
    .await?)
}

/// Marks the alerts a maintenance window held that still fire `released`, returning them.
pub async fn release_window(e: impl PgExecutor<'_>, window_id: i64) -> AppResult<Vec<Released>> {
    Ok(sqlx::query_as!(
        Released,
        r#"update silenced_alerts set status = 'released', resolved_at = now()
           where window_id = $1 and status = 'firing'
           returning integration_id, dedup_key, group_key, summary, source, severity, labels,
                     details, raw, source_url, starts_at"#,
        window_id
    )
    .fetch_all(e)
    .await?)
}

/// Held keys that joined an open incident: their held rows end (the incident has them now).
pub async fn moved(
    e: impl PgExecutor<'_>,
    integrations: &[Uuid],
    keys: &[String],
) -> AppResult<()> {
    sqlx::query!(
        r#"update silenced_alerts h set status = 'released', resolved_at = now()
           from unnest($1::uuid[], $2::text[]) as k(integration_id, dedup_key)
           where h.integration_id = k.integration_id and h.dedup_key = k.dedup_key
             and h.status = 'firing'"#,
        integrations,
        keys
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Held alerts still firing whose silence was handed back already, or whose window is not
/// going on (a lane that judged just before the end stored them just after): released and
/// returned, to be judged again.
pub async fn release_stranded(e: impl PgExecutor<'_>, limit: i64) -> AppResult<Vec<Released>> {
    Ok(sqlx::query_as!(
        Released,
        r#"update silenced_alerts set status = 'released', resolved_at = now()
           where id in (
               select h.id from silenced_alerts h
               left join silences s on s.id = h.silence_id
               left join maintenance_windows w on w.id = h.window_id
               where h.status = 'firing'
                 and (s.released_at is not null
                      or (w.id is not null and maintenance_window_idle(w.next_edge, w.next_edge_at)))
               order by h.id
               limit $1
               for update of h skip locked)
           returning integration_id, dedup_key, group_key, summary, source, severity, labels,
                     details, raw, source_url, starts_at"#,
        limit
    )
    .fetch_all(e)
    .await?)
}
