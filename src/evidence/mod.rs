//! Evidence attached to incidents, each item keeping its source: pasted code, chat, tickets and
//! metrics; chat picked from a Slack export; tickets from a Linear or Jira export; files read
//! from git as they were before the incident started. Challenges are built from it.

pub mod actions;
pub mod db;
pub mod domain;
pub mod git;
pub mod handlers;
pub mod pages;
pub mod routes;
