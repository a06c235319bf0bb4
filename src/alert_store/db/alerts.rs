//! Queries on alerts and their groups, below both the alert
//! path (`alerts/`) that fills it and the incidents that read and close it. The ingest path
//! writes many alerts per statement (arrays through `unnest`); nothing here updates an incident
//! row per alert, and nothing here knows an incident's rules.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;

/// An open group: the incident its alerts go to.
#[derive(Debug, Clone)]
pub struct OpenGroup {
    pub id: i64,
    pub integration_id: Uuid,
    pub group_key: String,
    pub incident_id: i64,
}

/// The open groups among `(integration, group key)` pairs, share-locked until commit so that a
/// concurrent resolve (which closes groups) waits for the alerts joining them, or they for it.
/// Each pair is looked up on its own (a lateral subquery): as a join, the plan made while few
/// groups were open hashed every open group, 10 ms a batch once a burst of new incidents had
/// opened thousands.
pub async fn lock_open_groups(
    conn: &mut PgConnection,
    integrations: &[Uuid],
    keys: &[String],
) -> AppResult<Vec<OpenGroup>> {
    Ok(sqlx::query_as!(
        OpenGroup,
        r#"select g.id as "id!", g.integration_id as "integration_id!",
                  g.group_key as "group_key!", g.incident_id as "incident_id!"
           from unnest($1::uuid[], $2::text[]) as k(integration_id, group_key)
           cross join lateral (
               select o.id, o.integration_id, o.group_key, o.incident_id
               from alert_groups o
               where o.integration_id = k.integration_id and o.group_key = k.group_key
                 and o.closed_at is null and o.incident_id is not null
               for share) g"#,
        integrations,
        keys,
    )
    .fetch_all(conn)
    .await?)
}

/// Opens a group; `None` when another transaction opened it first (it has committed by the
/// time this returns, so [`lock_open_groups`] finds it).
pub async fn insert_group(
    conn: &mut PgConnection,
    integration_id: Uuid,
    group_key: &str,
) -> AppResult<Option<i64>> {
    Ok(
        insert_groups(conn, &[integration_id], &[group_key.to_owned()], &[None])
            .await?
            .pop()
            .map(|g| g.id),
    )
}

/// A group this transaction opened.
pub struct NewGroup {
    pub id: i64,
    pub integration_id: Uuid,
    pub group_key: String,
}

/// Opens groups in one statement, in key order (so two batches opening the same groups wait
/// for each other instead of deadlocking); returns those this transaction opened. The others
/// were opened by another transaction, which has committed by the time this returns.
pub async fn insert_groups(
    conn: &mut PgConnection,
    integrations: &[Uuid],
    keys: &[String],
    grouped_by: &[Option<String>],
) -> AppResult<Vec<NewGroup>> {
    Ok(sqlx::query_as!(
        NewGroup,
        r#"insert into alert_groups (integration_id, group_key, grouped_by)
           select i, k, w from unnest($1::uuid[], $2::text[], $3::text[]) as t(i, k, w)
           order by i, k
           on conflict (integration_id, group_key) where closed_at is null do nothing
           returning id, integration_id, group_key"#,
        integrations,
        keys,
        grouped_by as &[Option<String>],
    )
    .fetch_all(conn)
    .await?)
}

/// The open alerts among these (integration, dedup key), with their group and incident.
pub async fn open_alerts_of(
    conn: &mut PgConnection,
    keys: &[(Uuid, String)],
) -> AppResult<std::collections::HashMap<(Uuid, String), (i64, i64)>> {
    let (ids, dedups): (Vec<Uuid>, Vec<String>) = keys.iter().cloned().unzip();
    Ok(sqlx::query!(
        r#"select a.integration_id, a.dedup_key, a.group_id, a.incident_id
           from unnest($1::uuid[], $2::text[]) as k(i, k)
           join alerts a on a.integration_id = k.i and a.dedup_key = k.k
                        and a.status <> 'resolved' and a.retained_from = 'infinity'"#,
        &ids,
        &dedups,
    )
    .fetch_all(conn)
    .await?
    .into_iter()
    .map(|r| ((r.integration_id, r.dedup_key), (r.group_id, r.incident_id)))
    .collect())
}

