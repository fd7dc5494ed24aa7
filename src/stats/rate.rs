//! The two measures Kafka's quotas are checked against, as its metrics library computes them:
//! [`Rate`] (a `SampledStat` sum over `quota.window.num` windows of `quota.window.size.seconds`,
//! divided by the elapsed window — Kafka's `Rate`) and [`TokenBucket`] (controller mutations).
//! Same arithmetic, so a client is throttled for as long as on Kafka. The same samples give
//! Kafka's `Avg` ([`Rate::average`]), which the throttle-time metrics use.

pub use crate::config::QuotaWindows as Windows;

#[derive(Debug, Clone, Copy)]
struct Sample {
    start_ms: i64,
    last_event_ms: i64,
    value: f64,
    events: u64,
}

impl Sample {
    fn new(now_ms: i64) -> Self {
        Self {
            start_ms: now_ms,
            last_event_ms: now_ms,
            value: 0.0,
            events: 0,
        }
    }
}

/// Kafka's `Rate` over a `SampledStat` of sums: at most `samples + 1` windows (one extra for
/// the sample overlapping the start of the monitored span).
#[derive(Debug, Clone, Default)]
pub struct Rate {
    samples: Vec<Sample>,
    current: usize,
}

impl Rate {
    pub fn record(&mut self, windows: Windows, value: f64, now_ms: i64) {
        if self.samples.is_empty() {
            self.samples.push(Sample::new(now_ms));
        }
        if now_ms - self.samples[self.current].start_ms >= windows.window_ms {
            self.advance(windows, now_ms);
        }
        let sample = &mut self.samples[self.current];
        sample.value += value;
        sample.events += 1;
        sample.last_event_ms = now_ms;
    }

    fn advance(&mut self, windows: Windows, now_ms: i64) {
        let max_samples = windows.samples as usize + 1;
        self.current = (self.current + 1) % max_samples;
        if self.current >= self.samples.len() {
            self.samples.push(Sample::new(now_ms));
        } else {
            self.samples[self.current] = Sample::new(now_ms);
        }
    }

    fn purge_obsolete(&mut self, windows: Windows, now_ms: i64) {
        for sample in &mut self.samples {
            if now_ms - sample.last_event_ms >= windows.span_ms() {
                *sample = Sample::new(now_ms);
            }
        }
    }

    /// Kafka's `Rate.windowSize`: the time since the oldest sample began, at least
    /// `samples - 1` full windows (so a new client is not judged on its first millisecond).
    pub fn window_size_ms(&mut self, windows: Windows, now_ms: i64) -> i64 {
        self.purge_obsolete(windows, now_ms);
        if self.samples.is_empty() {
            self.samples.push(Sample::new(now_ms));
        }
        let oldest = self
            .samples
            .iter()
            .map(|s| s.start_ms)
            .min()
            .unwrap_or(now_ms);
        let mut elapsed = now_ms - oldest;
        let full_windows = elapsed / windows.window_ms;
        let min_full_windows = i64::from(windows.samples) - 1;
        if full_windows < min_full_windows {
            elapsed += (min_full_windows - full_windows) * windows.window_ms;
        }
        elapsed.max(1)
    }

    /// The rate per second now.
    pub fn measure(&mut self, windows: Windows, now_ms: i64) -> f64 {
        self.purge_obsolete(windows, now_ms);
        let total: f64 = self.samples.iter().map(|s| s.value).sum();
        total / (self.window_size_ms(windows, now_ms) as f64 / 1000.0)
    }

    /// Kafka's `QuotaUtils.throttleTime` after recording: the delay that brings the measured
    /// rate back to `bound` if nothing more is recorded; 0 within the bound.
    pub fn throttle_ms(&mut self, windows: Windows, bound: f64, now_ms: i64) -> u32 {
        let measured = self.measure(windows, now_ms);
        if measured <= bound {
            return 0;
        }
        let window = self.window_size_ms(windows, now_ms) as f64;
        ((measured - bound) / bound * window)
            .round()
            .clamp(0.0, f64::from(u32::MAX)) as u32
    }

    /// Kafka's `Avg` over the same samples: the mean of what was recorded in the span, NaN
    /// when nothing was (as Kafka reports an average of no events).
    pub fn average(&mut self, windows: Windows, now_ms: i64) -> f64 {
        self.purge_obsolete(windows, now_ms);
        let events: u64 = self.samples.iter().map(|s| s.events).sum();
        if events == 0 {
            return f64::NAN;
        }
        self.samples.iter().map(|s| s.value).sum::<f64>() / events as f64
    }

