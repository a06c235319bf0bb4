//! Asking for a responder from an incident and their answer, each in one transaction with its
//! timeline entry and audit row; and ending what still waits when the incident is resolved.
//!
//! Locks: the incident (key share, as the engines take it) before its requests, so a
//! resolution — which holds the incident — and an answer queue at the incident.

use serde_json::{Value, json};
use sqlx::PgConnection;

use super::db::{self, NewRequest, Request};
use super::domain::{AskDraft, Asked, after_step, page_text};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};
use crate::incident_ref::db::IncidentRef;
use crate::notify::actions::About;
use crate::paging::actions::{ForRequest, World, page_targets};
use crate::paging::domain::{Step, Target};
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// The incident, key-share locked and read again under the lock; refused once resolved.
async fn locked_open(conn: &mut PgConnection, incident: &IncidentRef) -> AppResult<IncidentRef> {
    crate::incident_ref::db::share(&mut *conn, &[incident.id]).await?;
    let now = crate::incident_ref::db::by_id(&mut *conn, incident.id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no incident {}.", incident.key)))?;
    if now.status == "resolved" {
        return Err(AppError::Conflict(format!(
            "{} is resolved: nobody is paged for it. Reopen it first.",
            now.key
        )));
    }
    Ok(now)
}

/// What `asked` named, found.
enum Found {
    /// A person (id, name)
    Person(i64, String),
    /// The person a schedule has on call now (id, name)
    Schedule(i64, String),
    Policy(crate::paging::db::StoredPolicy),
}

/// Refuses naming `field` when `person` may not see the restricted incident `i`: asked for by
/// hand, a restricted incident reaches only the people it is kept to.
async fn may_see(
    conn: &mut PgConnection,
    i: &IncidentRef,
    (field, person_id, name): (&str, i64, &str),
) -> AppResult<()> {
    let seen_by = crate::incident_ref::domain::SeenBy::person(person_id);
    if i.restricted && !crate::incident_ref::db::visible(&mut *conn, i.id, seen_by).await? {
        return Err(AppError::invalid(
            field,
            format!(
                "{name} may not see this restricted incident; add them to who may see it first"
            ),
        ));
    }
    Ok(())
}

/// What is paged first for `asked`, checked against what exists now, and what it named. A person who cannot acknowledge, a schedule with nobody on call
/// and a name that is nobody's are refused naming the field.
async fn first_targets(
    conn: &mut PgConnection,
    (world, i): (&World, &IncidentRef),
    asked: &Asked,
) -> AppResult<(Vec<Target>, Found)> {
    match asked {
        Asked::Person(h) => {
            let person = crate::people::db::find(&mut *conn, h)
                .await?
                .ok_or_else(|| AppError::invalid("person", format!("there is no person {h:?}")))?;
            if crate::people::db::can_acknowledge(&mut *conn, &[person.id])
                .await?
                .is_empty()
            {
                return Err(AppError::invalid(
                    "person",
                    format!(
                        "{} cannot act on a page (a viewer, or disabled); ask someone who can",
                        person.name
                    ),
                ));
            }
            may_see(conn, i, ("person", person.id, &person.name)).await?;
            Ok((
                vec![Target::Person(person.handle)],
                Found::Person(person.id, person.name),
            ))
        }
        Asked::Schedule(n) => {
            let known = crate::oncall::db::list(&mut *conn, None)
                .await?
                .into_iter()
                .any(|s| &s.name == n);
            if !known {
                return Err(AppError::invalid(
                    "schedule",
                    format!("there is no schedule named {n:?}"),
                ));
            }
            let nobody = || {
                AppError::invalid(
                    "schedule",
                    format!("nobody is on call in {n} now; ask a person or a policy"),
                )
            };
            let handle = world.on_call(n)?.ok_or_else(nobody)?;
            let person = crate::people::db::find(&mut *conn, &handle)
                .await?
                .ok_or_else(nobody)?;
            let who = format!("{}, on call in {n} now,", person.name);
            may_see(conn, i, ("schedule", person.id, &who)).await?;
            Ok((
                vec![Target::Schedule(n.clone())],
                Found::Schedule(person.id, person.name),
            ))
        }
        Asked::Policy(n) => {
            let policy = crate::paging::db::list(&mut *conn, None)
                .await?
                .into_iter()
                .find(|p| &p.name == n)
                .ok_or_else(|| {
                    AppError::invalid(
                        "policy",
                        format!("there is no escalation policy named {n:?}"),
                    )
                })?;
            let first = policy.steps.0.first().map(|s| s.targets.clone());
            Ok((first.unwrap_or_default(), Found::Policy(policy)))
        }
    }
}

/// The incident as messages name it.
fn about_of<'a>(
    i: &'a IncidentRef,
    key: &'a str,
    bridge: &'a crate::bridge::domain::Bridge,
) -> About<'a> {
    About {
        incident_id: i.id,
        key,
        title: &i.title,
        severity: i.severity.as_str(),
        service: i.service.as_deref(),
        bridge,
    }
}