/// Closes the groups rules formed from shared fields whose window has passed (integration, key,
/// window in minutes): the next alert sharing the values opens a new group and incident.
pub async fn close_past_window(
    conn: &mut PgConnection,
    groups: &[(Uuid, String, i32)],
) -> AppResult<()> {
    let (ids, rest): (Vec<Uuid>, Vec<(String, i32)>) =
        groups.iter().map(|(i, k, w)| (*i, (k.clone(), *w))).unzip();
    let (keys, windows): (Vec<String>, Vec<i32>) = rest.into_iter().unzip();
    sqlx::query!(
        r#"update alert_groups g set closed_at = now()
           from unnest($1::uuid[], $2::text[], $3::int4[]) as k(i, key, w)
           where g.integration_id = k.i and g.group_key = k.key and g.closed_at is null
             and g.opened_at < now() - make_interval(mins => k.w)
             -- a group with an alert still flapping stays open: the flaps join its incident
             and not exists (select 1 from alert_flapping f join alerts a
                                  on a.integration_id = f.integration_id
                                 and a.dedup_key = f.dedup_key
                             where f.settled_at is null and a.group_id = g.id
                               -- it resolved (if it did) after its group opened
                               and a.retained_from >= g.opened_at)"#,
        &ids,
        &keys,
        &windows,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// How the groups of an incident that rules formed from shared fields were formed, e.g.
/// `service = payments-gateway within 10 min`.
pub async fn grouped_by(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Vec<String>> {
    Ok(sqlx::query_scalar!(
        r#"select distinct grouped_by as "grouped_by!" from alert_groups
           where incident_id = $1 and grouped_by is not null
           order by 1 limit 20"#,
        incident_id
    )
    .fetch_all(e)
    .await?)
}

pub async fn attach_group(
    conn: &mut PgConnection,
    group_id: i64,
    incident_id: i64,
) -> AppResult<()> {
    attach_groups(conn, &[group_id], &[incident_id]).await
}

/// Points each group at its incident.
pub async fn attach_groups(
    conn: &mut PgConnection,
    groups: &[i64],
    incidents: &[i64],
) -> AppResult<()> {
    sqlx::query!(
        r#"update alert_groups g set incident_id = a.incident_id
           from unnest($1::int8[], $2::int8[]) as a(id, incident_id)
           where g.id = a.id"#,
        groups,
        incidents
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Alerts to store, column by column (one entry per distinct dedup key), borrowed from the
/// alerts as parsed: a large post is not copied again to be stored.
#[derive(Debug, Default)]
pub struct NewAlerts<'a> {
    pub integration_id: Vec<Uuid>,
    pub group_id: Vec<i64>,
    pub incident_id: Vec<i64>,
    pub dedup_key: Vec<&'a str>,
    pub summary: Vec<&'a str>,
    pub source: Vec<&'a str>,
    pub severity: Vec<&'a str>,
    pub labels: Vec<&'a Value>,
    pub details: Vec<&'a Value>,
    pub source_url: Vec<Option<&'a str>>,
    pub starts_at: Vec<Option<DateTime<Utc>>>,
    pub deliveries: Vec<i32>,
    pub rule_id: Vec<Option<i64>>,
    pub routed: Vec<Value>,
    pub raw: Vec<&'a Value>,
    /// The silence that matched it as it joined an open incident, if one did
    pub silence_id: Vec<Option<i64>>,
    /// The maintenance window going on for its service, if one was
    pub window_id: Vec<Option<i64>>,
}

/// What storing one alert did.
#[derive(Debug)]
pub struct Stored {
    pub integration_id: Uuid,
    pub dedup_key: String,
    pub incident_id: i64,
    pub summary: String,
    /// false: it joined an open alert with the same dedup key
    pub inserted: bool,
}

/// Stores firing alerts in one statement; one with the dedup key of an open alert of the same
/// integration joins it (the database's unique index decides, whichever replica gets there
/// first; every open alert is in the `alerts_open` partition). The same statement counts them
/// into their incidents' alert lines, once per line for the whole batch, in key order, into
/// this connection's shard of each line. An alert was inserted when it holds exactly the
/// deliveries given (one that joined holds more): a partitioned table cannot return `xmax`.
pub async fn upsert(conn: &mut PgConnection, a: &NewAlerts<'_>) -> AppResult<Vec<Stored>> {
    Ok(sqlx::query_as!(
        Stored,
        r#"with written as (
               insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary,
                                   source, severity, labels, details, source_url, starts_at,
                                   deliveries, rule_id, routed, raw, silence_id, window_id)
               select i, g, inc, k, 'firing', s, src, sev, l, d, u, st, n, r, ro, raw, si, wi
               from unnest($1::uuid[], $2::int8[], $3::int8[], $4::text[], $5::text[], $6::text[],
                           $7::text[], $8::jsonb[], $9::jsonb[], $10::text[], $11::timestamptz[],
                           $12::int4[], $13::int8[], $14::jsonb[], $15::jsonb[], $16::int8[],
                           $17::int8[])
                    as t(i, g, inc, k, s, src, sev, l, d, u, st, n, r, ro, raw, si, wi)
               on conflict (integration_id, dedup_key, retained_from) where status <> 'resolved'
               do update set last_received_at = now(),
                             deliveries = alerts.deliveries + excluded.deliveries
               returning integration_id, dedup_key, incident_id, summary, rule_id, source_url,
                         severity, deliveries),
           given as (
               select i, k, n from unnest($1::uuid[], $4::text[], $12::int4[]) as g(i, k, n)),
           stored as (
               select w.integration_id, w.dedup_key, w.incident_id, w.summary, w.rule_id,
                      w.source_url, w.severity, (w.deliveries = g.n) as inserted
               from written w join given g on g.i = w.integration_id and g.k = w.dedup_key),
           lines as (
               insert into alert_lines as l (incident_id, summary, rule_id, shard, total, open,
                                             first_received_at, last_received_at, source_url,
                                             severity)
               select incident_id, summary, rule_id, (pg_backend_pid() % 16)::int2,
                      count(*) filter (where inserted), count(*) filter (where inserted), now(),
                      now(), max(source_url) filter (where inserted),
                      coalesce(max(severity) filter (where inserted), '')
               from stored
               group by incident_id, summary, rule_id
               order by incident_id, summary, rule_id
               on conflict (incident_id, summary, rule_id, shard)
               do update set total = l.total + excluded.total, open = l.open + excluded.open,
                             last_received_at = greatest(l.last_received_at, excluded.last_received_at),
                             source_url = greatest(l.source_url, excluded.source_url),
                             severity = greatest(l.severity, excluded.severity))
           select integration_id, dedup_key, incident_id, summary, inserted as "inserted!"
           from stored"#,
        &a.integration_id,
        &a.group_id,
        &a.incident_id,
        &a.dedup_key as &[&str],
        &a.summary as &[&str],
        &a.source as &[&str],
        &a.severity as &[&str],
        &a.labels as &[&Value],
        &a.details as &[&Value],
        &a.source_url as &[Option<&str>],
        &a.starts_at as &[Option<DateTime<Utc>>],
        &a.deliveries,
        &a.rule_id as &[Option<i64>],
        &a.routed,
        &a.raw as &[&Value],
        &a.silence_id as &[Option<i64>],
        &a.window_id as &[Option<i64>],
    )
    .fetch_all(conn)
    .await?)
}

/// Marks open alerts acknowledged; returns their incidents and integrations. Keys with no open
/// alert are no-ops.
pub async fn acknowledge(
    conn: &mut PgConnection,
    integrations: &[Uuid],
    keys: &[String],
) -> AppResult<Vec<(i64, Uuid)>> {
    Ok(sqlx::query!(
        r#"with acked as (
               update alerts a set status = 'acknowledged', last_received_at = now()
               from unnest($1::uuid[], $2::text[]) as k(integration_id, dedup_key)
               where a.integration_id = k.integration_id and a.dedup_key = k.dedup_key
                 and a.status = 'firing' and a.retained_from = 'infinity'
               returning a.incident_id, a.integration_id, a.summary, a.rule_id),
           lines as (
               update alert_lines l set last_received_at = now()
               from (select distinct incident_id, summary, rule_id from acked) d
               where l.incident_id = d.incident_id and l.summary = d.summary
                 and l.rule_id is not distinct from d.rule_id)
           select incident_id as "incident_id!", integration_id as "integration_id!" from acked"#,
        integrations,
        keys,
    )
    .fetch_all(conn)
    .await?
    .into_iter()
    .map(|r| (r.incident_id, r.integration_id))
    .collect())
}

/// The incidents of the open alerts with these keys.
pub async fn incidents_of_open(
    conn: &mut PgConnection,
    integrations: &[Uuid],
    keys: &[String],
) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select distinct a.incident_id
           from alerts a
           join unnest($1::uuid[], $2::text[]) as k(integration_id, dedup_key)
             on a.integration_id = k.integration_id and a.dedup_key = k.dedup_key
           where a.status <> 'resolved' and a.retained_from = 'infinity'
           order by a.incident_id"#,
        integrations,
        keys,
    )
    .fetch_all(conn)
    .await?)
}

