//! Paging people by hand from an incident — "add a responder": a person, a schedule's on-call
//! person, or an escalation policy stepped through until someone it paged accepts. Each page
//! uses the person's contact rules and carries a signed link that accepts the request without
//! taking the incident over; the request, who it paged, their answers and each message's
//! delivery state are kept and shown on the incident. `timers.rs` pages a policy's next steps
//! in every replica.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
pub mod timers;
