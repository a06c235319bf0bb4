//! The responders' route.

use utoipa_axum::routes;

use super::handlers as api;
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new().api(routes!(api::list))
}
