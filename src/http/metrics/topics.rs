//! `kafka_server_brokertopicmetrics_*_total`: Kafka's `BrokerTopicMetrics` meters, for all
//! topics (no label) and per topic (`topic`). As in Kafka a topic's series appears once it has
//! counted something (its meters are made on first use); the all-topics ones always.

use super::{Labels, counters, help};
use crate::broker::Broker;
use crate::stats::topics::TopicCounter;
use prometheus_client::encoding::DescriptorEncoder;
use std::collections::HashSet;
use std::sync::Arc;

pub(super) fn encode(
    broker: &Arc<Broker>,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    let stats = &broker.replicas().topic_stats;
    let hosted: HashSet<Arc<str>> = broker
        .replicas()
        .all()
        .iter()
        .map(|p| p.topic_partition().topic.clone())
        .collect();
    stats.retain_topics(|topic| hosted.contains(topic));
    let topics = stats.topics();
    for counter in TopicCounter::ALL {
        let mut series: Vec<(Labels, u64)> = vec![(Vec::new(), stats.all().get(counter))];
        if counter.per_topic() {
            series.extend(
                topics
                    .iter()
                    .map(|(topic, counts)| {
                        (vec![("topic", topic.to_string())], counts.get(counter))
                    })
                    .filter(|(_, value)| *value > 0),
            );
        }
        let meter = format!("{}PerSec", counter.name());
        counters(
            encoder,
            &format!("kafka_server_brokertopicmetrics_{}", counter.name()),
            &help(&format!(
                "kafka.server:name={meter},type=BrokerTopicMetrics,attribute=Count"
            )),
            &series,
        )?;
    }
    Ok(())
}
