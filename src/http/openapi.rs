//! The error answers many API operations share, described once for the OpenAPI document: an
//! operation lists `crate::http::openapi::Replacing` instead of four tuples of its own. Each is
//! the `{"error": …}` body of [`ErrorBody`].

use crate::error::ErrorBody;

/// 404: the id or key names nothing (or nothing the caller may see).
#[derive(utoipa::IntoResponses)]
#[response(status = 404, description = "Not found")]
pub struct NotFound(#[allow(dead_code)] ErrorBody);

/// 422: a field of the request is wrong; `details.fields` names it.
#[derive(utoipa::IntoResponses)]
#[response(
    status = 422,
    description = "A field is wrong; details.fields names it"
)]
pub struct Invalid(#[allow(dead_code)] ErrorBody);

/// 403: the operation is an admin's.
#[derive(utoipa::IntoResponses)]
#[response(status = 403, description = "Admins only")]
pub struct AdminsOnly(#[allow(dead_code)] ErrorBody);

/// 403: the configuration belongs to a team whose leads (or the team's members, where it lets
/// them), managers and admins may change it — or to the installation, which takes a global role.
#[derive(utoipa::IntoResponses)]
#[response(
    status = 403,
    description = "Not yours to change: another team's (only its leads, managers and admins), or the installation's (a global role)"
)]
pub struct NotYours(#[allow(dead_code)] ErrorBody);

/// What replacing a versioned resource (`PUT` with `If-Match`) may answer besides 200.
#[derive(utoipa::IntoResponses)]
pub enum Replacing {
    #[response(status = 404, description = "Not found")]
    NotFound(#[allow(dead_code)] ErrorBody),
    #[response(
        status = 412,
        description = "Your copy is stale; details.current_version has the current one"
    )]
    Stale(#[allow(dead_code)] ErrorBody),
    #[response(
        status = 422,
        description = "A field is wrong; details.fields names it"
    )]
    Invalid(#[allow(dead_code)] ErrorBody),
    #[response(status = 428, description = "If-Match is missing")]
    NoIfMatch(#[allow(dead_code)] ErrorBody),
}

/// What deleting by id answers: 204, or 404.
#[derive(utoipa::IntoResponses)]
pub enum Deleting {
    #[response(status = 204, description = "Deleted")]
    Deleted,
    #[response(status = 404, description = "Not found")]
    NotFound(#[allow(dead_code)] ErrorBody),
}
