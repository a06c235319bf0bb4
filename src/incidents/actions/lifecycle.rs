//! The lifecycle and the severity.

use super::bridge::bridge_from_service;
use super::shared::*;
use serde_json::json;
use sqlx::PgConnection;

use crate::error::AppResult;
use crate::incidents::db::{self, Incident};
use crate::incidents::domain::{self, Severity, Transition};
use crate::notify::domain::Event;
use crate::timeline::domain::Kind;

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
    let now = c.clock(conn).await?;
    let at = domain::check_at(c.at, incident.started_at, now)?;
    let plan = domain::plan_transition(&incident.milestones(), transition, at)?;
    let version = db::set_milestones(&mut *conn, incident.id, &plan.milestones).await?;
    // A snooze is for an acknowledged incident: mitigated, resolved or reopened, it ends.
    db::end_snooze(&mut *conn, incident.id, None).await?;
    if transition == Transition::Resolve {
        // Its alert groups close and its alerts resolve with it: the next alert opens a new
        // incident instead of joining a finished one.
        crate::alert_store::actions::end_with_incident(conn, incident.id).await?;
        // Nobody is still looking into anything of a resolved incident: its claims end.
        crate::claims::actions::end_with_incident(conn, incident.id, &actor.name).await?;
        // Nor is anyone still asked to help with it.
        let why = format!("the incident was resolved by {}", actor.name);
        crate::responders::actions::end_with_incident(conn, incident.id, &why).await?;
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

/// Takes a step back that the system, not a person, decides (see `domain::step_back`): the
/// incident returns to `to` with a timeline entry saying why, its timers re-armed and its
/// paging following (back to triggered starts the escalation again).
pub async fn step_back(
    conn: &mut PgConnection,
    c: &Change<'_>,
    to: domain::Status,
    why: &str,
) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
    let at = c.clock(conn).await?;
    let next = domain::step_back(&incident.milestones(), to)?;
    let version = db::set_milestones(&mut *conn, incident.id, &next).await?;
    let back = Entry {
        kind: Kind::Reopened,
        at,
        body: why,
        details: json!({ "from": incident.status.as_str(), "to": to.as_str(), "stepped_back": true }),
        version: Some(version),
    };
    append(conn, incident.id, actor, back).await?;
    let after = audited(conn, actor, "incident.step_back", &incident, key).await?;
    let what = format!("back to {} ({why})", to.as_str());
    let bridge = crate::bridge::db::of_incident(&mut *conn, after.id).await?;
    announce(conn, &after, &bridge, Event::Opened, &what, None).await?;
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
    let now = c.clock(conn).await?;
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

/// Puts an acknowledged incident aside for `minutes`: at the end, still acknowledged, it
/// returns to triggered and pages again (`incidents::snoozes`). A snooze again replaces the
/// last one.
pub async fn snooze(
    conn: &mut PgConnection,
    c: &Change<'_>,
    minutes: i64,
    note: &str,
) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
    let note = domain::check_text("note", note, 2_000)?;
    domain::check_snooze(incident.status, minutes)?;
    let now = c.clock(conn).await?;
    let until = db::snooze(&mut *conn, incident.id, minutes, &actor.name, &note).await?;
    let version = db::touch(&mut *conn, incident.id).await?;
    let mut body = format!(
        "Snoozed until {} UTC: then, unless mitigated or resolved, it returns to triggered and \
         pages again",
        until.format("%Y-%m-%d %H:%M")
    );
    if !note.is_empty() {
        body.push_str(&format!(" — {note}"));
    }
    let snoozed = Entry {
        kind: Kind::Note,
        at: now,
        body: &body,
        details: json!({ "snoozed_until": until, "minutes": minutes }),
        version: Some(version),
    };
    append(conn, incident.id, actor, snoozed).await?;
    audited(conn, actor, "incident.snooze", &incident, key).await
}

/// Ends a snooze early (the person is back on it): the incident stays acknowledged and
/// nobody is paged.
pub async fn end_snooze(conn: &mut PgConnection, c: &Change<'_>) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
    let now = c.clock(conn).await?;
    let Some(until) = db::end_snooze(&mut *conn, incident.id, Some(&actor.name)).await? else {
        return Err(crate::error::AppError::Conflict(
            "This incident is not snoozed; there is no snooze to end.".into(),
        ));
    };
    let version = db::touch(&mut *conn, incident.id).await?;
    let body = format!(
        "Snooze ended early (it ran until {} UTC): the incident stays acknowledged",
        until.format("%Y-%m-%d %H:%M")
    );
    let ended = Entry {
        kind: Kind::Note,
        at: now,
        body: &body,
        details: json!({ "snooze_ended": true, "early": true }),
        version: Some(version),
    };
    append(conn, incident.id, actor, ended).await?;
    audited(conn, actor, "incident.snooze_end", &incident, key).await
}

/// Moves the incident's version on after a change to what hangs off it (alerts moved in or
/// out by a merge or a split), so a copy read before it is refused as stale.
pub async fn touch(conn: &mut PgConnection, key: crate::domain::IncidentKey) -> AppResult<i32> {
    let incident = db::lock(&mut *conn, key).await?;
    db::touch(&mut *conn, incident.id).await
}

/// "Escalate now" on a triggered incident: its escalation's next step pages at once instead of
/// waiting out the current step's delay (see `paging::actions::escalate_now`; `expected_step`
/// keeps two people pressing it together from skipping a step).
pub async fn escalate_now(
    conn: &mut PgConnection,
    c: &Change<'_>,
    expected: Option<(i32, Option<i32>)>,
) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    if let Some((step, round)) = expected
        && (step < 1 || round.is_some_and(|r| r < 0))
    {
        let field = if step < 1 { "step" } else { "round" };
        return Err(crate::error::AppError::invalid(
            field,
            "steps count from 1 and rounds from 0, as GET …/paging shows them",
        ));
    }
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
    if incident.status != domain::Status::Triggered {
        return Err(crate::error::AppError::Conflict(format!(
            "Only a triggered incident is being paged; this one is {}.",
            incident.status
        )));
    }
    let (step, of) =
        crate::paging::actions::escalate_now(conn, incident.id, expected, actor).await?;
    // The incident itself is as it was; the audit keeps which step was made due.
    let made_due = json!({ "step": step, "of": of, "status": incident.status.as_str() });
    crate::audit::created(
        conn,
        actor,
        "incident.escalate_now",
        &key.to_string(),
        made_due,
    )
    .await?;
    db::get(conn, key).await
}
