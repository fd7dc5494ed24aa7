//! CPU-heavy and blocking work off the async workers: decompressing and walking the records
//! of a large or compressed batch must not stall the connections a worker serves. Jobs run
//! on tokio's blocking pool, at most one per core at a time (the rest wait their turn), so
//! the memory they hold (a decompressor's window and buffer each) is bounded too.

use crate::error::Error;
use std::sync::LazyLock;
use tokio::sync::Semaphore;

static PERMITS: LazyLock<Semaphore> = LazyLock::new(|| {
    Semaphore::new(
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2),
    )
});

/// Runs `job` on the blocking pool once a permit is free and returns its result. Outside a
/// tokio runtime (tests, the metadata publisher thread) it runs in place.
pub async fn run<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Result<T, Error> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(job());
    }
    let _permit = PERMITS
        .acquire()
        .await
        .map_err(|_| Error::Internal("the offload pool is closed".into()))?;
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| Error::Internal(format!("an offloaded job failed: {e}")))
}
