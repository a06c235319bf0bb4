//! Quell: self-hosted incident management. `app` builds the router; `run` carries out a command.

pub mod clock;
pub mod config;
pub mod demo;
pub mod domain;
pub mod error;
pub mod http;
pub mod idempotency;
pub mod incidents;
pub mod people;
pub mod roles;
pub mod services;
pub mod state;
pub mod telemetry;
pub mod timeline;

use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use std::time::Duration;

pub use http::app;

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
    #[error("server error: {0}")]
    Serve(std::io::Error),
    #[error("{0}")]
    App(#[from] error::AppError),
}

async fn connect(db: &DbArgs) -> Result<PgPool, RunError> {
    PgPoolOptions::new()
        .max_connections(db.db_max_connections)
        .acquire_timeout(Duration::from_secs(5))
        .connect(&db.database_url)
        .await
        .map_err(RunError::Connect)
}

pub async fn run(cli: Cli) -> Result<(), RunError> {
    match cli.command {
        Command::Migrate(db) => {
            let pool = connect(&db).await?;
            MIGRATOR.run(&pool).await?;
            tracing::info!("migrations applied");
        }
        Command::Demo(db) => {
            let pool = connect(&db).await?;
            MIGRATOR.run(&pool).await?;
            demo::load(&pool).await?;
            tracing::info!("demo data loaded");
        }
        Command::Serve(args) => {
            let pool = connect(&args.db).await?;
            if !args.no_migrate {
                MIGRATOR.run(&pool).await?;
            }
            let base_url = args
                .base_url
                .clone()
                .unwrap_or_else(|| format!("http://{}", args.bind));
            let state = AppState::new(pool, AppConfig { base_url });
            let listener = tokio::net::TcpListener::bind(&args.bind)
                .await
                .map_err(|e| RunError::Bind(args.bind.clone(), e))?;
            tracing::info!("Quell listening on http://{}", args.bind);
            axum::serve(listener, app(state))
                .with_graceful_shutdown(shutdown_signal())
                .await
                .map_err(RunError::Serve)?;
            tracing::info!("stopped");
        }
    }
    Ok(())
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
    tracing::info!("shutting down: finishing requests in flight");
}
