//! Silences: alerts matching Alertmanager-style matchers between a start and an end are stored
//! and counted but open no incident and page nobody.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
