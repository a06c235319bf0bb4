//! Quell: self-hosted incident management. `app` builds the router; `run` carries out a command.

pub mod accounts;
pub mod action_items;
pub mod alert_store;
pub mod alerts;
pub mod audit;
pub mod audit_log;
pub mod auth;
pub mod bridge;
pub mod cache;
pub mod challenges;
pub mod changes;
pub mod check;
pub mod claims;
pub mod clock;
pub mod config;
pub mod config_as_code;
pub mod dashboard;
pub mod demo;
pub mod domain;
pub mod egress;
pub mod engine;
pub mod error;
pub mod evidence;
pub mod handoffs;
pub mod heartbeats;
pub mod http;
pub mod idempotency;
pub mod imports;
pub mod incident_ref;
pub mod incidents;
pub mod integrations;
pub mod live;
pub mod maintenance;
pub mod merging;
pub mod metrics;
pub mod notify;
pub mod oncall;
pub mod paging;
pub mod people;
pub mod plans;
pub mod postmortems;
pub mod related;
pub mod reports;
pub mod responders;
pub mod roles;
pub mod room;
pub mod router;
pub mod routing;
pub mod runbooks;
pub mod search;
pub mod services;
pub mod silences;
pub mod sla;
pub mod state;
pub mod statuspage;
pub mod swaps;
pub mod teams;
pub mod telemetry;
pub mod timeline;
pub mod trackers;
pub mod transaction;
pub mod updates;
pub mod workload;

use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use std::time::Duration;

pub use router::{app, app_with};

use config::{Cli, Command, DbArgs};
use state::{AppConfig, AppState};

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!();

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot reach the database: {0}")]
    Connect(sqlx::Error),
    #[error("migrations failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("cannot listen on {0}: {1}")]
    Bind(String, std::io::Error),
    #[error("{0}")]
    App(#[from] error::AppError),
    #[error("{0} of the checks failed")]
    Checks(usize),
    #[error("{0}")]
    Refused(String),
}

/// A pool for commands that run to the end (migrations, the demo): no statement timeout, a
/// patient acquire.
async fn connect(db: &DbArgs) -> Result<PgPool, RunError> {
    PgPoolOptions::new()
        .max_connections(db.db_max_connections)
        .acquire_timeout(Duration::from_secs(5))
        .connect(&db.database_url)
        .await
        .map_err(RunError::Connect)
}

