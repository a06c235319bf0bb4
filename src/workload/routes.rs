//! On-call load's routes.

use axum::routing::get;
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::load))
        .page("/oncall/load", get(pages::show))
        .page("/oncall/load.csv", get(pages::csv))
}