pub struct Resolved {
    pub incident_id: i64,
    pub integration_id: Uuid,
    pub summary: String,
}

/// Resolves open alerts as their sender asked; keys with no open alert are no-ops.
pub async fn resolve(
    conn: &mut PgConnection,
    integrations: &[Uuid],
    keys: &[String],
) -> AppResult<Vec<Resolved>> {
    Ok(sqlx::query_as!(
        Resolved,
        r#"with resolved as (
               update alerts a
               set status = 'resolved', resolved_at = now(), resolved_by = 'sender',
                   last_received_at = now(), retained_from = now()
               from unnest($1::uuid[], $2::text[]) as k(integration_id, dedup_key)
               where a.integration_id = k.integration_id and a.dedup_key = k.dedup_key
                 and a.status <> 'resolved' and a.retained_from = 'infinity'
               returning a.incident_id, a.integration_id, a.summary, a.rule_id),
           lines as (
               insert into alert_lines as l (incident_id, summary, rule_id, shard, total, open,
                                             first_received_at, last_received_at, severity)
               select incident_id, summary, rule_id, (pg_backend_pid() % 16)::int2, 0, -count(*),
                      now(), now(), ''
               from resolved
               group by incident_id, summary, rule_id
               order by incident_id, summary, rule_id
               on conflict (incident_id, summary, rule_id, shard)
               do update set open = l.open + excluded.open, last_received_at = now())
           select incident_id as "incident_id!", integration_id as "integration_id!",
                  summary as "summary!" from resolved"#,
        integrations,
        keys,
    )
    .fetch_all(conn)
    .await?)
}

