//! `webdata`: the API server and admin command line.

use clap::Parser;

/// mimalloc: allocation-heavy work (parsing, the store) runs ~10% faster than on glibc malloc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = webdata_api::cli::Cli::parse();
    match webdata_api::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("webdata: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
