//! Merging's and splitting's routes.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::merge))
        .api(routes!(api::split))
        .page(
            "/incidents/{key}/merge",
            get(pages::show).post(pages::merge),
        )
        .page("/incidents/{key}/split", post(pages::split))
}
