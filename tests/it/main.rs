//! The integration tests: one crate, so the application is linked once for the whole suite.
//! Each module is a capability or a concern; each test gets a fresh database (`#[sqlx::test]`)
//! and drives the real router (or, in `browser`, a real server and chromium).

mod common;

mod access;
mod alerts;
mod architecture;
mod browser;
mod challenges;
mod changes;
mod config_as_code;
mod contrast;
mod dashboard;
mod demo;
mod evidence;
mod flapping;
mod grouping;
mod handoffs;
mod hardening;
mod heartbeats;
mod imports;
mod incidents_api;
mod lifecycle;
mod live;
mod maintenance;
mod merging;
mod metrics;
mod notify;
mod oidc;
mod oncall;
mod operations;
mod opsgenie;
mod opsgenie_import;
mod pages;
mod paging;
mod plans;
mod postmortem_review;
mod postmortems;
mod private;
mod probe;
mod related;
mod reports;
mod responders;
mod retention;
mod runbooks;
mod seen;
mod services_api;
mod silences;
mod sla;
mod snooze;
mod status_page;
mod swaps;
mod teams;
mod timers;
mod workload;
