//! Each replica's hub: one `LISTEN quell_live` connection whose entries are read once and handed
//! to every stream this replica serves, the streams it holds open, and a keeper that renews
//! their leases, forgets rows of this replica no stream holds, and closes streams whose session
//! ended. Started by the first stream, so a replica nobody watches holds no listening
//! connection.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::PgListener;
use tokio::sync::{OnceCell, broadcast};
use uuid::Uuid;

use super::db;
use super::domain::{CHANNEL, Entry, parse_payload};

/// What the hub tells its streams.
#[derive(Debug, Clone)]
pub enum Message {
    Entry(Arc<Entry>),
    /// A change without an entry (alerts attached) to this incident.
    Changed {
        incident_id: i64,
    },
    /// The hub may have missed announcements: every stream replays from the timeline.
    Resync,
    /// These streams' sessions ended.
    Ended(Arc<Vec<Uuid>>),
}

/// How many messages a slow stream may fall behind before it replays from the database.
const BUFFER: usize = 4096;
/// How often the keeper checks sessions…
const KEEP_EVERY: Duration = Duration::from_secs(5);
/// …and every how many checks it renews the leases (they last 60 s).
const RENEW_EVERY: u32 = 4;
/// Most announcements read from the connection's buffer before looking their entries up.
const BATCH: usize = 256;

#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

struct Inner {
    pool: PgPool,
    replica: Uuid,
    tx: OnceCell<broadcast::Sender<Message>>,
    /// The streams this process serves now: the keeper renews their rows and no others.
    held: Mutex<HashSet<Uuid>>,
}

/// A stream's place in the hub, taken before its row is written: dropped — the stream ended,
/// or the request was cut off anywhere on the way — it leaves the hub and removes its row. A
/// row whose removal was lost (cut off mid-commit) is held by nothing, so the keeper forgets it.
pub struct Slot {
    pub id: Uuid,
    hub: Hub,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.hub.held().remove(&self.id);
        crate::metrics::get().live_streams.dec();
        let (id, pool) = (self.id, self.hub.inner.pool.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Err(e) = db::close(&pool, id).await {
                    tracing::warn!(error = %e, "could not forget a closed live stream");
                }
            });
        }
    }
}

impl Hub {
    pub fn new(pool: PgPool) -> Self {
        Self {
            inner: Arc::new(Inner {
                pool,
                replica: Uuid::new_v4(),
                tx: OnceCell::new(),
                held: Mutex::default(),
            }),
        }
    }

    /// This process's id in `live_streams`.
    pub fn replica(&self) -> Uuid {
        self.inner.replica
    }

    pub fn pool(&self) -> &PgPool {
        &self.inner.pool
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashSet<Uuid>> {
        // A panic elsewhere while holding it leaves a set that is still right.
        self.inner.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new stream's slot, held until it is dropped.
    pub fn hold(&self) -> Slot {
        let id = Uuid::new_v4();
        self.held().insert(id);
        crate::metrics::get().live_streams.inc();
        Slot {
            id,
            hub: self.clone(),
        }
    }

    /// The streams this process holds open now.
    fn holding(&self) -> Vec<Uuid> {
        self.held().iter().copied().collect()
    }

    /// A receiver of everything the hub hears from now on. The first call starts the hub and
    /// returns once it listens, so nothing committed after it returns goes unheard.
    pub async fn subscribe(&self) -> broadcast::Receiver<Message> {
        let pool = &self.inner.pool;
        self.inner
            .tx
            .get_or_init(|| async {
                let (tx, _) = broadcast::channel(BUFFER);
                let listener = connect(pool).await;
                tokio::spawn(listen(pool.clone(), tx.clone(), listener));
                tokio::spawn(keep(self.clone(), tx.clone()));
                tx
            })
            .await
            .subscribe()
    }
}

async fn connect(pool: &PgPool) -> Option<PgListener> {
    match crate::engine::listener(pool).await {
        Ok(mut l) => match l.listen(CHANNEL).await {
            Ok(()) => Some(l),
            Err(e) => {
                tracing::warn!(error = %e, "live updates cannot listen");
                None
            }
        },
        Err(e) => {
            tracing::warn!(error = %e, "live updates cannot connect");
            None
        }
    }
}

/// Reads announcements and broadcasts their entries, for as long as the process runs.
async fn listen(pool: PgPool, tx: broadcast::Sender<Message>, mut listener: Option<PgListener>) {
    loop {
        let Some(l) = listener.as_mut() else {
            listener = connect(&pool).await;
            if listener.is_some() {
                // Whatever was committed while nobody listened is in the timeline.
                let _ = tx.send(Message::Resync);
            } else {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            continue;
        };
        let first = match l.try_recv().await {
            Ok(Some(n)) => n,
            Ok(None) => {
                tracing::warn!("live updates lost their connection; reconnecting");
                listener = None;
                continue;
            }
            Err(e) => {
                tracing::warn!(error = %e, "live updates interrupted");
                listener = None;
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let mut announced = vec![first];
        while announced.len() < BATCH {
            match l.next_buffered() {
                Some(n) => announced.push(n),
                None => break,
            }
        }
        let mut ids = Vec::new();
        for n in &announced {
            match parse_payload(n.payload()) {
                Some((incident_id, 0)) => {
                    let _ = tx.send(Message::Changed { incident_id });
                }
                Some((_, entry)) => ids.push(entry),
                None => tracing::warn!(payload = n.payload(), "unreadable live announcement"),
            }
        }
        if ids.is_empty() {
            continue;
        }
        match db::entries(&pool, &ids).await {
            Ok(entries) => {
                for e in entries {
                    let _ = tx.send(Message::Entry(Arc::new(e)));
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not read announced entries");
                let _ = tx.send(Message::Resync);
            }
        }
    }
}

/// Forgets this replica's rows no stream holds, closes streams whose session ended, and renews
/// the leases of the rest.
async fn keep(hub: Hub, tx: broadcast::Sender<Message>) {
    let (pool, replica) = (hub.inner.pool.clone(), hub.inner.replica);
    let max_age = crate::auth::session::ABSOLUTE_TIMEOUT_HOURS * 3600;
    let mut every = tokio::time::interval(KEEP_EVERY);
    let mut round = 0u32;
    loop {
        every.tick().await;
        round = round.wrapping_add(1);
        if let Err(e) = db::forget_unheld(&pool, replica, &hub.holding()).await {
            tracing::warn!(error = %e, "could not forget live streams nothing holds");
        }
        match db::ended(&pool, replica, max_age).await {
            Ok(ids) if !ids.is_empty() => {
                let _ = tx.send(Message::Ended(Arc::new(ids)));
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not check live streams' sessions"),
        }
        if !round.is_multiple_of(RENEW_EVERY) {
            continue;
        }
        let renewed = async {
            let mut conn = pool.acquire().await?;
            db::renew(&mut conn, replica, &hub.holding()).await
        };
        if let Err(e) = renewed.await {
            tracing::warn!(error = %e, "could not renew live streams' leases");
        }
    }
}
