//! What a responder can do to an incident, each as one transaction step shared by the API and
//! the pages: check the rules, write the change, append its timeline event. The caller owns the
//! transaction (so it can add an idempotency record to it) and commits.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use sqlx::PgConnection;

use super::db::{self, Edit, Incident, NewIncident};
use super::domain::{self, IncidentKey, Severity, Transition};
use crate::audit::{self, Actor};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::people;
use crate::roles::{self, domain::Role};
use crate::services;
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// What the audit log keeps of an incident before and after a change.
fn snapshot(i: &Incident) -> Value {
    json!({
        "title": i.title, "severity": i.severity, "status": i.status, "service": i.service,
        "summary": i.summary, "impact": i.impact, "started_at": i.started_at,
        "detected_at": i.detected_at, "acknowledged_at": i.acknowledged_at,
        "mitigated_at": i.mitigated_at, "resolved_at": i.resolved_at, "version": i.version,
    })
}

/// Re-arms the incident's SLA timers to match it, in the same transaction.
async fn rearm(conn: &mut PgConnection, i: &Incident) -> AppResult<()> {
    crate::sla::timers::rearm(
        conn,
        &crate::sla::timers::Clocks {
            incident_id: i.id,
            peak_severity: i.peak_severity,
            detected_at: i.detected_at,
            acknowledged_at: i.acknowledged_at,
            mitigated_at: i.mitigated_at,
            resolved_at: i.resolved_at,
        },
    )
    .await
}

/// Reads the incident after a change, re-arms its timers and appends the change to the audit
/// log, in the same transaction.
async fn audited(
    conn: &mut PgConnection,
    actor: &Actor,
    action: &str,
    before: &Incident,
    key: IncidentKey,
) -> AppResult<Incident> {
    let after = db::get(&mut *conn, key).await?;
    rearm(conn, &after).await?;
    let target = key.to_string();
    audit::record(
        conn,
        actor,
        action,
        &target,
        Some(snapshot(before)),
        Some(snapshot(&after)),
    )
    .await?;
    Ok(after)
}

/// Refuses a change made from an older copy of the incident.
fn check_version(incident: &Incident, expected: Option<i32>) -> AppResult<()> {
    match expected {
        Some(v) if v != incident.version => Err(AppError::Stale {
            current_version: incident.version,
        }),
        _ => Ok(()),
    }
}

async fn service_id(
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

pub struct Opening<'a> {
    pub number: Option<i64>,
    pub title: &'a str,
    pub severity: &'a str,
    pub service: Option<&'a str>,
    pub summary: &'a str,
    pub impact: &'a str,
    pub started_at: Option<DateTime<Utc>>,
    pub detected_at: Option<DateTime<Utc>>,
    /// What opened it, for the first timeline line (e.g. the alert that fired).
    pub note: &'a str,
}

/// Opens an incident: triggered, detected now unless told otherwise, started at detection
/// unless told otherwise.
pub async fn open(conn: &mut PgConnection, o: &Opening<'_>, actor: &Actor) -> AppResult<Incident> {
    let title = domain::check_title(o.title)?;
    let severity = Severity::parse("severity", o.severity)?;
    let summary = domain::check_text("summary", o.summary, 20_000)?;
    let impact = domain::check_text("impact", o.impact, 20_000)?;
    let note = domain::check_text("note", o.note, 10_000)?;
    let service = service_id(conn, o.service).await?;
    let now = clock::now(&mut *conn).await?;
    let detected_at = o.detected_at.unwrap_or(now);
    let started_at = o.started_at.unwrap_or(detected_at);
    domain::check_opening_times(started_at, detected_at, now)?;
    let (id, key) = db::insert(
        &mut *conn,
        &NewIncident {
            number: o.number,
            title: &title,
            severity,
            service_id: service.as_ref().map(|s| s.0),
            summary: &summary,
            impact: &impact,
            started_at,
            detected_at,
        },
    )
    .await?;
    timeline::db::append(
        &mut *conn,
        NewEvent {
            incident_id: id,
            occurred_at: detected_at,
            kind: Kind::Opened,
            author: &actor.name,
            body: &note,
            details: json!({
                "severity": severity.as_str(),
                "service": service.map(|s| s.1),
                "title": title,
            }),
            incident_version: Some(1),
        },
    )
    .await?;
    let incident = db::get(&mut *conn, key).await?;
    rearm(conn, &incident).await?;
    audit::record(
        conn,
        actor,
        "incident.open",
        &key.to_string(),
        None,
        Some(snapshot(&incident)),
    )
    .await?;
    Ok(incident)
}