/// How many alerts are still open per incident (incidents with none are left out).
pub async fn open_counts(conn: &mut PgConnection, incidents: &[i64]) -> AppResult<Vec<(i64, i64)>> {
    Ok(sqlx::query!(
        r#"select incident_id, sum(open)::int8 as "open!" from alert_lines
           where incident_id = any($1)
           group by incident_id
           having sum(open) > 0"#,
        incidents
    )
    .fetch_all(conn)
    .await?
    .into_iter()
    .map(|r| (r.incident_id, r.open))
    .collect())
}

/// When an incident is resolved: its groups close first (waiting for alerts joining them to
/// commit), then its open alerts resolve with it. The next alert of the same group or key opens
/// a new incident.
pub async fn close_for_incident(conn: &mut PgConnection, incident_id: i64) -> AppResult<()> {
    sqlx::query!(
        "update alert_groups set closed_at = now() where incident_id = $1 and closed_at is null",
        incident_id
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        r#"update alerts
           set status = 'resolved', resolved_at = now(), resolved_by = 'incident',
               retained_from = now()
           where incident_id = $1 and status <> 'resolved' and retained_from = 'infinity'"#,
        incident_id
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "update alert_lines set open = 0 where incident_id = $1 and open <> 0",
        incident_id
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// How many alerts an incident has had, from its alert lines.
pub async fn count_for_incident(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<i64> {
    Ok(sqlx::query_scalar!(
        r#"select coalesce(sum(total), 0)::int8 as "n!" from alert_lines where incident_id = $1"#,
        incident_id
    )
    .fetch_one(e)
    .await?)
}

/// One alert as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Alert {
    pub id: i64,
    pub integration: String,
    /// The integration's format: alertmanager, grafana, pagerduty-events-v2, generic or opsgenie
    pub integration_format: String,
    pub dedup_key: String,
    pub group_key: String,
    /// firing, acknowledged or resolved
    pub status: String,
    pub summary: String,
    pub source: String,
    pub severity: String,
    #[schema(value_type = Object)]
    pub labels: Value,
    #[schema(value_type = Object)]
    pub details: Value,
    pub source_url: Option<String>,
    pub starts_at: Option<DateTime<Utc>>,
    pub received_at: DateTime<Utc>,
    pub last_received_at: DateTime<Utc>,
    pub deliveries: i32,
    pub resolved_at: Option<DateTime<Utc>>,
    pub resolved_by: Option<String>,
    /// What routing decided: rule, service, severity, title
    #[schema(value_type = Object)]
    pub routed: Value,
    /// The alert as its sender wrote it
    #[schema(value_type = Object)]
    pub raw: Value,
    /// The silence that matched it when it joined its incident (it paged nobody)
    pub silence_id: Option<i64>,
}

/// An incident's alerts, oldest first, after `after_id`. The page's ids come first, from
/// `alerts_by_incident` alone in each month (it carries the status and the partition key),
/// merged in (incident, id) order, then each row by its whole key. Both are written for the
/// generic plan a prepared statement settles on: the incident named by equality (a range, once
/// needed to keep PostgreSQL off the primary key's id order, makes a generic plan over the
/// months take 270 ms at 10M alerts), and the rows looked up one by one behind `limit 1`,
/// which a plan cannot turn into a hash of the whole table (5 s at 10M alerts).
pub async fn for_incident(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    status: Option<&str>,
    after_id: i64,
    limit: i64,
) -> AppResult<Vec<Alert>> {
    Ok(sqlx::query_as!(
        Alert,
        r#"with page as (
               select id, retained_from from alerts
               where incident_id = $1 and id > $2
                 and ($3::text is null or status = $3)
               order by incident_id, id
               limit $4)
           select a.id, i.name as integration, i.format as integration_format, a.dedup_key, g.group_key, a.status, a.summary,
                  a.source, a.severity, a.labels, a.details, a.source_url, a.starts_at,
                  a.received_at, a.last_received_at, a.deliveries, a.resolved_at, a.resolved_by,
                  a.routed, a.raw, a.silence_id
           from page p
           -- Each row looked up by its whole key (one month's index, not every month's), row
           -- by row: a generic plan, which cannot know the page is 100 rows, would otherwise
           -- hash the whole table (5 s at 10M alerts).
           cross join lateral (
               select * from alerts x where x.id = p.id and x.retained_from = p.retained_from
               limit 1
           ) a
           join integrations i on i.id = a.integration_id
           join alert_groups g on g.id = a.group_id
           order by a.id"#,
        incident_id,
        after_id,
        status,
        limit,
    )
    .fetch_all(e)
    .await?)
}

/// Alerts of an incident gathered by summary, for its page: however many thousands arrived,
/// the page shows one line per kind.
#[derive(Debug, Clone)]
pub struct AlertGroupLine {
    pub summary: String,
    pub total: i64,
    pub open: i64,
    pub first_received_at: DateTime<Utc>,
    pub last_received_at: DateTime<Utc>,
    pub source_url: Option<String>,
    pub severity: String,
}

impl AlertGroupLine {
    /// The sender's link, only when it is a web address (an alert may carry anything).
    pub fn link(&self) -> Option<&str> {
        self.source_url
            .as_deref()
            .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
    }
}

pub async fn lines_for_incident(
    e: impl PgExecutor<'_>,
    incident_id: i64,
) -> AppResult<Vec<AlertGroupLine>> {
    Ok(sqlx::query_as!(
        AlertGroupLine,
        r#"select summary, sum(total)::int8 as "total!", sum(open)::int8 as "open!",
                  min(first_received_at) as "first_received_at!",
                  max(last_received_at) as "last_received_at!",
                  max(source_url) as source_url, max(severity) as "severity!"
           from alert_lines where incident_id = $1
           group by summary
           order by sum(open) desc, min(first_received_at)
           limit 50"#,
        incident_id
    )
    .fetch_all(e)
    .await?)
}

/// Alerts received since `since`, newest first — but those of incidents `seen_by` may not see:
/// what a draft routing rule is tried on.
pub async fn received_since(
    e: impl PgExecutor<'_>,
    since: DateTime<Utc>,
    seen_by: SeenBy,
    limit: i64,
) -> AppResult<Vec<Alert>> {
    Ok(sqlx::query_as!(
        Alert,
        r#"select a.id, i.name as integration, i.format as integration_format, a.dedup_key, g.group_key, a.status, a.summary,
                  a.source, a.severity, a.labels, a.details, a.source_url, a.starts_at,
                  a.received_at, a.last_received_at, a.deliveries, a.resolved_at, a.resolved_by,
                  a.routed, a.raw, a.silence_id
           from alerts a
           join integrations i on i.id = a.integration_id
           join alert_groups g on g.id = a.group_id
           left join incidents inc on inc.id = g.incident_id
           where a.received_at >= $1
             and (inc.id is null or incident_visible(inc.restricted, inc.id, $3))
           order by a.received_at desc, a.id desc
           limit $2"#,
        since,
        limit,
        seen_by.sql(),
    )
    .fetch_all(e)
    .await?)
}

/// The incidents of these alerts, by alert id, where `seen_by` may see them.
pub async fn incidents_of(
    e: impl PgExecutor<'_>,
    alert_ids: &[i64],
    seen_by: SeenBy,
) -> AppResult<std::collections::HashMap<i64, crate::domain::IncidentKey>> {
    Ok(sqlx::query!(
        r#"select a.id, inc.number as "key: crate::domain::IncidentKey"
           from alerts a join incidents inc on inc.id = a.incident_id
           where a.id = any($1) and incident_visible(inc.restricted, inc.id, $2)"#,
        alert_ids,
        seen_by.sql()
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.id, r.key))
    .collect())
}

