//! The web kit every capability's handlers and pages are built with: extractors that answer in
//! our error format ([`extract`]), access guards ([`access`]) and the session and token gate
//! ([`gate`]), the page frame and error page ([`page`]), the edge check on paths and queries
//! ([`guard`]), room for large request bodies ([`bodies`]), health checks ([`health`]) and the server loop with its connection limits
//! ([`serve`]). It knows no capability; the router (`crate::router`) puts them together.

pub mod access;
pub mod bodies;
pub mod extract;
pub mod gate;
pub mod guard;
pub mod health;
pub mod openapi;
pub mod page;
pub mod request;
pub mod routes;
pub mod serve;
pub mod write;

/// The largest request body accepted.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// The largest upload accepted (an export to pick evidence from): 25 MiB.
pub const UPLOAD_LIMIT: usize = 25 * 1024 * 1024;

/// Appended to asset URLs; changes whenever a file in `static/` does.
pub const ASSET_VERSION: &str = env!("QUELL_ASSET_VERSION");
