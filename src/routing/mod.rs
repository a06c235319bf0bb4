//! Routing rules: ordered conditions on an alert's fields that decide the service, severity and
//! title of the incident it opens.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
