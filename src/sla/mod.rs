//! SLA: severity policies (targets per severity) and the verdicts of each incident's acknowledge
//! and resolve clocks.

pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
pub mod timers;
