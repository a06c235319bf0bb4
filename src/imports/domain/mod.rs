//! Pure rules of importing: PagerDuty's objects as its REST API documents them, which are also
//! the shapes an import works from (`pagerduty`); Opsgenie's objects, read into those shapes
//! (`opsgenie`); and what an import reads, from whichever vendor (`source`).

mod pagerduty;
mod source;

pub mod opsgenie;

pub use pagerduty::*;
pub use source::*;
