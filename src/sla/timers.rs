//! Persisted SLA timers and the engine that fires them. Every change that moves a deadline
//! re-arms the incident's timers in its own transaction and notifies `quell_timers`; every
//! `quell serve` replica runs the engine, which claims due timers with `FOR UPDATE SKIP LOCKED`
//! and, in one transaction per batch, marks each fired, records its breach (once per deadline,
//! enforced by a unique constraint) and writes the timeline event. A replica that dies mid-batch
//! rolls back, and another picks the timers up.

use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::pool::PoolConnection;
use sqlx::{PgConnection, PgPool, Postgres};
use std::collections::HashMap;
use std::time::Duration;

use super::db;
use super::domain::{TimerKind, desired_timers};
use crate::domain::Severity;
use crate::engine::{Waker, wait_for};
use crate::error::{AppError, AppResult};
use crate::notify::actions::About;
use crate::notify::domain::Event;
use crate::timeline::db::NewEvent;
use crate::timeline::domain::Kind;

/// What the timers of one incident are computed from.
#[derive(Debug, Clone, Copy)]
pub struct Clocks {
    pub incident_id: i64,
    pub peak_severity: Severity,
    pub detected_at: DateTime<Utc>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub mitigated_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
}

pub const CHANNEL: &str = "quell_timers";

/// Brings an incident's timers in line with its state and policy, in the caller's transaction,
/// and wakes the engines.
pub async fn rearm(conn: &mut PgConnection, c: &Clocks) -> AppResult<()> {
    rearm_many(conn, std::slice::from_ref(c), false).await
}

