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
use crate::notify::actions::About;
use crate::notify::domain::Event;
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

/// What an incident's SLA timers are computed from.
fn clocks_of(i: &Incident) -> crate::sla::timers::Clocks {
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
async fn rearm(conn: &mut PgConnection, i: &Incident) -> AppResult<()> {
    crate::sla::timers::rearm(conn, &clocks_of(i)).await
}

/// Tells the channels subscribed to `event` of this incident, in the same transaction, with
/// the incident's `bridge` (which the caller knows or reads).
async fn announce(
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
async fn follow_paging(
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
async fn audited(
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

/// Who changes which incident, from which copy of it, and when the change happened.
pub struct Change<'a> {
    pub key: IncidentKey,
    /// The version the change was made from (`If-Match`, a form's version): a newer incident
    /// refuses it. `None` checks nothing (notes and updates never conflict).
    pub expected_version: Option<i32>,
    /// When it happened, when earlier than now (a scribe entering the past).
    pub at: Option<DateTime<Utc>>,
    pub actor: &'a Actor,
}

impl<'a> Change<'a> {
    /// A change happening now that conflicts with nothing (claims, the bridge).
    pub fn now(key: IncidentKey, actor: &'a Actor) -> Self {
        Self {
            key,
            expected_version: None,
            at: None,
            actor,
        }
    }
}

/// The timeline entry a change writes in its own transaction.
struct Entry<'a> {
    kind: Kind,
    at: DateTime<Utc>,
    body: &'a str,
    details: Value,
    /// The incident's version after the change; `None` when the incident row did not change.
    version: Option<i32>,
}

async fn append(
    conn: &mut PgConnection,
    incident_id: i64,
    actor: &Actor,
    e: Entry<'_>,
) -> AppResult<timeline::db::Event> {
    timeline::db::append(
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
    timeline::db::append_many(&mut *conn, &opened).await?;
    // A new incident has no bridge yet: only its service's defaults can give it one (a Sev1
    // or Sev2 of a service with defaults; the others read nothing).
    let mut bridges = Vec::with_capacity(incidents.len());
    for (i, (_, actor)) in incidents.iter().zip(openings) {
        bridges.push(bridge_from_service(conn, i, actor, Default::default()).await?);
    }
    let clocks: Vec<crate::sla::timers::Clocks> = incidents.iter().map(clocks_of).collect();
    crate::sla::timers::rearm_many(conn, &clocks, true).await?;
    let paged: Vec<(i64, Option<i64>)> = incidents.iter().map(|i| (i.id, i.service_id)).collect();
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

/// Moves the incident along its lifecycle (acknowledge, mitigate, resolve, reopen), with an
/// optional note.
pub async fn transition(
    conn: &mut PgConnection,
    c: &Change<'_>,
    transition: Transition,
    note: &str,
) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
    let note = domain::check_text("note", note, 10_000)?;
    let now = clock::now(&mut *conn).await?;
    let at = domain::check_at(c.at, incident.started_at, now)?;
    let plan = domain::plan_transition(&incident.milestones(), transition, at)?;
    let version = db::set_milestones(&mut *conn, incident.id, &plan.milestones).await?;
    if transition == Transition::Resolve {
        // Its alert groups close and its alerts resolve with it: the next alert opens a new
        // incident instead of joining a finished one.
        crate::alert_store::db::close_for_incident(conn, incident.id).await?;
        // Nobody is still looking into anything of a resolved incident: its claims end.
        crate::claims::actions::end_with_incident(conn, incident.id, &actor.name).await?;
    }
    let kind = match transition {
        Transition::Acknowledge => Kind::Acknowledged,
        Transition::Mitigate => Kind::Mitigated,
        Transition::Resolve => Kind::Resolved,
        Transition::Reopen => Kind::Reopened,
    };
    let moved = Entry {
        kind,
        at,
        body: &note,
        details: json!({
            "from": plan.from.as_str(),
            "to": plan.to.as_str(),
            "skipped": plan.skipped.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        }),
        version: Some(version),
    };
    append(conn, incident.id, actor, moved).await?;
    let after = audited(
        conn,
        actor,
        &format!("incident.{}", transition.as_str()),
        &incident,
        key,
    )
    .await?;
    let (event, verb) = match transition {
        Transition::Acknowledge => (Event::Acknowledged, "acknowledged"),
        Transition::Mitigate => (Event::Mitigated, "mitigated"),
        Transition::Resolve => (Event::Resolved, "resolved"),
        Transition::Reopen => (Event::Opened, "reopened"),
    };
    let what = format!("{verb} by {}", actor.name);
    let bridge = crate::bridge::db::of_incident(&mut *conn, after.id).await?;
    announce(conn, &after, &bridge, event, &what, None).await?;
    Ok(after)
}

/// Raises or lowers the severity, with a reason.
pub async fn change_severity(
    conn: &mut PgConnection,
    c: &Change<'_>,
    to: Severity,
    reason: &str,
) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
    let reason = domain::check_severity_change(incident.severity, to, reason)?;
    let now = clock::now(&mut *conn).await?;
    let at = domain::check_at(c.at, incident.started_at, now)?;
    let version = db::set_severity(&mut *conn, incident.id, to).await?;
    let changed = Entry {
        kind: Kind::SeverityChanged,
        at,
        body: &reason,
        details: json!({ "from": incident.severity.as_str(), "to": to.as_str() }),
        version: Some(version),
    };
    append(conn, incident.id, actor, changed).await?;
    let after = audited(conn, actor, "incident.severity", &incident, key).await?;
    let current = crate::bridge::db::of_incident(&mut *conn, after.id).await?;
    let bridge = bridge_from_service(conn, &after, actor, current).await?;
    let verb = if to < incident.severity {
        "raised"
    } else {
        "lowered"
    };
    let what = format!(
        "severity {verb} from {} to {} by {}: {reason}",
        incident.severity.as_str(),
        to.as_str(),
        actor.name
    );
    announce(conn, &after, &bridge, Event::SeverityChanged, &what, None).await?;
    Ok(after)
}

/// Assigns `role` to a person found by handle or email; `person = None` unassigns it.
pub async fn set_role(
    conn: &mut PgConnection,
    c: &Change<'_>,
    role: Role,
    person: Option<&str>,
) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
    let now = clock::now(&mut *conn).await?;
    let at = domain::check_at(c.at, incident.started_at, now)?;
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
    let assigned = Entry {
        kind,
        at,
        body: "",
        details: details.clone(),
        version: Some(version),
    };
    append(conn, incident.id, actor, assigned).await?;
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

/// Changes the incident's own fields; the timeline says what changed (and when: now).
pub async fn edit(conn: &mut PgConnection, c: &Change<'_>, patch: Patch) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
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
    let edited = Entry {
        kind: Kind::Edited,
        at: now,
        body: "",
        details: json!({ "changes": changes }),
        version: Some(version),
    };
    append(conn, incident.id, actor, edited).await?;
    audited(conn, actor, "incident.edit", &incident, key).await
}

/// Adds a note (or background context) to the timeline. Notes never conflict, so they carry no
/// version check.
pub async fn add_note(
    conn: &mut PgConnection,
    c: &Change<'_>,
    kind: Option<&str>,
    body: &str,
) -> AppResult<(Incident, timeline::db::Event)> {
    let (key, actor, at) = (c.key, c.actor, c.at);
    let incident = db::get(&mut *conn, key).await?;
    let kind = timeline::domain::Kind::parse_writable(kind)?;
    let body = timeline::domain::check_note_body(body)?;
    let now = clock::now(&mut *conn).await?;
    let at = match kind {
        Kind::Context => domain::check_context_at(at, now)?,
        _ => domain::check_note_at(at, incident.started_at, now)?,
    };
    let noted = Entry {
        kind,
        at,
        body: &body,
        details: json!({}),
        version: None,
    };
    let event = append(conn, incident.id, actor, noted).await?;
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
    c: &Change<'_>,
    audience: &str,
    body: &str,
) -> AppResult<crate::updates::db::Update> {
    let (key, actor, at) = (c.key, c.actor, c.at);
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
    let sent = Entry {
        kind: Kind::StakeholderUpdate,
        at,
        body: &body,
        details: json!({ "audience": audience.as_str(), "update_id": update.id }),
        version: None,
    };
    append(conn, incident.id, actor, sent).await?;
    rearm(conn, &incident).await?;
    let what = format!(
        "update to {} from {}: {body}",
        audience.as_str(),
        actor.name
    );
    let bridge = crate::bridge::db::of_incident(&mut *conn, incident.id).await?;
    announce(
        conn,
        &incident,
        &bridge,
        Event::UpdatePosted,
        &what,
        Some(audience.as_str()),
    )
    .await?;
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

/// Other people's held claims on the lead `subject` names (the same words after stemming).
pub async fn others_on_lead(
    conn: &mut PgConnection,
    incident_id: i64,
    person_id: i64,
    subject: &str,
) -> AppResult<Vec<crate::claims::db::Claim>> {
    use crate::claims::{db as claims_db, domain as claims_domain};
    let lead = claims_domain::lead(subject);
    Ok(claims_db::held(&mut *conn, incident_id)
        .await?
        .into_iter()
        .filter(|h| h.person_id != person_id)
        .filter(|h| claims_domain::same_lead(&lead, &claims_domain::lead(&h.subject)))
        .collect())
}

/// `Ana Lima ("processor status page", since 16:10 UTC) is already on this`.
pub fn already_on(others: &[crate::claims::db::Claim]) -> String {
    let who = others
        .iter()
        .map(|h| {
            format!(
                "{} (\u{201c}{}\u{201d}, since {} UTC)",
                h.name,
                h.subject,
                h.claimed_at.format("%H:%M")
            )
        })
        .collect::<Vec<_>>()
        .join(" and ");
    let verb = if others.len() == 1 { "is" } else { "are" };
    format!("{who} {verb} already on this; talk to them first, or claim it as well")
}

/// Says what the actor is looking into. Renewing their own claim on the same lead holds it
/// longer; another person's claim on the same lead refuses (409 naming them) unless `also`
/// (they were told who is on it and want to look too).
pub async fn claim(
    conn: &mut PgConnection,
    c: &Change<'_>,
    subject: &str,
    also: bool,
    minutes: i64,
) -> AppResult<crate::claims::db::Claim> {
    use crate::claims::{db as claims_db, domain as claims_domain};
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    let person_id = actor.person_id.ok_or_else(|| {
        AppError::Forbidden("claims are made by a person signed in to Quell".into())
    })?;
    let subject = claims_domain::check_subject(subject)?;
    if incident.status == domain::Status::Resolved {
        return Err(AppError::Conflict(format!(
            "{key} is resolved; reopen it to claim a lead"
        )));
    }
    let lead = claims_domain::lead(&subject);
    let mine = claims_db::held(&mut *conn, incident.id)
        .await?
        .into_iter()
        .filter(|h| h.person_id == person_id)
        .find(|h| claims_domain::same_lead(&lead, &claims_domain::lead(&h.subject)));
    if let Some(mine) = mine {
        claims_db::renew(&mut *conn, mine.id, minutes).await?;
        return claims_db::find(&mut *conn, incident.id, mine.id)
            .await?
            .ok_or_else(|| AppError::Internal("a renewed claim vanished".into()));
    }
    let others = others_on_lead(conn, incident.id, person_id, &subject).await?;
    if !also && !others.is_empty() {
        return Err(AppError::Conflict(already_on(&others)));
    }
    let claim = claims_db::insert(&mut *conn, incident.id, person_id, &subject, minutes).await?;
    let now = clock::now(&mut *conn).await?;
    let entry = Entry {
        kind: Kind::Claimed,
        at: now,
        body: "",
        details: json!({
            "claim_id": claim.id, "subject": claim.subject,
            "alongside": others.iter().map(|h| &h.name).collect::<Vec<_>>(),
        }),
        version: None,
    };
    append(conn, incident.id, actor, entry).await?;
    audit::record(
        conn,
        actor,
        "incident.claim",
        &key.to_string(),
        None,
        Some(json!({ "claim_id": claim.id, "subject": claim.subject })),
    )
    .await?;
    Ok(claim)
}

/// Ends a claim: its holder is done, or someone else frees the lead (named on the timeline).
pub async fn release_claim(
    conn: &mut PgConnection,
    c: &Change<'_>,
    claim_id: i64,
) -> AppResult<crate::claims::db::Claim> {
    use crate::claims::db as claims_db;
    let (key, actor) = (c.key, c.actor);
    let incident = db::get(&mut *conn, key).await?;
    let claim = claims_db::find(&mut *conn, incident.id, claim_id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("{key} has no claim {claim_id}")))?;
    if claim.released_at.is_some() {
        return Err(AppError::Gone(format!(
            "that claim was already released by {}",
            claim.released_by.as_deref().unwrap_or("someone")
        )));
    }
    claims_db::release(&mut *conn, claim.id, &actor.name).await?;
    let now = clock::now(&mut *conn).await?;
    let holder = (actor.person_id != Some(claim.person_id)).then_some(&claim.name);
    let entry = Entry {
        kind: Kind::ClaimReleased,
        at: now,
        body: "",
        details: json!({ "claim_id": claim.id, "subject": claim.subject, "holder": holder }),
        version: None,
    };
    append(conn, incident.id, actor, entry).await?;
    audit::record(
        conn,
        actor,
        "incident.claim_release",
        &key.to_string(),
        Some(json!({ "claim_id": claim.id, "subject": claim.subject })),
        None,
    )
    .await?;
    claims_db::find(&mut *conn, incident.id, claim.id)
        .await?
        .ok_or_else(|| AppError::Internal("a released claim vanished".into()))
}

/// Holds the actor's claim `minutes` longer; only its holder renews it.
pub async fn renew_claim(
    conn: &mut PgConnection,
    c: &Change<'_>,
    claim_id: i64,
    minutes: i64,
) -> AppResult<crate::claims::db::Claim> {
    use crate::claims::db as claims_db;
    let key = c.key;
    let incident = db::get(&mut *conn, key).await?;
    let claim = claims_db::find(&mut *conn, incident.id, claim_id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("{key} has no claim {claim_id}")))?;
    if c.actor.person_id != Some(claim.person_id) {
        return Err(AppError::Forbidden(format!(
            "only {} renews their claim; make your own",
            claim.name
        )));
    }
    let now = clock::now(&mut *conn).await?;
    if claim.released_at.is_some() || claim.expires_at <= now {
        return Err(AppError::Gone(
            "that claim was released or lapsed; claim the lead again".into(),
        ));
    }
    claims_db::renew(&mut *conn, claim.id, minutes).await?;
    claims_db::find(&mut *conn, incident.id, claim.id)
        .await?
        .ok_or_else(|| AppError::Internal("a renewed claim vanished".into()))
}

/// Sets the incident's call and chat links (an empty bridge removes them).
pub async fn set_bridge(
    conn: &mut PgConnection,
    c: &Change<'_>,
    bridge: &crate::bridge::domain::Bridge,
) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    let before = crate::bridge::db::of_incident(&mut *conn, incident.id).await?;
    if &before == bridge {
        return Ok(incident);
    }
    crate::bridge::db::set_for_incident(&mut *conn, incident.id, bridge, &actor.name).await?;
    write_bridge_entry(conn, &incident, actor, bridge).await?;
    audit::record(
        conn,
        actor,
        "incident.bridge",
        &key.to_string(),
        Some(json!(before)),
        Some(json!(bridge)),
    )
    .await?;
    Ok(incident)
}

