//! Notifications: channels (a signed generic webhook, a Slack-compatible incoming webhook), the
//! outbox the timer engine writes in the breach's transaction, and the sender every replica runs
//! to deliver it at least once, with retries, backoff and jitter.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod pages;
pub mod routes;
pub mod sender;
