//! The bridge: the call and the chat channel people meet in during an incident, and a service's
//! defaults that a Sev1 or Sev2 of it starts with. Set through `actions` (by
//! `incidents::actions`, with its timeline entry, and `services::actions`); read by the
//! incident page, notifications, pages and the postmortem.

pub mod actions;
pub mod db;
pub mod domain;
