//! Paging: escalation policies (ordered steps of people, schedules and channels, repeated; a
//! service points at one), each incident's escalation as a persisted timer fired by the engine
//! every replica runs, and single-use signed acknowledge links. Started when an incident opens
//! and stopped when it is acknowledged, in the incident's own transaction.

pub mod actions;
pub mod db;
pub mod domain;
pub mod escalator;
pub mod handlers;
pub mod pages;
pub mod routes;
