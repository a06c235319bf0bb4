//! Heartbeat monitors' routes (the pings themselves are webhooks: `alerts::routes::hooks`).

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get, api::replace, api::delete))
        .page("/heartbeats", get(pages::list).post(pages::create))
        .page("/heartbeats/{id}", post(pages::update))
        .page("/heartbeats/{id}/delete", post(pages::delete))
}
