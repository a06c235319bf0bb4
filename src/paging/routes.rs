//! Escalation policies' and who-is-paged routes.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get, api::update, api::delete))
        .api(routes!(api::assign))
        .api(routes!(api::on_call_now))
        .page("/oncall", get(pages::show))
        .page("/oncall/assign", post(pages::assign))
        .page("/escalation-policies", post(pages::create_policy))
        .page("/escalation-policies/new", get(pages::new_policy))
        .page(
            "/escalation-policies/{id}",
            get(pages::edit_policy).post(pages::update_policy),
        )
        .page(
            "/escalation-policies/{id}/delete",
            post(pages::delete_policy),
        )
}
