//! When a silence ends, the alerts it held that still fire are judged again at once — routed,
//! opening or joining incidents and paging as they would have — rather than at their sender's
//! next resend (Alertmanager's `repeat_interval` is four hours by default). Every replica runs
//! it; a silence is handed back once (`silences.released_at`, claimed `SKIP LOCKED`), woken by
//! `quell_silences` when silences change or by the next end.

use std::collections::HashMap;
use std::time::Duration;

use sqlx::PgPool;

use super::domain::{Action, AlertEvent};
use super::effects::{Entry, Judges, apply, runs};
use crate::engine::{Waker, wait_for};
use crate::error::AppResult;

pub const CHANNEL: &str = "quell_silences";

/// How often the engine looks when it heard nothing.
const POLL: Duration = Duration::from_secs(5);

pub async fn run(pool: PgPool) {
    let mut waker = Waker::listen(&pool, CHANNEL).await;
    let silences = crate::silences::actions::Compiled::default();
    loop {
        let next = match hand_back(&pool, &silences).await {
            Ok(next) => next,
            Err(e) => {
                tracing::warn!(error = %e, "could not hand back the alerts of ended silences");
                None
            }
        };
        waker.sleep(wait_for(next, POLL)).await;
    }
}

/// Hands back the held alerts of ended silences in one transaction; returns the seconds until
/// the next end (zero when more ended silences wait).
pub async fn hand_back(
    pool: &PgPool,
    silences: &crate::silences::actions::Compiled,
) -> AppResult<Option<f64>> {
    const BATCH: i64 = 20;
    let mut tx = crate::transaction::begin(pool).await?;
    let released = crate::silences::actions::hand_back(&mut tx, BATCH).await?;
    if !released.is_empty() {
        let now = crate::clock::now(&mut *tx).await?;
        let mut ids: Vec<uuid::Uuid> = released.iter().map(|r| r.integration_id).collect();
        ids.sort_unstable();
        ids.dedup();
        let creds: HashMap<uuid::Uuid, crate::integrations::db::Credentials> =
            crate::integrations::db::credentials(&mut *tx, &ids, &[])
                .await?
                .into_iter()
                .map(|c| (c.id, c))
                .collect();
        let senders: Vec<uuid::Uuid> = released.iter().map(|r| r.integration_id).collect();
        let events: Vec<AlertEvent> = released
            .into_iter()
            .map(|r| AlertEvent {
                action: Action::Trigger,
                dedup_key: r.dedup_key,
                group_key: r.group_key,
                summary: r.summary,
                source: r.source,
                severity: r.severity,
                labels: r.labels,
                details: r.details,
                source_url: None,
                starts_at: None,
                raw: r.raw,
            })
            .collect();
        let entries: Vec<Entry> = events
            .iter()
            .zip(&senders)
            .filter_map(|(e, id)| creds.get(id).map(|c| (c, e)))
            .collect();
        let records = crate::routing::db::list(&mut *tx).await?;
        let rules = crate::routing::db::compile_all(&records);
        let set = silences.current(&mut tx).await?;
        let judges = Judges {
            rules: &rules,
            silences: &set,
        };
        for run in runs(&entries) {
            apply(&mut tx, &run, judges, now).await?;
        }
        tx.commit().await?;
        return Ok(Some(0.0));
    }
    let next = crate::silences::actions::next_end(&mut *tx).await?;
    tx.commit().await?;
    Ok(next)
}
