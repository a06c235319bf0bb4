//! The memory that large request bodies and the work done on them may take at once in one
//! process (`QUELL_LARGE_BODIES_MIB`). A body is read whole before it is parsed, and parsing
//! multiplies it; an uploaded export unpacks and is parsed into rows. Each takes room in
//! proportion to what it holds, waits its turn (first come, first served) for at most
//! [`Room::wait`], and is otherwise answered 503. The room is this process's own: it bounds this
//! replica's memory, which is all it is for. `http::bodies` takes room for bodies as they
//! arrive; a handler whose work needs more grows its request's share ([`Share::grow_to`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Room is counted in KiB.
const UNIT: usize = 1024;

/// The room one process has.
#[derive(Clone, Debug)]
pub struct Room {
    room: Arc<Semaphore>,
    units: usize,
    /// How long work waits for room before it is turned away.
    pub wait: Duration,
}

impl Room {
    /// Room for `bytes` at once (at least one KiB).
    pub fn new(bytes: usize, wait: Duration) -> Self {
        let units = bytes.div_ceil(UNIT).max(1);
        Self {
            room: Arc::new(Semaphore::new(units)),
            units,
            wait,
        }
    }

    /// The room `bytes` take: at most all of it, so work larger than the room still gets in,
    /// alone.
    pub fn units_for(&self, bytes: usize) -> usize {
        bytes.div_ceil(UNIT).min(self.units)
    }

    /// KiB free now.
    pub fn free_units(&self) -> usize {
        self.room.available_permits()
    }

    /// A request's share, holding nothing yet.
    pub fn share(&self) -> Share {
        Share {
            room: self.clone(),
            held: Arc::default(),
        }
    }
}

/// What one request holds of the room, until the last copy of it is dropped.
#[derive(Clone, Debug)]
pub struct Share {
    room: Room,
    held: Arc<Mutex<Option<OwnedSemaphorePermit>>>,
}

/// No room came free in time.
#[derive(Debug)]
pub struct Full;

impl Share {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<OwnedSemaphorePermit>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// KiB this share holds.
    pub fn held(&self) -> usize {
        self.slot().as_ref().map_or(0, |p| p.num_permits())
    }

    /// Holds room for `bytes` in all (what it holds already counts), waiting at most the
    /// room's `wait` for the rest. It keeps what it holds while it waits — the memory it stands
    /// for is still taken — so two shares each holding part and wanting more may both wait;
    /// the wait's limit ends that, and the one turned away lets go.
    pub async fn grow_to(&self, bytes: usize) -> Result<(), Full> {
        let wanted = self.room.units_for(bytes);
        let held = self.held();
        if wanted <= held {
            return Ok(());
        }
        let more = u32::try_from(wanted - held).unwrap_or(u32::MAX);
        match tokio::time::timeout(
            self.room.wait,
            self.room.room.clone().acquire_many_owned(more),
        )
        .await
        {
            Ok(Ok(permit)) => {
                let mut slot = self.slot();
                match slot.as_mut() {
                    Some(p) => p.merge(permit),
                    None => *slot = Some(permit),
                }
                Ok(())
            }
            _ => Err(Full),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn shares_grow_within_the_room_and_wait_for_each_other_in_turn() {
        let room = Room::new(4 * 1024, Duration::from_millis(50));
        let a = room.share();
        a.grow_to(1024).await.unwrap();
        assert_eq!(a.held(), 1);
        a.grow_to(3 * 1024).await.unwrap();
        assert_eq!(a.held(), 3);
        a.grow_to(100 * 1024).await.unwrap();
        assert_eq!(a.held(), 4, "larger than the room: all of it");
        let b = room.share();
        assert!(
            b.grow_to(1).await.is_err(),
            "nothing free while a holds all"
        );
        drop(a);
        b.grow_to(2048).await.unwrap();
        assert_eq!(room.free_units(), 2);
    }
}
