//! Evidence's routes: attached evidence, uploaded exports and what is picked from them.

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use utoipa_axum::routes;

use super::domain::UPLOAD_LIMIT;
use super::{handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::attach))
        .api(routes!(api::remove))
        .api(routes!(api::upload))
        .api(routes!(api::held, api::forget))
        .api(routes!(api::pick))
        .api(routes!(api::from_git))
        .page(
            "/incidents/{key}/evidence",
            get(pages::list).post(pages::paste),
        )
        .page("/incidents/{key}/evidence/{id}/remove", post(pages::remove))
        .page("/incidents/{key}/evidence/git", post(pages::from_git))
        .page(
            "/incidents/{key}/evidence/imports",
            // An export may be larger than other forms: its own limit, plus the form's parts.
            post(pages::upload).layer(DefaultBodyLimit::max(UPLOAD_LIMIT + 64 * 1024)),
        )
        .page(
            "/incidents/{key}/evidence/imports/{import_id}",
            get(pages::held),
        )
        .page(
            "/incidents/{key}/evidence/imports/{import_id}/pick",
            post(pages::pick),
        )
        .page(
            "/incidents/{key}/evidence/imports/{import_id}/remove",
            post(pages::remove_upload),
        )
}
