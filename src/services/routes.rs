//! The service catalogue's routes.

use axum::routing::get;
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get, api::patch, api::delete))
        .api(routes!(api::bridge, api::set_bridge))
        .page("/services", get(pages::list).post(pages::create))
        .page("/services/new", get(pages::new_form))
        .page(
            "/services/{name}/edit",
            get(pages::edit_form).post(pages::edit),
        )
}
