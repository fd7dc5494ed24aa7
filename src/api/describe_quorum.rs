//! DescribeQuorum: the controller quorum's leader, epoch, high watermark and voters
//! (`kafka-metadata-quorum describe`). On a client listener the quorum's leader answers, over
//! the controller listener when that is another node (Kafka's brokers forward it too); on the
//! controller listener only the leader answers, others say NOT_LEADER_OR_FOLLOWER as Kafka's
//! raft layer does. Voters' endpoints come from `controller.quorum.voters` (a static quorum:
//! no directory ids); observers are the broker-only nodes fetching the metadata. The same file builds the request one node sends another
//! and reads its answer.

use super::{ApiContext, metadata_topic, wire_str};
use crate::controller::quorum_view::{QuorumDescription, VoterProgress};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::{Error, code};
use kafka_protocol::messages::describe_quorum_request::{
    PartitionData as AskedPartition, TopicData,
};
use kafka_protocol::messages::describe_quorum_response::{
    Listener, Node, PartitionData, ReplicaState, TopicData as AnsweredTopic,
};
use kafka_protocol::messages::{
    BrokerId, DescribeQuorumRequest, DescribeQuorumResponse, TopicName,
};

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeQuorumRequest,
    version: i16,
) -> Option<DescribeQuorumResponse> {
    // Kafka's check: exactly the metadata log's one partition.
    let valid = matches!(request.topics.as_slice(), [topic]
        if topic.topic_name.as_str() == metadata_topic()
            && matches!(topic.partitions.as_slice(), [p] if p.partition_index == 0));
    if !valid {
        return Some(for_version(partition_errors(&request), version));
    }
    let outcome = if ctx.is_controller_listener() {
        ctx.broker
            .controller()
            .call(ControllerOp::DescribeQuorum)
            .await
            .map_err(|e| match e {
                Error::NotController => Error::NotLeaderOrFollower,
                other => other,
            })
    } else {
        ctx.broker
            .call_active_controller(ControllerOp::DescribeQuorum)
            .await
    };
    let response = match outcome {
        Ok(ControllerReply::Quorum(quorum)) => response_of(ctx, &quorum),
        Ok(other) => single_error(super::broker_registration::unexpected(&other)),
        Err(e) => single_error(e),
    };
    Some(for_version(response, version))
}

/// Leaves out what `version` cannot carry: timestamps before v1, error messages, nodes and
/// directory ids before v2.
fn for_version(mut response: DescribeQuorumResponse, version: i16) -> DescribeQuorumResponse {
    if version < 2 {
        response.error_message = None;
        response.nodes.clear();
    }
    for partition in response
        .topics
        .iter_mut()
        .flat_map(|t| t.partitions.iter_mut())
    {
        if version < 2 {
            partition.error_message = None;
        }
        let replicas = partition
            .current_voters
            .iter_mut()
            .chain(partition.observers.iter_mut());
        for replica in replicas {
            if version < 2 {
                replica.replica_directory_id = uuid::Uuid::nil();
            }
            if version < 1 {
                replica.last_fetch_timestamp = -1;
                replica.last_caught_up_timestamp = -1;
            }
        }
    }
    response
}

/// Every asked partition with UNKNOWN_TOPIC_OR_PARTITION (Kafka's answer to a request that
/// does not name the metadata log alone), in Kafka's words.
fn partition_errors(request: &DescribeQuorumRequest) -> DescribeQuorumResponse {
    let error = code::UNKNOWN_TOPIC_OR_PARTITION;
    let message = Some(wire_str("This server does not host this topic-partition."));
    DescribeQuorumResponse::default().with_topics(
        request
            .topics
            .iter()
            .map(|topic| {
                AnsweredTopic::default()
                    .with_topic_name(topic.topic_name.clone())
                    .with_partitions(
                        topic
                            .partitions
                            .iter()
                            .map(|p| {
                                PartitionData::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(error)
                                    .with_error_message(message.clone())
                            })
                            .collect(),
                    )
            })
            .collect(),
    )
}

/// The metadata partition with `error`.
fn single_error(error: Error) -> DescribeQuorumResponse {
    DescribeQuorumResponse::default().with_topics(vec![
        AnsweredTopic::default()
            .with_topic_name(TopicName(wire_str(metadata_topic())))
            .with_partitions(vec![
                PartitionData::default()
                    .with_error_code(error.code())
                    .with_error_message(Some(wire_str(&error.message()))),
            ]),
    ])
}

