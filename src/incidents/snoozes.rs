//! Snoozes ending, on time in every replica: a snoozed incident's end is a row
//! (`incident_snoozes.until`); the engine locks the incidents of due ones (the incident first,
//! as every change does), claims the snoozes `SKIP LOCKED` so one replica wakes each, and puts
//! an incident still acknowledged back to triggered — its escalation starts again from the
//! first step, and it keeps its first acknowledgement. A snooze ends with its incident's
//! mitigation, resolution or a person's "End snooze", so the engine rarely finds one moved on.
//! Woken by `quell_snoozes` and by the next end.

use std::time::Duration;

use serde_json::json;
use sqlx::PgPool;

use super::actions::{Change, step_back};
use super::db;
use super::domain::Status;
use crate::audit::Actor;
use crate::error::AppResult;
use crate::timeline::{self, db::NewEvent, domain::Kind};

pub const CHANNEL: &str = "quell_snoozes";

const POLL: Duration = Duration::from_secs(5);

pub async fn run(pool: PgPool) {
    let what = "could not end snoozes";
    crate::engine::rounds(pool, CHANNEL, POLL, what, |pool| async move {
        wake_due(&pool).await
    })
    .await
}

/// Ends the snoozes due now, each in a transaction of its own (one that fails is tried again a
/// minute on and holds back none of the others); returns the seconds until the next.
pub async fn wake_due(pool: &PgPool) -> AppResult<Option<f64>> {
    let due = db::snoozes_due(&mut *pool.acquire().await?, 20).await?;
    let mut woke = false;
    for id in due {
        match wake(pool, id).await {
            Ok(done) => woke |= done,
            Err(e) => {
                tracing::error!(incident_id = id, error = %e, "could not end a snooze; trying again in a minute");
                db::postpone_snooze(pool, id).await?;
            }
        }
    }
    if woke {
        return Ok(Some(0.0));
    }
    let next = db::next_snooze(pool).await?;
    // Overdue but not ours: another replica has it; look again in a while.
    Ok(next.map(|secs| if secs <= 0.0 { 1.0 } else { secs }))
}

/// Ends one incident's due snooze, if no other replica did first: the incident is locked
/// first (as every change locks it), then the snooze claimed `SKIP LOCKED`.
async fn wake(pool: &PgPool, incident_id: i64) -> AppResult<bool> {
    let mut tx = crate::transaction::begin(pool).await?;
    db::lock_incidents(&mut tx, &[incident_id]).await?;
    if db::end_snoozes(&mut tx, &[incident_id]).await?.is_empty() {
        tx.commit().await?;
        return Ok(false);
    }
    let now = crate::clock::now(&mut *tx).await?;
    let actor = Actor::system("snooze");
    for state in db::incident_states(&mut tx, &[incident_id]).await? {
        if state.status == Status::Acknowledged {
            let change = Change::now(state.key, &actor).on_clock(now);
            let why = "The snooze ended and the incident is still acknowledged: back to triggered";
            step_back(&mut tx, &change, Status::Triggered, why).await?;
            let paging = crate::paging::db::escalation(&mut *tx, state.id).await?;
            if paging.is_none_or(|e| e.state != "pending") {
                let body = "Nobody is paged: its service has no escalation policy";
                let details = json!({ "snooze_ended": true });
                timeline::actions::record(
                    &mut tx,
                    NewEvent::by(&actor.name, state.id, now, Kind::Note, details).saying(body),
                )
                .await?;
            }
        } else {
            let body = format!(
                "The snooze ended; the incident is {}, so nobody is paged",
                state.status
            );
            let details = json!({ "snooze_ended": true });
            timeline::actions::record(
                &mut tx,
                NewEvent::by(&actor.name, state.id, now, Kind::Note, details).saying(&body),
            )
            .await?;
        }
    }
    tx.commit().await?;
    Ok(true)
}
