//! Keeps the report figures current: every replica looks every 15 s whether the incidents
//! changed since the figures were computed and, one at a time, computes them again. A read of
//! a report is then a few rows whatever the size of the history.

use sqlx::PgPool;
use std::time::Duration;

use super::db;

const EVERY: Duration = Duration::from_secs(15);

pub async fn run(pool: PgPool) {
    let mut every = tokio::time::interval(EVERY);
    loop {
        every.tick().await;
        match db::refresh(&pool, false).await {
            Ok(true) => tracing::debug!("report figures computed again"),
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "could not refresh the report figures"),
        }
    }
}
