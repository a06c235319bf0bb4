//! Stakeholder updates: messages to an audience during an incident, and the cadence the severity
//! policy asks of them. Their routes live with the incidents; this module holds the rules and the
//! table.

pub mod db;
pub mod domain;
