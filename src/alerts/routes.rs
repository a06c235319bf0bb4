//! Alerts' routes: the alert list, and the webhooks alert senders post to (no session, no
//! CSRF, their own keys), which reach the alert lanes through their own state.

use axum::Router;
use axum::routing::{get, post};
use utoipa_axum::routes;

use super::handlers as api;
use super::hooks::{self, HookState, opsgenie};
use super::ingest::Ingestor;
use crate::http::routes::Routes;
use crate::state::AppState;

pub fn routes() -> Routes {
    Routes::new().api(routes!(api::list))
}

/// The webhooks, storing through `ingest`.
pub fn hooks(state: &AppState, ingest: Ingestor) -> Router<AppState> {
    Router::new()
        .route("/hooks/{format}/{id}", post(hooks::hook))
        .route("/v2/enqueue", post(hooks::pagerduty_enqueue))
        .route("/v2/change/enqueue", post(hooks::pagerduty_change))
        .route(
            "/v2/alerts",
            post(opsgenie::create).fallback(opsgenie::other),
        )
        .route(
            "/v2/alerts/requests/{request_id}",
            get(opsgenie::get_request).fallback(opsgenie::other),
        )
        .route(
            "/v2/alerts/{identifier}",
            get(opsgenie::get_alert).fallback(opsgenie::other),
        )
        .route(
            "/v2/alerts/{identifier}/{action}",
            post(opsgenie::action).fallback(opsgenie::other),
        )
        .route(
            "/hooks/heartbeat/{id}",
            get(hooks::heartbeat).post(hooks::heartbeat),
        )
        .route(
            "/v2/heartbeats/{name}/ping",
            get(hooks::opsgenie_heartbeat).post(hooks::opsgenie_heartbeat),
        )
        .with_state(HookState {
            app: state.clone(),
            ingest,
        })
}
