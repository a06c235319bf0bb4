//! The incident timeline: events with the time they happened and the time they were written.
//! Its routes live with the incidents; this module holds the kinds, the sentences and the table.

pub mod actions;
pub mod db;
pub mod domain;
