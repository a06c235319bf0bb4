//! Issue trackers' routes.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::update, api::delete))
        .page("/admin/trackers", get(pages::show).post(pages::create))
        .page("/admin/trackers/{id}", post(pages::update))
        .page("/admin/trackers/{id}/delete", post(pages::delete))
}
