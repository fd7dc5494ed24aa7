//! A log's fsync taken out of the log (Kafka's flush, group-committed): prepared under the
//! log's lock with its indexes synced, the `.log` files synced without the lock, completed
//! under it again ([`super::log::Log::prepare_flush`], `complete_flush`).

/// An fsync taken out of the log: the file handles to sync and the offset they make durable.
/// Prepared under the log's lock, synced without it (appends go on meanwhile), then completed
/// under the lock again. Concurrent appenders waiting for durability share one job: that is
/// the group commit.
#[derive(Debug)]
pub struct FlushJob {
    /// The `.log` files to fsync (their indexes were synced when the job was made).
    files: Vec<std::sync::Arc<std::fs::File>>,
    end_offset: i64,
}

impl FlushJob {
    pub(super) fn new(files: Vec<std::sync::Arc<std::fs::File>>, end_offset: i64) -> Self {
        Self { files, end_offset }
    }

    /// The offset below which everything is durable once [`FlushJob::sync`] succeeds.
    pub fn end_offset(&self) -> i64 {
        self.end_offset
    }

    /// Fsyncs the segment files.
    pub fn sync(&self) -> std::io::Result<()> {
        for file in &self.files {
            file.sync_data()?;
        }
        Ok(())
    }
}
