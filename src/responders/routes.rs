//! Responder requests' routes: the API beside the incident's, and the signed link's page.

use axum::routing::get;
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::add))
        .api(routes!(api::accept))
        // A responder's link is its own credential (signed, single-use, expiring).
        .open(
            "/incidents/{key}/respond/{token}",
            get(pages::show).post(pages::accept),
        )
}
