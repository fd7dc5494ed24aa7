//! Kafka's storage layer: partition logs made of segments with sparse mmapped indexes,
//! checkpoints, recovery and retention. Synchronous, no networking, no wire types.
//!
//! | file | owns |
//! |---|---|
//! | `manager.rs` | the log directory: lock, load at startup, create/delete logs, checkpoints, clean-shutdown marker |
//! | `log.rs` | one partition: segments, offsets, roll, read, retention, flush, recovery |
//! | `segment.rs` | one `.log` file with its indexes: append, read, recover, truncate |
//! | `index.rs` | `.index` / `.timeindex` over mmap (the only `unsafe`) |
//! | `checkpoint.rs` | atomic text checkpoint files |
//! | `cleaner.rs` | log compaction: latest record per key |
//! | `producer_state.rs` | idempotent producers: sequences, duplicates, snapshots |

pub mod checkpoint;
pub mod cleaner;
pub mod index;
pub mod log;
pub mod manager;
pub mod producer_state;
pub mod segment;

use crate::record::RecordError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum StorageError {
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("offset {offset} is out of range [{start}, {end}]")]
    OffsetOutOfRange { offset: i64, start: i64, end: i64 },
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("corrupt log data: {0}")]
    Corrupt(String),
    #[error("log is offline after an earlier I/O error")]
    Offline,
    #[error("log directory {0} is in use by another process")]
    Locked(String),
    #[error(transparent)]
    Producer(#[from] producer_state::ProducerError),
}
