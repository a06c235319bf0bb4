//! Teams' routes. The team's own page (`/teams/{slug}`) is the dashboard's.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get, api::update, api::delete))
        .api(routes!(api::set_member, api::remove_member))
        .page("/teams", get(pages::list).post(pages::create))
        .page(
            "/teams/{slug}/members",
            get(pages::members).post(pages::change_member),
        )
        .page("/teams/{slug}/edit", post(pages::edit))
        .page("/teams/{slug}/delete", post(pages::delete))
}
