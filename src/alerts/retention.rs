//! Alert retention, in every replica: once an hour (and at start) the months of alerts are
//! created three ahead, and the months of alerts resolved more than `QUELL_ALERT_RETENTION_DAYS`
//! ago are let go (each month partition dropped whole once it ended that long ago, after what
//! its alerts counted is added to their incidents' forgotten lines). Replicas racing take turns
//! on one advisory lock in the database, so each month is created and dropped once. Alerts
//! still open are never let go, and an incident keeps its alert lines and their counts.

use std::time::Duration;

use sqlx::PgPool;

use crate::alert_store::db;
use crate::error::AppResult;

/// Months of partitions kept ready after this one.
pub const AHEAD: i32 = 3;

const EVERY: Duration = Duration::from_secs(3600);

/// What one round did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Round {
    pub created: i32,
    pub dropped: Vec<String>,
}

/// `days`: let alerts go that many days after they resolved; `None` keeps them forever.
pub async fn run(pool: PgPool, days: Option<i32>) {
    let mut every = tokio::time::interval(EVERY);
    loop {
        every.tick().await;
        match round(&pool, days).await {
            Ok(r) if r.created > 0 || !r.dropped.is_empty() => {
                tracing::info!(created = r.created, dropped = ?r.dropped, "alert months");
            }
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "could not keep the alert months"),
        }
    }
}

/// Most months let go in one round: ten years of them.
const MONTHS_A_ROUND: usize = 120;

/// Creates the months missing ahead, then lets go of those past retention, oldest first, each
/// in a transaction of its own.
pub async fn round(pool: &PgPool, days: Option<i32>) -> AppResult<Round> {
    let created = db::cover_ahead(pool, AHEAD).await?;
    let mut dropped = Vec::new();
    if let Some(days) = days {
        while dropped.len() < MONTHS_A_ROUND {
            match db::let_go_oldest(pool, days).await? {
                Some(month) => dropped.push(month),
                None => break,
            }
        }
    }
    Ok(Round { created, dropped })
}
