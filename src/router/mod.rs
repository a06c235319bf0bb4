//! The top of Quell: the one module that knows every capability. It assembles the API under
//! `/api/v1` (and its OpenAPI description), the pages, the webhooks, static files and health
//! checks, wraps them in the middleware every request passes (request id, tracing, timeouts,
//! body limit, panic guard, security headers), and hands the webhooks the alert lanes.

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, Method, Request, Uri, header};
use axum::response::IntoResponse;
use axum::routing::{any, get, get_service, post};
use axum::{Router, middleware};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};

use crate::alerts::hooks::HookState;
use crate::alerts::ingest::Ingestor;
use crate::error::AppError;
use crate::http::{BODY_LIMIT, bodies, guard, health, page};
use crate::state::AppState;
use crate::{incidents, people, services};

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The OpenAPI description's frame; the paths come from the handlers' `#[utoipa::path]`.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Quell",
        description = "Self-hosted incident management. Every endpoint but this description needs `Authorization: Bearer <token>`. Errors are always {\"error\": {\"code\", \"message\", \"details\"}}."
    ),
    tags(
        (name = "incidents", description = "Incidents, their lifecycle, roles and timeline"),
        (name = "services", description = "The things that fail"),
        (name = "people", description = "Responders who hold roles"),
        (name = "accounts", description = "Users, API tokens and the audit log"),
        (name = "sla", description = "Severity policies: acknowledge and resolve targets, update cadence"),
        (name = "reports", description = "Response metrics for managers"),
        (name = "oncall", description = "On-call schedules: rotations, layers, overrides, and who is on call"),
        (name = "paging", description = "Escalation policies, contact methods and notification rules, channel subscriptions"),
        (name = "runbooks", description = "Runbooks: a link and a checklist per service or routing rule"),
        (name = "challenges", description = "Investigation challenges built from past incidents, and credits"),
        (name = "alerts", description = "Alert integrations, routing rules and the alerts grouped into incidents"),
        (name = "postmortems", description = "Postmortems and their action items"),
        (name = "changes", description = "Deploys and configuration changes to services")
    )
)]
struct ApiDoc;

/// The OpenAPI description of the API, as served at `/api/v1/openapi.json`.
pub fn openapi_json() -> String {
    api_routes()
        .1
        .to_pretty_json()
        .expect("the OpenAPI description serialises")
}

/// The API under `/api/v1`, behind its token gate, and the 404 for anything else under it.
fn api(state: &AppState) -> Router<AppState> {
    let (router, doc) = api_routes();
    let spec = doc
        .to_pretty_json()
        .expect("the OpenAPI description serialises");
    // Everything but the description and the 404 below needs a token.
    router
        // Inside the gate: it reads who is asking.
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::challenges::lookups::watch,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::http::gate::api,
        ))
        .route(
            "/api/v1/openapi.json",
            get(move || {
                let spec = spec.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], spec) }
            }),
        )
        .route(
            "/api/v1/{*rest}",
            any(|| async { AppError::NotFound("No such API endpoint.".into()) }),
        )
        .method_not_allowed_fallback(api_method_not_allowed)
}

/// An API route or webhook asked with a method it does not take: our JSON error (axum adds
/// the `Allow` header).
async fn api_method_not_allowed(method: Method, uri: Uri) -> AppError {
    AppError::MethodNotAllowed(format!(
        "{} does not take {method}; the Allow header lists the methods it does.",
        uri.path()
    ))
}

/// A page route asked with a method it does not take (`GET` on the address a form posts to):
/// the error page with the person's own header, not the browser's bare 405 (axum adds the
/// `Allow` header).
async fn page_method_not_allowed(method: Method, uri: Uri) -> page::PageError {
    let path = uri.path();
    page::PageError(AppError::MethodNotAllowed(
        if method == Method::GET || method == Method::HEAD {
            format!(
                "{method} is not allowed on {path}: it is where a form of another page is sent, \
                 not a page to open. Open the page with the form instead."
            )
        } else {
            format!("{method} is not allowed on {path}: it is a page to open, not a form to send.")
        },
    ))
}

