//! Writing escalation policies (checked: every person, schedule and channel named must exist;
//! audited), pointing services at them, starting and stopping an incident's escalation in the
//! incident's own transaction, and checking acknowledge links.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use super::db::{self, StoredPolicy};
use super::domain::{ACK_LINK_HOURS, PolicyDraft, Target, ack_token, check_ack_token};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};
use crate::notify::actions::About;
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// The name of the shared key acknowledge links are signed with.
pub const ACK_KEY: &str = "ack_links";

/// The key acknowledge links are signed with (made by the first replica that needs it).
pub async fn ack_key(conn: &mut PgConnection) -> AppResult<Vec<u8>> {
    use argon2::password_hash::rand_core::{OsRng, RngCore};
    let mut fresh = [0u8; 32];
    OsRng.fill_bytes(&mut fresh);
    crate::auth::db::server_key(conn, ACK_KEY, &fresh).await
}

/// The checked policy, every target known; else 422 naming the field.
async fn checked(conn: &mut PgConnection, d: &PolicyDraft) -> AppResult<PolicyDraft> {
    let d = d.checked()?;
    let people = crate::people::db::list(&mut *conn).await?;
    let ids: Vec<i64> = people.iter().map(|p| p.id).collect();
    let acting = crate::people::db::can_acknowledge(&mut *conn, &ids).await?;
    let schedules = crate::oncall::db::list(&mut *conn, None).await?;
    let channels = crate::notify::db::channels(&mut *conn).await?;
    for (field, target) in d.targets() {
        let known = match target {
            Target::Person(h) => match people.iter().find(|p| &p.handle == h) {
                Some(p) if !acting.contains(&p.id) => {
                    return Err(AppError::invalid(
                        &field,
                        format!(
                            "{h} cannot acknowledge (a viewer, or disabled); page someone who can"
                        ),
                    ));
                }
                found => found.is_some(),
            },
            Target::Schedule(n) => schedules.iter().any(|s| &s.name == n),
            Target::Channel(n) => channels.iter().any(|c| &c.name == n),
        };
        if !known {
            return Err(AppError::invalid(
                &field,
                format!("there is no {}", target.describe_missing()),
            ));
        }
    }
    Ok(d)
}

pub async fn create(conn: &mut PgConnection, actor: &Actor, d: &PolicyDraft) -> AppResult<i64> {
    let d = checked(conn, d).await?;
    let team = crate::teams::actions::named(&mut *conn, &d.team).await?;
    let id = db::insert(&mut *conn, &d, team).await?;
    audit::created(conn, actor, "escalation_policy.create", &d.name, &d).await?;
    Ok(id)
}

/// Replaces policy `id` if it is still at `version`. Escalations already running keep the
/// policy they started with.
pub async fn update(
    conn: &mut PgConnection,
    actor: &Actor,
    id: i64,
    version: Option<i32>,
    d: &PolicyDraft,
) -> AppResult<StoredPolicy> {
    let current = db::get(&mut *conn, id).await?;
    let d = checked(conn, d).await?;
    let team = crate::teams::actions::named(&mut *conn, &d.team).await?;
    if !db::update(&mut *conn, id, version.unwrap_or(current.version), &d, team).await? {
        return Err(AppError::Stale {
            current_version: current.version,
        });
    }
    audit::changed(
        conn,
        actor,
        "escalation_policy.update",
        &d.name,
        json!(current.draft()),
        &d,
    )
    .await?;
    db::get(conn, id).await
}