/// Adds the details of one round of pages to a timeline entry's.
fn with_round(mut details: Value, round: Value) -> Value {
    if let (Some(d), Value::Object(r)) = (details.as_object_mut(), round) {
        d.extend(r);
    }
    details
}

/// "Add a responder": pages `draft`'s person, schedule's on-call person or policy's first step
/// now, each with a signed link that accepts the request — helping, not taking the incident
/// over; a policy's next steps page after their delays until someone accepts. On the timeline
/// with who was paged and how, and in the audit log.
pub async fn add(
    conn: &mut PgConnection,
    incident: &IncidentRef,
    draft: &AskDraft,
    actor: &Actor,
) -> AppResult<Request> {
    let (asked, message) = draft.checked()?;
    let i = locked_open(conn, incident).await?;
    let world = World::read(&mut *conn).await?;
    let (targets, found) = first_targets(conn, (&world, &i), &asked).await?;
    let (steps, person) = match &found {
        Found::Policy(p) => (Some((p.name.as_str(), p.steps.0.as_slice())), None),
        Found::Person(_, name) => (None, Some(name)),
        Found::Schedule(..) => (None, None),
    };
    let id = db::insert(
        &mut *conn,
        &NewRequest {
            incident_id: i.id,
            target_kind: asked.kind(),
            target: asked.name(),
            message: &message,
            requested_by: &actor.name,
            policy: steps,
        },
    )
    .await?;
    let key = i.key.to_string();
    let bridge = crate::bridge::db::of_incident(&mut *conn, i.id).await?;
    let about = about_of(&i, &key, &bridge);
    let step = steps.map(|(name, s)| (1, s.len(), name));
    let what = page_text(&actor.name, &message, step);
    let request = Some(ForRequest { id, accepts: true });
    let reached = page_targets(conn, &world, (&about, &what), &targets, request).await?;
    db::add_pages(&mut *conn, id, &reached.people, step.map(|_| 1)).await?;
    let next = steps.and_then(|(_, s)| after_step(0, s.len(), s[0].delay_minutes as i64));
    if steps.is_some() {
        db::set_next(&mut *conn, id, next).await?;
    }
    if reached.people.is_empty() && next.is_none() {
        db::end(&mut *conn, &[id], "nobody could be paged").await?;
    }
    let details = json!({
        "action": "requested", "request": id, "by": actor.name, "target_kind": asked.kind(),
        "target": asked.name(), "target_name": person, "policy": steps.map(|(n, _)| n),
        "step": step.map(|s| s.0), "of": step.map(|s| s.1),
    });
    timeline::actions::record(
        &mut *conn,
        NewEvent::by(
            &actor.name,
            i.id,
            world.now,
            Kind::Responder,
            with_round(details, reached.details),
        )
        .saying(&message),
    )
    .await?;
    audit::created(
        conn,
        actor,
        "incident.responder.add",
        &key,
        json!({ "request": id, "target_kind": asked.kind(), "target": asked.name(),
                "message": message }),
    )
    .await?;
    one(conn, i.id, id).await
}

