//! The cluster as this node sees it. On a node with the controller role,
//! `kafka_controller_kafkacontroller_*` from the committed metadata (Kafka's
//! `ControllerMetadataMetrics`, which every controller keeps; `activecontrollercount` is 1 on
//! the active one only) and `kafka_server_raft_metrics_*` from its Raft state.

use super::{gauge, gauges, help};
use crate::broker::Broker;
use prometheus_client::encoding::DescriptorEncoder;
use std::sync::Arc;

pub(super) fn encode(
    broker: &Arc<Broker>,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    let config = broker.config();
    if !config.cluster.controller_role {
        return Ok(());
    }
    let image = broker.metadata().image();
    let status = *broker.controller().status().borrow();
    let controller = |name: &str| {
        help(&format!(
            "kafka.controller:name={name},type=KafkaController"
        ))
    };
    let partitions = || image.topics.values().flat_map(|t| t.partitions.iter());
    let brokers = || image.brokers.values();
    for (name, mbean, value) in [
        (
            "activecontrollercount",
            "ActiveControllerCount",
            u8::from(status.active) as usize,
        ),
        ("globaltopiccount", "GlobalTopicCount", image.topics.len()),
        (
            "globalpartitioncount",
            "GlobalPartitionCount",
            partitions().count(),
        ),
        (
            "offlinepartitionscount",
            "OfflinePartitionsCount",
            partitions().filter(|p| p.leader < 0).count(),
        ),
        (
            "preferredreplicaimbalancecount",
            "PreferredReplicaImbalanceCount",
            partitions()
                .filter(|p| p.replicas.first().is_some_and(|r| *r != p.leader))
                .count(),
        ),
        (
            "activebrokercount",
            "ActiveBrokerCount",
            brokers().filter(|b| !b.fenced).count(),
        ),
        (
            "fencedbrokercount",
            "FencedBrokerCount",
            brokers().filter(|b| b.fenced).count(),
        ),
        (
            "controlledshutdownbrokercount",
            "ControlledShutdownBrokerCount",
            brokers().filter(|b| b.in_controlled_shutdown).count(),
        ),
    ] {
        gauge(
            encoder,
            &format!("kafka_controller_kafkacontroller_{name}"),
            &controller(mbean),
            value as f64,
        )?;
    }
    let node = config.node_id as u64;
    let raft = |attribute: &str| {
        help(&format!(
            "kafka.server:type=raft-metrics,attribute={attribute}"
        ))
    };
    let leader = status.leader.map_or(-1.0, |l| l as f64);
    gauge(
        encoder,
        "kafka_server_raft_metrics_current_leader",
        &raft("current-leader"),
        leader,
    )?;
    gauge(
        encoder,
        "kafka_server_raft_metrics_current_epoch",
        &raft("current-epoch"),
        status.term as f64,
    )?;
    gauge(
        encoder,
        "kafka_server_raft_metrics_number_of_voters",
        &raft("number-of-voters"),
        crate::broker::quorum_voters(&config).len() as f64,
    )?;
    let state = match status.leader {
        Some(leader) if leader == node => "leader",
        Some(_) => "follower",
        None => "unattached",
    };
    gauges(
        encoder,
        "kafka_server_raft_metrics_current_state",
        &raft("current-state"),
        &[(vec![("state", state.to_string())], 1.0)],
    )?;
    gauge(
        encoder,
        "kafka_server_metadataloader_currentcontrollerid",
        &help("kafka.server:name=CurrentControllerId,type=MetadataLoader"),
        leader,
    )
}
