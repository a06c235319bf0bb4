//! Stakeholder updates: messages to an audience during an incident, and the cadence the severity
//! policy asks of them. Their routes live with the incidents; this module holds the rules, the
//! table and the posting (`actions`).

pub mod actions;
pub mod db;
pub mod domain;
