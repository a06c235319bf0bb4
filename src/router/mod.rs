//! The top of Quell: the one module that knows every capability. It assembles the API under
//! `/api/v1` (and its OpenAPI description), the pages, the webhooks, static files and health
//! checks, wraps them in the middleware every request passes (request id, tracing, timeouts,
//! body limit, panic guard, security headers), and hands the webhooks the alert lanes.

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, Method, Request, Uri, header};
use axum::response::IntoResponse;
use axum::routing::{any, get, get_service};
use axum::{Router, middleware};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};

use crate::alerts::ingest::Ingestor;
use crate::error::AppError;
use crate::http::routes::Routes;
use crate::http::{BODY_LIMIT, bodies, guard, health, page};
use crate::state::AppState;
use utoipa_axum::router::OpenApiRouter;

mod metrics;

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
        (name = "teams", description = "Teams: who owns what, their members and leads"),
        (name = "accounts", description = "Users, API tokens and the audit log"),
        (name = "sla", description = "Severity policies: acknowledge and resolve targets, update cadence"),
        (name = "reports", description = "Response metrics for managers"),
        (name = "oncall", description = "On-call schedules: rotations, layers, overrides, and who is on call"),
        (name = "paging", description = "Escalation policies, contact methods and notification rules, channel subscriptions"),
        (name = "runbooks", description = "Runbooks: a link and a checklist per service or routing rule"),
        (name = "challenges", description = "Investigation challenges built from past incidents, and credits"),
        (name = "alerts", description = "Alert integrations, routing rules and the alerts grouped into incidents"),
        (name = "postmortems", description = "Postmortems and their action items"),
        (name = "changes", description = "Deploys and configuration changes to services"),
        (name = "status", description = "The public status page: components and published incidents")
    )
)]
struct ApiDoc;

/// The OpenAPI description of the API, as served at `/api/v1/openapi.json`.
pub fn openapi_json() -> String {
    with_description(capabilities().api)
        .into_openapi()
        .to_pretty_json()
        .expect("the OpenAPI description serialises")
}

/// Every capability's routes, merged: the one place that knows them all.
pub fn capabilities() -> Routes {
    use crate::*;
    [
        dashboard::routes::routes(),
        incidents::routes::routes(),
        live::routes::routes(),
        services::routes::routes(),
        people::routes::routes(),
        teams::routes::routes(),
        accounts::routes::routes(),
        audit_log::routes::routes(),
        sla::routes::routes(),
        reports::routes::routes(),
        notify::routes::routes(),
        related::routes::routes(),
        merging::routes::routes(),
        responders::routes::routes(),
        swaps::routes::routes(),
        workload::routes::routes(),
        challenges::routes::routes(),
        runbooks::routes::routes(),
        alerts::routes::routes(),
        integrations::routes::routes(),
        imports::routes::routes(),
        statuspage::routes::routes(),
        routing::routes::routes(),
        silences::routes::routes(),
        heartbeats::routes::routes(),
        maintenance::routes::routes(),
        postmortems::routes::routes(),
        trackers::routes::routes(),
        search::routes::routes(),
        changes::routes::routes(),
        evidence::routes::routes(),
        oncall::routes::routes(),
        paging::routes::routes(),
    ]
    .into_iter()
    .fold(Routes::new(), Routes::merge)
}

/// The API under `/api/v1`, behind its token gate, and the 404 for anything else under it.
fn api(state: &AppState, routes: OpenApiRouter<AppState>) -> Router<AppState> {
    let (router, doc) = with_description(routes).split_for_parts();
    let spec = doc
        .to_pretty_json()
        .expect("the OpenAPI description serialises");
    // Everything but the description and the 404 below needs a token.
    router
        // Inside the gate: they read who is asking.
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::challenges::lookups::watch,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::incident_ref::gate::hide,
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

/// The API's routes under the description's frame: the paths come from the same handler lists
/// the routes do, so they cannot drift apart.
fn with_description(routes: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    use utoipa::OpenApi;
    OpenApiRouter::with_openapi(ApiDoc::openapi()).merge(routes)
}

/// The pages behind the session gate, then the addresses that are their own credential.
fn pages(state: &AppState, gated: Router<AppState>, open: Router<AppState>) -> Router<AppState> {
    gated
        // A read mid-challenge that may hold its answer marks the attempt (inside the gate: it
        // reads who is asking).
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::challenges::lookups::watch,
        ))
        // A restricted incident is not there for those it is not open to.
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::incident_ref::gate::hide,
        ))
        // Everything above needs a signed-in session; sign-in itself does not.
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::http::gate::pages,
        ))
        .merge(open)
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
        .layer(crate::auth::session::layer(state))
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

/// An export uploaded for picking evidence (API or page): its body and its unpacking take room
/// in the uploads' own room.
fn is_upload(req: &axum::extract::Request) -> bool {
    req.method() == axum::http::Method::POST && req.uri().path().ends_with("/evidence/imports")
}

/// The whole application, its alert lanes writing through `state`'s own pool (tests, small
/// installs). Must be called inside the Tokio runtime: it starts the lanes.
pub fn app(state: AppState) -> Router {
    let ingest = Ingestor::start(state.pool.clone());
    app_with(state, ingest)
}

/// The whole application, its webhooks storing through `ingest` (lanes on a pool of their own,
/// so a storm cannot take the connections pages need).
pub fn app_with(state: AppState, ingest: Ingestor) -> Router {
    let routes = capabilities();
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
        .route("/metrics", get(metrics::scrape))
        .route_service("/favicon.ico", favicon)
        .merge(api(&state, routes.api))
        .merge(
            crate::alerts::routes::hooks(&state, ingest)
                .method_not_allowed_fallback(api_method_not_allowed),
        )
        .nest_service("/static", static_files)
        .merge(pages(&state, routes.pages, routes.open))
        .layer(axum::Extension(crate::live::hub::Hub::new(state.pool.clone())))
        // After routing, where the route's template is known, for the request timing below.
        .route_layer(middleware::from_fn(metrics::name_route))
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
                tracing::info_span!("request", method = %req.method(), path = %logged_path(req.uri().path()), request_id = %id)
            }),
        )
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(middleware::from_fn(metrics::time_requests))
}

/// A path as the request log writes it, without the credential a link carries in its path: an
/// acknowledge or respond link's token, a status page subscriber's, a calendar feed's name.
fn logged_path(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut secret = false;
    for segment in path.split('/') {
        let feed = out.len() == 2 && out[1] == "oncall" && segment.ends_with(".ics");
        out.push(if secret || feed { "…" } else { segment });
        secret = matches!(segment, "ack" | "respond" | "subscription");
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_request_log_leaves_out_what_a_link_carries_as_its_credential() {
        assert_eq!(
            super::logged_path("/incidents/INC-7/ack/abc.def"),
            "/incidents/INC-7/ack/…"
        );
        assert_eq!(
            super::logged_path("/status/subscription/0f3a/unsubscribe"),
            "/status/subscription/…/unsubscribe"
        );
        assert_eq!(super::logged_path("/oncall/tok123.ics"), "/oncall/…");
        assert_eq!(super::logged_path("/oncall/assign"), "/oncall/assign");
        assert_eq!(super::logged_path("/incidents/INC-7"), "/incidents/INC-7");
    }
}
