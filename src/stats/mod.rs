//! The broker's own measurements, counted where they happen: per topic (produce and fetch),
//! per request (counts, error codes, phase times) and per listener (connections, request
//! memory). Hot paths only add to atomics behind handles resolved once — a partition holds its
//! topic's counters, a request name's counters sit at a fixed slot — so counting takes no lock.
//! `http::metrics` renders these, with the state it reads at scrape time (logs, partitions,
//! groups, the controller), under the names Kafka's metrics have through the Prometheus JMX
//! exporter. They live on the lowest floor rather than beside the renderer (as the
//! architecture's module map has it) because the code that counts — `replica`, `server` — sits
//! below `http`.
//!
//! | file | owns |
//! |---|---|
//! | `topics.rs` | `BrokerTopicMetrics`: messages and bytes in and out, produce and fetch requests, per topic and for all topics |
//! | `requests.rs` | `RequestMetrics`: requests per version, response error codes, phase times, per request name |
//! | `histogram.rs` | a lock-free time histogram with Kafka's quantiles over the last minutes |
//! | `sockets.rs` | connections per listener, the request memory pool |
//! | `rate.rs` | Kafka's `Rate` and `TokenBucket` arithmetic (quotas and replication throttles) |

pub mod histogram;
pub mod rate;
pub mod requests;
pub mod sockets;
pub mod topics;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// Request name slots: every API key (Kafka's keys are below 100) and the two names Kafka
/// splits Fetch into.
pub const REQUEST_SLOTS: usize = 128;

/// What the broker counts outside the replica manager (which keeps the per-topic counters).
#[derive(Debug)]
pub struct BrokerStats {
    pub requests: std::sync::Arc<requests::RequestStats>,
    pub sockets: sockets::SocketStats,
    /// When this process started serving, for uptime.
    pub started: SystemTime,
}

impl Default for BrokerStats {
    fn default() -> Self {
        Self {
            requests: std::sync::Arc::new(requests::RequestStats::new(REQUEST_SLOTS)),
            sockets: sockets::SocketStats::default(),
            started: SystemTime::now(),
        }
    }
}

/// Kafka's `ReplicaManager` meters of ISR changes.
#[derive(Debug, Default)]
pub struct IsrStats {
    shrinks: AtomicU64,
    expands: AtomicU64,
    failed_updates: AtomicU64,
}

impl IsrStats {
    pub fn shrink(&self) {
        self.shrinks.fetch_add(1, Ordering::Relaxed);
    }

    pub fn expand(&self) {
        self.expands.fetch_add(1, Ordering::Relaxed);
    }

    pub fn failed_update(&self) {
        self.failed_updates.fetch_add(1, Ordering::Relaxed);
    }

    /// (shrinks, expands, failed updates).
    pub fn counts(&self) -> (u64, u64, u64) {
        (
            self.shrinks.load(Ordering::Relaxed),
            self.expands.load(Ordering::Relaxed),
            self.failed_updates.load(Ordering::Relaxed),
        )
    }
}