/// Request `id` of the incident as the API shows it.
pub async fn one(conn: &mut PgConnection, incident_id: i64, id: i64) -> AppResult<Request> {
    db::for_incident(conn, incident_id)
        .await?
        .into_iter()
        .find(|r| r.id == id)
        .ok_or_else(|| AppError::NotFound(format!("There is no responder request {id}.")))
}

/// `person` (id, name) accepts request `id` of the incident — by their signed link or signed
/// in: their answer is kept, the request's messages not yet sent are called off (a policy
/// pages no further step), and the incident itself stays as it is. `actor` is who acts.
pub async fn accept(
    conn: &mut PgConnection,
    incident: &IncidentRef,
    id: i64,
    (person_id, person): (i64, &str),
    actor: &Actor,
) -> AppResult<Request> {
    let i = locked_open(conn, incident).await?;
    let r = db::lock(&mut *conn, i.id, id).await?.ok_or_else(|| {
        AppError::NotFound(format!("There is no responder request {id} on {}.", i.key))
    })?;
    match db::page_of(&mut *conn, id, person_id).await? {
        None => {
            return Err(AppError::Forbidden(format!(
                "Request {id} did not page {person}; only the people it paged accept it."
            )));
        }
        Some(Some(at)) => {
            return Err(AppError::Conflict(format!(
                "{person} accepted request {id} at {} UTC already.",
                at.format("%H:%M")
            )));
        }
        Some(None) if r.state == "ended" => {
            return Err(AppError::Conflict(format!(
                "Request {id} has ended; nobody needs to accept it now."
            )));
        }
        Some(None) => {}
    }
    db::accept(&mut *conn, id, person_id).await?;
    let called_off = crate::notify::actions::call_off_request_pages(
        &mut *conn,
        &[id],
        None,
        &format!("{person} accepted before it was sent"),
    )
    .await?;
    let at = crate::clock::now(&mut *conn).await?;
    let details = json!({
        "action": "accepted", "request": id, "person": person, "asked_by": r.requested_by,
        "target_kind": r.target_kind, "target": r.target, "pages_called_off": called_off,
    });
    timeline::actions::record(
        &mut *conn,
        NewEvent::by(&actor.name, i.id, at, Kind::Responder, details),
    )
    .await?;
    audit::created(
        conn,
        actor,
        "incident.responder.accept",
        &i.key.to_string(),
        json!({ "request": id, "person": person }),
    )
    .await?;
    one(conn, i.id, id).await
}

/// The incident is resolved: requests still waiting end, and their messages not yet sent are
/// called off. Called in the resolution's transaction.
pub async fn end_with_incident(
    conn: &mut PgConnection,
    incident_id: i64,
    why: &str,
) -> AppResult<()> {
    let waiting = db::waiting(&mut *conn, incident_id).await?;
    if waiting.is_empty() {
        return Ok(());
    }
    let ended = db::end(&mut *conn, &waiting, why).await?;
    crate::notify::actions::call_off_request_pages(conn, &ended, None, why).await?;
    Ok(())
}

