//! Flapping alerts settling, on time in every replica: a flapping key that resolved settles
//! once it has stayed resolved for its integration's settle time (`alert_flapping
//! .settle_due_at`, claimed `SKIP LOCKED` after its incident is locked, so one replica settles
//! it). The incident then gets what its integration asks for once all its alerts have
//! resolved, if none is open or flapping still. Woken by `quell_flapping` and the next due time.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::json;
use sqlx::PgPool;

use super::effects::{after_all_resolved, all_resolved_of};
use crate::audit::Actor;
use crate::error::AppResult;
use crate::integrations::domain::OnAllResolved;
use crate::timeline::{self, db::NewEvent, domain::Kind};

pub const CHANNEL: &str = "quell_flapping";

const POLL: Duration = Duration::from_secs(5);

pub async fn run(pool: PgPool) {
    let what = "could not settle flapping alerts";
    crate::engine::rounds(pool, CHANNEL, POLL, what, |pool| async move {
        settle_due(&pool).await
    })
    .await
}

/// Settles the flapping keys due now, in one transaction; returns the seconds until the next.
pub async fn settle_due(pool: &PgPool) -> AppResult<Option<f64>> {
    use crate::alert_store::db;
    let mut tx = crate::transaction::begin(pool).await?;
    // The incident first, then what hangs off it: the order every change to an incident keeps.
    let incidents = db::settling_incidents(&mut tx, 20).await?;
    crate::incidents::db::lock_incidents(&mut tx, &incidents).await?;
    let settled = db::settle(&mut tx, &incidents).await?;
    if settled.is_empty() {
        let next = db::next_settle(&mut *tx).await?;
        tx.commit().await?;
        return Ok(next.map(|secs| if secs <= 0.0 { 1.0 } else { secs }));
    }
    let now = crate::clock::now(&mut *tx).await?;
    let mut how: HashMap<i64, (Actor, OnAllResolved)> = HashMap::new();
    for s in &settled {
        let actor = Actor::system(&format!("{} (alerts)", s.integration));
        let body = format!(
            "Alert \"{}\" stopped flapping: it has stayed resolved for {} min ({} fires since \
             {} UTC)",
            crate::domain::shorten(&s.summary, 200),
            s.settle_minutes,
            s.fires,
            s.since.format("%H:%M")
        );
        let details = json!({ "settled": true, "fires": s.fires, "integration": s.integration });
        timeline::actions::record(
            &mut tx,
            NewEvent::by(&actor.name, s.incident_id, now, Kind::Note, details).saying(&body),
        )
        .await?;
        let on = OnAllResolved::parse(&s.on_all_resolved)?;
        how.insert(s.incident_id, (actor, on));
    }
    let touched: Vec<i64> = how.keys().copied().collect();
    let quiet: Vec<(i64, Actor, OnAllResolved)> = all_resolved_of(&mut tx, &touched)
        .await?
        .into_iter()
        .filter_map(|id| how.remove(&id).map(|(a, on)| (id, a, on)))
        .collect();
    let note = "Every alert of this incident has resolved, and its flapping alerts have settled";
    after_all_resolved(&mut tx, &quiet, note, now).await?;
    tx.commit().await?;
    Ok(Some(0.0))
}
