//! Silences' routes.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::preview))
        .api(routes!(api::policy, api::set_policy))
        .api(routes!(api::get))
        .api(routes!(api::alerts))
        .api(routes!(api::expire))
        .api(routes!(api::am_status))
        .api(routes!(api::am_list, api::am_post))
        .api(routes!(api::am_get, api::am_delete))
        .page("/silences", get(pages::list).post(pages::create))
        .page("/silences/preview", post(pages::preview))
        .page("/silences/policy", post(pages::set_policy))
        .page("/silences/{id}", get(pages::show))
        .page("/silences/{id}/expire", post(pages::expire))
}
