//! Work-item trackers: an admin names how a work item is written (`AB#`, `LIN-`, `JIRA-` …)
//! and where its number goes in a URL, and every action item written that way becomes a link.

pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
