//! The engine that pages a policy request's next step when nobody it paged has accepted in the
//! step's delay. Every replica runs it: due requests are taken `FOR UPDATE SKIP LOCKED` after
//! their incidents' key-share locks (the order people's changes lock them in), and a request's
//! next step moves in the transaction that pages it, so each step pages once.

use sqlx::PgPool;
use std::time::Duration;

use super::{actions, db};
use crate::error::AppResult;
use crate::paging::actions::World;

pub const CHANNEL: &str = "quell_responders";

/// Pages up to `batch` due steps in one transaction; returns how many.
pub async fn fire_due(pool: &PgPool, batch: i64) -> AppResult<usize> {
    let mut tx = crate::transaction::begin(pool).await?;
    let incidents = db::due_incidents(&mut *tx, batch).await?;
    if incidents.is_empty() {
        return Ok(0);
    }
    let locked = crate::incident_ref::db::share(&mut tx, &incidents).await?;
    let due = db::claim_due(&mut *tx, &locked).await?;
    if due.is_empty() {
        return Ok(0);
    }
    let world = World::read(&mut tx).await?;
    for d in &due {
        actions::fire(&mut tx, &world, d).await?;
    }
    tx.commit().await?;
    Ok(due.len())
}

const POLL: Duration = Duration::from_secs(5);
const BATCH: i64 = 100;

/// The loop of one replica: page what is due, then sleep until the next step is due, a request
/// is made (`quell_responders`), or the poll interval.
pub async fn run(pool: PgPool) {
    let what = "could not page responder requests' next steps";
    crate::engine::rounds(pool, CHANNEL, POLL, what, |pool| async move {
        while fire_due(&pool, BATCH).await? as i64 == BATCH {}
        db::next_due_in(&pool).await
    })
    .await
}
