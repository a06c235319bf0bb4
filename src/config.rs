//! Command line and environment. Every setting has a flag and an environment variable.

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "quell", version, about = "Self-hosted incident management")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the web server (applies pending migrations first).
    Serve(Box<ServeArgs>),
    /// Apply pending database migrations and exit.
    Migrate(DbArgs),
    /// Check a database (after a restore or an upgrade): every migration of this binary
    /// applied as it has it, and the invariants holding. Changes nothing; exits 1 on a failure.
    Check(DbArgs),
    /// Load the demo data (services, people, INC-1187). Safe to run again.
    Demo(DbArgs),
    /// Manage accounts.
    #[command(subcommand)]
    User(UserCommand),
    /// Look after the audit log.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Print the API's OpenAPI description (what `/api/v1/openapi.json` serves) and exit.
    Openapi,
    /// Import from another tool: a plan first (nothing changes without --apply).
    #[command(subcommand)]
    Import(ImportCommand),
    /// Configuration as code: teams, schedules, escalation policies, services, routing rules,
    /// runbooks, channels and integrations as a file.
    #[command(subcommand)]
    Config(ConfigCommand),
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print Quell's teams, schedules, escalation policies, services, routing rules, runbooks,
    /// channels and integrations as YAML, secrets never written (e.g. `quell config export >
    /// quell.yaml`).
    Export(ConfigExportArgs),
    /// Make Quell match a file: what differs is created or updated (and, with --prune, what
    /// its lists leave out deleted), in one transaction, through the same checks and audit as
    /// the API. Running it twice changes nothing.
    Apply(ConfigApplyArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ConfigExportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// As `quell serve` takes it: the teams it maps follow a group, so the file leaves out
    /// their people.
    #[arg(long, env = "QUELL_OIDC_TEAM_MAP", default_value = "")]
    pub oidc_team_map: String,
}

#[derive(Debug, Clone, Args)]
pub struct ConfigApplyArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// As `quell serve` takes it: the teams it maps follow a group, so a file may not give
    /// them people.
    #[arg(long, env = "QUELL_OIDC_TEAM_MAP", default_value = "")]
    pub oidc_team_map: String,
    /// The file, as `quell config export` writes it.
    #[arg(short = 'f', long)]
    pub file: std::path::PathBuf,
    /// Print what would change (every refusal with its line) and change nothing.
    #[arg(long)]
    pub plan: bool,
    /// Delete what a list the file has leaves out (a kind the file has no list for is left
    /// alone; schedules, integrations and the default routing rule are kept).
    #[arg(long)]
    pub prune: bool,
    /// Internal places a channel of the file may reach, as `quell serve` takes them.
    #[arg(long, env = "QUELL_WEBHOOK_ALLOW", default_value = "", value_parser = crate::egress::Allow::parse)]
    pub webhook_allow: crate::egress::Allow,
}

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Users, schedules (layers, restrictions, overrides ahead), escalation policies, services
    /// and their Events API v2 integrations (keeping their keys), read with an admin's REST API
    /// token. Prints the plan; with --apply, does it. Running it again changes nothing; after a
    /// change in PagerDuty it updates what it made.
    Pagerduty(PagerDutyImportArgs),
    /// Users, teams (with their routing to escalations), schedules (rotations, time
    /// restrictions, overrides ahead), escalations and API integrations (keeping their keys),
    /// read with an Opsgenie API key. Prints the plan; with --apply, does it. Running it again
    /// changes nothing; after a change in Opsgenie it updates what it made.
    Opsgenie(OpsgenieImportArgs),
}

#[derive(Debug, Clone, Args)]
pub struct OpsgenieImportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// An Opsgenie API key with the Read and Configuration access rights (Settings → API key
    /// management).
    #[arg(long, env = "OPSGENIE_API_KEY", hide_env_values = true)]
    pub key: String,
    /// Opsgenie's API address (https://api.eu.opsgenie.com in its EU region).
    #[arg(
        long,
        env = "OPSGENIE_API_URL",
        default_value = "https://api.opsgenie.com"
    )]
    pub api_url: String,
    /// Make the changes the plan lists (without it, nothing changes).
    #[arg(long)]
    pub apply: bool,
    /// Import a schedule even where who is on call over the next 28 days differs from
    /// Opsgenie's own timeline (without it, such a schedule is skipped and the difference
    /// named).
    #[arg(long)]
    pub accept_differences: bool,
}