/// Notes a signed message's `webhook-id`; false when the integration has sent it before (within
/// the sweep's window), so the message is a replay. A concurrent first delivery of the same id
/// waits here until the other commits.
pub async fn first_delivery(
    e: impl PgExecutor<'_>,
    integration_id: Uuid,
    msg_id: &str,
) -> AppResult<bool> {
    let inserted = sqlx::query!(
        r#"insert into webhook_deliveries (integration_id, msg_id) values ($1, $2)
           on conflict (integration_id, msg_id) do nothing"#,
        integration_id,
        msg_id
    )
    .execute(e)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// Forgets message ids older than twice the signature window: a replay that late fails the
/// timestamp check before it gets here.
pub async fn purge_deliveries(e: impl PgExecutor<'_>) -> AppResult<u64> {
    Ok(sqlx::query!(
        "delete from webhook_deliveries where received_at < now() - interval '10 minutes'"
    )
    .execute(e)
    .await?
    .rows_affected())
}

/// Gives an incident's alerts and groups the times they had in the tool they come from (the
/// demo's past incidents): received first at `first`, last at `last`, resolved by their sender
/// at `resolved` (still firing when `None`). The month it resolved in is made if missing; a
/// caller inside a longer transaction makes the months first ([`cover_months`]), as the demo
/// does.
pub async fn keep_history(
    conn: &mut PgConnection,
    incident_id: i64,
    first: DateTime<Utc>,
    last: DateTime<Utc>,
    resolved: Option<DateTime<Utc>>,
) -> AppResult<()> {
    if let Some(at) = resolved {
        cover_months(&mut *conn, at, at).await?;
    }
    sqlx::query!(
        r#"update alerts
           set received_at = $2, last_received_at = $3,
               status = case when $4::timestamptz is null then status else 'resolved' end,
               resolved_at = coalesce($4, resolved_at),
               resolved_by = case when $4::timestamptz is null then resolved_by else 'sender' end,
               retained_from = coalesce($4, retained_from)
           where incident_id = $1"#,
        incident_id,
        first,
        last,
        resolved
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        r#"update alert_groups set opened_at = $2, closed_at = coalesce($3, closed_at)
           where incident_id = $1"#,
        incident_id,
        first,
        resolved
    )
    .execute(&mut *conn)
    .await?;
    recount_lines(&mut *conn, incident_id).await
}

/// Counts an incident's alert lines again from its alerts (after history was written to them, or
/// alerts moved), the stored ones and those of months let go (`forgotten_alert_lines`).
async fn recount_lines(conn: &mut PgConnection, incident_id: i64) -> AppResult<()> {
    sqlx::query!(
        "delete from alert_lines where incident_id = $1",
        incident_id
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        r#"insert into alert_lines (incident_id, summary, rule_id, total, open, first_received_at,
                                    last_received_at, source_url, severity)
           select incident_id, summary, rule_id, sum(n), sum(open), min(first_received_at),
                  max(last_received_at), max(source_url), max(severity)
           from (select incident_id, summary, rule_id, 1 as n,
                        (status <> 'resolved')::int4 as open, received_at as first_received_at,
                        last_received_at, source_url, severity
                 from alerts where incident_id = $1
                 union all
                 select incident_id, summary, rule_id, total, 0, first_received_at,
                        last_received_at, source_url, severity
                 from forgotten_alert_lines where incident_id = $1) a
           group by incident_id, summary, rule_id"#,
        incident_id
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Locks the alert groups of these incidents (in id order), waiting for alerts joining them to
/// commit; alerts arriving later wait for this transaction and then find the groups where it
/// left them. Taken before the incidents' own locks, as the alert lanes take them.
pub async fn lock_groups_of(conn: &mut PgConnection, incidents: &[i64]) -> AppResult<()> {
    sqlx::query!(
        "select id from alert_groups where incident_id = any($1) order by id for update",
        incidents
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(())
}

/// Moves every alert of `from`, its groups (so the next alerts of them join `into`) and its
/// flapping keys to `into`, and counts both incidents' alert lines again; returns how many
/// alerts moved.
pub async fn move_incident(conn: &mut PgConnection, from: i64, into: i64) -> AppResult<i64> {
    sqlx::query!(
        "update alert_groups set incident_id = $2 where incident_id = $1",
        from,
        into
    )
    .execute(&mut *conn)
    .await?;
    let moved = sqlx::query!(
        "update alerts set incident_id = $2 where incident_id = $1",
        from,
        into
    )
    .execute(&mut *conn)
    .await?
    .rows_affected();
    // What `from`'s alerts of months let go counted goes with them.
    sqlx::query!(
        r#"with gone as (delete from forgotten_alert_lines where incident_id = $1 returning *)
           insert into forgotten_alert_lines as f (incident_id, summary, rule_id, total,
                                                   first_received_at, last_received_at,
                                                   source_url, severity)
           select $2, summary, rule_id, total, first_received_at, last_received_at, source_url,
                  severity
           from gone
           on conflict (incident_id, summary, rule_id) do update
           set total = f.total + excluded.total,
               first_received_at = least(f.first_received_at, excluded.first_received_at),
               last_received_at = greatest(f.last_received_at, excluded.last_received_at),
               source_url = greatest(f.source_url, excluded.source_url),
               severity = greatest(f.severity, excluded.severity)"#,
        from,
        into
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "update alert_flapping set incident_id = $2 where incident_id = $1",
        from,
        into
    )
    .execute(&mut *conn)
    .await?;
    recount_lines(&mut *conn, from).await?;
    recount_lines(&mut *conn, into).await?;
    Ok(i64::try_from(moved).unwrap_or(i64::MAX))
}

/// Moves the alerts `ids` of `from` (ids of other incidents are passed over) to `into`, each
/// into a closed group of its own group key there: what they were grouped with stays in
/// `from`, and the next alerts of those keys join the groups they always joined. Their
/// flapping keys go with them; both incidents' lines are counted again. Returns how many
/// moved.
pub async fn move_alerts(
    conn: &mut PgConnection,
    from: i64,
    into: i64,
    ids: &[i64],
) -> AppResult<i64> {
    let moved = sqlx::query!(
        r#"with chosen as (
               select a.id, g.integration_id, g.group_key, g.grouped_by
               from alerts a join alert_groups g on g.id = a.group_id
               where a.incident_id = $1 and a.id = any($3)),
           groups as (
               insert into alert_groups (integration_id, group_key, grouped_by, incident_id,
                                         opened_at, closed_at)
               select distinct on (integration_id, group_key)
                      integration_id, group_key, grouped_by, $2, now(), now()
               from chosen order by integration_id, group_key
               returning id, integration_id, group_key)
           update alerts a set incident_id = $2, group_id = n.id
           from chosen c join groups n
                on n.integration_id = c.integration_id and n.group_key = c.group_key
           where a.id = c.id
           returning a.integration_id, a.dedup_key"#,
        from,
        into,
        ids
    )
    .fetch_all(&mut *conn)
    .await?;
    let (integrations, keys): (Vec<Uuid>, Vec<String>) = moved
        .into_iter()
        .map(|r| (r.integration_id, r.dedup_key))
        .unzip();
    // A flapping key goes with its alerts only when none of them stays behind.
    sqlx::query!(
        r#"update alert_flapping f set incident_id = $2
           from unnest($3::uuid[], $4::text[]) as k(i, key)
           where f.incident_id = $1 and f.integration_id = k.i and f.dedup_key = k.key
             and not exists (select 1 from alerts b
                             where b.integration_id = k.i and b.dedup_key = k.key
                               and b.incident_id = $1)"#,
        from,
        into,
        &integrations,
        &keys
    )
    .execute(&mut *conn)
    .await?;
    recount_lines(&mut *conn, from).await?;
    recount_lines(&mut *conn, into).await?;
    Ok(i64::try_from(keys.len()).unwrap_or(i64::MAX))
}

/// The alerts of an incident's lines (their summaries), oldest first, up to `limit`.
pub async fn ids_of_lines(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    summaries: &[String],
    limit: i64,
) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select id from alerts where incident_id = $1 and summary = any($2)
           order by id limit $3"#,
        incident_id,
        summaries,
        limit
    )
    .fetch_all(e)
    .await?)
}

