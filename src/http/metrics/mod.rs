//! `/metrics`: the broker's measurements and state in Prometheus's formats, named as Kafka's
//! metrics come out of the Prometheus JMX exporter with its standard KRaft rules
//! (`examples/kafka-kraft-3_0_0.yml`; the reference list is
//! `compat/kafka-peer/metrics/kafka-4.4.0-families.txt`), so dashboards and alerts written for
//! Kafka read Sluice unchanged. Counters come from [`crate::stats`]; everything else is read at
//! scrape time. Encoding is `prometheus-client`'s: the 0.0.4 text format, or OpenMetrics when
//! the scraper asks for it.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the collector, content negotiation, family helpers |
//! | `requests.rs` | `kafka_network_requestmetrics_*`, `kafka_network_socketserver_*`, connections per listener |
//! | `topics.rs` | `kafka_server_brokertopicmetrics_*` |
//! | `partitions.rs` | `kafka_server_replicamanager_*`, `kafka_log_log_*`, `kafka_cluster_partition_*` |
//! | `cluster.rs` | `kafka_controller_kafkacontroller_*`, `kafka_server_raft_metrics_*` |
//! | `quotas.rs` | client quota sensors: `kafka_server_{produce,fetch,request,controllermutation}_<tags>_*` |
//! | `groups.rs` | `kafka_coordinator_group_groupmetadatamanager_*`, consumer group lag as kafka_exporter names it |
//! | `process.rs` | `process_*`: CPU, memory, descriptors, start time |

mod cluster;
mod groups;
mod partitions;
mod process;
mod quotas;
mod requests;
mod topics;

use crate::broker::Broker;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use std::sync::Arc;

/// The `Content-Type` of the 0.0.4 text format.
pub const TEXT_CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;
/// The `Content-Type` of OpenMetrics text.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A series' labels, in the order they are written.
pub(super) type Labels = Vec<(&'static str, String)>;

/// Renders every family; OpenMetrics when `openmetrics`, else the 0.0.4 text format.
pub fn render(broker: &Arc<Broker>, openmetrics: bool) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(BrokerCollector {
        broker: broker.clone(),
    }));
    let mut out = String::new();
    if openmetrics {
        prometheus_client::encoding::text::encode(&mut out, &registry)?;
    } else {
        prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)?;
    }
    Ok(out)
}

/// Whether an `Accept` header asks for OpenMetrics (Prometheus sends it first).
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|accept| accept.contains("application/openmetrics-text"))
}

#[derive(Debug)]
struct BrokerCollector {
    broker: Arc<Broker>,
}

impl Collector for BrokerCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let broker = &self.broker;
        let per_partition = broker.config().http.partition_series;
        topics::encode(broker, &mut encoder)?;
        requests::encode(broker, &mut encoder)?;
        partitions::encode(broker, per_partition, &mut encoder)?;
        cluster::encode(broker, &mut encoder)?;
        groups::encode(broker, per_partition, &mut encoder)?;
        quotas::encode(broker, &mut encoder)?;
        process::encode(&mut encoder)?;
        Ok(())
    }
}

/// Help text in the JMX exporter's words, naming the MBean a family comes from.
pub(super) fn help(mbean: &str) -> String {
    format!("Attribute exposed for management {mbean}")
}

/// A gauge family with its series.
pub(super) fn gauges(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: &[(Labels, f64)],
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, value) in series {
        ConstGauge::new(*value).encode(family.encode_family(labels)?)?;
    }
    Ok(())
}

/// A counter family with its series; `name` without the `_total` the encoders add.
pub(super) fn counters(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: &[(Labels, u64)],
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (labels, value) in series {
        ConstCounter::new(*value).encode(family.encode_family(labels)?)?;
    }
    Ok(())
}

/// A gauge family of one unlabelled series.
pub(super) fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: f64,
) -> Result<(), std::fmt::Error> {
    gauges(encoder, name, help, &[(Vec::new(), value)])
}