#[derive(Debug, Clone, Args)]
pub struct PagerDutyImportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// A PagerDuty REST API token of an admin (read-only is enough).
    #[arg(long, env = "PAGERDUTY_API_TOKEN", hide_env_values = true)]
    pub token: String,
    /// PagerDuty's API address.
    #[arg(
        long,
        env = "PAGERDUTY_API_URL",
        default_value = "https://api.pagerduty.com"
    )]
    pub api_url: String,
    /// Make the changes the plan lists (without it, nothing changes).
    #[arg(long)]
    pub apply: bool,
    /// Import a schedule even where who is on call over the next 28 days differs from
    /// PagerDuty's own rendering (without it, such a schedule is skipped and the difference
    /// named).
    #[arg(long)]
    pub accept_differences: bool,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create an account, or reset the role and password of an existing one (and enable it).
    Create(UserCreateArgs),
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Hand the audit log to a role of its own, so the role Quell connects as can only read and
    /// append to it. Run once with an administrator's DATABASE_URL.
    Protect(AuditProtectArgs),
}

#[derive(Debug, Clone, Args)]
pub struct AuditProtectArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// The role Quell's replicas connect as.
    #[arg(long)]
    pub app_role: String,
}

#[derive(Debug, Clone, Args)]
pub struct UserCreateArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[arg(long)]
    pub email: String,
    /// viewer, responder, manager or admin
    #[arg(long)]
    pub role: String,
    /// Display name (defaults to the email's local part)
    #[arg(long)]
    pub name: Option<String>,
    /// Read the password from the first line of standard input instead of generating one
    #[arg(long)]
    pub password_stdin: bool,
}

