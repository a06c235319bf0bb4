//! Maintenance windows' routes.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get))
        .api(routes!(api::cancel))
        .page("/maintenance", get(pages::list).post(pages::create))
        .page("/maintenance/{id}/cancel", post(pages::cancel))
}