async fn write_bridge_entry(
    conn: &mut PgConnection,
    incident: &Incident,
    actor: &Actor,
    bridge: &crate::bridge::domain::Bridge,
) -> AppResult<()> {
    let now = clock::now(&mut *conn).await?;
    let entry = Entry {
        kind: Kind::Bridge,
        at: now,
        body: "",
        details: json!({ "line": bridge.line(), "call_url": bridge.call_url, "chat_url": bridge.chat_url }),
        version: None,
    };
    append(conn, incident.id, actor, entry).await?;
    Ok(())
}

/// A Sev1 or Sev2 without a bridge (`current`) starts with its service's default one, if it
/// has one. Returns the bridge in effect after.
async fn bridge_from_service(
    conn: &mut PgConnection,
    incident: &Incident,
    actor: &Actor,
    current: crate::bridge::domain::Bridge,
) -> AppResult<crate::bridge::domain::Bridge> {
    let Some(service_id) = incident.service_id else {
        return Ok(current);
    };
    if !current.is_empty() || !crate::bridge::domain::wanted(incident.severity) {
        return Ok(current);
    }
    let defaults = crate::bridge::db::of_service(&mut *conn, service_id).await?;
    if defaults.is_empty() {
        return Ok(current);
    }
    crate::bridge::db::set_for_incident(&mut *conn, incident.id, &defaults, &actor.name).await?;
    write_bridge_entry(conn, incident, actor, &defaults).await?;
    Ok(defaults)
}
