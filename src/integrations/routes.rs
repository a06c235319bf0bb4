//! Alert integrations' routes.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get, api::patch))
        .api(routes!(api::rotate))
        .page("/admin/integrations", get(pages::list).post(pages::create))
        .page("/admin/integrations/{id}", post(pages::update))
        .page("/admin/integrations/{id}/rotate", post(pages::rotate))
}
