//! On-call schedules' routes, and the calendar feed.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{forms, handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get, api::update))
        .api(routes!(api::on_call))
        .page("/schedules", get(pages::list))
        .page("/schedules/new", get(forms::new_form).post(forms::create))
        .page("/schedules/{id}", get(pages::show))
        .page(
            "/schedules/{id}/edit",
            get(forms::edit_form).post(forms::update),
        )
        .page("/schedules/{id}/overrides", post(pages::add_override))
        .page(
            "/schedules/{id}/overrides/{n}/delete",
            post(pages::remove_override),
        )
        .page("/oncall/feed", post(pages::make_feed))
        // A calendar feed's address is its own credential.
        .open("/oncall/{file}", get(pages::feed))
}
