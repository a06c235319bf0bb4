//! The dashboard's route.

use axum::routing::get;

use super::pages;
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new().page("/", get(pages::show))
}
