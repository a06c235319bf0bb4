//! Maintenance windows: planned work on services, once or weekly in a named zone, during which
//! their alerts are held or open incidents that page nobody; started and ended on time by an
//! engine in every replica (`alerts::windows`).

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