pub async fn delete(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<()> {
    let current = db::get(&mut *conn, id).await?;
    db::delete(&mut *conn, id).await?;
    audit::deleted(
        conn,
        actor,
        "escalation_policy.delete",
        &current.name,
        json!(current.draft()),
    )
    .await
}

/// Points `service` at the policy named `policy` (none when `None`).
pub async fn assign(
    conn: &mut PgConnection,
    actor: &Actor,
    service: &str,
    policy: Option<&str>,
) -> AppResult<()> {
    let policy_id = match policy.map(str::trim).filter(|p| !p.is_empty()) {
        Some(name) => Some(
            db::list(&mut *conn, None)
                .await?
                .into_iter()
                .find(|p| p.name == name)
                .ok_or_else(|| {
                    AppError::invalid(
                        "escalation_policy",
                        format!("there is no escalation policy named {name:?}"),
                    )
                })?
                .id,
        ),
        None => None,
    };
    if !db::assign(&mut *conn, service.trim(), policy_id).await? {
        return Err(AppError::NotFound(format!(
            "There is no service {service:?}."
        )));
    }
    audit::created(
        conn,
        actor,
        "service.escalation_policy",
        service.trim(),
        json!({ "escalation_policy": policy }),
    )
    .await
}

/// Starts paging for a newly opened (or reopened) incident of service `service_id`, if the
/// service has a policy: its first step is due at once, and the engines are woken.
pub async fn start(
    conn: &mut PgConnection,
    incident_id: i64,
    service_id: Option<i64>,
) -> AppResult<()> {
    start_many(conn, &[(incident_id, service_id)]).await
}

/// Starts the escalations of several incidents (id, service) in one statement: those whose
/// service points at a policy.
pub async fn start_many(
    conn: &mut PgConnection,
    incidents: &[(i64, Option<i64>)],
) -> AppResult<()> {
    let (ids, services): (Vec<i64>, Vec<i64>) = incidents
        .iter()
        .filter_map(|(i, s)| s.map(|s| (*i, s)))
        .unzip();
    if ids.is_empty() {
        return Ok(());
    }
    db::start_for_services(conn, &ids, &services).await
}

/// Stops the incident's escalation, if one is running, because of `why` ("acknowledged by
/// Ana"): pages not yet sent are called off, and the timeline says so.
pub async fn stop(conn: &mut PgConnection, incident_id: i64, why: &str) -> AppResult<()> {
    let Some(policy) = db::stop(&mut *conn, incident_id).await? else {
        return Ok(());
    };
    let cancelled = crate::notify::actions::call_off_pages(&mut *conn, incident_id).await?;
    let at = crate::clock::now(&mut *conn).await?;
    let details = json!({ "action": "stopped", "why": why, "policy": policy,
                          "pages_called_off": cancelled });
    timeline::actions::record(
        conn,
        NewEvent::by_quell(incident_id, at, Kind::Escalation, details),
    )
    .await?;
    Ok(())
}

/// Hands the incident's paging to `steps` (named `name`; of policy `policy_id` if it is one):
/// the escalation running is stopped and its pages not yet sent are called off, and the new
/// one starts from its first step at once. Returns the name of the policy it replaced, if one
/// was running. The caller holds the incident's lock and writes the timeline entry.
pub async fn hand_over(
    conn: &mut PgConnection,
    incident_id: i64,
    (policy_id, name): (Option<i64>, &str),
    steps: &[super::domain::Step],
    repeat: i32,
) -> AppResult<Option<String>> {
    let replaced = db::stop(&mut *conn, incident_id).await?;
    // Whatever the old escalation sent or queued no longer hands the incident to anyone: its
    // pages not yet sent (a late rule's, after it ran out too) and its unused links.
    crate::notify::actions::call_off_pages(&mut *conn, incident_id).await?;
    db::expire_links(&mut *conn, incident_id).await?;
    db::start_with(conn, incident_id, (policy_id, name), steps, repeat).await?;
    Ok(replaced)
}

/// "Escalate now": the incident's escalation fires its next step at once instead of waiting
/// out the current step's delay. `expected_step`: the next step (1-based) the person saw; when
/// the escalation has moved on since (someone escalated first, or the step fired), nothing is
/// done and the answer says where it is. The caller holds the incident's lock (taken before
/// the escalation's, as the engine takes them). Returns the step that fires and how many there
/// are.
pub async fn escalate_now(
    conn: &mut PgConnection,
    incident_id: i64,
    expected: Option<(i32, Option<i32>)>,
    actor: &Actor,
) -> AppResult<(i32, i32)> {
    let Some(e) = db::escalation(&mut *conn, incident_id).await? else {
        return Err(AppError::Conflict(
            "Nobody is being paged: its service has no escalation policy, or a quiet \
             maintenance window kept it from paging."
                .into(),
        ));
    };
    super::domain::check_escalate_now(&e.state, e.next_step, e.steps, (e.round, e.repeat))?;
    if let Some((step, round)) = expected
        && (step != e.next_step || round.is_some_and(|r| r != e.round))
    {
        let repeat = if e.round > 0 {
            format!(" (repeat {} of {})", e.round, e.repeat)
        } else {
            String::new()
        };
        return Err(AppError::Conflict(format!(
            "The escalation has moved on since: step {} of {}{repeat} is next now. Look again \
             before escalating further.",
            e.next_step, e.steps
        )));
    }
    if !db::due_now(&mut *conn, incident_id).await? {
        return Err(AppError::Conflict(format!(
            "Step {} of {} is due already: an engine pages it within seconds.",
            e.next_step, e.steps
        )));
    }
    let at = crate::clock::now(&mut *conn).await?;
    let details = json!({ "action": "escalated_now", "by": actor.name, "policy": e.policy,
                          "step": e.next_step, "of": e.steps, "round": e.round });
    timeline::actions::record(
        &mut *conn,
        NewEvent::by(&actor.name, incident_id, at, Kind::Escalation, details),
    )
    .await?;
    Ok((e.next_step, e.steps))
}

/// A link that does not acknowledge anything: a forged or changed token, or an incident that
/// is not there — the same answer, so a link's address tells nobody which incidents exist.
pub fn invalid_link() -> AppError {
    AppError::NotFound(
        "This acknowledge link is not valid: it was changed, or it belongs to another incident."
            .into(),
    )
}

/// Whose acknowledge link `token` is, checked: signed for this incident, not used, not
/// expired, and of the kind the address is for (`accepts_request`: a responder's link, which
/// accepts their request; else one that acknowledges the incident). The link stays locked
/// until the caller's transaction ends.
pub async fn check_link(
    conn: &mut PgConnection,
    (incident_key, incident_id): (&str, i64),
    token: &str,
    accepts_request: bool,
) -> AppResult<(Uuid, db::Link)> {
    let invalid = invalid_link;
    let key = ack_key(&mut *conn).await?;
    let nonce = check_ack_token(&key, incident_key, token).ok_or_else(invalid)?;
    let link = db::link(&mut *conn, nonce)
        .await?
        .filter(|l| l.incident_id == incident_id && l.request_id.is_some() == accepts_request)
        .ok_or_else(invalid)?;
    let what = if accepts_request {
        "link to accept the page"
    } else {
        "acknowledge link"
    };
    if let Some(used) = link.used_at {
        let when = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
        let acknowledged = match crate::timeline::db::acknowledgement(&mut *conn, incident_id)
            .await?
            .filter(|_| !accepts_request)
        {
            Some(a) => format!(
                "{incident_key} was acknowledged by {} at {}. ",
                a.by,
                when(a.at)
            ),
            None => String::new(),
        };
        return Err(AppError::Gone(format!(
            "{acknowledged}This {what} was used at {}; each link works once.",
            when(used)
        )));
    }
    if link.expired {
        let instead = if accepts_request {
            "sign in to answer from the incident's page"
        } else {
            "sign in to acknowledge"
        };
        return Err(AppError::Gone(format!(
            "This {what} has expired, or its page was handed to someone else; {instead}."
        )));
    }
    // The link acts with the rights its person has now, not when it was sent.
    if crate::people::db::can_acknowledge(&mut *conn, &[link.person_id])
        .await?
        .is_empty()
    {
        return Err(AppError::Forbidden(format!(
            "This {what} no longer works: {} cannot act on incidents now (the account is \
             disabled or may only read).",
            link.person
        )));
    }
    Ok((nonce, link))
}

/// Marks the link used, in the transaction that acts on it.
pub async fn use_link(conn: &mut PgConnection, nonce: Uuid) -> AppResult<()> {
    db::use_link(conn, nonce).await
}

/// A service and who its policy's first step pages now.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct ServiceOnCall {
    pub service: String,
    pub policy: Option<String>,
    /// People paged first, by name, with the schedule that put them there (if any)
    pub first: Vec<FirstResponder>,
    /// Schedules of the first step with nobody on call now
    pub gaps: Vec<String>,
}

