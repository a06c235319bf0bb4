//! Snoozes ending, on time in every replica: a snoozed incident's end is a row
//! (`incident_snoozes.until`); the engine locks the incidents of due ones (the incident first,
//! as every change does), claims the snoozes `SKIP LOCKED` so one replica wakes each, and puts
//! an incident still acknowledged back to triggered — its escalation starts again from the
//! first step. One mitigated or resolved meanwhile stays as it is, with a line on its timeline.
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

/// Ends the snoozes due now, in one transaction; returns the seconds until the next.
pub async fn wake_due(pool: &PgPool) -> AppResult<Option<f64>> {
    let mut tx = crate::transaction::begin(pool).await?;
    let due = db::snoozes_due(&mut tx, 20).await?;
    db::lock_incidents(&mut tx, &due).await?;
    let ended = db::end_snoozes(&mut tx, &due).await?;
    if ended.is_empty() {
        let next = db::next_snooze(&mut *tx).await?;
        tx.commit().await?;
        return Ok(next.map(|secs| if secs <= 0.0 { 1.0 } else { secs }));
    }
    let now = crate::clock::now(&mut *tx).await?;
    let actor = Actor::system("snooze");
    for state in db::incident_states(&mut tx, &ended).await? {
        if state.status == Status::Acknowledged {
            let change = Change::now(state.key, &actor).on_clock(now);
            let why = "the snooze ended and the incident is still acknowledged: back to \
                       triggered, paging again";
            step_back(&mut tx, &change, Status::Triggered, why).await?;
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
    Ok(Some(0.0))
}
