//! Replication throttles (KIP-73, Kafka's `ReplicationQuotaManager`): one rate of bytes for
//! what this broker sends as leader and one for what it fetches as follower, measured as
//! Kafka's `Rate` over `replication.quota.window.num` windows of
//! `replication.quota.window.size.seconds`. Only throttled replicas out of the ISR are held
//! back (a partition is left out of a fetch, or answered without data, while the rate is over
//! its bound), so a follower in sync is never slowed and the ISR does not thrash.

use crate::stats::rate::{Rate, Windows};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

#[derive(Debug)]
pub struct ReplicationQuota {
    /// Bytes per second; `i64::MAX` when unthrottled.
    bound: AtomicI64,
    measured: Mutex<(Windows, Rate)>,
}

impl Default for ReplicationQuota {
    fn default() -> Self {
        Self {
            bound: AtomicI64::new(i64::MAX),
            measured: Mutex::new((
                Windows {
                    samples: 11,
                    window_ms: 1000,
                },
                Rate::default(),
            )),
        }
    }
}

impl ReplicationQuota {
    /// Sets the rate in bytes per second and how it is sampled.
    pub fn configure(&self, bound: i64, windows: Windows) {
        self.bound.store(bound.max(0), Ordering::Relaxed);
        let mut measured = self.measured.lock().unwrap_or_else(|p| p.into_inner());
        measured.0 = windows;
    }

    /// Whether a throttle is set at all.
    pub fn is_set(&self) -> bool {
        self.bound.load(Ordering::Relaxed) != i64::MAX
    }

    /// Whether the bytes recorded lately exceed the rate (Kafka's `isQuotaExceeded`).
    pub fn is_exceeded(&self, now_ms: i64) -> bool {
        let bound = self.bound.load(Ordering::Relaxed);
        if bound == i64::MAX {
            return false;
        }
        let mut measured = self.measured.lock().unwrap_or_else(|p| p.into_inner());
        let (windows, rate) = &mut *measured;
        rate.measure(*windows, now_ms) > bound as f64
    }

    /// How long until the rate is back within its bound if nothing more is recorded (zero
    /// within it).
    pub fn delay(&self, now_ms: i64) -> std::time::Duration {
        let bound = self.bound.load(Ordering::Relaxed);
        if bound == i64::MAX {
            return std::time::Duration::ZERO;
        }
        let mut measured = self.measured.lock().unwrap_or_else(|p| p.into_inner());
        let (windows, rate) = &mut *measured;
        let ms = rate.throttle_ms(*windows, bound.max(1) as f64, now_ms);
        std::time::Duration::from_millis(u64::from(ms))
    }

    /// Counts bytes sent or fetched for throttled replicas.
    pub fn record(&self, bytes: u64, now_ms: i64) {
        if bytes == 0 || !self.is_set() {
            return;
        }
        let mut measured = self.measured.lock().unwrap_or_else(|p| p.into_inner());
        let (windows, rate) = &mut *measured;
        rate.record(*windows, bytes as f64, now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_over_the_rate_exceed_it_until_the_windows_pass() {
        let quota = ReplicationQuota::default();
        assert!(!quota.is_exceeded(0), "unthrottled");
        quota.record(10_000_000, 0);
        assert!(
            !quota.is_exceeded(0),
            "nothing is recorded while unthrottled"
        );
        quota.configure(
            1_000,
            Windows {
                samples: 2,
                window_ms: 1000,
            },
        );
        quota.record(500, 0);
        assert!(!quota.is_exceeded(1000));
        quota.record(2_000, 1000);
        assert!(quota.is_exceeded(1500), "2,500 bytes in 1.5 s");
        assert!(!quota.is_exceeded(10_000), "the samples expired");
    }
}
