//! The dashboard at `/`: what is open, worst first with its SLA clocks running; what is yours
//! (roles, claims, overdue action items); which stakeholder updates are due; and 30-day trends
//! of incidents, time to acknowledge and time to resolve, drawn on the server with their
//! definitions beside them. It updates itself from `/incidents/events`. A team's page
//! (`/teams/{slug}`) is the same for what the team owns, over 90 days.

pub mod db;
pub mod domain;
pub mod pages;
pub mod routes;