/// The API's routes and their OpenAPI description, built from the same handler list so they
/// cannot drift apart.
fn api_routes() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    use crate::challenges::handlers as ch;
    use crate::evidence::handlers as ev;
    use incidents::handlers as inc;
    use people::handlers as ppl;
    use services::handlers as svc;
    use utoipa::OpenApi;
    use utoipa_axum::{router::OpenApiRouter, routes};
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(inc::list, inc::create))
        .routes(routes!(inc::get, inc::patch))
        .routes(routes!(inc::acknowledge))
        .routes(routes!(inc::mitigate))
        .routes(routes!(inc::resolve))
        .routes(routes!(inc::reopen))
        .routes(routes!(inc::change_severity))
        .routes(routes!(inc::assign_role, inc::unassign_role))
        .routes(routes!(inc::timeline, inc::add_note))
        .routes(routes!(inc::updates, inc::add_update))
        .routes(routes!(inc::claims, inc::claim))
        .routes(routes!(inc::renew_claim))
        .routes(routes!(inc::release_claim))
        .routes(routes!(inc::bridge, inc::set_bridge))
        .routes(routes!(svc::list, svc::create))
        .routes(routes!(svc::get, svc::patch, svc::delete))
        .routes(routes!(svc::bridge, svc::set_bridge))
        .routes(routes!(ppl::list))
        .routes(routes!(crate::accounts::handlers::me))
        .routes(routes!(
            crate::accounts::handlers::list_users,
            crate::accounts::handlers::create_user
        ))
        .routes(routes!(crate::accounts::handlers::patch_user))
        .routes(routes!(
            crate::accounts::handlers::list_tokens,
            crate::accounts::handlers::create_token
        ))
        .routes(routes!(crate::accounts::handlers::revoke_token))
        .routes(routes!(crate::audit_log::handlers::list))
        .routes(routes!(
            crate::sla::handlers::list,
            crate::sla::handlers::put
        ))
        .routes(routes!(crate::reports::handlers::report))
        .routes(routes!(crate::reports::handlers::change_failure_rate))
        .routes(routes!(
            crate::notify::handlers::list,
            crate::notify::handlers::create
        ))
        .routes(routes!(crate::notify::handlers::delete))
        .routes(routes!(inc::notifications))
        .routes(routes!(inc::suspect_changes))
        .routes(routes!(inc::judge_suspect_change))
        .routes(routes!(
            crate::related::handlers::list,
            crate::related::handlers::link
        ))
        .routes(routes!(crate::related::handlers::unlink))
        .routes(routes!(inc::checklist, inc::tick_checklist))
        .routes(routes!(ch::list, ch::create))
        .routes(routes!(ch::get, ch::update))
        .routes(routes!(ch::source))
        .routes(routes!(ch::leaks))
        .routes(routes!(ch::generate))
        .routes(routes!(ch::publish))
        .routes(routes!(ch::start))
        .routes(routes!(ch::attempt))
        .routes(routes!(ch::hypothesize))
        .routes(routes!(ch::hint))
        .routes(routes!(ch::give_up))
        .routes(routes!(ch::leaderboard))
        .routes(routes!(ch::my_credits))
        .routes(routes!(ch::settings, ch::set_settings))
        .routes(routes!(ch::balances))
        .routes(routes!(ch::ask_review))
        .routes(routes!(ch::reviews))
        .routes(routes!(ch::judge))
        .routes(routes!(ch::labelled))
        .routes(routes!(
            crate::runbooks::handlers::list,
            crate::runbooks::handlers::create
        ))
        .routes(routes!(
            crate::runbooks::handlers::get,
            crate::runbooks::handlers::update,
            crate::runbooks::handlers::delete
        ))
        .routes(routes!(crate::alerts::handlers::list))
        .routes(routes!(
            crate::integrations::handlers::list,
            crate::integrations::handlers::create
        ))
        .routes(routes!(
            crate::integrations::handlers::get,
            crate::integrations::handlers::patch
        ))
        .routes(routes!(crate::integrations::handlers::rotate))
        .routes(routes!(
            crate::routing::handlers::list,
            crate::routing::handlers::create,
            crate::routing::handlers::reorder
        ))
        .routes(routes!(
            crate::routing::handlers::update,
            crate::routing::handlers::delete
        ))
        .routes(routes!(crate::routing::handlers::preview))
        .routes(routes!(crate::postmortems::handlers::list))
        .routes(routes!(crate::postmortems::handlers::list_postmortems))
        .routes(routes!(crate::postmortems::handlers::get))
        .routes(routes!(
            crate::postmortems::handlers::comments,
            crate::postmortems::handlers::add_comment
        ))
        .routes(routes!(crate::postmortems::handlers::resolve_comment))
        .routes(routes!(
            crate::postmortems::handlers::patch,
            crate::postmortems::handlers::delete
        ))
        .routes(routes!(
            crate::trackers::handlers::list,
            crate::trackers::handlers::create
        ))
        .routes(routes!(
            crate::trackers::handlers::update,
            crate::trackers::handlers::delete
        ))
        .routes(routes!(crate::search::handlers::search))
        .routes(routes!(
            crate::changes::handlers::list,
            crate::changes::handlers::create
        ))
        .routes(routes!(crate::changes::handlers::get))
        .routes(routes!(ev::list, ev::attach))
        .routes(routes!(ev::remove))
        .routes(routes!(ev::upload))
        .routes(routes!(ev::held, ev::forget))
        .routes(routes!(ev::pick))
        .routes(routes!(ev::from_git))
        .routes(routes!(
            crate::oncall::handlers::list,
            crate::oncall::handlers::create
        ))
        .routes(routes!(
            crate::oncall::handlers::get,
            crate::oncall::handlers::update
        ))
        .routes(routes!(crate::oncall::handlers::on_call))
        .routes(routes!(
            crate::paging::handlers::list,
            crate::paging::handlers::create
        ))
        .routes(routes!(
            crate::paging::handlers::get,
            crate::paging::handlers::update,
            crate::paging::handlers::delete
        ))
        .routes(routes!(crate::paging::handlers::assign))
        .routes(routes!(crate::paging::handlers::on_call_now))
        .routes(routes!(
            crate::notify::handlers::subscriptions,
            crate::notify::handlers::subscribe
        ))
        .routes(routes!(crate::notify::handlers::unsubscribe))
        .routes(routes!(
            crate::notify::handlers::methods,
            crate::notify::handlers::add_method
        ))
        .routes(routes!(crate::notify::handlers::remove_method))
        .routes(routes!(crate::notify::handlers::add_rule))
        .routes(routes!(crate::notify::handlers::remove_rule))
        .routes(routes!(inc::paging))
        .split_for_parts()
}

