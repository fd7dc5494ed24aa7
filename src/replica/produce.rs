//! The leader's checks of a client's batch before it is appended (Kafka's `LogValidator`
//! step of `UnifiedLog.append`): the header ([`record::validate_produced`]) and every record
//! ([`record::validate::validate_records`]) against the topic's configuration. Compressed or
//! large batches are walked on the blocking pool ([`crate::offload`]) so decompression never
//! stalls an async worker; small uncompressed ones, the common case, are walked in place.

use super::Partition;
use crate::error::Error;
use crate::record::validate::{ValidationPolicy, validate_records};
use crate::record::{self, BatchView};
use crate::storage::manager::lock;
use crate::types::now_ms;
use bytes::Bytes;

/// Uncompressed batches up to this size are walked on the async worker: a walk reads a few
/// bytes per record, well under a millisecond for this much.
const WALK_IN_PLACE_BYTES: usize = 256 * 1024;

/// A client's batch that passed every check, with what the checks found.
#[derive(Debug, Clone)]
pub struct CheckedBatch {
    bytes: Bytes,
    max_timestamp: i64,
}

impl CheckedBatch {
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    /// The largest record timestamp (-1 when none has one).
    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp
    }
}

impl Partition {
    /// Validates a produced batch against this partition's topic configuration.
    pub async fn check_produced(&self, bytes: Bytes) -> Result<CheckedBatch, Error> {
        let (max_message_bytes, policy) = {
            let log = lock(&self.log);
            let config = log.config();
            (
                config.max_message_bytes,
                ValidationPolicy {
                    compacted: config.cleanup_compact,
                    log_append_time: config.log_append_time,
                    timestamp_before_max_ms: config.timestamp_before_max_ms,
                    timestamp_after_max_ms: config.timestamp_after_max_ms,
                },
            )
        };
        record::validate_produced(&bytes, max_message_bytes)?;
        let compressed = BatchView::new(&bytes)?.compression()? != record::Compression::None;
        let in_place = !compressed && bytes.len() <= WALK_IN_PLACE_BYTES;
        let check = move || -> Result<CheckedBatch, Error> {
            let max_timestamp = validate_records(&BatchView::new(&bytes)?, &policy, now_ms())?;
            Ok(CheckedBatch {
                bytes,
                max_timestamp,
            })
        };
        if in_place {
            check()
        } else {
            crate::offload::run(check).await?
        }
    }
}
