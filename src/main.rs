use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    quell::telemetry::init();
    match quell::run(quell::config::Cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            eprintln!("quell: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}
