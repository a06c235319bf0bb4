//! Teams: who owns which services, rotas and rules, who is in each (members and leads), and
//! who may change a team's configuration.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
