use clap::Parser;

/// glibc's allocator raises its mmap threshold every time a large block is freed, up to
/// 32 MiB, after which large request bodies and the statements that store them come from the
/// heap and stay there: a burst of 1 MiB posts left the process hundreds of MiB larger for
/// good. A fixed threshold keeps blocks over 256 KiB in mappings that are returned when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn return_large_blocks() {
    // SAFETY: mallopt only sets an allocator parameter; it is called before any other thread
    // exists, and a refusal (return value 0) leaves the default in place.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_large_blocks() {}

fn main() -> std::process::ExitCode {
    return_large_blocks();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the Tokio runtime")
        .block_on(run())
}

async fn run() -> std::process::ExitCode {
    quell::telemetry::init();
    match quell::run(quell::config::Cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // What a person gave was refused (a file, an argument): said once, plainly, not logged
        // as a failure of Quell's.
        Err(quell::RunError::Refused(why)) => {
            eprintln!("quell: {why}");
            std::process::ExitCode::FAILURE
        }
        Err(err) => {
            tracing::error!("{err:#}");
            eprintln!("quell: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}
