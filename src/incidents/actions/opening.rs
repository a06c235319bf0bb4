//! Opening incidents: one, or a batch of them from alerts.

use super::bridge::bridge_from_service;
use super::shared::*;
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgConnection;

use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};
use crate::incidents::db::{self, Incident, NewIncident};
use crate::incidents::domain::{self, Severity};
use crate::notify::actions::About;
use crate::notify::domain::Event;
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// Which service a new incident is of.
#[derive(Debug, Clone, Copy)]
pub enum ServiceChoice<'a> {
    None,
    /// A name as a person typed it: blank is none, an unknown one is refused naming `service`.
    Named(&'a str),
    /// A service already looked up (the alert path's routing did).
    Known {
        id: i64,
        name: &'a str,
    },
}

pub struct Opening<'a> {
    pub number: Option<i64>,
    pub title: &'a str,
    pub severity: Severity,
    pub service: ServiceChoice<'a>,
    pub summary: &'a str,
    pub impact: &'a str,
    pub started_at: Option<DateTime<Utc>>,
    pub detected_at: Option<DateTime<Utc>>,
    /// What opened it, for the first timeline line (e.g. the alert that fired).
    pub note: &'a str,
    /// Kept from the start to these teams and people (a security incident): restricted before
    /// any channel hears of it.
    pub restricted_to: Option<&'a super::access::AccessDraft>,
    /// Opened during a quiet maintenance window of its service: its escalation does not start
    /// (the window's end starts it if nobody has acknowledged by then).
    pub quiet: bool,
    /// The transaction's clock reading, which the caller has made already (the alert path reads
    /// it once per batch).
    pub now: DateTime<Utc>,
}

/// Opens an incident: triggered, detected now unless told otherwise, started at detection
/// unless told otherwise.
pub async fn open(conn: &mut PgConnection, o: &Opening<'_>, actor: &Actor) -> AppResult<Incident> {
    open_many(conn, &[(o, actor)])
        .await?
        .pop()
        .ok_or_else(|| AppError::Internal("an opened incident vanished".into()))
}

/// An opening as checked.
struct Checked {
    title: String,
    summary: String,
    impact: String,
    note: String,
    service: Option<(i64, String)>,
    started_at: DateTime<Utc>,
    detected_at: DateTime<Utc>,
}

async fn check_opening(conn: &mut PgConnection, o: &Opening<'_>) -> AppResult<Checked> {
    let title = domain::check_title(o.title)?;
    let summary = domain::check_text("summary", o.summary, 20_000)?;
    let impact = domain::check_text("impact", o.impact, 20_000)?;
    let note = domain::check_text("note", o.note, 10_000)?;
    let service = match o.service {
        ServiceChoice::None => None,
        ServiceChoice::Named(name) => service_id(conn, Some(name)).await?,
        ServiceChoice::Known { id, name } => Some((id, name.to_owned())),
    };
    let detected_at = o.detected_at.unwrap_or(o.now);
    let started_at = o.started_at.unwrap_or(detected_at);
    domain::check_opening_times(started_at, detected_at, o.now)?;
    Ok(Checked {
        title,
        summary,
        impact,
        note,
        service,
        started_at,
        detected_at,
    })
}

/// Opens several incidents, each as [`open`] would, with a few statements whatever their
/// number: a batch of alerts opening a hundred incidents writes them, their timelines, timers,
/// escalations, messages and audit rows a table at a time, not an incident at a time. One that
/// cannot be opened refuses them all (the alert lanes then store each request alone).
pub async fn open_many(
    conn: &mut PgConnection,
    openings: &[(&Opening<'_>, &Actor)],
) -> AppResult<Vec<Incident>> {
    if openings.is_empty() {
        return Ok(Vec::new());
    }
    let mut checked = Vec::with_capacity(openings.len());
    for (o, _) in openings {
        checked.push(check_opening(conn, o).await?);
    }
    let new: Vec<NewIncident> = openings
        .iter()
        .zip(&checked)
        .map(|((o, _), c)| NewIncident {
            number: o.number,
            title: &c.title,
            severity: o.severity,
            service_id: c.service.as_ref().map(|s| s.0),
            summary: &c.summary,
            impact: &c.impact,
            started_at: c.started_at,
            detected_at: c.detected_at,
        })
        .collect();
    let incidents = db::insert_many(&mut *conn, &new).await?;
    // Counted when written: a transaction rolled back after this counts one never opened.
    crate::metrics::get()
        .incidents_opened
        .inc_by(incidents.len() as u64);
    let opened: Vec<NewEvent> = incidents
        .iter()
        .zip(&checked)
        .zip(openings)
        .map(|((i, c), (_, actor))| NewEvent {
            incident_id: i.id,
            occurred_at: c.detected_at,
            kind: Kind::Opened,
            author: &actor.name,
            body: &c.note,
            details: json!({
                "severity": i.severity.as_str(),
                "service": c.service.as_ref().map(|s| &s.1),
                "title": c.title,
            }),
            incident_version: Some(1),
        })
        .collect();
    timeline::actions::record_many(&mut *conn, &opened).await?;
    let mut incidents = incidents;
    for (i, (o, actor)) in incidents.iter_mut().zip(openings) {
        if let Some(draft) = o.restricted_to.filter(|d| d.restricted)
            && let Some(version) = super::access::apply(conn, i, draft, actor).await?
        {
            i.version = version;
            i.restricted = true;
        }
    }
    // A new incident has no bridge yet: only its service's defaults can give it one (a Sev1
    // or Sev2 of a service with defaults; the others read nothing).
    let mut bridges = Vec::with_capacity(incidents.len());
    for (i, (_, actor)) in incidents.iter().zip(openings) {
        bridges.push(bridge_from_service(conn, i, actor, Default::default()).await?);
    }
    let clocks: Vec<crate::sla::timers::Clocks> = incidents.iter().map(clocks_of).collect();
    crate::sla::timers::rearm_many(conn, &clocks, true).await?;
    let paged: Vec<(i64, Option<i64>)> = incidents
        .iter()
        .zip(openings)
        .filter(|(_, (o, _))| !o.quiet)
        .map(|(i, _)| (i.id, i.service_id))
        .collect();
    crate::paging::actions::start_many(conn, &paged).await?;
    let keys: Vec<String> = incidents.iter().map(|i| i.key.to_string()).collect();
    let announcements = incidents
        .iter()
        .zip(&bridges)
        .zip(&keys)
        .map(|((i, bridge), key)| crate::notify::actions::Announcement {
            about: About {
                incident_id: i.id,
                key,
                title: &i.title,
                severity: i.severity.as_str(),
                service: i.service.as_deref(),
                bridge,
            },
            event: Event::Opened,
            what: match &i.service {
                Some(s) => format!("opened on {s}"),
                None => "opened".to_owned(),
            },
            audience: None,
            extra: json!({ "status": i.status.as_str() }),
        })
        .collect();
    crate::notify::actions::announce_many(conn, announcements).await?;
    let audited: Vec<audit::db::Change> = incidents
        .iter()
        .zip(openings)
        .map(|(i, (_, actor))| audit::db::Change {
            actor,
            action: "incident.open",
            target: i.key.to_string(),
            before: None,
            after: Some(snapshot(i)),
        })
        .collect();
    audit::db::record_many(&mut *conn, &audited).await?;
    Ok(incidents)
}