fn pages(state: &AppState) -> Router<AppState> {
    use crate::auth;
    use incidents::forms as form;
    use incidents::pages as inc;
    use services::pages as svc;
    Router::new()
        .route("/", get(crate::dashboard::pages::show))
        .route("/incidents", get(inc::list).post(inc::create))
        .route("/incidents/new", get(inc::new_form))
        .route("/incidents/{key}", get(inc::show))
        .route("/incidents/events", get(crate::live::handlers::all))
        .route(
            "/incidents/{key}/events",
            get(crate::live::handlers::incident),
        )
        .route(
            "/incidents/{key}/edit",
            get(form::edit_form).post(form::edit),
        )
        .route("/incidents/{key}/transition", post(form::transition))
        .route("/incidents/{key}/severity", post(form::change_severity))
        .route("/incidents/{key}/roles", post(form::set_role))
        .route("/incidents/{key}/notes", post(form::add_note))
        .route("/incidents/{key}/claims", post(form::claim))
        .route("/incidents/{key}/claims/{id}", post(form::claim_action))
        .route("/incidents/{key}/bridge", post(form::set_bridge))
        .route("/incidents/{key}/updates", post(form::add_update))
        .route(
            "/incidents/{key}/suspects/{change_id}",
            post(form::judge_suspect),
        )
        .route(
            "/incidents/{key}/related",
            post(crate::related::pages::link),
        )
        .route("/incidents/{key}/checklist", post(form::tick_checklist))
        .route(
            "/incidents/{key}/evidence",
            get(crate::evidence::pages::list).post(crate::evidence::pages::paste),
        )
        .route(
            "/incidents/{key}/evidence/{id}/remove",
            post(crate::evidence::pages::remove),
        )
        .route(
            "/incidents/{key}/evidence/git",
            post(crate::evidence::pages::from_git),
        )
        .route(
            "/incidents/{key}/evidence/imports",
            // An export may be larger than other forms: its own limit, plus the form's parts.
            post(crate::evidence::pages::upload).layer(DefaultBodyLimit::max(
                crate::evidence::domain::UPLOAD_LIMIT + 64 * 1024,
            )),
        )
        .route(
            "/incidents/{key}/evidence/imports/{import_id}",
            get(crate::evidence::pages::held),
        )
        .route(
            "/incidents/{key}/evidence/imports/{import_id}/pick",
            post(crate::evidence::pages::pick),
        )
        .route(
            "/incidents/{key}/evidence/imports/{import_id}/remove",
            post(crate::evidence::pages::remove_upload),
        )
        .route("/challenges", get(crate::challenges::pages::list))
        .route("/challenges/{id}", get(crate::challenges::pages::show))
        .route(
            "/challenges/generate",
            post(crate::challenges::pages::generate),
        )
        .route(
            "/challenges/{id}/edit",
            get(crate::challenges::pages::edit_form).post(crate::challenges::pages::edit),
        )
        .route(
            "/challenges/{id}/publish",
            post(crate::challenges::pages::publish),
        )
        .route(
            "/challenges/{id}/attempts",
            post(crate::challenges::pages::start),
        )
        .route(
            "/challenges/{id}/attempts/{attempt_id}/hypotheses",
            post(crate::challenges::pages::hypothesize),
        )
        .route(
            "/challenges/{id}/attempts/{attempt_id}/hints",
            post(crate::challenges::pages::hint),
        )
        .route(
            "/challenges/{id}/attempts/{attempt_id}/give-up",
            post(crate::challenges::pages::give_up),
        )
        .route(
            "/challenges/{id}/attempts/{attempt_id}/hypotheses/{hypothesis_id}/review",
            post(crate::challenges::pages::ask_review),
        )
        .route(
            "/challenges/{id}/reviews",
            get(crate::challenges::pages::reviews),
        )
        .route(
            "/challenges/{id}/reviews/{review_id}",
            post(crate::challenges::pages::judge),
        )
        .route(
            "/challenges/{id}/labelled.tsv",
            get(crate::challenges::handlers::labelled),
        )
        .route(
            "/runbooks",
            get(crate::runbooks::pages::list).post(crate::runbooks::pages::create),
        )
        .route(
            "/runbooks/{id}/edit",
            get(crate::runbooks::pages::edit_form).post(crate::runbooks::pages::edit),
        )
        .route(
            "/runbooks/{id}/delete",
            post(crate::runbooks::pages::delete),
        )
        .route(
            "/incidents/{key}/related/{other}/unlink",
            post(crate::related::pages::unlink),
        )
        .route(
            "/incidents/{key}/postmortem",
            get(crate::postmortems::pages::show),
        )
        .route(
            "/incidents/{key}/postmortem.md",
            get(crate::postmortems::pages::export),
        )
        .route(
            "/incidents/{key}/postmortem/sections",
            post(crate::postmortems::pages::edit_section),
        )
        .route(
            "/incidents/{key}/postmortem/facts",
            post(crate::postmortems::pages::edit_facts),
        )
        .route(
            "/incidents/{key}/postmortem/timeline",
            post(crate::postmortems::pages::choose_timeline),
        )
        .route(
            "/incidents/{key}/postmortem/review",
            post(crate::postmortems::pages::review),
        )
        .route(
            "/incidents/{key}/postmortem/publish",
            post(crate::postmortems::pages::publish),
        )
        .route(
            "/incidents/{key}/postmortem/versions/{number}",
            get(crate::postmortems::pages::version),
        )
        .route(
            "/incidents/{key}/postmortem/action-items",
            post(crate::postmortems::pages::add_item),
        )
        .route("/services", get(svc::list).post(svc::create))
        .route("/services/new", get(svc::new_form))
        .route("/services/{name}", get(svc::show))
        .route("/services/{name}/edit", get(svc::edit_form).post(svc::edit))
        .route(
            "/incidents/{key}/postmortem/comments",
            post(crate::postmortems::pages::comment),
        )
        .route(
            "/incidents/{key}/postmortem/comments/{id}/resolve",
            post(crate::postmortems::pages::resolve_comment),
        )
        .route(
            "/incidents/{key}/postmortem/action-items/{id}",
            post(crate::postmortems::pages::edit_item),
        )
        .route(
            "/incidents/{key}/postmortem/action-items/{id}/delete",
            post(crate::postmortems::pages::delete_item),
        )
        .route("/reports", get(crate::reports::pages::index))
        .route("/search", get(crate::search::pages::search))
        .route(
            "/changes",
            get(crate::changes::pages::list).post(crate::changes::pages::create),
        )
        .route(
            "/services/{name}/changes",
            get(crate::changes::pages::for_service),
        )
        .route("/near-misses", get(crate::postmortems::pages::near_misses))
        .route("/postmortems", get(crate::postmortems::pages::list))
        .route(
            "/action-items",
            get(crate::postmortems::pages::action_items),
        )
        .route(
            "/action-items/{id}",
            post(crate::postmortems::pages::item_status),
        )
        .route("/account", get(crate::accounts::pages::account))
        .route(
            "/account/password",
            post(crate::accounts::pages::change_password),
        )
        .route(
            "/account/tokens",
            post(crate::accounts::pages::create_token),
        )
        .route(
            "/account/tokens/{id}/revoke",
            post(crate::accounts::pages::revoke_token),
        )
        .route(
            "/admin/users",
            get(crate::accounts::pages::users).post(crate::accounts::pages::create_user),
        )
        .route(
            "/admin/users/{id}",
            post(crate::accounts::pages::update_user),
        )
        .route("/admin/audit", get(crate::audit_log::pages::list))
        .route(
            "/admin/integrations",
            get(crate::integrations::pages::list).post(crate::integrations::pages::create),
        )
        .route(
            "/admin/integrations/{id}",
            post(crate::integrations::pages::update),
        )
        .route(
            "/admin/integrations/{id}/rotate",
            post(crate::integrations::pages::rotate),
        )
        .route(
            "/admin/routing",
            get(crate::routing::pages::show).post(crate::routing::pages::create),
        )
        .route(
            "/admin/routing/preview",
            post(crate::routing::pages::preview),
        )
        .route("/admin/routing/{id}", post(crate::routing::pages::update))
        .route(
            "/admin/routing/{id}/delete",
            post(crate::routing::pages::delete),
        )
        .route(
            "/admin/routing/{id}/move",
            post(crate::routing::pages::move_rule),
        )
        .route(
            "/admin/trackers",
            get(crate::trackers::pages::show).post(crate::trackers::pages::create),
        )
        .route("/admin/trackers/{id}", post(crate::trackers::pages::update))
        .route(
            "/admin/trackers/{id}/delete",
            post(crate::trackers::pages::delete),
        )
        .route(
            "/admin/channels",
            get(crate::notify::pages::show).post(crate::notify::pages::create),
        )
        .route(
            "/admin/channels/{id}/delete",
            get(crate::notify::pages::confirm_delete).post(crate::notify::pages::delete),
        )
        .route(
            "/admin/subscriptions",
            post(crate::notify::pages::subscribe),
        )
        .route(
            "/admin/subscriptions/{id}/delete",
            post(crate::notify::pages::unsubscribe),
        )
        .route("/oncall", get(crate::paging::pages::show))
        .route("/oncall/assign", post(crate::paging::pages::assign))
        .route(
            "/escalation-policies",
            post(crate::paging::pages::create_policy),
        )
        .route(
            "/escalation-policies/new",
            get(crate::paging::pages::new_policy),
        )
        .route(
            "/escalation-policies/{id}",
            get(crate::paging::pages::edit_policy).post(crate::paging::pages::update_policy),
        )
        .route(
            "/escalation-policies/{id}/delete",
            post(crate::paging::pages::delete_policy),
        )
        .route("/schedules", get(crate::oncall::pages::list))
        .route("/schedules/{id}", get(crate::oncall::pages::show))
        .route(
            "/schedules/{id}/overrides",
            post(crate::oncall::pages::add_override),
        )
        .route(
            "/schedules/{id}/overrides/{n}/delete",
            post(crate::oncall::pages::remove_override),
        )
        .route("/oncall/feed", post(crate::oncall::pages::make_feed))
        .route(
            "/account/paging",
            get(crate::notify::pages::my_paging).post(crate::notify::pages::change_paging),
        )
        .route(
            "/admin/policies",
            get(crate::sla::pages::show).post(crate::sla::pages::save),
        )
        .route(
            "/admin/credits",
            get(crate::challenges::credits::show).post(crate::challenges::credits::save),
        )
        // A read mid-challenge that may hold its answer marks the attempt (inside the gate: it
        // reads who is asking).
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::challenges::lookups::watch,
        ))
        // Everything above needs a signed-in session; sign-in itself does not.
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::http::gate::pages,
        ))
        .route(
            "/login",
            get(crate::accounts::pages::login_form).post(crate::accounts::pages::login),
        )
        .route("/logout", post(crate::accounts::pages::logout))
        // A calendar feed's address is its own credential.
        .route("/oncall/{file}", get(crate::oncall::pages::feed))
        // An acknowledge link is its own credential (signed, single-use, expiring).
        .route(
            "/incidents/{key}/ack/{token}",
            get(crate::incidents::pages::ack_link).post(crate::incidents::pages::ack_by_link),
        )
        .route("/auth/oidc/login", get(crate::accounts::oidc::start))
        .route("/auth/oidc/callback", get(crate::accounts::oidc::callback))
        // After every route: each route's own wrong methods answer the styled page.
        .method_not_allowed_fallback(page_method_not_allowed)
        .fallback(|| async { page::PageError(AppError::NotFound("There is no such page.".into())) })
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::http::gate::same_origin,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            page::with_signed_in_header,
        ))
        .layer(auth::session::layer(state))
}

