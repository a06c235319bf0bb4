//! The escalation engine: every replica runs it. It takes due escalations with `FOR UPDATE SKIP
//! LOCKED` and, in one transaction per batch, fires each one's step — resolves its targets at
//! that instant (a schedule's on-call person, a person, a channel), queues each person's pages by
//! their rules with a signed single-use acknowledge link, writes the timeline entry — and moves
//! it to the next step or ends it. `escalation_steps` records each (round, step) once, so a
//! step never fires twice; a replica that dies mid-batch rolls back and another fires it.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::{PgConnection, PgPool};
use std::time::Duration;
use uuid::Uuid;

use super::actions::ack_key;
use super::db::{self, Due};
use super::domain::{ACK_LINK_HOURS, Position, Target, ack_token, next};
use crate::engine::{Waker, wait_for};
use crate::error::{AppError, AppResult};
use crate::notify::{self, actions::About};
use crate::timeline::{self, db::NewEvent, domain::Kind};

pub const CHANNEL: &str = "quell_paging";

/// Fires up to `batch` due steps in one transaction; returns how many fired.
pub async fn fire_due(pool: &PgPool, batch: i64) -> AppResult<usize> {
    let mut tx = crate::transaction::begin(pool).await?;
    // The incidents first, then their escalations: the order people's changes lock them in.
    let incidents = db::due_incidents(&mut *tx, batch).await?;
    if incidents.is_empty() {
        return Ok(0);
    }
    let locked = crate::incident_ref::db::share(&mut tx, &incidents).await?;
    let due = db::claim_due(&mut *tx, &locked).await?;
    if due.is_empty() {
        return Ok(0);
    }
    let people = crate::people::db::list(&mut *tx).await?;
    let ids: Vec<i64> = people.iter().map(|p| p.id).collect();
    let world = World {
        key: ack_key(&mut tx).await?,
        now: crate::clock::now(&mut *tx).await?,
        schedules: crate::oncall::db::list(&mut *tx, None).await?,
        channels: crate::notify::db::channels(&mut *tx).await?,
        acting: crate::people::db::can_acknowledge(&mut *tx, &ids).await?,
        people,
    };
    for d in &due {
        fire(&mut tx, &world, d).await?;
    }
    tx.commit().await?;
    Ok(due.len())
}

/// What a batch's steps are resolved against, read once per batch: the signing key, the
/// transaction's clock, and the schedules, channels and people targets name.
struct World {
    key: Vec<u8>,
    now: DateTime<Utc>,
    schedules: Vec<crate::oncall::db::StoredSchedule>,
    channels: Vec<crate::notify::db::Channel>,
    people: Vec<crate::people::db::Person>,
    /// Those of `people` who may acknowledge now: nobody else is paged.
    acting: std::collections::HashSet<i64>,
}

async fn fire(conn: &mut PgConnection, world: &World, d: &Due) -> AppResult<()> {
    let i = crate::incident_ref::db::by_id(&mut *conn, d.incident_id)
        .await?
        .ok_or_else(|| AppError::Internal("a paged incident vanished".into()))?;
    if i.status != "triggered" {
        // Acknowledged without the escalation being stopped (should not happen): stop quietly.
        db::stop(&mut *conn, d.incident_id).await?;
        return Ok(());
    }
    let steps = &d.steps.0;
    let at = Position {
        step: d.step.max(0) as usize,
        round: d.round.max(0) as u32,
    };
    let Some(step) = steps.get(at.step) else {
        // Past the last step, its wait over, and nobody acknowledged.
        db::advance(&mut *conn, d.incident_id, None, 0).await?;
        let details = json!({ "action": "exhausted", "policy": d.policy_name });
        timeline::actions::record(
            conn,
            NewEvent::by_quell(d.incident_id, world.now, Kind::Escalation, details),
        )
        .await?;
        return Ok(());
    };
    if db::log_step(&mut *conn, d.incident_id, d.round, d.step).await? {
        let key_text = i.key.to_string();
        let bridge = crate::bridge::db::of_incident(&mut *conn, d.incident_id).await?;
        let about = About {
            incident_id: d.incident_id,
            key: &key_text,
            title: &i.title,
            severity: i.severity.as_str(),
            service: i.service.as_deref(),
            bridge: &bridge,
        };
        let what = format!(
            "you are paged (step {} of {}, {})",
            at.step + 1,
            steps.len(),
            d.policy_name
        );
        let mut details = page_targets(conn, world, &about, &what, &step.targets).await?;
        if let Some(o) = details.as_object_mut() {
            o.insert("step".into(), json!(at.step + 1));
            o.insert("of".into(), json!(steps.len()));
            o.insert("round".into(), json!(at.round));
            o.insert("policy".into(), json!(d.policy_name));
        }
        timeline::actions::record(
            &mut *conn,
            NewEvent::by_quell(d.incident_id, world.now, Kind::Paged, details),
        )
        .await?;
    }
    // The next step, or the end marker past the last one (so the last step gets its wait too).
    let n = next(at, steps.len(), d.repeat.max(0) as u32).unwrap_or(Position {
        step: steps.len(),
        round: at.round,
    });
    db::advance(
        conn,
        d.incident_id,
        Some((n.step as i32, n.round as i32)),
        step.delay_minutes as i32,
    )
    .await
}

