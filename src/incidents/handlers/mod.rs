//! The incidents REST API under `/api/v1/incidents`: thin handlers around [`super::actions`].
//!
//! `incident.rs` serves the incident itself, `around.rs` what hangs off it, over `shared.rs`;
//! everything is re-exported here, so the router names `incidents::handlers::create` as before.

mod around;
mod incident;
mod shared;

pub use around::*;
pub use incident::*;
pub use shared::{cadence_from, cadence_of, parse_key};
