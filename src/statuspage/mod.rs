//! The public status page: components (public names for services, grouped and ordered by an
//! admin), incidents published to it with a public title and the components they affect,
//! their public updates (the stakeholder updates for customers), maintenance ahead, 90 days of
//! history per component, and the same in Atlassian Statuspage's JSON shapes.

pub mod actions;
pub mod db;
pub mod domain;
pub mod handlers;
pub mod mailer;
pub mod pages;
pub mod public;
pub mod routes;
