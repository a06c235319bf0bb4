//! `/healthz`: the process answers. `/readyz`: and it can reach its database.

use axum::extract::State;
use axum::http::StatusCode;

use crate::state::AppState;

pub async fn healthz() -> &'static str {
    "ok"
}

pub async fn readyz(State(state): State<AppState>) -> (StatusCode, &'static str) {
    match sqlx::query_scalar!(r#"select 1 as "one!""#)
        .fetch_one(&state.pool)
        .await
    {
        Ok(_) => (StatusCode::OK, "ready"),
        Err(err) => {
            tracing::warn!(error = %err, "database unreachable");
            (StatusCode::SERVICE_UNAVAILABLE, "database unreachable")
        }
    }
}
