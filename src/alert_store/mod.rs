//! Alerts and their groups as stored: written by the alert path (`alerts/`),
//! read and closed by incidents, read by routing previews.

pub mod db;