    /// When this rate last counted something: a rate idle for a whole span measures nothing.
    pub fn last_event_ms(&self) -> Option<i64> {
        self.samples.iter().map(|s| s.last_event_ms).max()
    }
}

/// Kafka's `TokenBucket`: credits refill at the quota's rate up to a burst of
/// `samples × window` seconds of it; a mutation takes credits, and a bucket below zero is
/// exceeded.
#[derive(Debug, Clone, Default)]
pub struct TokenBucket {
    tokens: f64,
    last_update_ms: i64,
    /// The bucket has been filled once (Kafka starts at 0 at time 0, i.e. full).
    started: bool,
}

impl TokenBucket {
    fn refill(&mut self, windows: Windows, quota: f64, now_ms: i64) {
        let burst = windows.span_ms() as f64 / 1000.0 * quota;
        if !self.started {
            self.tokens = burst;
            self.started = true;
        } else {
            let elapsed = (now_ms - self.last_update_ms).max(0) as f64 / 1000.0;
            self.tokens = burst.min(self.tokens + quota * elapsed);
        }
        self.last_update_ms = now_ms;
    }

    /// The credits now.
    pub fn measure(&mut self, windows: Windows, quota: f64, now_ms: i64) -> f64 {
        self.refill(windows, quota, now_ms);
        self.tokens
    }

    pub fn record(&mut self, windows: Windows, quota: f64, permits: f64, now_ms: i64) {
        self.refill(windows, quota, now_ms);
        let burst = windows.span_ms() as f64 / 1000.0 * quota;
        self.tokens = burst.min(self.tokens - permits);
    }

    /// Kafka's `ControllerMutationQuotaManager.throttleTimeMs`: the time until the credits
    /// are back to zero.
    pub fn throttle_ms(tokens: f64, quota: f64) -> u32 {
        (-tokens / quota * 1000.0)
            .round()
            .clamp(0.0, f64::from(u32::MAX)) as u32
    }

    pub fn last_update_ms(&self) -> i64 {
        self.last_update_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOWS: Windows = Windows {
        samples: 11,
        window_ms: 1000,
    };

    #[test]
    fn a_new_rate_is_spread_over_the_minimum_window() {
        let mut rate = Rate::default();
        rate.record(WINDOWS, 10_000.0, 0);
        // 10 full windows assumed: 10,000 bytes over 10 s.
        assert_eq!(rate.window_size_ms(WINDOWS, 0), 10_000);
        assert!((rate.measure(WINDOWS, 0) - 1000.0).abs() < 1e-9);
        // Bound 500/s: twice the bound needs as long again, 10 s.
        assert_eq!(rate.throttle_ms(WINDOWS, 500.0, 0), 10_000);
        assert_eq!(rate.throttle_ms(WINDOWS, 1000.0, 0), 0);
    }

    #[test]
    fn a_steady_rate_measures_itself_and_old_samples_expire() {
        let mut rate = Rate::default();
        for second in 0..30 {
            rate.record(WINDOWS, 2000.0, second * 1000);
        }
        let measured = rate.measure(WINDOWS, 29_999);
        assert!((1800.0..=2200.0).contains(&measured), "{measured}");
        // After a whole span without events, nothing is left.
        assert_eq!(rate.measure(WINDOWS, 29_000 + 11_000), 0.0);
    }

    #[test]
    fn the_average_is_the_mean_of_the_span_and_nan_without_events() {
        let mut avg = Rate::default();
        assert!(avg.average(WINDOWS, 0).is_nan());
        avg.record(WINDOWS, 100.0, 0);
        avg.record(WINDOWS, 300.0, 2_500);
        assert_eq!(avg.average(WINDOWS, 3_000), 200.0);
        assert!(avg.average(WINDOWS, 2_500 + 11_000).is_nan());
    }

    #[test]
    fn the_token_bucket_allows_a_burst_then_refills_at_the_quota() {
        let mut bucket = TokenBucket::default();
        // Quota 2/s: a burst of 22 credits.
        assert_eq!(bucket.measure(WINDOWS, 2.0, 0), 22.0);
        bucket.record(WINDOWS, 2.0, 30.0, 0);
        let tokens = bucket.measure(WINDOWS, 2.0, 0);
        assert_eq!(tokens, -8.0);
        assert_eq!(TokenBucket::throttle_ms(tokens, 2.0), 4000);
        assert_eq!(bucket.measure(WINDOWS, 2.0, 4000), 0.0);
        assert_eq!(bucket.measure(WINDOWS, 2.0, 60_000), 22.0);
    }
}
