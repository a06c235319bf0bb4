//! The status page's routes: the public page and JSON (no sign-in), its API, the admins' page
//! and an incident's publish form.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::components, api::create_component))
        .api(routes!(api::replace_component, api::delete_component))
        .api(routes!(api::settings, api::set_settings))
        .api(routes!(api::publication, api::publish, api::unpublish))
        .api(routes!(api::subscribers))
        .api(routes!(api::remove_subscriber))
        .open("/status", get(pages::page))
        .open("/status/incidents/{id}", get(pages::incident))
        .open("/status/history.atom", get(api::feed))
        .open(
            "/status/subscribe",
            get(pages::subscribe_form).post(pages::subscribe),
        )
        .open(
            "/status/subscription/{token}",
            get(pages::subscription).post(pages::choose),
        )
        .open("/status/subscription/{token}/confirm", post(pages::confirm))
        .open(
            "/status/subscription/{token}/unsubscribe",
            get(pages::leave).post(pages::unsubscribe),
        )
        .open(
            "/status/api/v2/incidents/unresolved.json",
            get(api::unresolved),
        )
        .open("/status/api/v2/{name}", get(api::statuspage))
        .open(
            "/status/api/v2/scheduled-maintenances/{which}",
            get(api::maintenances),
        )
        .page("/admin/status", get(pages::admin))
        .page("/admin/status/settings", post(pages::settings))
        .page("/admin/status/components", post(pages::create_component))
        .page(
            "/admin/status/components/{id}",
            post(pages::update_component),
        )
        .page(
            "/admin/status/components/{id}/delete",
            post(pages::delete_component),
        )
        .page(
            "/admin/status/subscribers/{id}/delete",
            post(pages::remove_subscriber),
        )
        .page("/admin/status/announcements", post(pages::announce))
        .page(
            "/admin/status/announcements/{id}/delete",
            post(pages::withdraw),
        )
        .page(
            "/incidents/{key}/publication",
            get(pages::publication).post(pages::publish),
        )
        .page(
            "/incidents/{key}/publication/delete",
            post(pages::unpublish),
        )
}
