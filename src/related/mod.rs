//! Related incidents: two incidents linked with a note, both ways, each link on both timelines;
//! and suggestions for an incident — incidents of its service or what it depends on whose text
//! matches its own, found by PostgreSQL full-text search.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
