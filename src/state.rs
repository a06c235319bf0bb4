//! The state every handler shares: cheap to clone.

use sqlx::PgPool;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub pool: PgPool,
    pub config: Arc<AppConfig>,
}

/// What handlers need to know of the configuration.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// The address people reach Quell at, e.g. `https://quell.example.com`.
    pub base_url: String,
    /// Take the client address from the first `X-Forwarded-For` hop (behind a trusted proxy).
    pub trust_forwarded_for: bool,
}

impl AppState {
    pub fn new(pool: PgPool, config: AppConfig) -> Self {
        Self {
            pool,
            config: Arc::new(config),
        }
    }
}