/// Where the stylesheet and scripts are read from: `QUELL_STATIC_DIR`, else `static/` beside the
/// sources when running from a checkout, else `./static`.
fn static_dir() -> String {
    std::env::var("QUELL_STATIC_DIR").unwrap_or_else(|_| {
        let beside_sources = concat!(env!("CARGO_MANIFEST_DIR"), "/static");
        if std::path::Path::new(beside_sources).is_dir() {
            beside_sources.to_owned()
        } else {
            "static".to_owned()
        }
    })
}

/// Where alert senders post: no session, no CSRF, their own keys; the handlers reach the alert
/// lanes through their own state.
fn hooks(state: &AppState, ingest: Ingestor) -> Router<AppState> {
    use crate::alerts::hooks;
    Router::new()
        .route("/hooks/{format}/{id}", post(hooks::hook))
        .route("/v2/enqueue", post(hooks::pagerduty_enqueue))
        .route("/v2/change/enqueue", post(hooks::pagerduty_change))
        .method_not_allowed_fallback(api_method_not_allowed)
        .with_state(HookState {
            app: state.clone(),
            ingest,
        })
}

/// The whole application, its alert lanes writing through `state`'s own pool (tests, small
/// installs). Must be called inside the Tokio runtime: it starts the lanes.
/// An export uploaded for picking evidence (API or page): its body and its unpacking take room
/// in the uploads' own room.
fn is_upload(req: &axum::extract::Request) -> bool {
    req.method() == axum::http::Method::POST && req.uri().path().ends_with("/evidence/imports")
}

