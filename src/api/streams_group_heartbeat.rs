//! StreamsGroupHeartbeat (KIP-1071): a Kafka Streams member joins with its topology (epoch 0),
//! stays with the tasks it owns when they changed, or leaves (-1, -2). The broker assigns
//! tasks, reports why it cannot yet (status), and creates the internal topics the topology
//! needs (in the background, as Kafka's `createStreamsInternalTopics`: the members see them
//! at a later heartbeat). v1 adds the request for a topology description (KIP-1331).

use super::{ApiContext, wire_str};
use crate::broker::NewTopic;
use crate::error::{StreamsError, code};
use crate::group::streams::topology::{
    CopartitionGroup, StatusCode, Subtopology, TopicInfo, TopicToCreate, Topology,
};
use crate::group::streams::{StreamsHeartbeat, TaskOffset, Tasks};
use crate::metadata::features::STREAMS_VERSION;
use kafka_protocol::messages::streams_group_heartbeat_request as req;
use kafka_protocol::messages::streams_group_heartbeat_response::{
    Endpoint, EndpointToPartitions, Status, TaskIds, TopicPartition,
};
use kafka_protocol::messages::{
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use std::collections::{BTreeMap, BTreeSet};

fn tasks(ids: &[req::TaskIds]) -> Tasks {
    let mut out = Tasks::new();
    for t in ids {
        out.entry(t.subtopology_id.to_string())
            .or_default()
            .extend(t.partitions.iter().copied());
    }
    out
}

fn wire_tasks(tasks: &Tasks) -> Vec<TaskIds> {
    tasks
        .iter()
        .filter(|(_, partitions)| !partitions.is_empty())
        .map(|(subtopology, partitions)| {
            TaskIds::default()
                .with_subtopology_id(StrBytes::from_string(subtopology.clone()))
                .with_partitions(partitions.iter().copied().collect())
        })
        .collect()
}

fn topic_info(info: &req::TopicInfo) -> TopicInfo {
    TopicInfo {
        name: info.name.to_string(),
        partitions: info.partitions,
        replication_factor: info.replication_factor,
        configs: info
            .topic_configs
            .iter()
            .map(|kv| (kv.key.to_string(), kv.value.to_string()))
            .collect(),
    }
}

fn topology(t: &req::Topology) -> Topology {
    let strings = |v: &[StrBytes]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let names = |v: &[TopicName]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    Topology {
        epoch: t.epoch,
        subtopologies: t
            .subtopologies
            .iter()
            .map(|s| {
                (
                    s.subtopology_id.to_string(),
                    Subtopology {
                        id: s.subtopology_id.to_string(),
                        source_topics: names(&s.source_topics),
                        source_topic_regex: strings(&s.source_topic_regex),
                        state_changelog_topics: s
                            .state_changelog_topics
                            .iter()
                            .map(topic_info)
                            .collect(),
                        repartition_sink_topics: names(&s.repartition_sink_topics),
                        repartition_source_topics: s
                            .repartition_source_topics
                            .iter()
                            .map(topic_info)
                            .collect(),
                        copartition_groups: s
                            .copartition_groups
                            .iter()
                            .map(|g| CopartitionGroup {
                                source_topics: g.source_topics.clone(),
                                source_topic_regex: g.source_topic_regex.clone(),
                                repartition_source_topics: g.repartition_source_topics.clone(),
                            })
                            .collect(),
                    },
                )
            })
            .collect(),
    }
}

fn task_offsets(v: &[req::TaskOffset]) -> Vec<TaskOffset> {
    v.iter()
        .map(|o| TaskOffset {
            subtopology: o.subtopology_id.to_string(),
            partition: o.partition,
            offset: o.offset,
        })
        .collect()
}

fn topic_partitions(map: &BTreeMap<String, BTreeSet<i32>>) -> Vec<TopicPartition> {
    map.iter()
        .map(|(topic, partitions)| {
            TopicPartition::default()
                .with_topic(TopicName(StrBytes::from_string(topic.clone())))
                .with_partitions(partitions.iter().copied().collect())
        })
        .collect()
}

/// Creates the internal topics a streams group needs, in the background; a topic created
/// meanwhile by someone else is fine.
fn create_internal_topics(ctx: &ApiContext, group: &str, topics: Vec<TopicToCreate>) {
    for topic in topics {
        let broker = ctx.broker.clone();
        let group = group.to_string();
        tokio::spawn(async move {
            let request = NewTopic {
                name: topic.name.clone(),
                partitions: topic.partitions,
                replication_factor: topic.replication_factor,
                assignments: Vec::new(),
                configs: topic.configs.clone(),
            };
            match broker.create_topic(request, false).await {
                Ok(_) | Err(crate::error::Error::TopicAlreadyExists(_)) => {
                    tracing::info!(group = %group, topic = %topic.name, partitions = topic.partitions, "created streams internal topic");
                }
                Err(e) => {
                    tracing::warn!(group = %group, topic = %topic.name, error = %e, "could not create streams internal topic")
                }
            }
        });
    }
}

pub async fn handle(
    ctx: &ApiContext,
    request: StreamsGroupHeartbeatRequest,
    version: i16,
) -> Option<StreamsGroupHeartbeatResponse> {
    let error = |code: i16, message: Option<String>| {
        Some(
            StreamsGroupHeartbeatResponse::default()
                .with_error_code(code)
                .with_error_message(message.map(|m| wire_str(&m)))
                .with_member_epoch(-1),
        )
    };
    if !super::context::feature_enabled(ctx, STREAMS_VERSION) {
        return error(
            code::UNSUPPORTED_VERSION,
            Some(super::context::FEATURE_DISABLED.to_string()),
        );
    }
    let groups = match super::coordinator_for(ctx, &request.group_id).await {
        Ok(groups) => groups,
        Err(e) => return error(e.code(), None),
    };
    if ctx
        .broker
        .share_coordinator()
        .is_share_group(&request.group_id)
    {
        let e = StreamsError::GroupIdNotFound(format!(
            "Group {} is not a streams group.",
            request.group_id.as_str()
        ));
        return error(e.code(), e.message());
    }
    let heartbeat = StreamsHeartbeat {
        member_id: request.member_id.to_string(),
        member_epoch: request.member_epoch,
        endpoint_information_epoch: request.endpoint_information_epoch,
        instance_id: request.instance_id.as_ref().map(|s| s.to_string()),
        rack_id: request.rack_id.as_ref().map(|s| s.to_string()),
        rebalance_timeout_ms: request.rebalance_timeout_ms,
        topology: request.topology.as_ref().map(topology),
        active: request.active_tasks.as_deref().map(tasks),
        standby: request.standby_tasks.as_deref().map(tasks),
        warmup: request.warmup_tasks.as_deref().map(tasks),
        process_id: request.process_id.as_ref().map(|s| s.to_string()),
        user_endpoint: request
            .user_endpoint
            .as_ref()
            .map(|e| (e.host.to_string(), e.port)),
        client_tags: request.client_tags.as_ref().map(|tags| {
            tags.iter()
                .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                .collect()
        }),
        task_offsets: request.task_offsets.as_deref().map(task_offsets),
        task_end_offsets: request.task_end_offsets.as_deref().map(task_offsets),
        shutdown_application: request.shutdown_application,
        client_id: ctx.client_id.to_string(),
        client_host: ctx.client_host.to_string(),
    };
    let outcome = match groups.streams_heartbeat(&request.group_id, heartbeat) {
        Ok(outcome) => outcome,
        Err(e) => return error(e.code(), e.message()),
    };
    let config = groups.streams_config(&request.group_id);
    let mut result = outcome.result;
    // Internal topics are created only when the member may create every one of them;
    // otherwise the status says which it may not (Kafka's wording), and none is created.
    let mut refused = super::authorize::topics_not_creatable(
        ctx,
        result.to_create.iter().map(|t| t.name.as_str()),
    );
    if refused.is_empty() {
        create_internal_topics(ctx, &request.group_id, result.to_create);
    } else {
        refused.sort();
        let unauthorized = format!("Unauthorized to CREATE on topics {}.", refused.join(", "));
        match result
            .status
            .iter_mut()
            .find(|(status, _)| *status == StatusCode::MissingInternalTopics)
        {
            Some((_, detail)) => *detail = format!("{detail}; {unauthorized}"),
            None => result
                .status
                .push((StatusCode::MissingInternalTopics, unauthorized)),
        }
    }
    let status = (!result.status.is_empty()).then(|| {
        result
            .status
            .iter()
            .map(|(status, detail)| {
                Status::default()
                    .with_status_code(*status as i8)
                    .with_status_detail(StrBytes::from_string(detail.clone()))
            })
            .collect()
    });
    let mut response = StreamsGroupHeartbeatResponse::default()
        .with_error_code(code::NONE)
        .with_member_id(StrBytes::from_string(result.member_id))
        .with_member_epoch(result.member_epoch)
        .with_heartbeat_interval_ms(outcome.heartbeat_interval_ms)
        .with_task_offset_interval_ms(config.task_offset_interval_ms)
        .with_status(status)
        .with_endpoint_information_epoch(result.endpoint_information_epoch);
    if version >= 1 {
        response = response
            .with_acceptable_recovery_lag(config.acceptable_recovery_lag)
            .with_topology_description_required(outcome.topology_description_required);
    } else {
        response = response.with_acceptable_recovery_lag_legacy(
            config.acceptable_recovery_lag.clamp(0, i32::MAX as i64) as i32,
        );
    }
    if let Some(assignment) = result.assignment {
        response = response
            .with_active_tasks(Some(wire_tasks(&assignment.active)))
            .with_standby_tasks(Some(wire_tasks(&assignment.standby)))
            .with_warmup_tasks(Some(wire_tasks(&assignment.warmup)));
    }
    if let Some(endpoints) = result.partitions_by_endpoint {
        response = response.with_partitions_by_user_endpoint(Some(
            endpoints
                .iter()
                .map(|e| {
                    EndpointToPartitions::default()
                        .with_user_endpoint(
                            Endpoint::default()
                                .with_host(StrBytes::from_string(e.endpoint.0.clone()))
                                .with_port(e.endpoint.1),
                        )
                        .with_active_partitions(topic_partitions(&e.active))
                        .with_standby_partitions(topic_partitions(&e.standby))
                })
                .collect(),
        ));
    }
    Some(response)
}