pub async fn transition(
    conn: &mut PgConnection,
    key: IncidentKey,
    transition: Transition,
    expected_version: Option<i32>,
    at: Option<DateTime<Utc>>,
    note: &str,
    actor: &Actor,
) -> AppResult<Incident> {
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, expected_version)?;
    let note = domain::check_text("note", note, 10_000)?;
    let now = clock::now(&mut *conn).await?;
    let at = domain::check_at(at, incident.started_at, now)?;
    let plan = domain::plan_transition(&incident.milestones(), transition, at)?;
    let version = db::set_milestones(&mut *conn, incident.id, &plan.milestones).await?;
    if transition == Transition::Resolve {
        // Its alert groups close and its alerts resolve with it: the next alert opens a new
        // incident instead of joining a finished one.
        crate::alert_store::db::close_for_incident(conn, incident.id).await?;
    }
    let kind = match transition {
        Transition::Acknowledge => Kind::Acknowledged,
        Transition::Mitigate => Kind::Mitigated,
        Transition::Resolve => Kind::Resolved,
        Transition::Reopen => Kind::Reopened,
    };
    timeline::db::append(
        &mut *conn,
        NewEvent {
            incident_id: incident.id,
            occurred_at: at,
            kind,
            author: &actor.name,
            body: &note,
            details: json!({
                "from": plan.from.as_str(),
                "to": plan.to.as_str(),
                "skipped": plan.skipped.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            }),
            incident_version: Some(version),
        },
    )
    .await?;
    audited(
        conn,
        actor,
        &format!("incident.{}", transition.as_str()),
        &incident,
        key,
    )
    .await
}

pub async fn change_severity(
    conn: &mut PgConnection,
    key: IncidentKey,
    expected_version: Option<i32>,
    severity: &str,
    reason: &str,
    at: Option<DateTime<Utc>>,
    actor: &Actor,
) -> AppResult<Incident> {
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, expected_version)?;
    let to = Severity::parse("severity", severity)?;
    let reason = domain::check_severity_change(incident.severity, to, reason)?;
    let now = clock::now(&mut *conn).await?;
    let at = domain::check_at(at, incident.started_at, now)?;
    let version = db::set_severity(&mut *conn, incident.id, to).await?;
    timeline::db::append(
        &mut *conn,
        NewEvent {
            incident_id: incident.id,
            occurred_at: at,
            kind: Kind::SeverityChanged,
            author: &actor.name,
            body: &reason,
            details: json!({ "from": incident.severity.as_str(), "to": to.as_str() }),
            incident_version: Some(version),
        },
    )
    .await?;
    audited(conn, actor, "incident.severity", &incident, key).await
}

/// Assigns `role` to a person found by handle or email; `person = None` unassigns it.
#[allow(clippy::too_many_arguments)]
pub async fn set_role(
    conn: &mut PgConnection,
    key: IncidentKey,
    expected_version: Option<i32>,
    role: Role,
    person: Option<&str>,
    at: Option<DateTime<Utc>>,
    actor: &Actor,
) -> AppResult<Incident> {
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, expected_version)?;
    let now = clock::now(&mut *conn).await?;
    let at = domain::check_at(at, incident.started_at, now)?;
    let current = roles::db::for_incident(&mut *conn, incident.id)
        .await?
        .into_iter()
        .find(|a| a.role == role);
    let (kind, details) = match person.map(str::trim).filter(|p| !p.is_empty()) {
        Some(who) => {
            let person = people::db::find(&mut *conn, who).await?.ok_or_else(|| {
                AppError::invalid("person", format!("nobody has the handle or email {who:?}"))
            })?;
            if current.as_ref().is_some_and(|c| c.person.id == person.id) {
                return Err(AppError::Conflict(format!(
                    "{} is already the {}.",
                    person.name,
                    role.label().to_lowercase()
                )));
            }
            roles::db::assign(&mut *conn, incident.id, role, person.id, at).await?;
            (
                Kind::RoleAssigned,
                json!({
                    "role": role.as_str(), "role_label": role.label(),
                    "person": person.name, "handle": person.handle,
                    "previous": current.map(|c| c.person.name),
                }),
            )
        }
        None => {
            let Some(current) = current else {
                return Err(AppError::Conflict(format!(
                    "Nobody is the {} of {key}.",
                    role.label().to_lowercase()
                )));
            };
            roles::db::unassign(&mut *conn, incident.id, role).await?;
            (
                Kind::RoleUnassigned,
                json!({ "role": role.as_str(), "role_label": role.label(),
                        "previous": current.person.name }),
            )
        }
    };
    let version = db::touch(&mut *conn, incident.id).await?;
    timeline::db::append(
        &mut *conn,
        NewEvent {
            incident_id: incident.id,
            occurred_at: at,
            kind,
            author: &actor.name,
            body: "",
            details: details.clone(),
            incident_version: Some(version),
        },
    )
    .await?;
    let after = db::get(&mut *conn, key).await?;
    audit::record(
        conn,
        actor,
        &format!("incident.role.{}", role.as_str()),
        &key.to_string(),
        Some(json!({ "person": details.get("previous") })),
        Some(json!({ "person": details.get("person"), "version": after.version })),
    )
    .await?;
    Ok(after)
}

/// Fields of an edit; `None` leaves a field as it is. `service: Some(None)` clears it.
#[derive(Debug, Default)]
pub struct Patch {
    pub title: Option<String>,
    pub summary: Option<String>,
    pub impact: Option<String>,
    pub service: Option<Option<String>>,
    pub started_at: Option<DateTime<Utc>>,
}

