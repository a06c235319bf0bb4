//! The audit log's routes.

use axum::routing::get;
use utoipa_axum::routes;

use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list))
        .page("/admin/audit", get(pages::list))
}
