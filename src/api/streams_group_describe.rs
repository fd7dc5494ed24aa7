//! StreamsGroupDescribe (KIP-1071): epochs, the topology with its internal topics, members
//! with their process, endpoint, current and target tasks; v1 adds the topology description
//! a member sent (KIP-1331) and the assignor. A group of another type answers
//! GROUP_ID_NOT_FOUND, as in Kafka.

use super::streams_group_topology_description_update::STORED_VERSION;
use super::{ApiContext, wire_str};
use crate::error::{GroupError, code};
use crate::group::streams::topology::TopicInfo;
use crate::group::streams::{StreamsGroup, TaskOffset, Tasks};
use crate::metadata::features::STREAMS_VERSION;
use kafka_protocol::messages::streams_group_describe_response::{
    Assignment, DescribedGroup, Endpoint, KeyValue, Member, Subtopology, TaskIds,
    TaskOffset as WireTaskOffset, TopicInfo as WireTopicInfo, Topology, TopologyDescription,
};
use kafka_protocol::messages::{
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse, TopicName,
};
use kafka_protocol::protocol::{Decodable, StrBytes};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn tasks(t: &Tasks) -> Vec<TaskIds> {
    t.iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(subtopology, partitions)| {
            TaskIds::default()
                .with_subtopology_id(s(subtopology))
                .with_partitions(partitions.iter().copied().collect())
        })
        .collect()
}

fn assignment(t: &crate::group::streams::TasksTuple) -> Assignment {
    Assignment::default()
        .with_active_tasks(tasks(&t.active))
        .with_standby_tasks(tasks(&t.standby))
        .with_warmup_tasks(tasks(&t.warmup))
}

fn offsets(v: &[TaskOffset]) -> Vec<WireTaskOffset> {
    v.iter()
        .map(|o| {
            WireTaskOffset::default()
                .with_subtopology_id(s(&o.subtopology))
                .with_partition(o.partition)
                .with_offset(o.offset)
        })
        .collect()
}

/// An internal topic with the partition count the coordinator decided, where it did.
fn topic_info(info: &TopicInfo, decided: Option<i32>) -> WireTopicInfo {
    WireTopicInfo::default()
        .with_name(TopicName(s(&info.name)))
        .with_partitions(decided.unwrap_or(info.partitions))
        .with_replication_factor(info.replication_factor)
        .with_topic_configs(
            info.configs
                .iter()
                .map(|(k, v)| KeyValue::default().with_key(s(k)).with_value(s(v)))
                .collect(),
        )
}