#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    /// PostgreSQL connection string.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: String,
    /// Most connections of the pool pages, the API and the engines share; at least 4 (the SLA
    /// engine keeps one, and the others take one a round). The engines' and live pages'
    /// `LISTEN` connections (one each, five in all) and the alert lanes' are their own, on top.
    #[arg(long, env = "QUELL_DB_MAX_CONNECTIONS", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(4..))]
    pub db_max_connections: u32,
    /// Milliseconds a request waits for a database connection (a free one, or a new one while
    /// PostgreSQL is unreachable) before it is answered 503 with `Retry-After`.
    #[arg(long, env = "QUELL_DB_ACQUIRE_TIMEOUT_MS", default_value_t = 750)]
    pub db_acquire_timeout_ms: u64,
    /// Milliseconds one SQL statement may run (`statement_timeout`); 0 for no limit.
    #[arg(long, env = "QUELL_DB_STATEMENT_TIMEOUT_MS", default_value_t = 10_000)]
    pub db_statement_timeout_ms: u64,
    /// Milliseconds a transaction may sit idle before PostgreSQL ends its session
    /// (`idle_in_transaction_session_timeout`), so a stuck process cannot hold locks; 0 for none.
    #[arg(
        long,
        env = "QUELL_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS",
        default_value_t = 15_000
    )]
    pub db_idle_in_transaction_timeout_ms: u64,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Address and port to listen on.
    #[arg(long, env = "QUELL_BIND", default_value = "127.0.0.1:3000")]
    pub bind: String,
    /// The URL people reach Quell at (used in links sent elsewhere); defaults to http://<bind>.
    #[arg(long, env = "QUELL_BASE_URL")]
    pub base_url: Option<String>,
    /// Do not apply migrations at start (when a deploy step runs `quell migrate`).
    #[arg(long, env = "QUELL_NO_MIGRATE")]
    pub no_migrate: bool,
    /// Take client addresses from X-Forwarded-For (only behind a proxy that sets it).
    #[arg(long, env = "QUELL_TRUST_FORWARDED_FOR")]
    pub trust_forwarded_for: bool,
    /// Create or reset this admin at start (with QUELL_ADMIN_PASSWORD).
    #[arg(long, env = "QUELL_ADMIN_EMAIL")]
    pub admin_email: Option<String>,
    #[arg(long, env = "QUELL_ADMIN_PASSWORD", hide_env_values = true)]
    pub admin_password: Option<String>,
    /// Make this value the bootstrap admin's API token (stored hashed).
    #[arg(long, env = "QUELL_BOOTSTRAP_TOKEN", hide_env_values = true)]
    pub bootstrap_token: Option<String>,
    /// Folders whose git repositories (working copies or bare mirrors) Quell may read evidence
    /// from, separated by `:`; none by default, which turns reading from git off.
    #[arg(long, env = "QUELL_GIT_ROOTS", value_delimiter = ':')]
    pub git_roots: Vec<std::path::PathBuf>,
    /// MiB of uploaded exports one person may hold at once (each is held a day, or until its
    /// uploader removes it); one more is refused with 429.
    #[arg(long, env = "QUELL_UPLOADS_PER_PERSON_MIB", default_value_t = 256)]
    pub uploads_per_person_mib: i64,
    /// MiB of uploaded exports everyone together may hold at once.
    #[arg(long, env = "QUELL_UPLOADS_TOTAL_MIB", default_value_t = 4096)]
    pub uploads_total_mib: i64,
    /// Internal places webhooks may reach: host names, addresses and networks, separated by
    /// commas (`hooks.internal,10.20.0.0/16,127.0.0.1`). Without them, a webhook contact method
    /// or channel aimed at loopback, a private or link-local range, the metadata address or
    /// `localhost` is refused when saved and when sent.
    #[arg(long, env = "QUELL_WEBHOOK_ALLOW", default_value = "", value_parser = crate::egress::Allow::parse)]
    pub webhook_allow: crate::egress::Allow,
    /// The SMTP server email is sent through, as a URL: `smtp://host:587?tls=required`,
    /// `smtps://user:password@host`, or `smtp://127.0.0.1:2525` (plain, for a local relay).
    /// Unset, email contact methods and channels cannot be reached, and say so.
    #[arg(long, env = "QUELL_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// The bearer token Prometheus sends to scrape `/metrics` (a long random one).
    /// Unset, `/metrics` answers 404.
    #[arg(long, env = "QUELL_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Days a message the outbox is done with (delivered, failed, cancelled) is kept; at
    /// least 366, so the workload report's year stays whole. Pending ones are never deleted.
    #[arg(long, env = "QUELL_OUTBOX_RETENTION_DAYS", default_value_t = 400)]
    pub outbox_retention_days: i32,
    /// Days an alert is kept after it resolved, counted in whole months: a month of alerts is
    /// let go once it ended that many days ago, and its incidents keep their alert lines and
    /// counts. 0 keeps alerts forever. Alerts still open are never let go.
    #[arg(long, env = "QUELL_ALERT_RETENTION_DAYS", default_value_t = 400)]
    pub alert_retention_days: i32,
    /// The From of Quell's email.
    #[arg(
        long,
        env = "QUELL_SMTP_FROM",
        default_value = "Quell <quell@localhost>"
    )]
    pub smtp_from: String,
    /// Seconds a notification sender holds the messages it took: another replica sends them
    /// if it has not finished by then, and the stalled sender's late result is refused.
    #[arg(long, env = "QUELL_NOTIFY_LEASE_SECS", default_value_t = 60.0)]
    pub notify_lease_secs: f64,
    /// Alert lanes of this process: each writes batches of webhooks in transactions of its own,
    /// on a connection of its own beside QUELL_DB_MAX_CONNECTIONS. More help only when
    /// PostgreSQL has cores to spare.
    #[arg(long, env = "QUELL_ALERT_LANES", default_value_t = 2)]
    pub alert_lanes: usize,
    /// Event streams (live pages) one person may hold open at once, across every replica.
    #[arg(long, env = "QUELL_LIVE_STREAMS_PER_PERSON", default_value_t = 20)]
    pub live_streams_per_person: i64,
    /// Minutes a working-on claim holds without renewal.
    #[arg(long, env = "QUELL_CLAIM_MINUTES", default_value_t = 30)]
    pub claim_minutes: i64,
    #[command(flatten)]
    pub oidc: OidcArgs,
    #[command(flatten)]
    pub connections: ConnectionArgs,
}