/// Pages the next step of a policy request that is due (the engine's work, one request).
pub(super) async fn fire(conn: &mut PgConnection, world: &World, d: &db::Due) -> AppResult<()> {
    let Some(i) = crate::incident_ref::db::by_id(&mut *conn, d.incident_id).await? else {
        return Ok(());
    };
    let steps = &d.steps.0;
    let at = d.next_step.max(0) as usize;
    let Some(step) = steps.get(at) else {
        return db::set_next(&mut *conn, d.id, None).await;
    };
    if i.status == "resolved" {
        end_with_incident(conn, i.id, "the incident was resolved").await?;
        return Ok(());
    }
    let key = i.key.to_string();
    let bridge = crate::bridge::db::of_incident(&mut *conn, i.id).await?;
    let about = about_of(&i, &key, &bridge);
    let what = page_text(
        &d.requested_by,
        &d.message,
        Some((at + 1, steps.len(), &d.policy_name)),
    );
    let request = Some(ForRequest {
        id: d.id,
        accepts: true,
    });
    let reached = page_targets(conn, world, (&about, &what), &step.targets, request).await?;
    db::add_pages(&mut *conn, d.id, &reached.people, Some(at as i32 + 1)).await?;
    let next = after_step(at, steps.len(), step.delay_minutes as i64);
    db::set_next(&mut *conn, d.id, next).await?;
    if next.is_none() && !db::paged_anyone(&mut *conn, d.id).await? {
        db::end(&mut *conn, &[d.id], "nobody could be paged").await?;
    }
    let details = json!({
        "action": "next_step", "request": d.id, "asked_by": d.requested_by,
        "target_kind": "policy", "target": d.policy_name, "policy": d.policy_name,
        "step": at + 1, "of": steps.len(),
    });
    timeline::actions::record(
        conn,
        NewEvent::by_quell(
            i.id,
            world.now,
            Kind::Responder,
            with_round(details, reached.details),
        ),
    )
    .await?;
    Ok(())
}

/// How long a person or schedule an incident is reassigned to has to acknowledge before its
/// escalation ends, saying nobody did.
pub const REASSIGN_WAIT_MINUTES: u32 = 30;

/// Hands the incident's paging to `asked` — a person or a schedule's on-call person (one step,
/// waiting [`REASSIGN_WAIT_MINUTES`]) or an escalation policy (its steps and repeats) — in
/// place of the escalation it had, which stops with its pages not yet sent. The caller holds
/// the incident's lock and has made it triggered; whoever acknowledges it takes it over.
/// Returns what the timeline keeps: the target and the policy replaced.
pub async fn hand_over(
    conn: &mut PgConnection,
    incident_id: i64,
    asked: &Asked,
) -> AppResult<Value> {
    let world = World::read(&mut *conn).await?;
    let i = crate::incident_ref::db::by_id(&mut *conn, incident_id)
        .await?
        .ok_or_else(|| AppError::NotFound("There is no such incident.".into()))?;
    let (targets, found) = first_targets(conn, (&world, &i), asked).await?;
    // Handed to someone who cannot be reached, the incident would page nobody at all.
    if let Found::Person(id, name) | Found::Schedule(id, name) = &found
        && crate::notify::db::methods(&mut *conn, Some(*id))
            .await?
            .is_empty()
    {
        return Err(AppError::invalid(
            asked.kind(),
            format!(
                "{name} has no way to be reached (no contact method); reassigning would page nobody"
            ),
        ));
    }
    let one_step = |label: String, targets| {
        let step = Step {
            targets,
            delay_minutes: REASSIGN_WAIT_MINUTES,
        };
        (None, format!("Reassigned to {label}"), vec![step], 0)
    };
    let target_name = match &found {
        Found::Person(_, name) => Some(name.clone()),
        _ => None,
    };
    let (policy_id, name, steps, repeat) = match found {
        Found::Policy(p) => (Some(p.id), p.name, p.steps.0, p.repeat),
        Found::Person(_, name) => one_step(name, targets),
        Found::Schedule(..) => one_step(format!("whoever is on call in {}", asked.name()), targets),
    };
    let replaced =
        crate::paging::actions::hand_over(conn, incident_id, (policy_id, &name), &steps, repeat)
            .await?;
    Ok(json!({
        "target_kind": asked.kind(), "target": asked.name(), "target_name": target_name,
        "replaced": replaced,
    }))
}
