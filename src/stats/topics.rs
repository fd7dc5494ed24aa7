//! Kafka's `BrokerTopicMetrics`: what came in and went out, per topic and for all topics,
//! counted by the produce and fetch paths. A partition resolves its topic's counters once, when
//! it is hosted ([`BrokerTopicStats::for_topic`]); counting is then an atomic add into the
//! topic's and the all-topics counters, with no lock and no lookup.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// One of Kafka's per-topic meters (`kafka.server:type=BrokerTopicMetrics,name=...PerSec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicCounter {
    MessagesIn,
    BytesIn,
    BytesOut,
    BytesRejected,
    FailedProduceRequests,
    FailedFetchRequests,
    TotalProduceRequests,
    TotalFetchRequests,
    ReplicationBytesIn,
    ReplicationBytesOut,
}

impl TopicCounter {
    pub const ALL: [TopicCounter; 10] = [
        TopicCounter::MessagesIn,
        TopicCounter::BytesIn,
        TopicCounter::BytesOut,
        TopicCounter::BytesRejected,
        TopicCounter::FailedProduceRequests,
        TopicCounter::FailedFetchRequests,
        TopicCounter::TotalProduceRequests,
        TopicCounter::TotalFetchRequests,
        TopicCounter::ReplicationBytesIn,
        TopicCounter::ReplicationBytesOut,
    ];

    /// The meter's name as the JMX exporter lowercases it (`MessagesInPerSec` -> `messagesin`).
    pub fn name(self) -> &'static str {
        match self {
            TopicCounter::MessagesIn => "messagesin",
            TopicCounter::BytesIn => "bytesin",
            TopicCounter::BytesOut => "bytesout",
            TopicCounter::BytesRejected => "bytesrejected",
            TopicCounter::FailedProduceRequests => "failedproducerequests",
            TopicCounter::FailedFetchRequests => "failedfetchrequests",
            TopicCounter::TotalProduceRequests => "totalproducerequests",
            TopicCounter::TotalFetchRequests => "totalfetchrequests",
            TopicCounter::ReplicationBytesIn => "replicationbytesin",
            TopicCounter::ReplicationBytesOut => "replicationbytesout",
        }
    }

    /// Kafka keeps the replication meters for all topics only.
    pub fn per_topic(self) -> bool {
        !matches!(
            self,
            TopicCounter::ReplicationBytesIn | TopicCounter::ReplicationBytesOut
        )
    }
}

/// The counters of one topic (or of all topics).
#[derive(Debug, Default)]
pub struct TopicCounts([AtomicU64; TopicCounter::ALL.len()]);

impl TopicCounts {
    pub fn get(&self, counter: TopicCounter) -> u64 {
        self.0[counter as usize].load(Ordering::Relaxed)
    }

    fn add(&self, counter: TopicCounter, amount: u64) {
        self.0[counter as usize].fetch_add(amount, Ordering::Relaxed);
    }
}

/// What a partition counts into: its topic's counters and the all-topics ones.
#[derive(Debug, Clone)]
pub struct TopicStats {
    topic: Option<Arc<TopicCounts>>,
    all: Arc<TopicCounts>,
}

impl TopicStats {
    /// Counters that count nowhere (a partition not hosted through a replica manager: tests).
    pub fn detached() -> Self {
        Self {
            topic: None,
            all: Arc::default(),
        }
    }

    pub fn add(&self, counter: TopicCounter, amount: u64) {
        if let Some(topic) = &self.topic {
            topic.add(counter, amount);
        }
        self.all.add(counter, amount);
    }

    pub fn inc(&self, counter: TopicCounter) {
        self.add(counter, 1);
    }
}

/// Every topic's counters and the all-topics ones (Kafka's `BrokerTopicStats`).
#[derive(Debug, Default)]
pub struct BrokerTopicStats {
    all: Arc<TopicCounts>,
    topics: RwLock<HashMap<Arc<str>, Arc<TopicCounts>>>,
}

impl BrokerTopicStats {
    /// The counters of `topic` (made on first use), for a partition of it to hold.
    pub fn for_topic(&self, topic: &str) -> TopicStats {
        let existing = self
            .topics
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(topic)
            .cloned();
        let counts = match existing {
            Some(counts) => counts,
            None => self
                .topics
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .entry(Arc::from(topic))
                .or_default()
                .clone(),
        };
        TopicStats {
            topic: Some(counts),
            all: self.all.clone(),
        }
    }

    /// The all-topics counters alone (a request for a partition this broker does not host).
    pub fn all_topics(&self) -> TopicStats {
        TopicStats {
            topic: None,
            all: self.all.clone(),
        }
    }

    /// Forgets the counters of topics no longer hosted here (deleted, or moved away), as Kafka
    /// removes a deleted topic's meters; done at scrape time, off the hot paths.
    pub fn retain_topics(&self, hosted: impl Fn(&str) -> bool) {
        self.topics
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|topic, _| hosted(topic));
    }

    pub fn all(&self) -> &TopicCounts {
        &self.all
    }

    /// Each topic's counters, by name.
    pub fn topics(&self) -> Vec<(Arc<str>, Arc<TopicCounts>)> {
        let mut topics: Vec<_> = self
            .topics
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(name, counts)| (name.clone(), counts.clone()))
            .collect();
        topics.sort_by(|a, b| a.0.cmp(&b.0));
        topics
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_counts_into_its_topic_and_all_topics() {
        let stats = BrokerTopicStats::default();
        let a = stats.for_topic("a");
        let b = stats.for_topic("b");
        a.add(TopicCounter::MessagesIn, 3);
        stats.for_topic("a").add(TopicCounter::MessagesIn, 2);
        b.inc(TopicCounter::MessagesIn);
        stats.all_topics().inc(TopicCounter::TotalProduceRequests);
        let topics = stats.topics();
        assert_eq!(topics.len(), 2);
        assert_eq!(topics[0].1.get(TopicCounter::MessagesIn), 5);
        assert_eq!(topics[1].1.get(TopicCounter::MessagesIn), 1);
        assert_eq!(stats.all().get(TopicCounter::MessagesIn), 6);
        assert_eq!(stats.all().get(TopicCounter::TotalProduceRequests), 1);
        stats.retain_topics(|topic| topic != "a");
        assert_eq!(stats.topics().len(), 1);
        assert_eq!(
            stats.all().get(TopicCounter::MessagesIn),
            6,
            "all topics keep counting"
        );
    }
}