pub async fn edit(
    conn: &mut PgConnection,
    key: IncidentKey,
    expected_version: Option<i32>,
    patch: Patch,
    actor: &Actor,
) -> AppResult<Incident> {
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, expected_version)?;
    let title = match &patch.title {
        Some(t) => domain::check_title(t)?,
        None => incident.title.clone(),
    };
    let summary = match &patch.summary {
        Some(s) => domain::check_text("summary", s, 20_000)?,
        None => incident.summary.clone(),
    };
    let impact = match &patch.impact {
        Some(s) => domain::check_text("impact", s, 20_000)?,
        None => incident.impact.clone(),
    };
    let service = match &patch.service {
        Some(name) => service_id(conn, name.as_deref()).await?,
        None => incident.service_id.zip(incident.service.clone()),
    };
    let started_at = patch.started_at.unwrap_or(incident.started_at);
    let now = clock::now(&mut *conn).await?;
    domain::check_opening_times(started_at, incident.detected_at, now)?;

    let mut changes = Map::new();
    let mut note = |field: &str, from: Value, to: Value| {
        if from != to {
            changes.insert(field.into(), json!({ "from": from, "to": to }));
        }
    };
    note("title", json!(incident.title), json!(title));
    note("summary", json!(incident.summary), json!(summary));
    note("impact", json!(incident.impact), json!(impact));
    note(
        "service",
        json!(incident.service),
        json!(service.as_ref().map(|s| &s.1)),
    );
    note("started_at", json!(incident.started_at), json!(started_at));
    if changes.is_empty() {
        return Ok(incident);
    }
    let version = db::update_fields(
        &mut *conn,
        incident.id,
        &Edit {
            title: &title,
            summary: &summary,
            impact: &impact,
            service_id: service.map(|s| s.0),
            started_at,
        },
    )
    .await?;
    timeline::db::append(
        &mut *conn,
        NewEvent {
            incident_id: incident.id,
            occurred_at: now,
            kind: Kind::Edited,
            author: &actor.name,
            body: "",
            details: json!({ "changes": changes }),
            incident_version: Some(version),
        },
    )
    .await?;
    audited(conn, actor, "incident.edit", &incident, key).await
}

/// Adds a note (or background context) to the timeline. Notes never conflict, so they carry no
/// version check.
pub async fn add_note(
    conn: &mut PgConnection,
    key: IncidentKey,
    kind: Option<&str>,
    body: &str,
    at: Option<DateTime<Utc>>,
    actor: &Actor,
) -> AppResult<(Incident, timeline::db::Event)> {
    let incident = db::get(&mut *conn, key).await?;
    let kind = timeline::domain::Kind::parse_writable(kind)?;
    let body = timeline::domain::check_note_body(body)?;
    let now = clock::now(&mut *conn).await?;
    let at = match kind {
        Kind::Context => domain::check_context_at(at, now)?,
        _ => domain::check_at(at, incident.started_at, now)?,
    };
    let event = timeline::db::append(
        &mut *conn,
        NewEvent {
            incident_id: incident.id,
            occurred_at: at,
            kind,
            author: &actor.name,
            body: &body,
            details: json!({}),
            incident_version: None,
        },
    )
    .await?;
    audit::record(
        conn,
        actor,
        &format!("incident.{}", kind.as_str()),
        &key.to_string(),
        None,
        Some(json!({ "body": event.body, "occurred_at": event.occurred_at })),
    )
    .await?;
    Ok((incident, event))
}

/// Records a stakeholder update (sent now, or at `at`), on the timeline too. Updates never
/// conflict, so they carry no version check.
pub async fn add_stakeholder_update(
    conn: &mut PgConnection,
    key: IncidentKey,
    audience: &str,
    body: &str,
    at: Option<DateTime<Utc>>,
    actor: &Actor,
) -> AppResult<crate::updates::db::Update> {
    use crate::updates::{db as updates_db, domain as updates_domain};
    let incident = db::get(&mut *conn, key).await?;
    let audience = updates_domain::Audience::parse(audience)?;
    let body = updates_domain::check_body(body)?;
    let now = clock::now(&mut *conn).await?;
    let at = domain::check_at(at, incident.started_at, now)?;
    let update = updates_db::insert(
        &mut *conn,
        &updates_db::NewUpdate {
            incident_id: incident.id,
            audience: audience.as_str(),
            body: &body,
            sent_at: at,
            author: &actor.name,
            author_id: actor.person_id,
        },
    )
    .await?;
    timeline::db::append(
        &mut *conn,
        NewEvent {
            incident_id: incident.id,
            occurred_at: at,
            kind: Kind::StakeholderUpdate,
            author: &actor.name,
            body: &body,
            details: json!({ "audience": audience.as_str(), "update_id": update.id }),
            incident_version: None,
        },
    )
    .await?;
    rearm(conn, &incident).await?;
    audit::record(
        conn,
        actor,
        "incident.stakeholder_update",
        &key.to_string(),
        None,
        Some(json!({ "audience": audience.as_str(), "body": body, "sent_at": at })),
    )
    .await?;
    Ok(update)
}
