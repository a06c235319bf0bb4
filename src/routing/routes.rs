//! Routing rules' routes.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create, api::reorder))
        .api(routes!(api::update, api::delete))
        .api(routes!(api::preview))
        .page("/admin/routing", get(pages::show).post(pages::create))
        .page("/admin/routing/preview", post(pages::preview))
        .page("/admin/routing/{id}", post(pages::update))
        .page("/admin/routing/{id}/delete", post(pages::delete))
        .page("/admin/routing/{id}/move", post(pages::move_rule))
}
