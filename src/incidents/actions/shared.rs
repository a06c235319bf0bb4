//! What every change to an incident shares: its audit snapshot, its timers re-armed, its
//! channels told, paging following the lifecycle, the version check and its timeline entry.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::PgConnection;

use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};
use crate::incidents::db::{self, Incident};
use crate::incidents::domain::{self, IncidentKey};
use crate::notify::actions::About;
use crate::notify::domain::Event;
use crate::services;
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// What the audit log keeps of an incident before and after a change.
pub(super) fn snapshot(i: &Incident) -> Value {
    json!({
        "title": i.title, "severity": i.severity, "status": i.status, "service": i.service,
        "summary": i.summary, "impact": i.impact, "started_at": i.started_at,
        "detected_at": i.detected_at, "acknowledged_at": i.acknowledged_at,
        "mitigated_at": i.mitigated_at, "resolved_at": i.resolved_at, "version": i.version,
    })
}

/// What an incident's SLA timers are computed from.
pub(super) fn clocks_of(i: &Incident) -> crate::sla::timers::Clocks {
    crate::sla::timers::Clocks {
        incident_id: i.id,
        peak_severity: i.peak_severity,
        detected_at: i.detected_at,
        acknowledged_at: i.acknowledged_at,
        mitigated_at: i.mitigated_at,
        resolved_at: i.resolved_at,
    }
}

/// Re-arms the incident's SLA timers to match it, in the same transaction.
pub(super) async fn rearm(conn: &mut PgConnection, i: &Incident) -> AppResult<()> {
    crate::sla::timers::rearm(conn, &clocks_of(i)).await
}

/// Tells the channels subscribed to `event` of this incident, in the same transaction, with
/// the incident's `bridge` (which the caller knows or reads).
pub(super) async fn announce(
    conn: &mut PgConnection,
    i: &Incident,
    bridge: &crate::bridge::domain::Bridge,
    event: Event,
    what: &str,
    audience: Option<&str>,
) -> AppResult<()> {
    let key = i.key.to_string();
    let about = About {
        incident_id: i.id,
        key: &key,
        title: &i.title,
        severity: i.severity.as_str(),
        service: i.service.as_deref(),
        bridge,
    };
    let extra = json!({ "status": i.status.as_str() });
    crate::notify::actions::announce(conn, &about, event, what, audience, extra).await?;
    Ok(())
}

/// Paging follows the lifecycle: leaving `triggered` (acknowledged, or further) stops the
/// escalation; coming back to it (reopened) starts it again.
pub(super) async fn follow_paging(
    conn: &mut PgConnection,
    actor: &Actor,
    before: &Incident,
    after: &Incident,
) -> AppResult<()> {
    let triggered = |i: &Incident| i.status == domain::Status::Triggered;
    match (triggered(before), triggered(after)) {
        (true, false) => {
            let why = format!("{} by {}", after.status.as_str(), actor.name);
            crate::paging::actions::stop(conn, after.id, &why).await
        }
        (false, true) => crate::paging::actions::start(conn, after.id, after.service_id).await,
        _ => Ok(()),
    }
}

/// Reads the incident after a change, re-arms its timers and appends the change to the audit
/// log, in the same transaction.
pub(super) async fn audited(
    conn: &mut PgConnection,
    actor: &Actor,
    action: &str,
    before: &Incident,
    key: IncidentKey,
) -> AppResult<Incident> {
    let after = db::get(&mut *conn, key).await?;
    rearm(conn, &after).await?;
    follow_paging(conn, actor, before, &after).await?;
    let target = key.to_string();
    audit::changed(
        conn,
        actor,
        action,
        &target,
        snapshot(before),
        snapshot(&after),
    )
    .await?;
    Ok(after)
}

/// Refuses a change made from an older copy of the incident.
pub(super) fn check_version(incident: &Incident, expected: Option<i32>) -> AppResult<()> {
    match expected {
        Some(v) if v != incident.version => Err(AppError::Stale {
            current_version: incident.version,
        }),
        _ => Ok(()),
    }
}

/// Who changes which incident, from which copy of it, and when the change happened.
pub struct Change<'a> {
    pub key: IncidentKey,
    /// The version the change was made from (`If-Match`, a form's version): a newer incident
    /// refuses it. `None` checks nothing (notes and updates never conflict).
    pub expected_version: Option<i32>,
    /// When it happened, when earlier than now (a scribe entering the past).
    pub at: Option<DateTime<Utc>>,
    pub actor: &'a Actor,
    /// The transaction's clock, when the caller already read it (a batch of alerts changing
    /// many incidents reads it once); `None` reads it.
    clock: Option<DateTime<Utc>>,
}

impl<'a> Change<'a> {
    /// `actor` changes incident `key` now, from whatever version it has.
    pub fn now(key: IncidentKey, actor: &'a Actor) -> Self {
        Self {
            key,
            expected_version: None,
            at: None,
            actor,
            clock: None,
        }
    }

    /// Made from `version` of the incident: a newer one refuses the change (409).
    pub fn expecting(self, version: Option<i32>) -> Self {
        Self {
            expected_version: version,
            ..self
        }
    }

    /// Happened at `at` (in the past), when given.
    pub fn dated(self, at: Option<DateTime<Utc>>) -> Self {
        Self { at, ..self }
    }

    /// In a transaction whose clock (`clock::now`) the caller has read already.
    pub fn on_clock(self, now: DateTime<Utc>) -> Self {
        Self {
            clock: Some(now),
            ..self
        }
    }

    /// The transaction's clock: the one passed down, or read.
    pub(super) async fn clock(&self, conn: &mut PgConnection) -> AppResult<DateTime<Utc>> {
        match self.clock {
            Some(now) => Ok(now),
            None => crate::clock::now(conn).await,
        }
    }
}

/// The timeline entry a change writes in its own transaction.
pub(super) struct Entry<'a> {
    pub(super) kind: Kind,
    pub(super) at: DateTime<Utc>,
    pub(super) body: &'a str,
    pub(super) details: Value,
    /// The incident's version after the change; `None` when the incident row did not change.
    pub(super) version: Option<i32>,
}

pub(super) async fn append(
    conn: &mut PgConnection,
    incident_id: i64,
    actor: &Actor,
    e: Entry<'_>,
) -> AppResult<timeline::db::Event> {
    timeline::actions::record(
        conn,
        NewEvent {
            incident_id,
            occurred_at: e.at,
            kind: e.kind,
            author: &actor.name,
            body: e.body,
            details: e.details,
            incident_version: e.version,
        },
    )
    .await
}

pub(super) async fn service_id(
    conn: &mut PgConnection,
    name: Option<&str>,
) -> AppResult<Option<(i64, String)>> {
    let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let service = services::db::find_by_name(conn, name)
        .await?
        .ok_or_else(|| {
            AppError::invalid("service", format!("there is no service named {name:?}"))
        })?;
    Ok(Some((service.id, service.name)))
}
