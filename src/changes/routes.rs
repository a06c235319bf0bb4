//! Change events' routes.

use axum::routing::get;
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get))
        .page("/changes", get(pages::list).post(pages::create))
        .page("/services/{name}/changes", get(pages::for_service))
}
