//! Keeps the report figures current: every replica looks every 15 s whether the incidents
//! changed since the figures were computed and, one at a time, computes them again. A read of
//! a report is then a few rows whatever the size of the history. Computing them takes seconds
//! on years of history, so after a refresh the next look waits twenty times as long as it
//! took: while incidents keep changing (a burst of new ones), the figures cost PostgreSQL at
//! most a twentieth of a core, and the reports say how old they are.

use sqlx::PgPool;
use std::time::{Duration, Instant};

use super::db;

const EVERY: Duration = Duration::from_secs(15);

/// How long to wait before looking again after a refresh that took `took`.
fn after_refresh(took: Duration) -> Duration {
    EVERY.max(took.saturating_mul(20))
}

pub async fn run(pool: PgPool) {
    let mut wait = EVERY;
    loop {
        tokio::time::sleep(wait).await;
        let began = Instant::now();
        wait = match db::refresh(&pool, false).await {
            Ok(true) => {
                tracing::debug!("report figures computed again");
                after_refresh(began.elapsed())
            }
            Ok(false) => EVERY,
            Err(e) => {
                tracing::warn!(error = %e, "could not refresh the report figures");
                EVERY
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_refresh_is_not_repeated_soon() {
        assert_eq!(after_refresh(Duration::from_millis(40)), EVERY);
        assert_eq!(
            after_refresh(Duration::from_secs(3)),
            Duration::from_secs(60)
        );
    }
}
