//! Services: the things that fail, with their tier, team and SLO.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
