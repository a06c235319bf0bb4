//! Changes: deploys, configuration changes, feature flags and infrastructure changes to a
//! service, reported through the API or by PagerDuty change events; listed across services and
//! per service, and read by incidents as suspects.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
