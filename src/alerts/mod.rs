//! Alerts from monitoring: the webhook endpoints, reading each sender's format, the batched
//! write path that deduplicates and groups them into incidents, and the incident's alert list.

pub mod domain;
pub mod effects;
pub mod flapping;
pub mod handlers;
pub mod heartbeats;
pub mod hooks;
pub mod ingest;
pub mod opsgenie;
pub mod retention;
pub mod routes;
pub mod settle;
pub mod unsilence;
pub mod windows;
