//! Metadata: brokers, cluster id, controller and topics with their partitions. Unknown topics
//! are created when both the request (`allow_auto_topic_creation`, implied before v4) and the
//! broker (`auto.create.topics.enable`) allow it — in the background, as Kafka's KRaft brokers
//! do (`AutoTopicCreationManager`): the response that asked says UNKNOWN_TOPIC_OR_PARTITION,
//! and a later Metadata request finds the topic. Clients wait for it by
//! `topic.metadata.propagation.max.ms` (librdkafka) or `max.block.ms` (Java) as with Kafka.

use super::{
    ApiContext, CLUSTER_OPERATIONS, OPERATIONS_NOT_REQUESTED, TOPIC_OPERATIONS,
    authorized_operations, wire_str,
};
use crate::error::{Error, code};
use crate::metadata::{TopicInfo, validate_topic_name};
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{BrokerId, MetadataRequest, MetadataResponse, TopicName};
use kafka_protocol::protocol::StrBytes;

pub async fn handle(
    ctx: &ApiContext,
    request: MetadataRequest,
    version: i16,
) -> Option<MetadataResponse> {
    let broker = &ctx.broker;
    let auto_create = broker.config().auto_create_topics_enable
        && (version < 4 || request.allow_auto_topic_creation);
    let include_topic_ops = version >= 8 && request.include_topic_authorized_operations;
    let topic_ops = if include_topic_ops {
        authorized_operations(TOPIC_OPERATIONS)
    } else {
        OPERATIONS_NOT_REQUESTED
    };

    let all_topics = match &request.topics {
        None => true,
        Some(list) => version == 0 && list.is_empty(),
    };
    let topics = if all_topics {
        broker
            .topics()
            .iter()
            .map(|t| describe_topic(ctx, t, topic_ops))
            .collect()
    } else {
        let mut out = Vec::new();
        // Each topic is answered once however often it is named, as Kafka answers the set of
        // the topics named (and is asked to create it once).
        let mut named = std::collections::HashSet::new();
        for wanted in request.topics.iter().flatten() {
            if !named.insert((wanted.topic_id, wanted.name.as_ref().map(|n| n.0.clone()))) {
                continue;
            }
            // A topic id, when given, names the topic (Java clients also send an empty
            // name with it, the field's default); an unknown id is answered without a name.
            let by_id = !wanted.topic_id.is_nil();
            let topic = match &wanted.name {
                _ if by_id => broker
                    .topic_by_id(wanted.topic_id)
                    .ok_or(Error::UnknownTopicId),
                Some(name) => lookup_or_create(ctx, name, auto_create).await,
                None => Err(Error::InvalidRequest("topic without name or id".into())),
            };
            out.push(match topic {
                Ok(info) => describe_topic(ctx, &info, topic_ops),
                Err(e) => MetadataResponseTopic::default()
                    .with_error_code(e.code())
                    .with_name(if by_id { None } else { wanted.name.clone() })
                    .with_topic_id(wanted.topic_id)
                    .with_topic_authorized_operations(topic_ops),
            });
        }
        out
    };
    let cluster_ops =
        if (8..=10).contains(&version) && request.include_cluster_authorized_operations {
            authorized_operations(CLUSTER_OPERATIONS)
        } else {
            OPERATIONS_NOT_REQUESTED
        };
    let live = super::context::live_brokers(ctx);
    let controller = super::context::controller_for_clients(ctx, &live);
    Some(
        MetadataResponse::default()
            .with_brokers(brokers(live))
            .with_cluster_id(Some(wire_str(&broker.cluster_id())))
            .with_controller_id(BrokerId(controller))
            .with_topics(topics)
            .with_cluster_authorized_operations(cluster_ops),
    )
}

fn brokers(live: Vec<super::context::LiveBroker>) -> Vec<MetadataResponseBroker> {
    live.into_iter()
        .map(|b| {
            MetadataResponseBroker::default()
                .with_node_id(BrokerId(b.id))
                .with_host(wire_str(&b.host))
                .with_port(b.port)
                .with_rack(b.rack.as_deref().map(wire_str))
        })
        .collect()
}

async fn lookup_or_create(
    ctx: &ApiContext,
    name: &TopicName,
    auto_create: bool,
) -> Result<std::sync::Arc<TopicInfo>, Error> {
    if let Some(info) = ctx.broker.topic(name) {
        return Ok(info);
    }
    validate_topic_name(name).map_err(Error::InvalidTopic)?;
    if auto_create {
        let broker = ctx.broker.clone();
        let name = name.to_string();
        tokio::spawn(async move {
            if let Err(error) = broker.auto_create_topic(&name).await {
                tracing::info!(topic = %name, %error, "automatic topic creation failed");
            }
        });
    }
    Err(Error::UnknownTopicOrPartition)
}

fn describe_topic(ctx: &ApiContext, topic: &TopicInfo, topic_ops: i32) -> MetadataResponseTopic {
    let partitions = (0..topic.partitions)
        .map(|p| {
            let state = super::wire_partition_state(
                ctx.broker
                    .partition_state(&crate::types::TopicPartition::new(&topic.name, p)),
            );
            MetadataResponsePartition::default()
                .with_error_code(state.error_code)
                .with_partition_index(p)
                .with_leader_id(state.leader_id)
                .with_leader_epoch(state.leader_epoch)
                .with_replica_nodes(state.replicas)
                .with_isr_nodes(state.isr)
                .with_offline_replicas(state.offline)
        })
        .collect();
    MetadataResponseTopic::default()
        .with_error_code(code::NONE)
        .with_name(Some(TopicName(StrBytes::from_string(
            topic.name.to_string(),
        ))))
        .with_topic_id(topic.id)
        .with_is_internal(topic.is_internal())
        .with_partitions(partitions)
        .with_topic_authorized_operations(topic_ops)
}
