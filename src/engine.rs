//! How the background engines (SLA timers, escalation, the notification sender) wait between
//! rounds: until their next deadline, or until a transaction wakes them with `NOTIFY` on their
//! channel, or the poll interval as a safety net for a missed notification, whichever comes
//! first; and how they are kept running. Every replica runs each engine; the waiting is all they
//! share.

use sqlx::PgPool;
use sqlx::postgres::PgListener;
use std::future::Future;
use std::time::Duration;

/// Runs a background engine for as long as the process runs: started again a second after it
/// ends or panics (the panic is logged), so one bad row cannot stop a replica's timers, paging
/// or messages for good. Aborting the handle stops the engine too.
pub fn supervise<F, Fut>(name: &'static str, start: F) -> tokio::task::JoinHandle<()>
where
    F: Fn() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    supervise_after(Duration::from_secs(1), name, start)
}

fn supervise_after<F, Fut>(
    pause: Duration,
    name: &'static str,
    start: F,
) -> tokio::task::JoinHandle<()>
where
    F: Fn() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    /// The running engine, aborted when its supervisor is.
    struct Running(tokio::task::JoinHandle<()>);
    impl Drop for Running {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    tokio::spawn(async move {
        loop {
            let mut running = Running(tokio::spawn(start()));
            match (&mut running.0).await {
                Ok(()) => tracing::warn!(engine = name, "engine stopped; starting it again"),
                Err(e) if e.is_panic() => {
                    tracing::error!(engine = name, "engine panicked; starting it again")
                }
                Err(_) => return,
            }
            tokio::time::sleep(pause).await;
        }
    })
}

/// A `LISTEN` connection of its own, outside `pool`: a listener holds its connection for as
/// long as it runs, and taken from the serving pool, the engines' and the live pages' listeners
/// left a small pool nothing for requests (with `QUELL_DB_MAX_CONNECTIONS=5`, every request
/// answered 503 once a live page opened). It connects as `pool` does, and again after a loss.
pub async fn listener(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let own = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .min_connections(0)
        .idle_timeout(None)
        .max_lifetime(None)
        .acquire_timeout(Duration::from_secs(5))
        .connect_lazy_with((*pool.connect_options()).clone());
    PgListener::connect_with(&own).await
}

/// An engine's ear on its `NOTIFY` channel; without one (the listen failed) it only polls.
pub struct Waker {
    listener: Option<PgListener>,
    channel: &'static str,
}

impl Waker {
    pub async fn listen(pool: &PgPool, channel: &'static str) -> Self {
        let listener = match listener(pool).await {
            Ok(mut l) => match l.listen(channel).await {
                Ok(()) => Some(l),
                Err(e) => {
                    tracing::warn!(channel, error = %e, "engine cannot listen; polling only");
                    None
                }
            },
            Err(e) => {
                tracing::warn!(channel, error = %e, "engine cannot listen; polling only");
                None
            }
        };
        Self { listener, channel }
    }

    /// Sleeps for `wait`, or less when woken.
    pub async fn sleep(&mut self, wait: Duration) {
        let channel = self.channel;
        match self.listener.as_mut() {
            Some(l) => {
                tokio::select! {
                    r = l.recv() => if let Err(e) = r {
                        tracing::warn!(channel, error = %e, "engine notifications interrupted");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    },
                    _ = tokio::time::sleep(wait) => {}
                }
            }
            None => tokio::time::sleep(wait).await,
        }
    }
}

/// The loop of an engine whose round returns the seconds until its next deadline: a round,
/// then a sleep until that deadline, a `NOTIFY` on `channel` or `poll`, whichever comes first.
/// A failed round is logged with `what` went wrong and waits `poll`.
pub async fn rounds<F, Fut, E>(
    pool: PgPool,
    channel: &'static str,
    poll: Duration,
    what: &'static str,
    round: F,
) where
    F: Fn(PgPool) -> Fut,
    Fut: std::future::Future<Output = Result<Option<f64>, E>>,
    E: std::fmt::Display,
{
    let mut waker = Waker::listen(&pool, channel).await;
    loop {
        let next = match round(pool.clone()).await {
            Ok(next) => next,
            Err(e) => {
                tracing::warn!(error = %e, "{what}");
                None
            }
        };
        waker.sleep(wait_for(next, poll)).await;
    }
}

/// How long to wait given the seconds until the next deadline (none known: `poll`), never
/// longer than `poll` nor below zero.
pub fn wait_for(next_due_in: Option<f64>, poll: Duration) -> Duration {
    match next_due_in {
        Some(secs) => Duration::from_secs_f64(secs.clamp(0.0, poll.as_secs_f64())),
        None => poll,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_until_the_next_deadline_within_the_poll_interval() {
        let poll = Duration::from_secs(5);
        assert_eq!(wait_for(None, poll), poll);
        assert_eq!(wait_for(Some(1.5), poll), Duration::from_millis(1500));
        assert_eq!(wait_for(Some(-3.0), poll), Duration::ZERO);
        assert_eq!(wait_for(Some(3600.0), poll), poll);
    }

    /// An engine that panics is started again; aborting the supervisor stops it.
    #[tokio::test]
    async fn a_panicking_engine_is_started_again() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let starts = Arc::new(AtomicUsize::new(0));
        let counted = starts.clone();
        let pause = Duration::from_millis(20);
        let handle = supervise_after(pause, "test", move || {
            let starts = counted.clone();
            async move {
                if starts.fetch_add(1, Ordering::SeqCst) < 2 {
                    panic!("a bad row");
                }
                std::future::pending::<()>().await;
            }
        });
        // Waits on the starts, not on a clock: at most 10 s.
        for _ in 0..500 {
            if starts.load(Ordering::SeqCst) >= 3 {
                break;
            }
            tokio::time::sleep(pause).await;
        }
        assert_eq!(
            starts.load(Ordering::SeqCst),
            3,
            "twice panicked, then running"
        );
        handle.abort();
        let _ = handle.await;
        tokio::time::sleep(pause * 5).await;
        assert_eq!(
            starts.load(Ordering::SeqCst),
            3,
            "stopped with its supervisor"
        );
    }
}
