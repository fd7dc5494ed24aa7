//! A time histogram the request path records into without a lock: fixed log-linear buckets of
//! atomic counts (four per power of two of microseconds, so a quantile is within about 19% of
//! the true value), read at scrape time. Kafka's histograms (Yammer's exponentially decaying
//! reservoir) favour the last five minutes; these quantiles cover the samples of the last one to
//! two minutes — the difference between the cumulative counts now and a snapshot taken at an
//! earlier scrape — so a dashboard sees today's latency, not the average since start. No crate
//! we found records concurrently into fixed memory without a lock or a per-thread recorder
//! (`hdrhistogram` needs `&mut` to record; `metrics-util`'s bucket keeps every raw sample
//! until read).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Sub-buckets per power of two.
const SUB_BUCKETS: u32 = 4;
/// Powers of two of microseconds covered: up to 2^40 µs (about 12 days); larger values land in
/// the last bucket.
const POWERS: u32 = 40;
const BUCKETS: usize = (POWERS * SUB_BUCKETS) as usize + 1;

/// How old the older snapshot must be before it is replaced by the newer one: quantiles cover
/// between one and two of these.
const WINDOW: Duration = Duration::from_secs(60);

/// The quantiles Kafka's histograms report, with the label values the JMX exporter gives them.
pub const QUANTILES: [(f64, &str); 6] = [
    (0.50, "0.50"),
    (0.75, "0.75"),
    (0.95, "0.95"),
    (0.98, "0.98"),
    (0.99, "0.99"),
    (0.999, "0.999"),
];

#[derive(Debug)]
pub struct Histogram {
    buckets: Box<[AtomicU64]>,
    count: AtomicU64,
    /// Cumulative counts at two earlier scrapes (older, newer), touched only when scraped.
    snapshots: Mutex<Snapshots>,
}

#[derive(Debug)]
struct Snapshots {
    older: (Instant, Vec<u64>),
    newer: (Instant, Vec<u64>),
}

impl Default for Histogram {
    fn default() -> Self {
        let now = Instant::now();
        Self {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            snapshots: Mutex::new(Snapshots {
                older: (now, vec![0; BUCKETS]),
                newer: (now, vec![0; BUCKETS]),
            }),
        }
    }
}

/// The bucket of a value in microseconds: values below 2^2 have a bucket each, then four per
/// power of two.
fn bucket_of(micros: u64) -> usize {
    if micros < u64::from(SUB_BUCKETS) {
        return micros as usize;
    }
    let power = 63 - micros.leading_zeros(); // >= 2
    if power >= POWERS {
        return BUCKETS - 1;
    }
    let sub = (micros >> (power - 2)) & u64::from(SUB_BUCKETS - 1);
    ((power - 1) * SUB_BUCKETS + sub as u32) as usize
}

/// The value a bucket stands for (its midpoint), in microseconds.
fn value_of(bucket: usize) -> f64 {
    let bucket = bucket as u32;
    if bucket < SUB_BUCKETS {
        return f64::from(bucket);
    }
    let power = bucket / SUB_BUCKETS + 1;
    let sub = bucket % SUB_BUCKETS;
    let width = 1u64 << (power - 2);
    let low = (u64::from(SUB_BUCKETS + sub)) << (power - 2);
    low as f64 + width as f64 / 2.0
}

impl Histogram {
    pub fn record(&self, elapsed: Duration) {
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.buckets[bucket_of(micros)].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Samples recorded since start.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Kafka's quantiles, in milliseconds, of the samples of the last one to two minutes
    /// (0 when there were none, as Kafka reports an idle histogram).
    pub fn quantiles_ms(&self) -> [f64; QUANTILES.len()] {
        let now = Instant::now();
        let current: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        let mut snapshots = self.snapshots.lock().unwrap_or_else(|p| p.into_inner());
        if now.duration_since(snapshots.newer.0) >= WINDOW {
            let newer = std::mem::replace(&mut snapshots.newer, (now, current.clone()));
            snapshots.older = newer;
        }
        let window: Vec<u64> = current
            .iter()
            .zip(&snapshots.older.1)
            .map(|(now, then)| now.saturating_sub(*then))
            .collect();
        drop(snapshots);
        quantiles_of(&window)
    }
}

fn quantiles_of(counts: &[u64]) -> [f64; QUANTILES.len()] {
    let total: u64 = counts.iter().sum();
    let mut out = [0.0; QUANTILES.len()];
    if total == 0 {
        return out;
    }
    for (slot, (quantile, _)) in out.iter_mut().zip(QUANTILES) {
        // The smallest bucket at or below which `quantile` of the samples lie.
        let rank = ((quantile * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (bucket, count) in counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                *slot = value_of(bucket) / 1000.0;
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lands_in_a_bucket_whose_midpoint_is_within_a_fifth_of_it() {
        let mut previous = 0;
        for micros in (0..100_000u64).chain([1 << 30, (1 << 40) - 1]) {
            let bucket = bucket_of(micros);
            assert!(bucket >= previous, "buckets grow with the value");
            previous = bucket;
            let midpoint = value_of(bucket);
            let error = (midpoint - micros as f64).abs() / (micros as f64).max(1.0);
            assert!(error <= 0.2, "{micros} µs -> bucket {bucket} ({midpoint})");
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn quantiles_follow_the_recorded_samples() {
        let histogram = Histogram::default();
        assert_eq!(histogram.quantiles_ms(), [0.0; 6], "idle: zeros");
        // 90 fast requests of 1 ms, 10 slow ones of 100 ms.
        for _ in 0..90 {
            histogram.record(Duration::from_millis(1));
        }
        for _ in 0..10 {
            histogram.record(Duration::from_millis(100));
        }
        let [p50, p75, p95, p98, p99, p999] = histogram.quantiles_ms();
        for fast in [p50, p75] {
            assert!((0.8..1.2).contains(&fast), "{fast}");
        }
        for slow in [p95, p98, p99, p999] {
            assert!((80.0..120.0).contains(&slow), "{slow}");
        }
        assert_eq!(histogram.count(), 100);
    }
}
