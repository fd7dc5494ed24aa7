//! `kafka_network_requestmetrics_*`: requests per name and version, the error codes of their
//! responses, and each phase's time as Kafka's histograms come out of the JMX exporter (a
//! gauge per quantile and a `_count` counter; every request name has them, as Kafka registers
//! them all at start). `kafka_network_socketserver_*`: the request memory pool; connections
//! per listener under the names the exporter gives Kafka's `socket-server-metrics` (one
//! network processor: Sluice serves each connection on the async runtime).

use super::{Labels, counters, gauge, gauges, help};
use crate::api::request_names::{self, error_name};
use crate::broker::Broker;
use crate::stats::histogram::QUANTILES;
use crate::stats::requests::RequestTime;
use prometheus_client::encoding::DescriptorEncoder;
use std::sync::Arc;

pub(super) fn encode(
    broker: &Arc<Broker>,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    let stats = &broker.stats().requests;
    let names = request_names::all();
    let mut requests: Vec<(Labels, u64)> = Vec::new();
    let mut errors: Vec<(Labels, u64)> = Vec::new();
    for (slot, name) in names {
        let Some(counts) = stats.seen(*slot) else {
            continue;
        };
        for (version, count) in counts.versions() {
            requests.push((
                vec![("request", name.clone()), ("version", version.to_string())],
                count,
            ));
        }
        for (code, count) in counts.errors() {
            errors.push((
                vec![("error", error_name(code)), ("request", name.clone())],
                count,
            ));
        }
    }
    counters(
        encoder,
        "kafka_network_requestmetrics_requests",
        &help("kafka.network:name=RequestsPerSec,type=RequestMetrics,attribute=Count"),
        &requests,
    )?;
    counters(
        encoder,
        "kafka_network_requestmetrics_errors",
        &help("kafka.network:name=ErrorsPerSec,type=RequestMetrics,attribute=Count"),
        &errors,
    )?;
    for phase in RequestTime::ALL {
        let mut quantiles: Vec<(Labels, f64)> = Vec::new();
        let mut counts: Vec<(Labels, u64)> = Vec::new();
        for (slot, name) in names {
            let histogram = stats.seen(*slot).map(|c| c.histogram(phase));
            let values = histogram.map(|h| h.quantiles_ms()).unwrap_or_default();
            for ((_, label), value) in QUANTILES.iter().zip(values) {
                quantiles.push((
                    vec![("quantile", label.to_string()), ("request", name.clone())],
                    value,
                ));
            }
            counts.push((
                vec![("request", name.clone())],
                histogram.map(|h| h.count()).unwrap_or(0),
            ));
        }
        let family = format!("kafka_network_requestmetrics_{}", phase.name());
        gauges(
            encoder,
            &family,
            &help("kafka.network:type=RequestMetrics (percentiles, milliseconds)"),
            &quantiles,
        )?;
        counters(
            encoder,
            &format!("{family}_count"),
            &help("kafka.network:type=RequestMetrics,attribute=Count"),
            &counts,
        )?;
    }
    encode_sockets(broker, encoder)
}

fn encode_sockets(
    broker: &Arc<Broker>,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    let sockets = &broker.stats().sockets;
    // Without a bound (queued.max.request.bytes=-1) Kafka's pool reports Long.MAX_VALUE free.
    let (available, used) = sockets.memory_pool().unwrap_or((i64::MAX as u64, 0));
    gauge(
        encoder,
        "kafka_network_socketserver_memorypoolavailable",
        &help("kafka.network:name=MemoryPoolAvailable,type=SocketServer,attribute=Value"),
        available as f64,
    )?;
    gauge(
        encoder,
        "kafka_network_socketserver_memorypoolused",
        &help("kafka.network:name=MemoryPoolUsed,type=SocketServer,attribute=Value"),
        used as f64,
    )?;
    for listener in sockets.listeners() {
        let prefix = format!(
            "kafka_server_socket_server_metrics_listener_{}_networkprocessor_0",
            listener.name.to_ascii_lowercase().replace('-', "_")
        );
        gauge(
            encoder,
            &format!("{prefix}_connection_count"),
            &help("kafka.server:type=socket-server-metrics,attribute=connection-count"),
            listener.open() as f64,
        )?;
        counters(
            encoder,
            &format!("{prefix}_connection_creation"),
            &help("kafka.server:type=socket-server-metrics,attribute=connection-creation-total"),
            &[(Vec::new(), listener.created())],
        )?;
        counters(
            encoder,
            &format!("{prefix}_connection_close"),
            &help("kafka.server:type=socket-server-metrics,attribute=connection-close-total"),
            &[(Vec::new(), listener.closed())],
        )?;
    }
    encode_accepts(sockets, encoder)
}

/// Kafka's connection accept sensors (KIP-612), as the JMX exporter's rules name them and
/// with Kafka's descriptions (measured on Kafka 4.4).
fn encode_accepts(
    sockets: &crate::stats::sockets::SocketStats,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    let Some(accepts) = sockets.accepts() else {
        return Ok(());
    };
    gauge(
        encoder,
        "kafka_server_socket_server_metrics_broker_connection_accept_rate",
        "Tracking rate of accepting new connections (per second) kafka.server:name=null,type=socket-server-metrics,attribute=broker-connection-accept-rate",
        accepts.broker_rate,
    )?;
    let mut blocked: Vec<(Labels, u64)> = Vec::new();
    for listener in &accepts.listeners {
        let prefix = format!(
            "kafka_server_socket_server_metrics_listener_{}",
            listener.listener.to_ascii_lowercase().replace('-', "_")
        );
        for (name, attribute, value) in [
            (
                "connection_accept_rate",
                "Tracking rate of accepting new connections (per second) kafka.server:name=null,type=socket-server-metrics,attribute=connection-accept-rate",
                listener.accept_rate,
            ),
            (
                "connection_accept_throttle_time",
                "Tracking average throttle-time, out of non-zero throttle times, per listener kafka.server:name=null,type=socket-server-metrics,attribute=connection-accept-throttle-time",
                listener.throttle_time,
            ),
            (
                "ip_connection_accept_throttle_time",
                "Tracking average throttle-time, out of non-zero throttle times, per listener kafka.server:name=null,type=socket-server-metrics,attribute=ip-connection-accept-throttle-time",
                listener.ip_throttle_time,
            ),
        ] {
            gauge(encoder, &format!("{prefix}_{name}"), attribute, value)?;
        }
        blocked.push((
            vec![("listener", listener.listener.clone())],
            listener.blocked_ns,
        ));
    }
    counters(
        encoder,
        "kafka_network_acceptor_acceptorblockedpercent_count",
        &help("kafka.network:name=AcceptorBlockedPercent,type=Acceptor,attribute=Count"),
        &blocked,
    )
}
