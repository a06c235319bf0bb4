//! Flapping alerts: a key that fires more often than its integration allows within its window
//! is flapping from that fire until it has stayed resolved for the settle time. One row per
//! key (`alert_flapping`), written by the intake at fires and resolutions and settled by the
//! engine in every replica; and the incidents whose mitigation the alerts made
//! (`alert_mitigations`), so a flapping alert only ever withdraws a mitigation of theirs.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use crate::error::AppResult;

/// A flapping alert as its incident shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct FlappingAlert {
    pub dedup_key: String,
    pub summary: String,
    /// Its fires within the window when it was found flapping, and one more for each fire since
    pub fires: i32,
    /// When it was found flapping
    pub since: DateTime<Utc>,
    pub last_fired_at: DateTime<Utc>,
    /// When it settles if it stays resolved until then; absent while it fires
    pub settle_due_at: Option<DateTime<Utc>>,
    /// When it settled; absent while it still flaps
    pub settled_at: Option<DateTime<Utc>>,
}

/// The flapping alerts of an incident, those still flapping first.
pub async fn flapping_of(
    e: impl PgExecutor<'_>,
    incident_id: i64,
) -> AppResult<Vec<FlappingAlert>> {
    Ok(sqlx::query_as!(
        FlappingAlert,
        r#"select dedup_key, summary, fires, since, last_fired_at, settle_due_at, settled_at
           from alert_flapping where incident_id = $1
           order by settled_at is not null, since
           limit 50"#,
        incident_id
    )
    .fetch_all(e)
    .await?)
}

/// A key that just fired as flapping is judged: its fires within its integration's window,
/// the integration's threshold, and whether it flaps already (found earlier, not settled).
pub struct FireCount {
    pub integration_id: Uuid,
    pub dedup_key: String,
    pub fires: i64,
    pub threshold: i32,
    pub flapping: bool,
}

/// The fire counts of these keys that just fired, for integrations that watch for flapping.
pub async fn fire_counts(
    conn: &mut PgConnection,
    integrations: &[Uuid],
    keys: &[String],
) -> AppResult<Vec<FireCount>> {
    Ok(sqlx::query_as!(
        FireCount,
        r#"select k.i as "integration_id!", k.k as "dedup_key!", g.flap_threshold as threshold,
                  (select count(*) from alerts a
                   where a.integration_id = k.i and a.dedup_key = k.k
                     and a.received_at > now() - make_interval(mins => g.flap_window_minutes)
                     -- resolved after it was received: only the months since can hold it
                     and a.retained_from > now() - make_interval(mins => g.flap_window_minutes))
                  as "fires!",
                  exists (select 1 from alert_flapping f
                          where f.integration_id = k.i and f.dedup_key = k.k
                            and f.settled_at is null) as "flapping!"
           from unnest($1::uuid[], $2::text[]) as k(i, k)
           join integrations g on g.id = k.i
           where g.flap_threshold > 0"#,
        integrations,
        keys,
    )
    .fetch_all(conn)
    .await?)
}

/// Flapping keys that fired, in one statement (arrays of equal length).
#[derive(Default)]
pub struct Flaps<'a> {
    pub integration_id: Vec<Uuid>,
    pub dedup_key: Vec<&'a str>,
    pub incident_id: Vec<i64>,
    pub summary: Vec<&'a str>,
    pub fires: Vec<i32>,
}

/// A flapping key after a fire: whether this fire found it flapping (a new episode).
pub struct Flapped {
    pub integration_id: Uuid,
    pub dedup_key: String,
    pub incident_id: i64,
    pub summary: String,
    pub fires: i32,
    pub found: bool,
}

/// Marks the keys flapping, or counts one more fire of those that were (and stops their
/// settling: they fire again). A key whose earlier episode had settled starts a new one.
pub async fn mark_flapping(conn: &mut PgConnection, f: &Flaps<'_>) -> AppResult<Vec<Flapped>> {
    Ok(sqlx::query_as!(
        Flapped,
        r#"with old as (
               select f.integration_id, f.dedup_key, f.settled_at
               from alert_flapping f join unnest($1::uuid[], $2::text[]) as k(i, k)
                    on f.integration_id = k.i and f.dedup_key = k.k),
           marked as (
               insert into alert_flapping as f (integration_id, dedup_key, incident_id, summary,
                                                fires, since, last_fired_at)
               select i, k, inc, s, n, now(), now()
               from unnest($1::uuid[], $2::text[], $3::int8[], $4::text[], $5::int4[])
                    as t(i, k, inc, s, n)
               order by i, k
               on conflict (integration_id, dedup_key) do update
               -- an episode still flapping stays with its incident, which waits for it
               set incident_id = case when f.settled_at is null then f.incident_id
                                      else excluded.incident_id end,
                   summary = excluded.summary,
                   fires = case when f.settled_at is null then f.fires + 1 else excluded.fires end,
                   since = case when f.settled_at is null then f.since else now() end,
                   last_fired_at = now(), settle_due_at = null, settled_at = null
               returning integration_id, dedup_key, incident_id, summary, fires)
           select m.integration_id as "integration_id!", m.dedup_key as "dedup_key!",
                  m.incident_id as "incident_id!", m.summary as "summary!", m.fires as "fires!",
                  (o.dedup_key is null or o.settled_at is not null) as "found!"
           from marked m left join old o
                on o.integration_id = m.integration_id and o.dedup_key = m.dedup_key"#,
        &f.integration_id,
        &f.dedup_key as &[&str],
        &f.incident_id,
        &f.summary as &[&str],
        &f.fires,
    )
    .fetch_all(conn)
    .await?)
}

