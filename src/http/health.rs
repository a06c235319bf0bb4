//! `/healthz`: the process answers. `/readyz`: and it can reach its database.

use axum::extract::State;
use axum::http::StatusCode;

use crate::state::AppState;

pub async fn healthz() -> &'static str {
    "ok"
}

/// Within a second either way: a database that does not answer in time counts as unreachable.
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, &'static str) {
    let check = sqlx::query_scalar!(r#"select 1 as "one!""#).fetch_one(&state.pool);
    match tokio::time::timeout(std::time::Duration::from_secs(1), check).await {
        Ok(Ok(_)) => (StatusCode::OK, "ready"),
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "database unreachable");
            (StatusCode::SERVICE_UNAVAILABLE, "database unreachable")
        }
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "database not answering within 1 s",
        ),
    }
}
