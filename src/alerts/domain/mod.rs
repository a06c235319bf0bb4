//! Pure rules of alerts: reading each sender's payload into the same event shape, and saying
//! precisely what is wrong with one that cannot be read (`formats`), and Opsgenie's Alert API
//! (`opsgenie`).

mod formats;
mod opsgenie;

pub use formats::*;
pub use opsgenie::*;
