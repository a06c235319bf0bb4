//! Accounts' routes: who I am, users and tokens, and signing in and out.

use axum::routing::{get, post};
use utoipa_axum::routes;

use super::{handlers as api, oidc, pages};
use crate::http::routes::Routes;

pub fn routes() -> Routes {
    Routes::new()
        .api(routes!(api::me))
        .api(routes!(api::preferences, api::set_preferences))
        .api(routes!(api::list_users, api::create_user))
        .api(routes!(api::patch_user))
        .api(routes!(api::list_tokens, api::create_token))
        .api(routes!(api::revoke_token))
        .page("/account", get(pages::account))
        .page("/account/password", post(pages::change_password))
        .page("/account/preferences", post(pages::change_preferences))
        .page("/account/tokens", post(pages::create_token))
        .page("/account/tokens/{id}/revoke", post(pages::revoke_token))
        .page("/admin/users", get(pages::users).post(pages::create_user))
        .page("/admin/users/{id}", post(pages::update_user))
        .open("/login", get(pages::login_form).post(pages::login))
        .open("/logout", post(pages::logout))
        .open("/auth/oidc/login", get(oidc::start))
        .open("/auth/oidc/callback", get(oidc::callback))
}