#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct FirstResponder {
    pub name: String,
    pub handle: String,
    pub schedule: Option<String>,
}

/// For every service, who would be paged first if it failed now.
pub async fn on_call_now(conn: &mut PgConnection) -> AppResult<Vec<ServiceOnCall>> {
    let now = crate::clock::now(&mut *conn).await?;
    let policies = db::list(&mut *conn, None).await?;
    let schedules = crate::oncall::db::list(&mut *conn, None).await?;
    let people = crate::people::db::list(&mut *conn).await?;
    let mut out = Vec::new();
    for sp in db::service_policies(&mut *conn).await? {
        let policy = sp
            .policy_id
            .and_then(|id| policies.iter().find(|p| p.id == id));
        let mut first = Vec::new();
        let mut gaps = Vec::new();
        if let Some(step) = policy.and_then(|p| p.steps.0.first()) {
            for t in &step.targets {
                let (handle, schedule) = match t {
                    Target::Person(h) => (Some(h.clone()), None),
                    Target::Schedule(n) => {
                        let who = match schedules.iter().find(|s| &s.name == n) {
                            Some(s) => crate::oncall::actions::rules(s)?.on_call(now),
                            None => None,
                        };
                        if who.is_none() {
                            gaps.push(n.clone());
                        }
                        (who, Some(n.clone()))
                    }
                    Target::Channel(_) => (None, None),
                };
                if let Some(p) = handle.and_then(|h| people.iter().find(|p| p.handle == h)) {
                    first.push(FirstResponder {
                        name: p.name.clone(),
                        handle: p.handle.clone(),
                        schedule,
                    });
                }
            }
        }
        out.push(ServiceOnCall {
            service: sp.service,
            policy: policy.map(|p| p.name.clone()),
            first,
            gaps,
        });
    }
    Ok(out)
}

