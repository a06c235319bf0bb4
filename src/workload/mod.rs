//! On-call load: who carries the rota. Per person, in their own time zone, and per team (its
//! members summed), over the last 30 or 90 days: hours on call (from the schedules' spans),
//! pages received, pages outside 08:00–20:00, nights interrupted, incidents acknowledged and
//! the mean time to acknowledge them. Page `/oncall/load` with charts and a CSV export, and
//! `GET /api/v1/oncall/load`; managers and admins.

pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
pub mod views;
