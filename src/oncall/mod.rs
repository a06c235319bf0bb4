//! On call: schedules of rotations in layers, with overrides; who is on call at any instant is
//! computed from them, never stored. The rules, the store and the API so far; pages, escalation
//! and paging build on them.

pub mod actions;
pub mod db;
pub mod domain;
pub mod forms;
pub mod handlers;
pub mod pages;
pub mod routes;