/// Pages everyone `targets` names now; returns what the timeline keeps of it: who was paged and
/// how, which channels were told, who could not be reached, who was not paged because they
/// cannot acknowledge now, which schedules had nobody.
async fn page_targets(
    conn: &mut PgConnection,
    world: &World,
    about: &About<'_>,
    what: &str,
    targets: &[Target],
) -> AppResult<Value> {
    let mut handles: Vec<(String, Option<String>)> = Vec::new();
    let mut channels = Vec::new();
    let mut empty_schedules = Vec::new();
    for t in targets {
        match t {
            Target::Person(h) => handles.push((h.clone(), None)),
            Target::Schedule(name) => {
                let on_call = match world.schedules.iter().find(|s| &s.name == name) {
                    Some(s) => crate::oncall::actions::rules(s)?.on_call(world.now),
                    None => None,
                };
                match on_call {
                    Some(h) => handles.push((h, Some(name.clone()))),
                    None => empty_schedules.push(json!({ "name": name })),
                }
            }
            Target::Channel(name) => {
                let channel = world.channels.iter().find(|c| &c.name == name && c.enabled);
                if let Some(c) = channel {
                    notify::actions::page_channel(&mut *conn, c.id, about, what).await?;
                    channels.push(json!({ "name": c.name }));
                }
            }
        }
    }
    let mut people = Vec::new();
    let mut unreachable = Vec::new();
    let mut cannot_act = Vec::new();
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
        let nonce = Uuid::new_v4();
        db::insert_link(
            &mut *conn,
            nonce,
            about.incident_id,
            person.id,
            ACK_LINK_HOURS,
        )
        .await?;
        let token = ack_token(&world.key, about.key, nonce);
        let link = json!({
            "person": person.handle,
            "ack_path": format!("/incidents/{}/ack/{token}", about.key),
        });
        let queued = notify::actions::page_person(&mut *conn, person.id, about, what, link).await?;
        if queued.is_empty() {
            unreachable.push(json!({ "name": person.name }));
        } else {
            people.push(json!({
                "name": person.name,
                "schedule": via_schedule,
                "via": queued,
            }));
        }
    }
    Ok(json!({
        "people": people,
        "channels": channels,
        "unreachable": unreachable,
        "cannot_act": cannot_act,
        "empty_schedules": empty_schedules,
    }))
}

/// The longest the engine sleeps without a notification: a safety net for missed ones.
const POLL: Duration = Duration::from_secs(5);
const BATCH: i64 = 200;

/// The engine loop of one replica: fire what is due, then sleep until the next step is due, an
/// incident starts paging (`quell_paging`), or the poll interval, whichever comes first.
pub async fn run(pool: PgPool) {
    let mut waker = Waker::listen(&pool, CHANNEL).await;
    loop {
        match fire_due(&pool, BATCH).await {
            Ok(n) if n as i64 == BATCH => continue,
            Ok(n) if n > 0 => tracing::info!(fired = n, "escalation steps fired"),
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "escalation engine failed; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        }
        waker
            .sleep(wait_for(db::next_due_in(&pool).await.ok().flatten(), POLL))
            .await;
    }
}
