//! `Idempotency-Key` on REST creates. The key is claimed inside the create's own transaction, so
//! a concurrent retry waits for the first attempt and then replays its stored answer; a failed
//! attempt rolls the claim back with everything else, so the client may retry with a fixed body.

pub mod actions;
pub mod db;
pub mod domain;

pub use actions::{Created, Replay, create_once};
pub use domain::Key;
