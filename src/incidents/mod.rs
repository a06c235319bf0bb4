//! Incidents: opening them, the lifecycle, severity, roles, edits and notes — the API and pages.

pub mod actions;
pub mod db;
pub mod domain;
pub mod forms;
pub mod handlers;
pub mod pages;
pub mod routes;
pub mod snoozes;
pub mod views;
