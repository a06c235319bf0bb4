//! Imports from the tools teams move from: PagerDuty's users, schedules, escalation policies,
//! services and Events API v2 integrations, read through its REST API and made in Quell, with a
//! plan first: from the command line (`quell import pagerduty`) or the admins' page
//! (`/admin/import`).

pub mod actions;
pub mod db;
pub mod domain;
pub mod pages;
pub mod routes;
pub mod vendor;
