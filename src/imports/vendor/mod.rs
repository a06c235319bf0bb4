//! The vendors' REST APIs read with an admin's key (`http`): PagerDuty's and Opsgenie's.

mod http;
mod opsgenie;
mod pagerduty;

pub use http::check_reachable;
pub use opsgenie::{OPSGENIE_API, Opsgenie};
pub use pagerduty::{PAGERDUTY_API, PagerDuty};