/// What pages are resolved against, read once per batch or request: the signing key, the
/// transaction's clock, and the schedules, channels and people targets name.
pub struct World {
    key: Vec<u8>,
    pub now: DateTime<Utc>,
    schedules: Vec<crate::oncall::db::StoredSchedule>,
    channels: Vec<crate::notify::db::Channel>,
    people: Vec<crate::people::db::Person>,
    /// Those of `people` who may acknowledge now: nobody else is paged.
    acting: std::collections::HashSet<i64>,
}

impl World {
    pub async fn read(conn: &mut PgConnection) -> AppResult<World> {
        let people = crate::people::db::list(&mut *conn).await?;
        let ids: Vec<i64> = people.iter().map(|p| p.id).collect();
        Ok(World {
            key: ack_key(&mut *conn).await?,
            now: crate::clock::now(&mut *conn).await?,
            schedules: crate::oncall::db::list(&mut *conn, None).await?,
            channels: crate::notify::db::channels(&mut *conn).await?,
            acting: crate::people::db::can_acknowledge(&mut *conn, &ids).await?,
            people,
        })
    }

    /// Who schedule `name` has on call now (a handle); `None` when nobody, or no such schedule.
    pub fn on_call(&self, name: &str) -> AppResult<Option<String>> {
        match self.schedules.iter().find(|s| s.name == name) {
            Some(s) => Ok(crate::oncall::actions::rules(s)?.on_call(self.now)),
            None => Ok(None),
        }
    }
}

/// A responder request pages are sent for: each message points back at it, and with `accepts`
/// the signed link accepts the request (helping) instead of acknowledging the incident.
#[derive(Debug, Clone, Copy)]
pub struct ForRequest {
    pub id: i64,
    pub accepts: bool,
}

