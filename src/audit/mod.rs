//! The audit log: who changed what, when, from where, with the before and after, written in the
//! same transaction as the change; and refused attempts, tallied per minute so a flood adds one
//! row, not thousands. The table is append-only (a trigger refuses updates and deletes).

pub mod db;
pub mod domain;

pub use db::{changed, created, deleted, record};
pub use domain::Actor;
