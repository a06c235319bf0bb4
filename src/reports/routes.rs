//! The reports' routes.

use axum::routing::get;
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::report))
        .api(routes!(api::change_failure_rate))
        .page("/reports", get(pages::index))
}