/// The serving pool: a request waits `QUELL_DB_ACQUIRE_TIMEOUT_MS` for a connection, a
/// statement runs at most `QUELL_DB_STATEMENT_TIMEOUT_MS`, a transaction idles at most
/// `QUELL_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS` (PostgreSQL enforces the last two). Connections
/// are opened as needed, and again after PostgreSQL comes back.
fn serving_pool(db: &DbArgs) -> Result<PgPool, RunError> {
    let options: sqlx::postgres::PgConnectOptions =
        db.database_url.parse().map_err(RunError::Connect)?;
    let options = options.options([
        (
            "statement_timeout",
            format!("{}ms", db.db_statement_timeout_ms),
        ),
        (
            "idle_in_transaction_session_timeout",
            format!("{}ms", db.db_idle_in_transaction_timeout_ms),
        ),
        // Each statement is planned once per connection, not again on every run: planning was
        // most of PostgreSQL's time per page. The hot statements' generic plans are checked by
        // the plan test; one whose best plan depends on its values asks for a plan made for
        // them (`plans::for_the_values`).
        ("plan_cache_mode", "force_generic_plan".to_owned()),
        // No parallel workers for a request: starting them cost 8-25 ms on these machines,
        // more than any page's statement takes alone, and a plan expecting them (the generic
        // plan of a list) was slower than the same plan without. The cores are better spent
        // on other requests.
        ("max_parallel_workers_per_gather", "0".to_owned()),
    ]);
    Ok(PgPoolOptions::new()
        .max_connections(db.db_max_connections)
        .acquire_timeout(Duration::from_millis(db.db_acquire_timeout_ms.max(1)))
        // A connection is checked with a round trip before it is handed out only when it has
        // sat idle for a while (PostgreSQL may have restarted meanwhile): one that was in use a
        // moment ago is known good — sqlx checks each one as it comes back — and checking it
        // again would add a round trip to every statement of a page.
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for > Duration::from_secs(1) {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
        .connect_lazy_with(options))
}

/// `quell import …`: the plan, or with `--apply` the import.
async fn import(command: config::ImportCommand) -> Result<(), RunError> {
    use config::ImportCommand::{Opsgenie, Pagerduty};
    let (db, apply, accept_differences) = match &command {
        Pagerduty(a) => (&a.db, a.apply, a.accept_differences),
        Opsgenie(a) => (&a.db, a.apply, a.accept_differences),
    };
    let pool = connect(db).await?;
    MIGRATOR.run(&pool).await?;
    let options = imports::actions::Options {
        apply,
        accept_differences,
        pinned: None,
    };
    let plan = match &command {
        Pagerduty(a) => {
            let actor = audit::Actor::system("import from PagerDuty");
            let source = (a.api_url.as_str(), a.token.as_str());
            imports::actions::pagerduty(&pool, &actor, source, options).await?
        }
        Opsgenie(a) => {
            let actor = audit::Actor::system("import from Opsgenie");
            let source = (a.api_url.as_str(), a.key.as_str());
            imports::actions::opsgenie(&pool, &actor, source, options).await?
        }
    };
    print!("{}", plan.text());
    if !apply {
        println!("Nothing was changed. Run again with --apply to make these changes.");
    }
    Ok(())
}

/// `QUELL_OIDC_TEAM_MAP` read, or refused naming what is wrong in it.
fn team_map(spec: &str) -> Result<teams::domain::TeamMap, RunError> {
    teams::domain::TeamMap::parse(spec).map_err(|e| match e {
        crate::domain::DomainError::Invalid { field, message } => {
            RunError::Refused(format!("{field}: {message}"))
        }
        crate::domain::DomainError::Conflict(message) => RunError::Refused(message),
    })
}

/// `quell config export` and `quell config apply`.
async fn configure(command: config::ConfigCommand) -> Result<(), RunError> {
    use config::ConfigCommand::{Apply, Export};
    match command {
        Export(e) => {
            let map = team_map(&e.oidc_team_map)?;
            let pool = connect(&e.db).await?;
            MIGRATOR.run(&pool).await?;
            print!("{}", config_as_code::actions::export(&pool, &map).await?);
        }
        Apply(a) => {
            let file = a.file.display().to_string();
            // A configuration is kilobytes; a file past 10 MiB is a mistake, not read whole.
            let size = std::fs::metadata(&a.file)
                .map_err(|e| RunError::Refused(format!("{file}: {e}")))?
                .len();
            if size > 10 << 20 {
                return Err(RunError::Refused(format!(
                    "{file}: {size} bytes; a configuration file is at most 10 MiB"
                )));
            }
            let text = std::fs::read_to_string(&a.file)
                .map_err(|e| RunError::Refused(format!("{file}: {e}")))?;
            let pool = connect(&a.db).await?;
            MIGRATOR.run(&pool).await?;
            let actor = audit::Actor::system("config apply");
            let how = (!a.plan, a.prune);
            let var = |name: &str| std::env::var(name).ok();
            let map = team_map(&a.oidc_team_map)?;
            let outside = config_as_code::actions::Outside {
                allow: &a.webhook_allow,
                team_map: &map,
                var: &var,
            };
            match config_as_code::actions::apply(&pool, &actor, &text, how, &outside).await {
                Ok(applied) => {
                    print!("{}", applied.text(&file));
                    let to_make = applied
                        .changes
                        .iter()
                        .any(|c| c.verb != config_as_code::domain::Verb::Keep);
                    if a.plan && to_make {
                        println!(
                            "Nothing was changed. Run again without --plan to make these changes."
                        );
                    }
                }
                Err(config_as_code::actions::Refused::File(refusals)) => {
                    let lines: Vec<String> = refusals.iter().map(|r| r.in_file(&file)).collect();
                    return Err(RunError::Refused(format!(
                        "{}\nNothing was changed.",
                        lines.join("\n")
                    )));
                }
                Err(config_as_code::actions::Refused::Quell(e)) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

pub async fn run(cli: Cli) -> Result<(), RunError> {
    match cli.command {
        Command::Openapi => println!("{}", router::openapi_json()),
        Command::Audit(config::AuditCommand::Protect(args)) => {
            let pool = connect(&args.db).await?;
            let mut conn = pool.acquire().await.map_err(RunError::Connect)?;
            audit::db::hand_over(&mut conn, &args.app_role).await?;
            println!(
                "audit_log now belongs to {}; {} may only read and append to it",
                audit::db::OWNER_ROLE,
                args.app_role
            );
        }
        Command::Import(command) => import(command).await?,
        Command::Config(command) => configure(command).await?,
        Command::Migrate(db) => {
            let pool = connect(&db).await?;
            MIGRATOR.run(&pool).await?;
            tracing::info!("migrations applied");
        }
        Command::Check(db) => {
            let pool = connect(&db).await?;
            let known: Vec<(i64, Vec<u8>)> = MIGRATOR
                .iter()
                .filter(|m| !m.migration_type.is_down_migration())
                .map(|m| (m.version, m.checksum.to_vec()))
                .collect();
            let found = check::actions::run(&pool, &known).await?;
            for f in &found {
                println!("{}", f.line());
            }
            let failed = found.iter().filter(|f| !f.holds).count();
            if failed > 0 {
                return Err(RunError::Checks(failed));
            }
        }
        Command::Demo(db) => {
            let pool = connect(&db).await?;
            MIGRATOR.run(&pool).await?;
            demo::load(&pool).await?;
            demo::world::load(&pool).await?;
            // The reports show the loaded history at once, not after a server's first look.
            reports::db::refresh(&pool, false).await?;
            tracing::info!("demo data loaded");
        }
        Command::User(config::UserCommand::Create(args)) => {
            let pool = connect(&args.db).await?;
            MIGRATOR.run(&pool).await?;
            let role =
                auth::domain::UserRole::parse("role", &args.role).map_err(error::AppError::from)?;
            let (password, generated) = if args.password_stdin {
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .map_err(|e| error::AppError::Internal(format!("reading stdin: {e}")))?;
                (line.trim_end_matches(['\r', '\n']).to_owned(), false)
            } else {
                (auth::password::random_password(), true)
            };
            let user = accounts::bootstrap::ensure_account(
                &pool,
                &accounts::bootstrap::Account {
                    email: &args.email,
                    name: args.name.as_deref(),
                    role,
                    password: Some(&password),
                },
                &audit::Actor::system("quell user create"),
            )
            .await?;
            println!("{} <{}> is {}", user.name, user.email, user.role.as_str());
            if generated {
                println!("password: {password}");
            }
        }
        Command::Serve(args) => {
            if !args.no_migrate {
                // Migrations may take long on a big database: their own pool, no timeouts.
                let migrating = connect(&args.db).await?;
                MIGRATOR.run(&migrating).await?;
                migrating.close().await;
            }
            let pool = serving_pool(&args.db)?;
            let base_url = args
                .base_url
                .clone()
                .unwrap_or_else(|| format!("http://{}", args.bind));
            accounts::bootstrap::from_settings(
                &pool,
                args.admin_email.as_deref(),
                args.admin_password.as_deref(),
                args.bootstrap_token.as_deref(),
            )
            .await?;
            if audit::db::guard_can_be_lifted(&pool).await? {
                tracing::warn!(
                    "this database role owns audit_log or is a superuser, so it could switch off \
                     the log's append-only trigger; see README, \"Security\", for \
                     `quell audit protect`"
                );
            }
            let oidc = args.oidc.settings();
            if let Some(o) = &oidc {
                accounts::oidc::check(o)?;
            }
            // The alert lanes get connections of their own: a storm queues there, not in
            // front of the pages. They are not pinged before each batch (a round trip per
            // batch): a connection PostgreSQL dropped fails its batch, which is retried on
            // another (`alerts::ingest`), so nothing is lost.
            let lanes = args.alert_lanes.clamp(1, 64);
            let ingest_pool = PgPoolOptions::new()
                .max_connections(lanes as u32)
                .test_before_acquire(false)
                .acquire_timeout(Duration::from_millis(args.db.db_acquire_timeout_ms.max(1)))
                .connect_lazy_with((*pool.connect_options()).clone());
            let state = AppState::new(
                pool,
                AppConfig {
                    base_url,
                    trust_forwarded_for: args.trust_forwarded_for,
                    oidc,
                    git_roots: args.git_roots.clone(),
                    webhook_allow: args.webhook_allow.clone(),
                    live: state::LiveSettings {
                        streams_per_person: args.live_streams_per_person.max(1),
                        claim_minutes: args.claim_minutes.clamp(1, 24 * 60),
                    },
                    request_timeout: Duration::from_secs(
                        args.connections.request_timeout_secs.max(1),
                    ),
                    metrics_token: args
                        .metrics_token
                        .clone()
                        .map(|t| t.trim().to_owned())
                        .filter(|t| !t.is_empty()),
                    uploads: state::UploadQuota {
                        per_person: args.uploads_per_person_mib.max(1) << 20,
                        total: args.uploads_total_mib.max(1) << 20,
                    },
                    bodies: state::BodySettings {
                        budget_bytes: args.connections.large_bodies_mib.clamp(1, 1024)
                            * 1024
                            * 1024,
                        upload_bytes: args.connections.upload_work_mib.clamp(1, 16 * 1024)
                            * 1024
                            * 1024,
                        ..Default::default()
                    },
                },
            );
            // Each engine is started again if it ever stops or panics (`engine::supervise`).
            let pool = state.pool.clone();
            let outbox_days = args.outbox_retention_days.max(OUTBOX_DAYS_AT_LEAST);
            let sweeper = engine::supervise("sweeper", move || sweep(pool.clone(), outbox_days));
            let pool = state.pool.clone();
            // Alert months ahead before the first alert is taken (the engine keeps them after).
            if let Err(err) = alert_store::db::cover_ahead(&pool, alerts::retention::AHEAD).await {
                tracing::warn!(error = %err, "could not create the alert months ahead");
            }
            let alert_days = Some(args.alert_retention_days).filter(|d| *d > 0);
            let retention = engine::supervise("alert retention", move || {
                alerts::retention::run(pool.clone(), alert_days)
            });
            let pool = state.pool.clone();
            let engine = engine::supervise("sla timers", move || sla::timers::run(pool.clone()));
            let pool = state.pool.clone();
            let escalator =
                engine::supervise("escalator", move || paging::escalator::run(pool.clone()));
            let pool = state.pool.clone();
            let responders =
                engine::supervise("responders", move || responders::timers::run(pool.clone()));
            let pool = state.pool.clone();
            let handoffs =
                engine::supervise("handoffs", move || handoffs::timers::run(pool.clone()));
            let pool = state.pool.clone();
            let reports =
                engine::supervise("reports", move || reports::refresher::run(pool.clone()));
            let pool = state.pool.clone();
            let unsilence =
                engine::supervise("unsilence", move || alerts::unsilence::run(pool.clone()));
            let pool = state.pool.clone();
            let windows =
                engine::supervise("maintenance", move || alerts::windows::run(pool.clone()));
            let pool = state.pool.clone();
            let settle = engine::supervise("settle", move || alerts::settle::run(pool.clone()));
            let pool = state.pool.clone();
            let heartbeats =
                engine::supervise("heartbeats", move || alerts::heartbeats::run(pool.clone()));
            let pool = state.pool.clone();
            let snoozes =
                engine::supervise("snoozes", move || incidents::snoozes::run(pool.clone()));
            let pool = state.pool.clone();
            let status_mail =
                engine::supervise("status mail", move || statuspage::mailer::run(pool.clone()));
            let pool = state.pool.clone();
            let sending = notify::sender::SenderConfig {
                base_url: state.config.base_url.clone(),
                smtp_url: args.smtp_url.clone().filter(|u| !u.trim().is_empty()),
                mail_from: args.smtp_from.clone(),
                lease_secs: args.notify_lease_secs.clamp(1.0, 3600.0),
                allow: args.webhook_allow.clone(),
                ..Default::default()
            };
            let sender = engine::supervise("sender", move || {
                notify::sender::run(pool.clone(), sending.clone())
            });
            let listener = tokio::net::TcpListener::bind(&args.bind)
                .await
                .map_err(|e| RunError::Bind(args.bind.clone(), e))?;
            tracing::info!("Quell listening on http://{}", args.bind);
            let c = &args.connections;
            let limits = http::serve::Limits {
                header_timeout: Duration::from_secs(c.header_timeout_secs.max(1)),
                idle_timeout: Duration::from_secs(c.idle_timeout_secs.max(1)),
                max_connections: c.max_connections,
                drain: Duration::from_secs(c.shutdown_drain_secs),
            };
            let ingest = alerts::ingest::Ingestor::with_lanes(ingest_pool, lanes);
            http::serve::serve(listener, app_with(state, ingest), limits, shutdown_signal()).await;
            sweeper.abort();
            retention.abort();
            engine.abort();
            escalator.abort();
            responders.abort();
            handoffs.abort();
            reports.abort();
            unsilence.abort();
            windows.abort();
            settle.abort();
            heartbeats.abort();
            snoozes.abort();
            status_mail.abort();
            sender.abort();
            tracing::info!("stopped");
        }
    }
    Ok(())
}

/// The least `QUELL_OUTBOX_RETENTION_DAYS` is taken as: the workload report reads a year of pages.
const OUTBOX_DAYS_AT_LEAST: i32 = 366;

/// Deletes expired sessions, day-old idempotency keys and failed sign-ins, webhook ids past
/// their signature window, week-old Opsgenie request records, and outbox messages done with
/// more than `outbox_days` ago (10,000 a round), every 10 minutes. Every replica runs it; the
/// deletes are idempotent.
async fn sweep(pool: PgPool, outbox_days: i32) {
    let store = auth::session_store::PgSessionStore::new(pool.clone());
    let mut every = tokio::time::interval(Duration::from_secs(600));
    loop {
        every.tick().await;
        if let Err(err) = store.delete_expired().await {
            tracing::warn!(error = %err, "could not delete expired sessions");
        }
        if let Err(err) = idempotency::db::purge_old(&pool).await {
            tracing::warn!(error = %err, "could not delete old idempotency keys");
        }
        if let Err(err) = auth::db::purge_stale_failures(&pool).await {
            tracing::warn!(error = %err, "could not forget old failed sign-ins");
        }
        if let Err(err) = alert_store::db::purge_deliveries(&pool).await {
            tracing::warn!(error = %err, "could not forget old webhook ids");
        }
        if let Err(err) = paging::db::purge_links(&pool).await {
            tracing::warn!(error = %err, "could not forget expired acknowledge links");
        }
        if let Err(err) = handoffs::db::purge_old(&pool).await {
            tracing::warn!(error = %err, "could not forget old hand-off notices");
        }
        if let Err(err) = alert_store::db::purge_requests(&pool).await {
            tracing::warn!(error = %err, "could not forget old Opsgenie requests");
        }
        if let Err(err) = notify::actions::forget_done(&pool, outbox_days, 10_000).await {
            tracing::warn!(error = %err, "could not forget old outbox messages");
        }
    }
}

/// Ctrl-C or SIGTERM: stop accepting, finish the requests in flight, then exit.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