/// What one client may hold of a replica.
#[derive(Debug, Clone, Args)]
pub struct ConnectionArgs {
    /// Seconds a connection has to send a request's headers, from opening or from its previous
    /// response (so also the longest keep-alive pause).
    #[arg(long, env = "QUELL_HEADER_TIMEOUT_SECS", default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// Seconds without a byte moving either way after which a connection is closed.
    #[arg(long, env = "QUELL_IDLE_TIMEOUT_SECS", default_value_t = 60)]
    pub idle_timeout_secs: u64,
    /// Most connections open at once; more wait in the listen backlog.
    #[arg(long, env = "QUELL_MAX_CONNECTIONS", default_value_t = 1024)]
    pub max_connections: usize,
    /// Seconds a request may take before it is answered 503 (event streams excepted).
    #[arg(long, env = "QUELL_REQUEST_TIMEOUT_SECS", default_value_t = 30)]
    pub request_timeout_secs: u64,
    /// MiB of large request bodies (over 64 KiB) one process reads and handles at once; more
    /// wait their turn up to 5 s and are then answered 503 with Retry-After.
    #[arg(long, env = "QUELL_LARGE_BODIES_MIB", default_value_t = 2)]
    pub large_bodies_mib: usize,
    /// MiB that uploaded exports — their bytes, what unpacking holds and what they keep — may
    /// take at once in one process, apart from other bodies; more wait their turn up to 5 s and
    /// are then answered 503 with Retry-After.
    #[arg(long, env = "QUELL_UPLOAD_WORK_MIB", default_value_t = 96)]
    pub upload_work_mib: usize,
    /// Seconds a stopping replica waits for requests in flight (and open event streams) before
    /// it exits.
    #[arg(long, env = "QUELL_SHUTDOWN_DRAIN_SECS", default_value_t = 10)]
    pub shutdown_drain_secs: u64,
}

/// Optional single sign-on with an OpenID Connect provider.
#[derive(Debug, Clone, Args)]
pub struct OidcArgs {
    /// The provider's issuer URL (its discovery document is at
    /// <issuer>/.well-known/openid-configuration). Setting it turns SSO on.
    #[arg(long, env = "QUELL_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,
    #[arg(long, env = "QUELL_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
    #[arg(long, env = "QUELL_OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub oidc_client_secret: Option<String>,
    #[arg(
        long,
        env = "QUELL_OIDC_SCOPES",
        default_value = "openid email profile"
    )]
    pub oidc_scopes: String,
    /// The ID token claim with group or role names.
    #[arg(long, env = "QUELL_OIDC_ROLE_CLAIM", default_value = "groups")]
    pub oidc_role_claim: String,
    /// claim-value=role pairs, e.g. "sre-admins=admin,oncall=responder"
    #[arg(long, env = "QUELL_OIDC_ROLE_MAP", default_value = "")]
    pub oidc_role_map: String,
    /// group=team-slug pairs, e.g. "payments-eng=payments,sre=platform": single sign-on keeps
    /// those teams' members in step with the groups (beside each team's own group).
    #[arg(long, env = "QUELL_OIDC_TEAM_MAP", default_value = "")]
    pub oidc_team_map: String,
    /// Role for people with no mapped claim value; unset refuses them.
    #[arg(long, env = "QUELL_OIDC_DEFAULT_ROLE")]
    pub oidc_default_role: Option<String>,
}

impl OidcArgs {
    pub fn settings(&self) -> Option<crate::state::OidcSettings> {
        let issuer = self.oidc_issuer.clone().filter(|i| !i.trim().is_empty())?;
        Some(crate::state::OidcSettings {
            issuer,
            client_id: self.oidc_client_id.clone().unwrap_or_default(),
            client_secret: self.oidc_client_secret.clone().filter(|s| !s.is_empty()),
            scopes: self
                .oidc_scopes
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
            role_claim: self.oidc_role_claim.clone(),
            role_map: self.oidc_role_map.clone(),
            team_map: self.oidc_team_map.clone(),
            default_role: self.oidc_default_role.clone().filter(|r| !r.is_empty()),
        })
    }
}
