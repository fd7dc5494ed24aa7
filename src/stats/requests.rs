//! Kafka's `RequestMetrics`: per request name, how many came in of each version, the error
//! codes their responses carried, and how long each phase took. A request name is a slot
//! number the API layer assigns (an API key, or Fetch split into consumer and follower fetches
//! as Kafka splits it); a slot's counters are allocated the first time that request comes in,
//! after which counting is atomic adds only.

use super::histogram::Histogram;
use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Request versions counted apart; a higher one is counted in the last slot.
pub const VERSIONS: usize = 32;
/// Error codes counted: -1 (UNKNOWN_SERVER_ERROR) to `ERROR_SLOTS - 2`.
pub const ERROR_SLOTS: usize = 160;

/// The phases of a request Kafka times (`kafka.network:type=RequestMetrics,name=...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestTime {
    /// From the request read whole off the socket until it is handled.
    RequestQueue,
    /// Handling on this broker, less the remote time.
    Local,
    /// Waiting on others: acks from followers, a long-poll fetch waiting for data, the
    /// controller answering a forwarded request.
    Remote,
    /// Writing the response to the socket.
    ResponseSend,
    /// All of it.
    Total,
}

impl RequestTime {
    pub const ALL: [RequestTime; 5] = [
        RequestTime::RequestQueue,
        RequestTime::Local,
        RequestTime::Remote,
        RequestTime::ResponseSend,
        RequestTime::Total,
    ];

    /// The metric's name as the JMX exporter lowercases it.
    pub fn name(self) -> &'static str {
        match self {
            RequestTime::RequestQueue => "requestqueuetimems",
            RequestTime::Local => "localtimems",
            RequestTime::Remote => "remotetimems",
            RequestTime::ResponseSend => "responsesendtimems",
            RequestTime::Total => "totaltimems",
        }
    }
}

/// The counters of one request name.
#[derive(Debug)]
pub struct RequestCounts {
    versions: [AtomicU64; VERSIONS],
    errors: [AtomicU64; ERROR_SLOTS],
    times: [Histogram; RequestTime::ALL.len()],
}

impl Default for RequestCounts {
    fn default() -> Self {
        Self {
            versions: std::array::from_fn(|_| AtomicU64::new(0)),
            errors: std::array::from_fn(|_| AtomicU64::new(0)),
            times: std::array::from_fn(|_| Histogram::default()),
        }
    }
}