fn describe(
    g: &StreamsGroup,
    base: DescribedGroup,
    version: i16,
    with_description: bool,
) -> DescribedGroup {
    let decided = |name: &str| {
        g.configured
            .as_ref()
            .and_then(|c| c.internal_topics.get(name).copied())
    };
    let topology = g.topology.as_ref().map(|t| {
        Topology::default()
            .with_epoch(t.epoch)
            .with_subtopologies(Some(
                t.subtopologies
                    .values()
                    .map(|sub| {
                        Subtopology::default()
                            .with_subtopology_id(s(&sub.id))
                            .with_source_topics(
                                sub.source_topics.iter().map(|t| TopicName(s(t))).collect(),
                            )
                            .with_repartition_sink_topics(
                                sub.repartition_sink_topics
                                    .iter()
                                    .map(|t| TopicName(s(t)))
                                    .collect(),
                            )
                            .with_state_changelog_topics(
                                sub.state_changelog_topics
                                    .iter()
                                    .map(|i| topic_info(i, decided(&i.name)))
                                    .collect(),
                            )
                            .with_repartition_source_topics(
                                sub.repartition_source_topics
                                    .iter()
                                    .map(|i| topic_info(i, decided(&i.name)))
                                    .collect(),
                            )
                    })
                    .collect(),
            ))
    });
    let members =
        g.members
            .values()
            .map(|m| {
                Member::default()
                    .with_member_id(s(&m.member_id))
                    .with_member_epoch(m.member_epoch)
                    .with_instance_id(m.instance_id.as_deref().map(s))
                    .with_rack_id(m.rack_id.as_deref().map(s))
                    .with_client_id(s(&m.client_id))
                    .with_client_host(s(&m.client_host))
                    .with_topology_epoch(m.topology_epoch)
                    .with_process_id(s(&m.process_id))
                    .with_user_endpoint(m.user_endpoint.as_ref().map(|(host, port)| {
                        Endpoint::default().with_host(s(host)).with_port(*port)
                    }))
                    .with_client_tags(
                        m.client_tags
                            .iter()
                            .map(|(k, v)| KeyValue::default().with_key(s(k)).with_value(s(v)))
                            .collect(),
                    )
                    .with_task_offsets(offsets(&m.task_offsets))
                    .with_task_end_offsets(offsets(&m.task_end_offsets))
                    .with_assignment(assignment(&m.assigned))
                    .with_target_assignment(assignment(
                        &g.target.get(&m.member_id).cloned().unwrap_or_default(),
                    ))
            })
            .collect();
    let mut out = base
        .with_error_code(code::NONE)
        .with_group_state(StrBytes::from_static_str(g.state_name()))
        .with_group_epoch(g.group_epoch)
        .with_assignment_epoch(g.assignment_epoch)
        .with_topology(topology)
        .with_members(members);
    if version >= 1 {
        out = out.with_assignor_name(Some(StrBytes::from_static_str("sticky")));
        if with_description {
            let current = g.topology.as_ref().map(|t| t.epoch);
            let stored = g
                .topology_description
                .as_ref()
                .filter(|(epoch, _)| Some(*epoch) == current)
                .and_then(|(_, bytes)| {
                    TopologyDescription::decode(&mut bytes.clone(), STORED_VERSION).ok()
                });
            // StreamsGroupTopologyDescriptionStatus: 1 NOT_STORED, 3 AVAILABLE.
            out = match stored {
                Some(description) => out
                    .with_topology_description(Some(description))
                    .with_topology_description_status(3),
                None => out.with_topology_description_status(1),
            };
        }
    }
    out
}

pub async fn handle(
    ctx: &ApiContext,
    request: StreamsGroupDescribeRequest,
    version: i16,
) -> Option<StreamsGroupDescribeResponse> {
    let coordinator = ctx.broker.groups().await;
    let with_description = request.include_topology_description;
    let groups = request
        .group_ids
        .into_iter()
        .map(|group_id| {
            let base = DescribedGroup::default()
                .with_group_id(group_id.clone())
                .with_authorized_operations(i32::MIN);
            if !super::context::feature_enabled(ctx, STREAMS_VERSION) {
                return base
                    .with_error_code(code::UNSUPPORTED_VERSION)
                    .with_error_message(Some(wire_str(super::context::FEATURE_DISABLED)));
            }
            let Ok(coordinator) = &coordinator else {
                return base.with_error_code(GroupError::CoordinatorNotAvailable.code());
            };
            if coordinator.is_loading(&group_id) {
                return base.with_error_code(GroupError::CoordinatorLoadInProgress.code());
            }
            if !coordinator.owns(&group_id) {
                return base.with_error_code(GroupError::NotCoordinator.code());
            }
            coordinator
                .streams_describe(&group_id, |g| {
                    describe(g, base.clone(), version, with_description)
                })
                .unwrap_or_else(|| {
                    let message = if coordinator.has_group(&group_id) {
                        format!("Group {} is not a streams group.", group_id.as_str())
                    } else {
                        format!("Group {} not found.", group_id.as_str())
                    };
                    base.with_error_code(code::GROUP_ID_NOT_FOUND)
                        .with_error_message(Some(wire_str(&message)))
                })
        })
        .collect();
    Some(StreamsGroupDescribeResponse::default().with_groups(groups))
}