/// Some alerts of an incident, counted against all of them.
pub struct Among {
    /// The incident's alerts
    pub all: i64,
    /// Those of them chosen, and how many of those are not resolved
    pub chosen: i64,
    pub chosen_open: i64,
    /// The summary of the first chosen
    pub first: Option<String>,
}

/// How many alerts the incident has, how many of `ids` are among them (and still open), and
/// the summary of the first of those.
pub async fn among(e: impl PgExecutor<'_>, incident_id: i64, ids: &[i64]) -> AppResult<Among> {
    Ok(sqlx::query_as!(
        Among,
        r#"select count(*) as "all!",
                  count(*) filter (where id = any($2)) as "chosen!",
                  count(*) filter (where id = any($2) and status <> 'resolved') as "chosen_open!",
                  (array_agg(summary order by id) filter (where id = any($2)))[1] as first
           from alerts where incident_id = $1"#,
        incident_id,
        ids
    )
    .fetch_one(e)
    .await?)
}

/// Creates the month partitions of `alerts` from `since`'s month through `through`'s that are
/// missing (replicas racing create each once); returns how many it created. Waits at most 2 s
/// for the table lock (then fails, and the caller tries again later).
pub async fn cover_months(
    conn: &mut PgConnection,
    since: DateTime<Utc>,
    through: DateTime<Utc>,
) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        r#"select alert_partitions_cover($1, $2) as "made!""#,
        since,
        through
    )
    .fetch_one(conn)
    .await?)
}

