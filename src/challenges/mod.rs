//! Investigation challenges built from past incidents: a scenario, evidence, hints that cost
//! credit, a hidden answer and a rubric; learners attempt them, state hypotheses that are
//! graded, take hints and may give up to see the answer. Credits per person with a ledger.

pub mod actions;
pub mod credits;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod lookups;
pub mod pages;
pub mod routes;
