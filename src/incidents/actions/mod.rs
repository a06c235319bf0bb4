//! What a responder can do to an incident, each as one transaction step shared by the API and
//! the pages: check the rules, write the change, append its timeline event. The caller owns the
//! transaction (so it can add an idempotency record to it) and commits.
//!
//! One file per topic; everything a caller uses is re-exported here, so `incidents::actions::open`
//! and the rest read as before.

mod access;
mod assigning;
mod bridge;
mod claims;
mod edit;
mod lifecycle;
mod notes;
mod opening;
mod shared;

pub use access::*;
pub use assigning::*;
pub use bridge::*;
pub use claims::*;
pub use edit::*;
pub use lifecycle::*;
pub use notes::*;
pub use opening::*;
pub use shared::Change;
