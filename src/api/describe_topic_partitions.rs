//! DescribeTopicPartitions (KIP-966): topic and partition metadata, paged. Kafka's rules:
//! topics are answered in name order, from the cursor's topic (which must be among the
//! requested topics) and partition on; at most `min(response_partition_limit,
//! max.request.partition.size.limit)` partitions per response, with a cursor to the first
//! partition left out; an empty topic list means every topic, and then unknown names cannot
//! occur, while a requested unknown topic is answered with UNKNOWN_TOPIC_OR_PARTITION (or
//! INVALID_TOPIC_EXCEPTION for an illegal name).

use super::{ApiContext, TOPIC_OPERATIONS, authorized_operations, wire_str};
use crate::error::{Error, code};
use crate::metadata::validate_topic_name;
use crate::types::TopicPartition;
use kafka_protocol::messages::describe_topic_partitions_response::{
    Cursor, DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic,
};
use kafka_protocol::messages::{
    DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, TopicName,
};
use std::collections::BTreeSet;

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeTopicPartitionsRequest,
    _version: i16,
) -> Option<DescribeTopicPartitionsResponse> {
    let broker = &ctx.broker;
    let (cursor_topic, cursor_partition) = match &request.cursor {
        Some(c) => (c.topic_name.to_string(), c.partition_index.max(0)),
        None => (String::new(), 0),
    };
    let fetch_all = request.topics.is_empty();
    let names: BTreeSet<String> = if fetch_all {
        broker.topics().iter().map(|t| t.name.to_string()).collect()
    } else {
        request.topics.iter().map(|t| t.name.to_string()).collect()
    };
    if request.cursor.is_some() && !fetch_all && !names.contains(&cursor_topic) {
        // Kafka fails the whole request: there is no error field for it but the topics'.
        let e = Error::InvalidRequest(format!(
            "the topic list must contain the cursor's topic {cursor_topic}"
        ));
        let topics = names
            .iter()
            .map(|n| {
                DescribeTopicPartitionsResponseTopic::default()
                    .with_error_code(e.code())
                    .with_name(Some(TopicName(wire_str(n))))
            })
            .collect();
        return Some(DescribeTopicPartitionsResponse::default().with_topics(topics));
    }
    let mut remaining = request
        .response_partition_limit
        .min(broker.config().max_request_partition_size_limit)
        .max(1);
    let mut response = DescribeTopicPartitionsResponse::default();
    for name in names.range(cursor_topic.clone()..) {
        if remaining == 0 {
            response.next_cursor = Some(
                Cursor::default()
                    .with_topic_name(TopicName(wire_str(name)))
                    .with_partition_index(0),
            );
            break;
        }
        let Some(topic) = broker.topic(name) else {
            if !fetch_all {
                let error = match validate_topic_name(name) {
                    Ok(()) => code::UNKNOWN_TOPIC_OR_PARTITION,
                    Err(_) => code::INVALID_TOPIC_EXCEPTION,
                };
                response.topics.push(
                    DescribeTopicPartitionsResponseTopic::default()
                        .with_error_code(error)
                        .with_name(Some(TopicName(wire_str(name))))
                        .with_topic_authorized_operations(authorized_operations(TOPIC_OPERATIONS)),
                );
            }
            continue;
        };
        let first = if *name == cursor_topic {
            cursor_partition
        } else {
            0
        };
        let end = topic.partitions.min(first.saturating_add(remaining));
        let partitions: Vec<_> = (first..end)
            .map(|p| {
                let state = super::wire_partition_state(
                    broker.partition_state(&TopicPartition::new(name, p)),
                );
                DescribeTopicPartitionsResponsePartition::default()
                    .with_error_code(state.error_code)
                    .with_partition_index(p)
                    .with_leader_id(state.leader_id)
                    .with_leader_epoch(state.leader_epoch)
                    .with_replica_nodes(state.replicas)
                    .with_isr_nodes(state.isr)
                    .with_offline_replicas(state.offline)
                    .with_eligible_leader_replicas(Some(Vec::new()))
                    .with_last_known_elr(Some(Vec::new()))
            })
            .collect();
        remaining -= partitions.len() as i32;
        response.topics.push(
            DescribeTopicPartitionsResponseTopic::default()
                .with_error_code(code::NONE)
                .with_name(Some(TopicName(wire_str(name))))
                .with_topic_id(topic.id)
                .with_is_internal(topic.is_internal())
                .with_partitions(partitions)
                .with_topic_authorized_operations(authorized_operations(TOPIC_OPERATIONS)),
        );
        if end < topic.partitions {
            response.next_cursor = Some(
                Cursor::default()
                    .with_topic_name(TopicName(wire_str(name)))
                    .with_partition_index(end),
            );
            break;
        }
    }
    Some(response)
}