/// Brings the timers of several incidents in line with their states and policies in a few
/// statements whatever their number, and wakes the engines. `fresh`: the incidents were opened
/// in this transaction, so they have no timers to stop and no stakeholder update yet.
pub async fn rearm_many(conn: &mut PgConnection, clocks: &[Clocks], fresh: bool) -> AppResult<()> {
    if clocks.is_empty() {
        return Ok(());
    }
    let policies = db::all(&mut *conn).await?;
    let last_updates: HashMap<i64, DateTime<Utc>> = if fresh {
        HashMap::new()
    } else {
        let ids: Vec<i64> = clocks.iter().map(|c| c.incident_id).collect();
        sqlx::query!(
            r#"select incident_id, max(sent_at) as "sent_at!" from stakeholder_updates
               where incident_id = any($1) group by incident_id"#,
            &ids
        )
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|r| (r.incident_id, r.sent_at))
        .collect()
    };
    let (mut set_ids, mut set_kinds, mut set_dues) = (Vec::new(), Vec::new(), Vec::new());
    let (mut stop_ids, mut stop_kinds) = (Vec::new(), Vec::new());
    for c in clocks {
        let policy = db::of(&policies, c.peak_severity)?;
        let desired = desired_timers(
            &policy,
            c.detected_at,
            c.acknowledged_at,
            c.mitigated_at,
            c.resolved_at,
            last_updates.get(&c.incident_id).copied(),
        );
        for (kind, due) in desired {
            match due {
                Some(due_at) => {
                    set_ids.push(c.incident_id);
                    set_kinds.push(kind.as_str());
                    set_dues.push(due_at);
                }
                None if !fresh => {
                    stop_ids.push(c.incident_id);
                    stop_kinds.push(kind.as_str());
                }
                None => {}
            }
        }
    }
    // A new deadline is pending again; an unchanged fired one stays fired. The engines are
    // woken by the same statement.
    sqlx::query!(
        r#"with set_ as (
               insert into sla_timers (incident_id, kind, due_at)
               select i, k, d from unnest($1::int8[], $2::text[], $3::timestamptz[]) as t(i, k, d)
               order by i, k
               on conflict (incident_id, kind) do update
               set due_at = excluded.due_at,
                   state = case when sla_timers.state = 'fired'
                                 and sla_timers.due_at = excluded.due_at
                                then 'fired' else 'pending' end,
                   fired_at = case when sla_timers.due_at = excluded.due_at
                                   then sla_timers.fired_at end,
                   updated_at = now()
               where sla_timers.due_at is distinct from excluded.due_at
                  or sla_timers.state = 'stopped')
           select pg_notify('quell_timers', '')"#,
        &set_ids,
        &set_kinds as &[&str],
        &set_dues,
    )
    .execute(&mut *conn)
    .await?;
    if !stop_ids.is_empty() {
        sqlx::query!(
            r#"update sla_timers t set state = 'stopped', updated_at = now()
               from unnest($1::int8[], $2::text[]) as s(i, k)
               where t.incident_id = s.i and t.kind = s.k and t.state = 'pending'"#,
            &stop_ids,
            &stop_kinds as &[&str],
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Re-arms every open incident (after a policy change). The incidents are locked first, in id
/// order, as people's changes and the engine lock them before their timers.
pub async fn rearm_open(conn: &mut PgConnection) -> AppResult<()> {
    let ids = sqlx::query_scalar!(
        "select id from incidents where status <> 'resolved' -- every incident: the engine's"
    )
    .fetch_all(&mut *conn)
    .await?;
    let locked = crate::incident_ref::db::share(conn, &ids).await?;
    let open = sqlx::query!(
        r#"select id, peak_severity, detected_at, acknowledged_at, mitigated_at, resolved_at
           -- every incident: the engine's
           from incidents where id = any($1) and status <> 'resolved'"#,
        &locked
    )
    .fetch_all(&mut *conn)
    .await?;
    let clocks = open
        .into_iter()
        .map(|r| {
            Ok(Clocks {
                incident_id: r.id,
                peak_severity: Severity::parse("peak_severity", &r.peak_severity)?,
                detected_at: r.detected_at,
                acknowledged_at: r.acknowledged_at,
                mitigated_at: r.mitigated_at,
                resolved_at: r.resolved_at,
            })
        })
        .collect::<Result<Vec<_>, crate::domain::DomainError>>()?;
    rearm_many(conn, &clocks, false).await
}

/// Fires up to `batch` due timers in one transaction; returns how many fired. Each records its
/// breach (once per deadline), its timeline entry and its messages; the batch does so a table
/// at a time, so a timer due while others fire waits for a few statements, not for each of
/// theirs.
pub async fn fire_due(pool: &PgPool, batch: i64) -> AppResult<usize> {
    fire_due_on(&mut *pool.acquire().await?, batch).await
}

/// [`fire_due`] on a given connection (the engine keeps one).
///
/// The transaction commits without waiting for its WAL to reach the disk
/// (`synchronous_commit = off`): the next due timer then waits for no disk flush, which on a
/// shared disk took up to tens of milliseconds. What a database crash can lose is the last
/// fraction of a second of firings — each timer's `fired` state together with its breach, entry
/// and messages, as one transaction — so those timers are pending again after the restart and
/// fire then: still one breach per deadline, and at least one notification attempt.
pub async fn fire_due_on(conn: &mut PgConnection, batch: i64) -> AppResult<usize> {
    let mut tx =
        sqlx::Connection::begin_with(&mut *conn, "begin; set local synchronous_commit = off")
            .await?;
    // The incidents first, then their timers: the order people's changes lock them in.
    let due_incidents: Vec<i64> = sqlx::query_scalar!(
        r#"select distinct incident_id as "id!" from (
               select incident_id from sla_timers
               where state = 'pending' and due_at <= now()
               order by due_at limit $1) d"#,
        batch
    )
    .fetch_all(&mut *tx)
    .await?;
    if due_incidents.is_empty() {
        tx.commit().await?;
        return Ok(0);
    }
    let locked = crate::incident_ref::db::share(&mut tx, &due_incidents).await?;
    let fired = sqlx::query!(
        r#"with due as (
               select id, updated_at as armed_at from sla_timers
               where state = 'pending' and due_at <= now() and incident_id = any($2)
               order by due_at limit $1
               for update skip locked)
           update sla_timers t set state = 'fired', fired_at = now(), updated_at = now()
           from due where t.id = due.id
           returning t.id, t.incident_id, t.kind, t.due_at,
                     -- late from its deadline, or from its arming when that came after
                     -- (a timer armed already overdue fires at once, not late)
                     extract(epoch from now() - greatest(t.due_at, due.armed_at))::float8
                         as "late_secs!""#,
        batch,
        &locked
    )
    .fetch_all(&mut *tx)
    .await?;
    if fired.is_empty() {
        tx.commit().await?;
        return Ok(0);
    }
    crate::metrics::late("sla timers", fired.iter().map(|t| t.late_secs));
    let ids: Vec<i64> = fired.iter().map(|t| t.id).collect();
    let incidents: Vec<i64> = fired.iter().map(|t| t.incident_id).collect();
    let kinds: Vec<&str> = fired.iter().map(|t| t.kind.as_str()).collect();
    let dues: Vec<DateTime<Utc>> = fired.iter().map(|t| t.due_at).collect();
    // A deadline breached before (a timer fired again after a failed commit elsewhere) is not
    // recorded twice: only new breaches get their timeline entry and messages.
    let breached = sqlx::query!(
        r#"with b as (
               insert into sla_breaches (timer_id, incident_id, kind, due_at)
               select * from unnest($1::int8[], $2::int8[], $3::text[], $4::timestamptz[])
                    as t(timer_id, incident_id, kind, due_at)
               order by timer_id
               on conflict (timer_id, due_at) do nothing
               returning timer_id, incident_id, kind, due_at)
           -- every incident: the engine's breaches, each told to the channels that may hear it
           select b.incident_id, b.kind, b.due_at, i.number, i.title, i.severity, i.detected_at,
                  s.name as "service?"
           from b join incidents i on i.id = b.incident_id
           left join services s on s.id = i.service_id
           order by b.timer_id"#,
        &ids,
        &incidents,
        &kinds as &[&str],
        &dues,
    )
    .fetch_all(&mut *tx)
    .await?;
    let timer_kinds = breached
        .iter()
        .map(|b| {
            TimerKind::parse(&b.kind)
                .ok_or_else(|| AppError::Internal(format!("unknown timer kind {}", b.kind)))
        })
        .collect::<AppResult<Vec<_>>>()?;
    let entries: Vec<NewEvent> = breached
        .iter()
        .zip(&timer_kinds)
        .map(|(b, kind)| {
            let details = json!({ "timer": kind.as_str() });
            NewEvent::by_quell(b.incident_id, b.due_at, Kind::SlaBreached, details)
        })
        .collect();
    crate::timeline::actions::record_many(&mut tx, &entries).await?;
    let with_breach: Vec<i64> = breached.iter().map(|b| b.incident_id).collect();
    let bridges = crate::bridge::db::of_incidents(&mut *tx, &with_breach).await?;
    let none = crate::bridge::domain::Bridge::default();
    let keys: Vec<String> = breached
        .iter()
        .map(|b| crate::domain::IncidentKey(b.number).to_string())
        .collect();
    let mut announcements = Vec::with_capacity(breached.len());
    for ((b, key), (kind, entry)) in breached
        .iter()
        .zip(&keys)
        .zip(timer_kinds.iter().zip(&entries))
    {
        let what = crate::timeline::domain::headline(
            Kind::SlaBreached,
            &entry.details,
            b.due_at,
            b.detected_at,
        );
        announcements.push(crate::notify::actions::Announcement {
            about: About {
                incident_id: b.incident_id,
                key,
                title: &b.title,
                severity: &b.severity,
                service: b.service.as_deref(),
                bridge: bridges.get(&b.incident_id).unwrap_or(&none),
            },
            event: match kind {
                TimerKind::Update => Event::UpdateDue,
                _ => Event::SlaBreached,
            },
            what,
            audience: None,
            extra: json!({ "timer": kind.as_str(), "due_at": b.due_at }),
        });
    }
    crate::notify::actions::announce_many(&mut tx, announcements).await?;
    tx.commit().await?;
    Ok(fired.len())
}