fn response_of(ctx: &ApiContext, quorum: &QuorumDescription) -> DescribeQuorumResponse {
    // A dynamic quorum's voters have directory ids (KIP-853); a static one's are all zero.
    let image = ctx.broker.controller().image().borrow().clone();
    let directory_of = |node: u64| {
        i32::try_from(node)
            .ok()
            .and_then(|id| image.quorum_voters.get(&id))
            .map_or(uuid::Uuid::nil(), |v| v.directory_id)
    };
    let replica = |voter: &VoterProgress| {
        ReplicaState::default()
            .with_replica_id(BrokerId(voter.node as i32))
            .with_replica_directory_id(directory_of(voter.node))
            .with_log_end_offset(voter.log_end_offset)
            .with_last_fetch_timestamp(voter.last_fetch_ms)
            .with_last_caught_up_timestamp(voter.last_caught_up_ms)
    };
    let partition = PartitionData::default()
        .with_leader_id(BrokerId(quorum.leader as i32))
        .with_leader_epoch(quorum.leader_epoch.min(i32::MAX as u64) as i32)
        .with_high_watermark(quorum.high_watermark as i64)
        .with_current_voters(quorum.voters.iter().map(replica).collect())
        .with_observers(quorum.observers.iter().map(replica).collect());
    let config = ctx.broker.config();
    let listener = &config.cluster.controller_listener;
    let voters = ctx.broker.voter_endpoints();
    let endpoint = |node: u64| -> Option<(String, u16)> {
        match voters.iter().find(|(id, ..)| *id as u64 == node) {
            Some((_, host, port)) => Some((host.clone(), *port)),
            // The unconfigured single node: its own controller listener, if it has one.
            None if voters.is_empty() => config
                .listeners
                .iter()
                .find(|l| &l.name == listener && l.port != 0)
                .map(|l| {
                    let host = if l.host.is_empty() {
                        "localhost"
                    } else {
                        &l.host
                    };
                    (host.to_string(), l.port)
                }),
            None => None,
        }
    };
    let nodes = quorum
        .voters
        .iter()
        .map(|voter| {
            Node::default()
                .with_node_id(BrokerId(voter.node as i32))
                .with_listeners(
                    endpoint(voter.node)
                        .map(|(host, port)| {
                            Listener::default()
                                .with_name(wire_str(listener))
                                .with_host(wire_str(&host))
                                .with_port(port)
                        })
                        .into_iter()
                        .collect(),
                )
        })
        .collect();
    DescribeQuorumResponse::default()
        .with_topics(vec![
            AnsweredTopic::default()
                .with_topic_name(TopicName(wire_str(metadata_topic())))
                .with_partitions(vec![partition]),
        ])
        .with_nodes(nodes)
}

/// What one node asks the quorum's leader for.
pub fn request_for() -> DescribeQuorumRequest {
    DescribeQuorumRequest::default().with_topics(vec![
        TopicData::default()
            .with_topic_name(TopicName(wire_str(metadata_topic())))
            .with_partitions(vec![AskedPartition::default()]),
    ])
}

/// The leader's answer; NOT_LEADER_OR_FOLLOWER (it stopped leading) asks for another try.
pub fn reply_from(response: DescribeQuorumResponse) -> Result<ControllerReply, Error> {
    if let Some(e) = Error::from_code(response.error_code, None) {
        return Err(e);
    }
    let Some(partition) = response.topics.first().and_then(|t| t.partitions.first()) else {
        return Err(Error::NotController);
    };
    match Error::from_code(partition.error_code, None) {
        Some(Error::NotLeaderOrFollower) => return Err(Error::NotController),
        Some(e) => return Err(e),
        None => {}
    }
    let voter = |state: &ReplicaState| VoterProgress {
        node: state.replica_id.0.max(0) as u64,
        log_end_offset: state.log_end_offset,
        last_fetch_ms: state.last_fetch_timestamp,
        last_caught_up_ms: state.last_caught_up_timestamp,
    };
    Ok(ControllerReply::Quorum(QuorumDescription {
        leader: partition.leader_id.0.max(0) as u64,
        leader_epoch: partition.leader_epoch.max(0) as u64,
        high_watermark: partition.high_watermark.max(0) as u64,
        voters: partition.current_voters.iter().map(voter).collect(),
        observers: partition.observers.iter().map(voter).collect(),
    }))
}
