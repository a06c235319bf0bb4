//! Shift swaps' routes.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::offer))
        .api(routes!(api::take))
        .api(routes!(api::withdraw))
        .page("/schedules/{id}/swaps", get(pages::show).post(pages::offer))
        .page("/schedules/{id}/swaps/{swap}/{what}", post(pages::answer))
}