pub fn app(state: AppState) -> Router {
    let ingest = Ingestor::start(state.pool.clone());
    app_with(state, ingest)
}

/// The whole application, its webhooks storing through `ingest` (lanes on a pool of their own,
/// so a storm cannot take the connections pages need).
pub fn app_with(state: AppState, ingest: Ingestor) -> Router {
    let request_timeout = state.config.request_timeout;
    let b = state.config.bodies;
    let static_files = Router::new()
        .fallback_service(ServeDir::new(static_dir()))
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        ));
    // Browsers ask for /favicon.ico on every page, whatever the page links to.
    let favicon = get_service(ServeFile::new(
        std::path::Path::new(&static_dir()).join("favicon.ico"),
    ))
    .layer(SetResponseHeaderLayer::overriding(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=86400"),
    ));
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route_service("/favicon.ico", favicon)
        .merge(api(&state))
        .merge(hooks(&state, ingest))
        .nest_service("/static", static_files)
        .merge(pages(&state))
        .layer(axum::Extension(crate::live::hub::Hub::new(state.pool.clone())))
        .with_state(state)
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                 form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ),
        ))
        .layer(middleware::from_fn(guard::refuse_unstorable_uri))
        // Room for a large body before it is read (`http::bodies`); small ones pass.
        .layer(middleware::from_fn_with_state(
            bodies::Budget::new(b.budget_bytes, b.wait, b.read_within)
                .with_uploads(
                    b.upload_bytes,
                    is_upload,
                    crate::evidence::domain::UNPACK_WORK,
                ),
            bodies::admit,
        ))
        // Bodies are read through our extractors, which answer 413 in our format.
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(TimeoutLayer::with_status_code(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            request_timeout,
        ))
        .layer(CatchPanicLayer::custom(|_| {
            AppError::Internal("a handler panicked".into()).into_response()
        }))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(
            TraceLayer::new_for_http()
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO))
                .make_span_with(|req: &Request<_>| {
                let id = req
                    .headers()
                    .get(REQUEST_ID)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("-");
                tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id)
            }),
        )
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
}
