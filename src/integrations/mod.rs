//! Integrations: the alert sources, each with its own format and secret key.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
