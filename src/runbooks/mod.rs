//! Runbooks: a named link and an ordered checklist, kept per service or per routing rule; every
//! incident of that service, or opened by an alert that rule routed, shows them, and checking an
//! item is recorded (who, when) per incident and on its timeline.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
