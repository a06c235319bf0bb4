//! `/metrics` for Prometheus, behind the bearer token `QUELL_METRICS_TOKEN` (unset: 404), and
//! the timing of every request by its route template.

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::metrics::{self, KindLabels, PoolLabels, RouteLabels};
use crate::state::AppState;

/// The route template a request matched, carried out on its response.
#[derive(Clone)]
struct Route(String);

/// Names the response with the route its request matched (a route layer: it runs after
/// routing, where the template is known).
pub async fn name_route(req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_owned());
    let mut res = next.run(req).await;
    if let Some(r) = route {
        res.extensions_mut().insert(Route(r));
    }
    res
}

/// Times every request, counted by method, route template and status class: never by the path
/// asked for, so what a client sends cannot add series.
pub async fn time_requests(req: Request, next: Next) -> Response {
    let method = match req.method().as_str() {
        m @ ("GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS") => m,
        _ => "OTHER",
    }
    .to_owned();
    let start = std::time::Instant::now();
    let res = next.run(req).await;
    let route = res
        .extensions()
        .get::<Route>()
        .map_or_else(|| "(no route)".to_owned(), |r| r.0.clone());
    let status = format!("{}xx", res.status().as_u16() / 100);
    metrics::get()
        .requests
        .get_or_create(&RouteLabels {
            method,
            route,
            status,
        })
        .observe(metrics::since(start));
    res
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// `GET /metrics`: the exposition, to the holder of the metrics token.
pub async fn scrape(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let Some(token) = state.config.metrics_token.as_deref() else {
        return (
            StatusCode::NOT_FOUND,
            "Metrics are off: set QUELL_METRICS_TOKEN and scrape with it as a bearer token.\n",
        )
            .into_response();
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    // Compared as digests: how long the comparison takes says nothing of the token.
    if given.map(digest) != Some(digest(token)) {
        let mut res = (
            StatusCode::UNAUTHORIZED,
            "Send the metrics token: Authorization: Bearer <QUELL_METRICS_TOKEN>\n",
        )
            .into_response();
        res.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"quell metrics\""),
        );
        return res;
    }
    let m = metrics::get();
    // Read now: the outbox's waiting messages and the pool's connections.
    match crate::notify::db::pending_by_kind(&state.pool).await {
        Ok(rows) => {
            m.outbox_pending.clear();
            for (kind, n) in rows {
                m.outbox_pending.get_or_create(&KindLabels { kind }).set(n);
            }
        }
        Err(e) => tracing::warn!(error = %e, "metrics: could not count the outbox"),
    }
    let (size, idle) = (state.pool.size() as i64, state.pool.num_idle() as i64);
    for (s, n) in [("idle", idle), ("busy", size - idle)] {
        let labels = PoolLabels {
            pool: "serving".into(),
            state: s.into(),
        };
        m.pool.get_or_create(&labels).set(n);
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        m.encode(),
    )
        .into_response()
}
