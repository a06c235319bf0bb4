//! The dashboard's routes: the organisation's, each team's and each service's.

use axum::routing::get;

use super::pages;
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .page("/", get(pages::show))
        .page("/teams/{slug}", get(pages::team::show))
        .page("/services/{name}", get(pages::service::show))
}
