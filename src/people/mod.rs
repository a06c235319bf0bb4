//! People: the responders who hold incident roles.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod routes;