/// Seconds until the earliest pending deadline, if any.
async fn next_due_in(conn: &mut PgConnection) -> AppResult<Option<f64>> {
    Ok(sqlx::query_scalar!(
        r#"select extract(epoch from min(due_at) - now())::float8
           from sla_timers where state = 'pending'"#
    )
    .fetch_one(conn)
    .await?)
}

/// The longest the engine sleeps without a notification: a safety net for missed ones.
const POLL: Duration = Duration::from_secs(5);
const BATCH: i64 = 500;

/// The engine loop of one replica: fire what is due, then sleep until the next deadline, a
/// notification that deadlines moved, or the poll interval, whichever comes first. It keeps
/// one connection from round to round (taking one from the pool each time cost a round trip,
/// and each of the pool's connections planned the engine's statements again) and takes a new
/// one after a failure.
pub async fn run(pool: PgPool) {
    let mut waker = Waker::listen(&pool, CHANNEL).await;
    let mut kept: Option<PoolConnection<Postgres>> = None;
    loop {
        let conn = match kept.as_mut() {
            Some(conn) => conn,
            None => match pool.acquire().await {
                Ok(conn) => kept.insert(conn),
                Err(e) => {
                    tracing::error!(error = %e, "timer engine has no connection; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            },
        };
        match fire_due_on(conn, BATCH).await {
            Ok(n) if n as i64 == BATCH => continue,
            Ok(n) if n > 0 => tracing::info!(fired = n, "SLA timers fired"),
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "timer engine failed; retrying");
                kept = None;
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        }
        let next = match next_due_in(conn).await {
            Ok(next) => next,
            Err(_) => {
                kept = None;
                None
            }
        };
        waker.sleep(wait_for(next, POLL)).await;
    }
}
