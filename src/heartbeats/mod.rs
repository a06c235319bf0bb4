//! Heartbeat monitors: a job pings its monitor at least every interval; a missing ping opens an
//! incident through routing (the alert engine in `alerts::heartbeats`), the next one resolves
//! its alert.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
