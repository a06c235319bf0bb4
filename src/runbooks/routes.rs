//! Runbooks' routes.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get, api::update, api::delete))
        .page("/runbooks", get(pages::list).post(pages::create))
        .page(
            "/runbooks/{id}/edit",
            get(pages::edit_form).post(pages::edit),
        )
        .page("/runbooks/{id}/delete", post(pages::delete))
}
