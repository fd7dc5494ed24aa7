//! What the admin commands share beyond the client: the `--output` choice and running a
//! command's requests on a small runtime of its own.

/// How a command prints what it found.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Output {
    /// Kafka's tools' text tables.
    #[default]
    Table,
    /// One JSON document on standard output.
    Json,
}

/// Runs a command's future on a current-thread runtime (the commands make one request at a
/// time); a runtime that cannot start is the command's failure.
pub fn block_on<T>(
    future: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the client's runtime: {e}"))?
        .block_on(future)
}
