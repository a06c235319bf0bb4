//! Alerts and their groups as stored: written by the alert path (`alerts/`),
//! read by incidents and closed with them (`actions`), read by routing previews.

pub mod actions;
pub mod db;