/// Creates, from the database clock, this month's partition and those of the next `ahead`
/// months where missing; returns how many it created.
pub async fn cover_ahead(e: impl PgExecutor<'_>, ahead: i32) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        r#"select alert_partitions_cover(now(), now() + make_interval(months => $1)) as "made!""#,
        ahead
    )
    .fetch_one(e)
    .await?)
}

/// Lets go of the oldest month of alerts that ended more than `days` days ago (by the database
/// clock), if one did: drops its partition after adding what its alerts counted to
/// `forgotten_alert_lines`, in a transaction of its own (the drop's table lock held for one
/// month's count). Returns the partition dropped. Open alerts are never let go.
pub async fn let_go_oldest(e: impl PgExecutor<'_>, days: i32) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar!(
        r#"select alert_partitions_drop(now() - make_interval(days => $1)) as "dropped!""#,
        days
    )
    .fetch_optional(e)
    .await?)
}

/// The month partitions of `alerts` (not `alerts_open`), oldest first.
pub async fn months(e: impl PgExecutor<'_>) -> AppResult<Vec<String>> {
    Ok(sqlx::query_scalar!(
        r#"select c.relname::text as "name!" from pg_inherits i join pg_class c on c.oid = i.inhrelid
           where i.inhparent = 'alerts'::regclass and c.relname ~ '^alerts_[0-9]{4}_[0-9]{2}$'
           order by c.relname"#
    )
    .fetch_all(e)
    .await?)
}
