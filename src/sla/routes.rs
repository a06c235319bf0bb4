//! The severity policies' routes.

use axum::routing::get;
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::put))
        .page("/admin/policies", get(pages::show).post(pages::save))
}
