//! The webhook endpoints senders post to, outside sessions and CSRF: each format's intake
//! (`intake`) and Opsgenie's Alert API (`opsgenie`).

mod intake;
pub mod opsgenie;

pub use intake::*;
