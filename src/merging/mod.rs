//! Merging and splitting incidents: one incident merged into another it duplicates (its alerts,
//! their groups and flapping keys move; roles the other lacks are given; the other takes the
//! worse severity; both timelines link them; the merged one is resolved as a duplicate), and
//! alerts moved out of an incident into a new one. Page `/incidents/{key}/merge` and API, both
//! with the incident's version (If-Match).

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
