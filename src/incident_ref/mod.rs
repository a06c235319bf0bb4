//! The incident as the rooms below `incidents` see it: its id, key, title, severity, status
//! and service, found by id or key, and the key-share lock the background engines take before
//! they work on an incident. `incidents/` owns the table and every change to it; this room only
//! reads, so paging, SLA timers, related incidents and the rest need no SQL of their own on it.
//! Here too is who may see an incident (`domain::SeenBy`, the SQL function
//! `incident_visible`) and the router layer that answers 404 for a restricted one behind any
//! address that names it (`gate`).

pub mod db;
pub mod domain;
pub mod gate;
