//! The escalation engine: every replica runs it. It takes due escalations with `FOR UPDATE SKIP
//! LOCKED` and, in one transaction per batch, fires each one's step — resolves its targets at
//! that instant (a schedule's on-call person, a person, a channel), queues each person's pages by
//! their rules with a signed single-use acknowledge link, writes the timeline entry — and moves
//! it to the next step or ends it. `escalation_steps` records each (round, step) once, so a
//! step never fires twice; a replica that dies mid-batch rolls back and another fires it.

use serde_json::json;
use sqlx::{PgConnection, PgPool};
use std::time::Duration;

use super::actions::{World, page_targets};
use super::db::{self, Due};
use super::domain::{Position, next};
use crate::engine::{Waker, wait_for};
use crate::error::{AppError, AppResult};
use crate::notify::actions::About;
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
    crate::metrics::late("escalation", due.iter().map(|d| d.late_secs));
    let world = World::read(&mut tx).await?;
    for d in &due {
        fire(&mut tx, &world, d).await?;
    }
    tx.commit().await?;
    Ok(due.len())
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
        let mut details = page_targets(conn, world, (&about, &what), &step.targets, None)
            .await?
            .details;
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
