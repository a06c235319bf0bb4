//! The import's page.

use axum::routing::get;

use super::pages;
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new().page("/admin/import", get(pages::show).post(pages::run))
}
