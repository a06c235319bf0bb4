//! Notification channels', subscriptions' and personal paging settings' routes.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::delete))
        .api(routes!(api::subscriptions, api::subscribe))
        .api(routes!(api::unsubscribe))
        .api(routes!(api::methods, api::add_method))
        .api(routes!(api::remove_method))
        .api(routes!(api::add_rule))
        .api(routes!(api::remove_rule))
        .page("/admin/channels", get(pages::show).post(pages::create))
        .page(
            "/admin/channels/{id}/delete",
            get(pages::confirm_delete).post(pages::delete),
        )
        .page("/admin/subscriptions", post(pages::subscribe))
        .page("/admin/subscriptions/{id}/delete", post(pages::unsubscribe))
        .page(
            "/account/paging",
            get(pages::my_paging).post(pages::change_paging),
        )
}
