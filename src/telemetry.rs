//! Logging: structured, filtered by `RUST_LOG` (default `info`), as JSON when `QUELL_LOG_FORMAT=json`,
//! on standard error (standard output is what a command prints: a plan, the OpenAPI document).

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if std::env::var("QUELL_LOG_FORMAT").as_deref() == Ok("json") {
        builder.json().flatten_event(true).init();
    } else {
        builder.init();
    }
}
