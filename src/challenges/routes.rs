//! Investigation challenges' routes: challenges, attempts, reviews and credits.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{credits, handlers as api, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::list, api::create))
        .api(routes!(api::get, api::update))
        .api(routes!(api::source))
        .api(routes!(api::leaks))
        .api(routes!(api::generate))
        .api(routes!(api::publish))
        .api(routes!(api::start))
        .api(routes!(api::attempt))
        .api(routes!(api::hypothesize))
        .api(routes!(api::hint))
        .api(routes!(api::give_up))
        .api(routes!(api::leaderboard))
        .api(routes!(api::my_credits))
        .api(routes!(api::settings, api::set_settings))
        .api(routes!(api::balances))
        .api(routes!(api::ask_review))
        .api(routes!(api::reviews))
        .api(routes!(api::judge))
        .api(routes!(api::labelled))
        .page("/challenges", get(pages::list))
        .page("/challenges/{id}", get(pages::show))
        .page("/challenges/generate", post(pages::generate))
        .page(
            "/challenges/{id}/edit",
            get(pages::edit_form).post(pages::edit),
        )
        .page("/challenges/{id}/publish", post(pages::publish))
        .page("/challenges/{id}/attempts", post(pages::start))
        .page(
            "/challenges/{id}/attempts/{attempt_id}/hypotheses",
            post(pages::hypothesize),
        )
        .page(
            "/challenges/{id}/attempts/{attempt_id}/hints",
            post(pages::hint),
        )
        .page(
            "/challenges/{id}/attempts/{attempt_id}/give-up",
            post(pages::give_up),
        )
        .page(
            "/challenges/{id}/attempts/{attempt_id}/hypotheses/{hypothesis_id}/review",
            post(pages::ask_review),
        )
        .page("/challenges/{id}/reviews", get(pages::reviews))
        .page("/challenges/{id}/reviews/{review_id}", post(pages::judge))
        .page("/challenges/{id}/labelled.tsv", get(api::labelled))
        .page("/admin/credits", get(credits::show).post(credits::save))
}
