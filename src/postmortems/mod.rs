//! Postmortems: the document of `reference/postmortem-inc-1187.txt`, one per incident, its
//! written sections, its computed figures, and its action items.

pub mod actions;
pub mod db;
pub mod document;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