impl RequestCounts {
    pub fn request(&self, version: i16) {
        let slot = usize::try_from(version).unwrap_or(0).min(VERSIONS - 1);
        self.versions[slot].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts an error code a response carried (`NONE` too, as Kafka counts it); codes beyond
    /// the table count as UNKNOWN_SERVER_ERROR.
    pub fn error(&self, code: i16, times: u64) {
        let slot = usize::try_from(i32::from(code) + 1)
            .ok()
            .filter(|slot| *slot < ERROR_SLOTS)
            .unwrap_or(0);
        self.errors[slot].fetch_add(times, Ordering::Relaxed);
    }

    pub fn time(&self, phase: RequestTime, elapsed: Duration) {
        self.times[phase as usize].record(elapsed);
    }

    /// (version, requests) for every version seen.
    pub fn versions(&self) -> Vec<(i16, u64)> {
        self.versions
            .iter()
            .enumerate()
            .map(|(version, count)| (version as i16, count.load(Ordering::Relaxed)))
            .filter(|(_, count)| *count > 0)
            .collect()
    }

    /// (error code, count) for every code seen.
    pub fn errors(&self) -> Vec<(i16, u64)> {
        self.errors
            .iter()
            .enumerate()
            .map(|(slot, count)| (slot as i16 - 1, count.load(Ordering::Relaxed)))
            .filter(|(_, count)| *count > 0)
            .collect()
    }

    pub fn histogram(&self, phase: RequestTime) -> &Histogram {
        &self.times[phase as usize]
    }
}

/// Every request name's counters, by slot.
#[derive(Debug)]
pub struct RequestStats {
    slots: Box<[OnceLock<Box<RequestCounts>>]>,
}

impl RequestStats {
    pub fn new(slots: usize) -> Self {
        Self {
            slots: (0..slots).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The counters of `slot` (allocated on first use); `None` for a slot beyond the table.
    pub fn slot(&self, slot: usize) -> Option<&RequestCounts> {
        self.slots
            .get(slot)
            .map(|counts| &**counts.get_or_init(Box::default))
    }

    /// The counters of `slot` if that request ever came in.
    pub fn seen(&self, slot: usize) -> Option<&RequestCounts> {
        self.slots
            .get(slot)
            .and_then(|counts| counts.get())
            .map(|c| &**c)
    }
}

tokio::task_local! {
    /// What the request being handled on this task has spent waiting on others, and whether it
    /// is a follower's fetch; set by [`in_request`] around a request's handling.
    static REQUEST: RequestScope;
}

#[derive(Debug, Default)]
struct RequestScope {
    remote: Cell<Duration>,
    follower: Cell<bool>,
    handled: std::cell::RefCell<Option<Handled>>,
}

/// A request the API layer handled: where it counts, and when its handling began and ended.
#[derive(Debug, Clone)]
struct Handled {
    stats: Arc<RequestStats>,
    slots: [Option<usize>; 2],
    started: Instant,
    finished: Instant,
    remote: Duration,
}

/// What a request's handling reported about itself, to be completed once its response is
/// sent ([`RequestReport::sent`]).
#[derive(Debug, Default)]
pub struct RequestReport {
    handled: Option<Handled>,
}

impl RequestReport {
    /// Records the request's phase times now that its response is on the socket (or, for a
    /// request without a response, handled): `received` when the request had been read,
    /// `sending` when its response began to be written.
    pub fn sent(self, received: Instant, sending: Instant) {
        let Some(handled) = self.handled else {
            return;
        };
        let now = Instant::now();
        let busy = handled.finished.saturating_duration_since(handled.started);
        let phases = [
            (
                RequestTime::RequestQueue,
                handled.started.saturating_duration_since(received),
            ),
            (RequestTime::Local, busy.saturating_sub(handled.remote)),
            (RequestTime::Remote, handled.remote.min(busy)),
            (
                RequestTime::ResponseSend,
                now.saturating_duration_since(sending),
            ),
            (RequestTime::Total, now.saturating_duration_since(received)),
        ];
        let stats = &handled.stats;
        for counts in handled
            .slots
            .iter()
            .flatten()
            .filter_map(|slot| stats.slot(*slot))
        {
            for (phase, elapsed) in phases {
                counts.time(phase, elapsed);
            }
        }
    }
}

/// Runs a request's handling, collecting what it reports about itself.
pub async fn in_request<F: Future>(handling: F) -> (F::Output, RequestReport) {
    REQUEST
        .scope(RequestScope::default(), async {
            let output = handling.await;
            let handled = REQUEST.with(|scope| scope.handled.take());
            (output, RequestReport { handled })
        })
        .await
}

/// Counts a request the API layer handled (its version now, its times once its response is
/// sent) under `slot`, and for a fetch under the consumer or follower name as well
/// (`fetch_slots`: consumer, follower). `started`: when its handling began.
pub fn handled(
    stats: &Arc<RequestStats>,
    slot: usize,
    fetch_slots: Option<(usize, usize)>,
    version: i16,
    started: Instant,
) {
    let _ = REQUEST.try_with(|scope| {
        let split = fetch_slots.map(|(consumer, follower)| {
            if scope.follower.get() {
                follower
            } else {
                consumer
            }
        });
        let slots = [Some(slot), split];
        for counts in slots.iter().flatten().filter_map(|slot| stats.slot(*slot)) {
            counts.request(version);
        }
        scope.handled.replace(Some(Handled {
            stats: stats.clone(),
            slots,
            started,
            finished: Instant::now(),
            remote: scope.remote.get(),
        }));
    });
}

/// A wait on others (followers' acks, data for a long-poll, the controller's answer): counted
/// as the request's remote time rather than its local time. Outside a request it only waits.
pub async fn remote<F: Future>(wait: F) -> F::Output {
    let started = Instant::now();
    let output = wait.await;
    let _ = REQUEST.try_with(|scope| scope.remote.set(scope.remote.get() + started.elapsed()));
    output
}

/// What the request being handled has waited on others so far (zero outside a request).
pub fn remote_so_far() -> Duration {
    REQUEST
        .try_with(|scope| scope.remote.get())
        .unwrap_or_default()
}

/// Marks the request being handled as a follower's fetch.
pub fn note_follower_fetch() {
    let _ = REQUEST.try_with(|scope| scope.follower.set(true));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_reports_its_remote_waits_and_counts_as_a_follower_fetch() {
        let stats = Arc::new(RequestStats::new(8));
        let received = Instant::now();
        let ((), report) = in_request(async {
            let started = Instant::now();
            remote(tokio::time::sleep(Duration::from_millis(20))).await;
            note_follower_fetch();
            handled(&stats, 1, Some((6, 7)), 12, started);
        })
        .await;
        report.sent(received, Instant::now());
        for slot in [1, 7] {
            let counts = stats.seen(slot).unwrap();
            assert_eq!(counts.versions(), vec![(12, 1)]);
            assert_eq!(counts.histogram(RequestTime::Remote).count(), 1);
            let [p50, ..] = counts.histogram(RequestTime::Remote).quantiles_ms();
            assert!(p50 >= 15.0, "remote time {p50} ms");
        }
        assert!(stats.seen(6).is_none(), "not a consumer's fetch");
        // Outside a request: nothing to report to, nothing breaks.
        remote(async {}).await;
        note_follower_fetch();
        handled(&stats, 2, None, 0, Instant::now());
        assert!(stats.seen(2).is_none());
    }

    #[test]
    fn versions_errors_and_times_are_counted_per_slot() {
        let stats = RequestStats::new(4);
        assert!(stats.seen(1).is_none());
        let counts = stats.slot(1).unwrap();
        counts.request(9);
        counts.request(9);
        counts.request(99);
        counts.error(0, 2);
        counts.error(-1, 1);
        counts.error(i16::MAX, 1);
        counts.time(RequestTime::Total, Duration::from_millis(3));
        let seen = stats.seen(1).unwrap();
        assert_eq!(seen.versions(), vec![(9, 2), (VERSIONS as i16 - 1, 1)]);
        assert_eq!(seen.errors(), vec![(-1, 2), (0, 2)]);
        assert_eq!(seen.histogram(RequestTime::Total).count(), 1);
        assert!(stats.slot(4).is_none());
    }
}