/// Who a round of pages reached: what the timeline keeps (`details`) and the people paged, with
/// the schedule that put each there.
pub struct Reached {
    pub details: Value,
    pub people: Vec<(i64, Option<String>)>,
}

/// Pages everyone `targets` names now, saying `what`; returns who was paged and how, which
/// channels were told, who could not be reached, who was not paged because they cannot
/// acknowledge now, and which schedules had nobody.
pub async fn page_targets(
    conn: &mut PgConnection,
    world: &World,
    (about, what): (&About<'_>, &str),
    targets: &[Target],
    request: Option<ForRequest>,
) -> AppResult<Reached> {
    let mut handles: Vec<(String, Option<String>)> = Vec::new();
    let mut channels = Vec::new();
    let mut empty_schedules = Vec::new();
    for t in targets {
        match t {
            Target::Person(h) => handles.push((h.clone(), None)),
            Target::Schedule(name) => match world.on_call(name)? {
                Some(h) => handles.push((h, Some(name.clone()))),
                None => empty_schedules.push(json!({ "name": name })),
            },
            Target::Channel(name) => {
                let channel = world.channels.iter().find(|c| &c.name == name && c.enabled);
                if let Some(c) = channel {
                    crate::notify::actions::page_channel(&mut *conn, c.id, about, what).await?;
                    channels.push(json!({ "name": c.name }));
                }
            }
        }
    }
    let mut people = Vec::new();
    let mut reached = Vec::new();
    let mut unreachable = Vec::new();
    let mut cannot_act = Vec::new();
    let mut cannot_see = Vec::new();
    let mut seen = Vec::new();
    for (handle, via_schedule) in handles {
        let Some(person) = world.people.iter().find(|p| p.handle == handle) else {
            unreachable.push(json!({ "name": handle }));
            continue;
        };
        if seen.contains(&person.id) {
            continue;
        }
        seen.push(person.id);
        if !world.acting.contains(&person.id) {
            // Disabled, or a viewer: a page they could not act on would only mislead.
            cannot_act.push(json!({ "name": person.name }));
            continue;
        }
        // Asked for by hand, a restricted incident reaches only people it is kept to (its
        // escalation's pages are the one exception, as its README section says).
        let seen_by = crate::incident_ref::domain::SeenBy::person(person.id);
        if request.is_some()
            && !crate::incident_ref::db::visible(&mut *conn, about.incident_id, seen_by).await?
        {
            cannot_see.push(json!({ "name": person.name }));
            continue;
        }
        let nonce = Uuid::new_v4();
        let accepts = request.filter(|r| r.accepts).map(|r| r.id);
        db::insert_link(
            &mut *conn,
            (nonce, about.incident_id, accepts),
            person.id,
            ACK_LINK_HOURS,
        )
        .await?;
        let token = ack_token(&world.key, about.key, nonce);
        // A responder's link accepts their request (`accept_path`, so nothing that posts an
        // `ack_url` to acknowledge mistakes it for one); any other acknowledges the incident.
        let link = match accepts {
            Some(_) => json!({
                "person": person.handle,
                "accept_path": format!("/incidents/{}/respond/{token}", about.key),
            }),
            None => json!({
                "person": person.handle,
                "ack_path": format!("/incidents/{}/ack/{token}", about.key),
            }),
        };
        let to = (person.id, request.map(|r| r.id));
        let queued = crate::notify::actions::page_person(&mut *conn, to, about, what, link).await?;
        if queued.is_empty() {
            unreachable.push(json!({ "name": person.name }));
        } else {
            reached.push((person.id, via_schedule.clone()));
            people.push(json!({
                "name": person.name,
                "schedule": via_schedule,
                "via": queued,
            }));
        }
    }
    Ok(Reached {
        details: json!({
            "people": people,
            "channels": channels,
            "unreachable": unreachable,
            "cannot_act": cannot_act,
            "cannot_see": cannot_see,
            "empty_schedules": empty_schedules,
        }),
        people: reached,
    })
}