/// Flapping keys that resolved start settling: they settle at the end of their integration's
/// settle time unless they fire again first.
pub async fn start_settling(
    conn: &mut PgConnection,
    integrations: &[Uuid],
    keys: &[String],
) -> AppResult<()> {
    sqlx::query!(
        r#"update alert_flapping f
           set settle_due_at = now() + make_interval(mins => g.flap_settle_minutes)
           from integrations g, unnest($1::uuid[], $2::text[]) as k(i, k)
           where g.id = f.integration_id and f.integration_id = k.i and f.dedup_key = k.k
             and f.settled_at is null and f.settle_due_at is null"#,
        integrations,
        keys,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Of these incidents, those with an alert that flaps still (fires, or has not yet stayed
/// resolved for its settle time).
pub async fn unsettled(conn: &mut PgConnection, incidents: &[i64]) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select distinct incident_id from alert_flapping
           where incident_id = any($1) and settled_at is null"#,
        incidents
    )
    .fetch_all(conn)
    .await?)
}

/// The incidents of up to `limit` keys due to settle, in id order, for the engine to lock
/// before it claims the keys.
pub async fn settling_incidents(conn: &mut PgConnection, limit: i64) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select distinct incident_id as "incident_id!" from (
               select incident_id from alert_flapping
               where settled_at is null and settle_due_at <= now()
               order by settle_due_at limit $1) d
           order by 1"#,
        limit
    )
    .fetch_all(conn)
    .await?)
}

/// A key that has settled, with what its integration does once an incident's alerts have all
/// resolved.
pub struct Settled {
    pub incident_id: i64,
    pub summary: String,
    pub fires: i32,
    pub since: DateTime<Utc>,
    pub settle_minutes: i32,
    pub integration: String,
    pub on_all_resolved: String,
}

/// Settles the keys of these incidents whose time has come (claimed `SKIP LOCKED`: one replica
/// settles each).
pub async fn settle(conn: &mut PgConnection, incidents: &[i64]) -> AppResult<Vec<Settled>> {
    Ok(sqlx::query_as!(
        Settled,
        r#"with due as (
               select integration_id, dedup_key from alert_flapping
               where incident_id = any($1) and settled_at is null and settle_due_at <= now()
               for update skip locked),
           settled as (
               update alert_flapping f set settled_at = now()
               from due where f.integration_id = due.integration_id
                          and f.dedup_key = due.dedup_key
               returning f.incident_id, f.summary, f.fires, f.since, f.integration_id)
           select s.incident_id, s.summary, s.fires, s.since, g.flap_settle_minutes as settle_minutes,
                  g.name as integration, g.on_all_resolved
           from settled s join integrations g on g.id = s.integration_id
           order by s.incident_id"#,
        incidents
    )
    .fetch_all(conn)
    .await?)
}

/// Seconds until the next key is due to settle.
pub async fn next_settle(e: impl PgExecutor<'_>) -> AppResult<Option<f64>> {
    Ok(sqlx::query_scalar!(
        r#"select extract(epoch from min(settle_due_at) - now())::float8 from alert_flapping
           where settled_at is null and settle_due_at is not null"#
    )
    .fetch_one(e)
    .await?)
}

/// An incident's flapping ends with it (resolved by a person, merged): nothing of it settles
/// later.
pub async fn settle_with_incident(conn: &mut PgConnection, incident_id: i64) -> AppResult<()> {
    sqlx::query!(
        r#"update alert_flapping set settled_at = now(), settle_due_at = coalesce(settle_due_at, now())
           where incident_id = $1 and settled_at is null"#,
        incident_id
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The alerts mitigated these incidents at `at`.
pub async fn note_mitigations(
    conn: &mut PgConnection,
    incidents: &[i64],
    at: DateTime<Utc>,
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into alert_mitigations (incident_id, mitigated_at)
           select unnest($1::int8[]), $2
           on conflict (incident_id) do update set mitigated_at = excluded.mitigated_at"#,
        incidents,
        at,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Whether the incident's mitigation at `at` was the alerts'.
pub async fn mitigated_by_alerts(
    conn: &mut PgConnection,
    incident_id: i64,
    at: DateTime<Utc>,
) -> AppResult<bool> {
    Ok(sqlx::query_scalar!(
        r#"select exists (select 1 from alert_mitigations
                          where incident_id = $1 and mitigated_at = $2) as "yes!""#,
        incident_id,
        at,
    )
    .fetch_one(conn)
    .await?)
}
