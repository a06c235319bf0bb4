//! Incident roles: commander, comms lead, scribe, postmortem owner. Their routes live with the
//! incidents; this module holds the rules and the table.

pub mod db;
pub mod domain;
