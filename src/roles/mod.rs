//! Incident roles: commander, comms lead, scribe, postmortem owner. Their routes live with the
//! incidents; this module holds the rules, the table and the assigning (`actions`).

pub mod actions;
pub mod db;
pub mod domain;
