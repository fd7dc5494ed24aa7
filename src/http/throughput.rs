//! Messages and bytes in and out per topic over the last minutes, for the console's live
//! charts (`GET /api/v1/throughput`): the topic counters sampled every few seconds into a ring,
//! rates computed between neighbouring samples.

use crate::broker::Broker;
use crate::stats::topics::TopicCounter;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio_util::sync::CancellationToken;

/// How often the counters are sampled.
pub const INTERVAL: Duration = Duration::from_secs(5);
/// Samples kept: five minutes.
const KEPT: usize = 61;

/// (messages in, bytes in, bytes out) of one topic, or of all topics under "".
type Counts = (u64, u64, u64);

#[derive(Debug)]
struct Sample {
    at_ms: u64,
    topics: BTreeMap<String, Counts>,
}

#[derive(Debug, Default)]
pub struct Throughput {
    samples: Mutex<VecDeque<Sample>>,
}

#[derive(Debug, Serialize)]
pub struct Series {
    pub interval_seconds: u64,
    /// Per topic ("" is all topics), points oldest first.
    pub topics: BTreeMap<String, Vec<Point>>,
}

#[derive(Debug, Serialize)]
pub struct Point {
    /// Milliseconds since the epoch, at the end of the interval.
    pub at: u64,
    pub messages_in_per_sec: f64,
    pub bytes_in_per_sec: f64,
    pub bytes_out_per_sec: f64,
}

impl Throughput {
    fn sample(&self, broker: &Broker) {
        let stats = &broker.replicas().topic_stats;
        let counts = |c: &crate::stats::topics::TopicCounts| -> Counts {
            (
                c.get(TopicCounter::MessagesIn),
                c.get(TopicCounter::BytesIn),
                c.get(TopicCounter::BytesOut),
            )
        };
        let mut topics: BTreeMap<String, Counts> = stats
            .topics()
            .iter()
            .map(|(name, c)| (name.to_string(), counts(c)))
            .collect();
        topics.insert(String::new(), counts(stats.all()));
        let at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let mut samples = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        samples.push_back(Sample { at_ms, topics });
        while samples.len() > KEPT {
            samples.pop_front();
        }
    }

    /// Samples until `shutdown`.
    pub async fn run(self: Arc<Self>, broker: Arc<Broker>, shutdown: CancellationToken) {
        let mut ticks = tokio::time::interval(INTERVAL);
        loop {
            tokio::select! {
                _ = ticks.tick() => self.sample(&broker),
                () = shutdown.cancelled() => return,
            }
        }
    }

    pub fn series(&self) -> Series {
        let samples = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        let mut topics: BTreeMap<String, Vec<Point>> = BTreeMap::new();
        for pair in samples.iter().collect::<Vec<_>>().windows(2) {
            let (before, after) = (pair[0], pair[1]);
            let seconds = (after.at_ms.saturating_sub(before.at_ms)) as f64 / 1000.0;
            if seconds <= 0.0 {
                continue;
            }
            for (topic, now) in &after.topics {
                // A topic that appeared meanwhile counts from zero.
                let then = before.topics.get(topic).copied().unwrap_or_default();
                let rate = |now: u64, then: u64| now.saturating_sub(then) as f64 / seconds;
                topics.entry(topic.clone()).or_default().push(Point {
                    at: after.at_ms,
                    messages_in_per_sec: rate(now.0, then.0),
                    bytes_in_per_sec: rate(now.1, then.1),
                    bytes_out_per_sec: rate(now.2, then.2),
                });
            }
        }
        Series {
            interval_seconds: INTERVAL.as_secs(),
            topics,
        }
    }
}

/// `GET /api/v1/throughput`: the topics the principal may describe (and all topics together
/// for one that may describe the cluster).
pub async fn series(
    State(throughput): State<Arc<Throughput>>,
    access: super::access::Access,
) -> Json<Series> {
    let mut series = throughput.series();
    let whole = access.cluster(crate::auth::acl::AclOperation::Describe);
    series.topics.retain(|topic, _| {
        if topic.is_empty() {
            whole
        } else {
            access.sees_topic(topic)
        }
    });
    Json(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_come_from_neighbouring_samples() {
        let throughput = Throughput::default();
        {
            let mut samples = throughput.samples.lock().unwrap();
            let sample = |at_ms, messages| Sample {
                at_ms,
                topics: BTreeMap::from([("t".to_string(), (messages, messages * 10, 0))]),
            };
            samples.push_back(sample(1_000, 0));
            samples.push_back(sample(6_000, 50));
            samples.push_back(sample(11_000, 50));
        }
        let series = throughput.series();
        let points = &series.topics["t"];
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].messages_in_per_sec, 10.0);
        assert_eq!(points[0].bytes_in_per_sec, 100.0);
        assert_eq!(points[1].messages_in_per_sec, 0.0);
        assert_eq!(points[1].at, 11_000);
    }
}
