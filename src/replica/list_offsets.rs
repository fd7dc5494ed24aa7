//! ListOffsets on a partition this broker leads: Kafka's special timestamps (-1 latest: the
//! high watermark, or the last stable offset for read_committed; -2 earliest; -3 the record
//! with the largest timestamp; -4 earliest local; -5 latest tiered and -6 earliest pending
//! upload (KIP-1023, ListOffsets v11), both -1 without tiered storage) or the first record at
//! or after a time. Lookups by time read a batch's records
//! (decompressing it): they run on the blocking pool ([`crate::offload`]).

use super::Partition;
use crate::error::Error;
use crate::storage::manager::lock;
use std::sync::Arc;

impl Partition {
    /// (offset, timestamp) for `timestamp`; (-1, -1) when no record is at or after it.
    pub async fn list_offset(
        self: &Arc<Self>,
        timestamp: i64,
        read_committed: bool,
    ) -> Result<(i64, i64), Error> {
        match timestamp {
            -1 | -2 | -4 | -5 | -6 => {
                let log = lock(&self.log);
                Ok(match timestamp {
                    -1 if read_committed => (log.last_stable_offset(), -1),
                    -1 => (log.high_watermark(), -1),
                    -2 | -4 => (log.log_start_offset(), -1),
                    _ => (-1, -1),
                })
            }
            t if t < 0 && t != -3 => Err(Error::InvalidRequest(format!(
                "unknown special timestamp {t}"
            ))),
            t => {
                let partition = self.clone();
                let found = crate::offload::run(move || {
                    let log = lock(&partition.log);
                    match t {
                        -3 => log.max_timestamp_record(),
                        t => log.offset_for_timestamp(t),
                    }
                })
                .await??;
                Ok(found.unwrap_or((-1, -1)))
            }
        }
    }
}
