//! The alert store's queries: alerts and their groups, flapping keys, and alerts as Opsgenie's
//! API names them with the requests it answered.

mod alerts;
mod flapping;
mod opsgenie;

pub use alerts::*;
pub use flapping::*;
pub use opsgenie::*;
