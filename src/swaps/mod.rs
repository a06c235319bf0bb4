//! Shift swaps: a person on call offers part (or all) of their shift in a schedule — to a named
//! person or to anyone who can take it — and the taker's acceptance makes it an override of the
//! schedule in the same transaction, so it is on both people's calendars. An offer that is not
//! wholly the offerer's (someone else's hours, a gap, an override there) is refused with the
//! reason, and checked again when taken. Page `/schedules/{id}/swaps` and the API.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
