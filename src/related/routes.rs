//! Related incidents' routes.

use axum::routing::post;
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::link))
        .api(routes!(api::unlink))
        .page("/incidents/{key}/related", post(pages::link))
        .page(
            "/incidents/{key}/related/{other}/unlink",
            post(pages::unlink),
        )
}
