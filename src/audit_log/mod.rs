//! The audit log as admins read it: `/admin/audit` and `GET /api/v1/audit`. The log itself, its
//! appends and its refusal tally, lives below the web kit in `audit/`.

pub mod handlers;
pub mod pages;
pub mod routes;
