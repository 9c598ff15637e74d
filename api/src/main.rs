//! `webdata`: the API server and admin command line.

use clap::Parser;

/// mimalloc: glibc malloc/free were ~9% of a crawl's perf samples; with mimalloc
/// the crawl runs 4.8% fewer instructions (callgrind, postgresql-doc-15).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // Before the runtime starts its threads.
    webdata_engine::alloc::tune();
    run()
}

#[tokio::main]
async fn run() -> std::process::ExitCode {
    let cli = webdata_api::cli::Cli::parse();
    match webdata_api::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("webdata: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
