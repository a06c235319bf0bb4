//! `/metrics` for Prometheus, behind the bearer token `QUELL_METRICS_TOKEN` (unset: 404), and
//! the timing of every request by its route template.

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::metrics::{self, KindLabels, PoolLabels, RouteLabels};
use crate::state::AppState;

/// Where the route template a request matched is written, for its timing: filled after
/// routing, read when the response is out, whichever layer made it (a timeout's 503 too).
#[derive(Clone, Default)]
struct Route(std::sync::Arc<std::sync::OnceLock<String>>);

/// Writes the route the request matched where its timing reads it (a route layer: it runs
/// after routing, where the template is known).
pub async fn name_route(req: Request, next: Next) -> Response {
    if let (Some(slot), Some(m)) = (
        req.extensions().get::<Route>(),
        req.extensions().get::<MatchedPath>(),
    ) {
        let _ = slot.0.set(m.as_str().to_owned());
    }
    next.run(req).await
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
    let slot = Route::default();
    let mut req = req;
    req.extensions_mut().insert(slot.clone());
    let res = next.run(req).await;
    let route = slot
        .0
        .get()
        .cloned()
        .unwrap_or_else(|| "(no route)".to_owned());
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

async fn outbox_due(pool: &sqlx::PgPool) -> crate::error::AppResult<Vec<(String, i64)>> {
    let mut tx = crate::transaction::begin(pool).await?;
    sqlx::query!("set local statement_timeout = 2000")
        .execute(&mut *tx)
        .await?;
    let rows = crate::notify::db::due_by_kind(&mut *tx).await?;
    tx.commit().await?;
    Ok(rows)
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
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
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
    // Read now: the outbox's due messages (within 2 s: a scrape must not wait on a backlog)
    // and the pool's connections. A count that failed is left out, not reported stale.
    m.outbox_pending.clear();
    match outbox_due(&state.pool).await {
        Ok(rows) => {
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
