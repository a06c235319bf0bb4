//! The alert store's queries: alerts and their groups, and flapping keys.

mod alerts;
mod flapping;

pub use alerts::*;
pub use flapping::*;
