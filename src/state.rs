//! The state every handler shares: cheap to clone.

use sqlx::PgPool;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub pool: PgPool,
    pub config: Arc<AppConfig>,
    /// The key that signs the sign-in form's cookie, read from the database on first use.
    pub login_key: Arc<tokio::sync::OnceCell<[u8; 32]>>,
    /// This replica's copies of what the public status page shows, by the database's version.
    pub public_copies: Arc<crate::cache::Copies>,
}

/// What handlers need to know of the configuration.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// The address people reach Quell at, e.g. `https://quell.example.com`.
    pub base_url: String,
    /// Take the client address from the first `X-Forwarded-For` hop (behind a trusted proxy).
    pub trust_forwarded_for: bool,
    /// Single sign-on, when configured.
    pub oidc: Option<OidcSettings>,
    /// Folders whose git repositories evidence may be read from (`QUELL_GIT_ROOTS`); none turns
    /// reading from git off.
    pub git_roots: Vec<std::path::PathBuf>,
    /// Internal places webhooks may reach (`QUELL_WEBHOOK_ALLOW`); none by default.
    pub webhook_allow: crate::egress::Allow,
    /// The live room's settings.
    pub live: LiveSettings,
    /// How long a request may take before it is answered 503 (`QUELL_REQUEST_TIMEOUT_SECS`).
    pub request_timeout: std::time::Duration,
    /// How much room large request bodies share.
    pub bodies: BodySettings,
    /// How much uploaded exports may hold at once.
    pub uploads: UploadQuota,
    /// The bearer token Prometheus scrapes `/metrics` with (`QUELL_METRICS_TOKEN`); none turns
    /// `/metrics` off.
    pub metrics_token: Option<String>,
}

/// Bytes of text uploaded exports may hold at once (`QUELL_UPLOADS_PER_PERSON_MIB`,
/// `QUELL_UPLOADS_TOTAL_MIB`).
#[derive(Debug, Clone, Copy)]
pub struct UploadQuota {
    pub per_person: i64,
    pub total: i64,
}

impl Default for UploadQuota {
    fn default() -> Self {
        Self {
            per_person: 256 << 20,
            total: 4096 << 20,
        }
    }
}

/// The room large request bodies share in one process (`http::bodies`).
#[derive(Debug, Clone, Copy)]
pub struct BodySettings {
    /// Bytes of large bodies read and handled at once (`QUELL_LARGE_BODIES_MIB`).
    pub budget_bytes: usize,
    /// Bytes uploads and the work on them take at once, apart (`QUELL_UPLOAD_WORK_MIB`).
    pub upload_bytes: usize,
    /// How long a large body waits for room before it is answered 503.
    pub wait: std::time::Duration,
    /// How long a body that holds room has to arrive.
    pub read_within: std::time::Duration,
}

impl Default for BodySettings {
    fn default() -> Self {
        Self {
            budget_bytes: 2 * 1024 * 1024,
            upload_bytes: 96 * 1024 * 1024,
            wait: std::time::Duration::from_secs(5),
            read_within: std::time::Duration::from_secs(10),
        }
    }
}

/// How the live incident room behaves.
#[derive(Debug, Clone, Copy)]
pub struct LiveSettings {
    /// Event streams one person may hold open at once, across every replica.
    pub streams_per_person: i64,
    /// Minutes a working-on claim holds without renewal.
    pub claim_minutes: i64,
}

impl Default for LiveSettings {
    fn default() -> Self {
        Self {
            streams_per_person: 20,
            claim_minutes: 30,
        }
    }
}

/// OpenID Connect settings, as given (checked at start by `accounts::oidc::check`).
#[derive(Debug, Clone, Default)]
pub struct OidcSettings {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub scopes: Vec<String>,
    /// The ID token claim holding group or role names, e.g. `groups`.
    pub role_claim: String,
    /// `claim-value=role,…`
    pub role_map: String,
    /// `group=team-slug,…`: groups whose members are a team's (beside each team's own)
    pub team_map: String,
    /// The role of a person none of whose claim values is mapped; none refuses them.
    pub default_role: Option<String>,
}

impl AppState {
    pub fn new(pool: PgPool, config: AppConfig) -> Self {
        Self {
            pool,
            config: Arc::new(config),
            login_key: Arc::default(),
            public_copies: Arc::default(),
        }
    }
}
