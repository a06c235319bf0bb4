//! When a silence ends, the alerts it held that still fire are judged again at once — routed,
//! opening or joining incidents and paging as they would have — rather than at their sender's
//! next resend (Alertmanager's `repeat_interval` is four hours by default). Every replica runs
//! it; a silence is handed back once (`silences.released_at`, claimed `SKIP LOCKED`), woken by
//! `quell_silences` when silences change or by the next end.

use std::time::Duration;

use sqlx::PgPool;

use crate::error::AppResult;

pub const CHANNEL: &str = "quell_silences";

/// How often the engine looks when it heard nothing.
const POLL: Duration = Duration::from_secs(5);

pub async fn run(pool: PgPool) {
    let what = "could not hand back the alerts of ended silences";
    crate::engine::rounds(pool, CHANNEL, POLL, what, |pool| async move {
        hand_back(&pool).await
    })
    .await
}

/// Hands back the held alerts of ended silences in one transaction; returns the seconds until
/// the next end (zero when more ended silences wait).
pub async fn hand_back(pool: &PgPool) -> AppResult<Option<f64>> {
    const BATCH: i64 = 20;
    let mut tx = crate::transaction::begin(pool).await?;
    let released = crate::silences::actions::hand_back(&mut tx, BATCH).await?;
    if !released.is_empty() {
        let now = crate::clock::now(&mut *tx).await?;
        super::windows::judge_again(&mut tx, released, now).await?;
        tx.commit().await?;
        return Ok(Some(0.0));
    }
    let next = crate::silences::actions::next_end(&mut *tx).await?;
    tx.commit().await?;
    // Overdue but not claimed here: another replica is handing it back; look again in a while
    // rather than at once.
    Ok(next.map(|secs| if secs <= 0.0 { 1.0 } else { secs }))
}
