//! Starting transactions that a cancelled request cannot leave open, and running again the ones
//! PostgreSQL broke off to end a deadlock.
//!
//! sqlx 0.8's `Pool::begin` is not cancel-safe on PostgreSQL (transact-rs/sqlx #4385, #4393;
//! the fix, #4394, is in no release yet): it sends `BEGIN` and counts the transaction only once
//! the answer is back, so a future dropped in between — a client that disconnects, a request
//! timeout — returns the connection to the pool inside a transaction nothing will end. The next
//! borrower's statements then run inside it, hold its locks, and are lost when the connection
//! closes, though they were answered 2xx. [`begin`] runs `BEGIN` in a task of its own: however
//! the caller is cancelled, the task sees the answer, the transaction is counted, and dropping it
//! (unused) queues its `ROLLBACK`, which the pool sends as the connection comes back.
//! `tests/it/architecture.rs` keeps every other way of starting a transaction out of `src/`, but
//! for the engines that keep a connection of their own and are never cancelled mid-write.

use sqlx::{PgConnection, PgPool, Postgres};

use crate::error::{AppError, AppResult};

/// A transaction on a pooled connection.
pub type Tx = sqlx::Transaction<'static, Postgres>;

/// Begins a transaction on a connection from `pool`; cancel-safe (see the module's text).
pub async fn begin(pool: &PgPool) -> Result<Tx, sqlx::Error> {
    let pool = pool.clone();
    let start = std::time::Instant::now();
    let begun = match tokio::spawn(async move { pool.begin().await }).await {
        Ok(begun) => begun,
        // The task panicked or the runtime is going away: nothing was begun that can be used.
        Err(_) => Err(sqlx::Error::WorkerCrashed),
    };
    crate::metrics::get()
        .begin_wait
        .observe(crate::metrics::since(start));
    begun
}

/// One try of a change, as [`write`] runs it: a future borrowing the transaction for `'t`.
pub type Attempt<'t, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = AppResult<T>> + Send + 't>>;

/// Tells the compiler that what a try borrows from its caller (`'a`) outlives the try's hold
/// on the transaction (`'t`); the try ignores it.
pub type Within<'t, 'a> = std::marker::PhantomData<&'t &'a ()>;

/// How many times [`write`] tries a change PostgreSQL broke off.
const TRIES: usize = 3;

/// Runs `change` in a transaction of its own and commits it; a try PostgreSQL broke off to end
/// a deadlock (or a serialization failure) is rolled back and run again, up to three times. For
/// changes that lock rows the background engines also lock (an incident and its timers): the
/// engines take their locks in the same order as people's changes, so this is a second line.
pub async fn write<'a, T, F>(pool: &PgPool, mut change: F) -> AppResult<T>
where
    F: for<'t> FnMut(&'t mut PgConnection, Within<'t, 'a>) -> Attempt<'t, T>,
{
    let mut tried = 0;
    loop {
        tried += 1;
        let mut tx = begin(pool).await?;
        let done = match change(&mut tx, std::marker::PhantomData).await {
            Ok(value) => tx.commit().await.map(|()| value).map_err(AppError::from),
            Err(e) => Err(e),
        };
        match done {
            Err(e) if tried < TRIES && e.is_retryable() => {
                tracing::info!(error = %e, tried, "a change was broken off; trying it again");
            }
            other => return other,
        }
    }
}
