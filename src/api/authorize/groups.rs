//! The checks of the group APIs: FindCoordinator (DESCRIBE on the group or transactional id,
//! CLUSTER_ACTION for share keys), the classic protocol (READ on the group), KIP-848 heartbeats
//! (READ on the group, DESCRIBE on subscribed topics), OffsetCommit / OffsetFetch /
//! OffsetDelete (the group, then each topic), Describe/List/DeleteGroups, the streams group
//! APIs (KIP-1071).

use super::{Authz, Gate, check_answer, pass, pass_merging, require, take_refused};
use crate::api::ApiContext;
use crate::auth::acl::{AclOperation, ResourceType};
use crate::error::code;
use kafka_protocol::messages::*;

pub fn find_coordinator(
    ctx: &ApiContext,
    mut request: FindCoordinatorRequest,
    version: i16,
) -> Gate<FindCoordinatorRequest, FindCoordinatorResponse> {
    use kafka_protocol::messages::find_coordinator_response::Coordinator;
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let key_type = request.key_type;
    let refusal = |key: &str| -> Option<i16> {
        match key_type {
            0 if !authz.group(AclOperation::Describe, key) => {
                Some(code::GROUP_AUTHORIZATION_FAILED)
            }
            1 if !authz.allowed(AclOperation::Describe, ResourceType::TransactionalId, key) => {
                Some(code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            }
            2 if !authz.cluster(AclOperation::ClusterAction) => {
                Some(code::CLUSTER_AUTHORIZATION_FAILED)
            }
            _ => None,
        }
    };
    if version < 4 {
        return match refusal(&request.key) {
            Some(error_code) => Gate::Refuse(
                FindCoordinatorResponse::default()
                    .with_error_code(error_code)
                    .with_node_id(BrokerId(-1))
                    .with_port(-1),
            ),
            None => pass(request),
        };
    }
    let mut refused = Vec::new();
    request.coordinator_keys.retain(|key| match refusal(key) {
        Some(error_code) => {
            refused.push(
                Coordinator::default()
                    .with_key(key.clone())
                    .with_node_id(BrokerId(-1))
                    .with_port(-1)
                    .with_error_code(error_code),
            );
            false
        }
        None => true,
    });
    if request.coordinator_keys.is_empty() && !refused.is_empty() {
        return Gate::Refuse(FindCoordinatorResponse::default().with_coordinators(refused));
    }
    pass_merging(
        request,
        refused,
        |response: &mut FindCoordinatorResponse| &mut response.coordinators,
    )
}

/// The classic protocol's requests: READ on the group, or the API's answer with
/// GROUP_AUTHORIZATION_FAILED.
macro_rules! group_read_gate {
    ($name:ident, $request:ty, $response:ty, $refused:expr) => {
        pub fn $name(ctx: &ApiContext, request: $request, _: i16) -> Gate<$request, $response> {
            require(
                ctx,
                request,
                |authz, request| authz.group(AclOperation::Read, &request.group_id),
                |_| $refused,
            )
        }
    };
}

group_read_gate!(
    join_group,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponse::default()
        .with_error_code(code::GROUP_AUTHORIZATION_FAILED)
        .with_generation_id(-1)
);
group_read_gate!(
    sync_group,
    SyncGroupRequest,
    SyncGroupResponse,
    SyncGroupResponse::default().with_error_code(code::GROUP_AUTHORIZATION_FAILED)
);
group_read_gate!(
    heartbeat,
    HeartbeatRequest,
    HeartbeatResponse,
    HeartbeatResponse::default().with_error_code(code::GROUP_AUTHORIZATION_FAILED)
);
group_read_gate!(
    leave_group,
    LeaveGroupRequest,
    LeaveGroupResponse,
    LeaveGroupResponse::default().with_error_code(code::GROUP_AUTHORIZATION_FAILED)
);

pub fn offset_commit(
    ctx: &ApiContext,
    mut request: OffsetCommitRequest,
    _version: i16,
) -> Gate<OffsetCommitRequest, OffsetCommitResponse> {
    use kafka_protocol::messages::offset_commit_response::{
        OffsetCommitResponsePartition, OffsetCommitResponseTopic,
    };
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let failed = |topic: &offset_commit_request::OffsetCommitRequestTopic, error_code: i16| {
        OffsetCommitResponseTopic::default()
            .with_name(topic.name.clone())
            .with_topic_id(topic.topic_id)
            .with_partitions(
                topic
                    .partitions
                    .iter()
                    .map(|p| {
                        OffsetCommitResponsePartition::default()
                            .with_partition_index(p.partition_index)
                            .with_error_code(error_code)
                    })
                    .collect(),
            )
    };
    if !authz.group(AclOperation::Read, &request.group_id) {
        let topics = request
            .topics
            .iter()
            .map(|t| failed(t, code::GROUP_AUTHORIZATION_FAILED))
            .collect();
        return Gate::Refuse(OffsetCommitResponse::default().with_topics(topics));
    }
    let refused = take_refused(&mut request.topics, |topic| {
        (!(authz
            .topic_name(&topic.name, topic.topic_id)
            .is_none_or(|name| authz.topic(AclOperation::Read, &name))))
        .then(|| failed(topic, code::TOPIC_AUTHORIZATION_FAILED))
    });
    pass_merging(request, refused, |response: &mut OffsetCommitResponse| {
        &mut response.topics
    })
}

pub fn offset_fetch(
    ctx: &ApiContext,
    request: OffsetFetchRequest,
    version: i16,
) -> Gate<OffsetFetchRequest, OffsetFetchResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    if version < 8 && !authz.group(AclOperation::Describe, &request.group_id) {
        return Gate::Refuse(
            OffsetFetchResponse::default().with_error_code(code::GROUP_AUTHORIZATION_FAILED),
        );
    }
    // Which topics each group's request named (None: all of them).
    let named_v7 = request.topics.is_some();
    let named: Vec<(String, bool)> = request
        .groups
        .iter()
        .map(|g| (g.group_id.to_string(), g.topics.is_some()))
        .collect();
    authz.check_answer(request, move |authz, response: &mut OffsetFetchResponse| {
        let describable = |name: &str| authz.topic(AclOperation::Describe, name);
        // A topic the principal may not describe: its partitions answer
        // TOPIC_AUTHORIZATION_FAILED when the request named it, and it is left out of an
        // answer for all topics.
        if named_v7 {
            for topic in &mut response.topics {
                if !describable(&topic.name) {
                    for partition in &mut topic.partitions {
                        partition.error_code = code::TOPIC_AUTHORIZATION_FAILED;
                        partition.committed_offset = -1;
                        partition.metadata = None;
                    }
                }
            }
        } else {
            response.topics.retain(|t| describable(&t.name));
        }
        for group in &mut response.groups {
            if !authz.group(AclOperation::Describe, &group.group_id) {
                group.error_code = code::GROUP_AUTHORIZATION_FAILED;
                group.topics.clear();
                continue;
            }
            let named = named
                .iter()
                .any(|(id, named)| *id == group.group_id.as_str() && *named);
            let name_of = |t: &offset_fetch_response::OffsetFetchResponseTopics| {
                authz.topic_name(&t.name, t.topic_id).unwrap_or_default()
            };
            if named {
                for topic in &mut group.topics {
                    if !describable(&name_of(topic)) {
                        for partition in &mut topic.partitions {
                            partition.error_code = code::TOPIC_AUTHORIZATION_FAILED;
                            partition.committed_offset = -1;
                            partition.metadata = None;
                        }
                    }
                }
            } else {
                group.topics.retain(|t| describable(&name_of(t)));
            }
        }
    })
}

pub fn describe_groups(
    ctx: &ApiContext,
    request: DescribeGroupsRequest,
    _version: i16,
) -> Gate<DescribeGroupsRequest, DescribeGroupsResponse> {
    check_answer(
        ctx,
        request,
        |authz, response: &mut DescribeGroupsResponse| {
            for group in &mut response.groups {
                group.check(authz);
            }
        },
    )
}

/// A group as DescribeGroups, ConsumerGroupDescribe and ShareGroupDescribe answer it: one
/// the principal may not describe answers GROUP_AUTHORIZATION_FAILED, the others their
/// authorized operations when asked (KIP-430).
pub(super) trait DescribedGroup {
    fn check(&mut self, authz: &Authz);
}

macro_rules! described_group {
    ($($entry:ty),*) => {$(
        impl DescribedGroup for $entry {
            fn check(&mut self, authz: &Authz) {
                use crate::api::OPERATIONS_NOT_REQUESTED;
                if !authz.group(AclOperation::Describe, &self.group_id) {
                    *self = <$entry>::default()
                        .with_group_id(self.group_id.clone())
                        .with_error_code(code::GROUP_AUTHORIZATION_FAILED)
                        .with_authorized_operations(OPERATIONS_NOT_REQUESTED);
                } else if self.authorized_operations != OPERATIONS_NOT_REQUESTED {
                    self.authorized_operations =
                        authz.operations(ResourceType::Group, &self.group_id, GROUP_OPERATIONS);
                }
            }
        }
    )*};
}

described_group!(
    describe_groups_response::DescribedGroup,
    consumer_group_describe_response::DescribedGroup,
    share_group_describe_response::DescribedGroup,
    streams_group_describe_response::DescribedGroup
);

/// READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS.
pub(super) const GROUP_OPERATIONS: &[i8] = &[3, 6, 8, 10, 11];

pub fn consumer_group_describe(
    ctx: &ApiContext,
    request: ConsumerGroupDescribeRequest,
    _version: i16,
) -> Gate<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse> {
    check_answer(
        ctx,
        request,
        |authz, response: &mut ConsumerGroupDescribeResponse| {
            for group in &mut response.groups {
                group.check(authz);
            }
        },
    )
}

pub fn list_groups(
    ctx: &ApiContext,
    request: ListGroupsRequest,
    _version: i16,
) -> Gate<ListGroupsRequest, ListGroupsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    // DESCRIBE on the cluster lists every group; otherwise those the principal may describe.
    if authz.cluster(AclOperation::Describe) {
        return pass(request);
    }
    authz.check_answer(request, move |authz, response: &mut ListGroupsResponse| {
        response
            .groups
            .retain(|g| authz.group(AclOperation::Describe, &g.group_id));
    })
}

pub fn delete_groups(
    ctx: &ApiContext,
    mut request: DeleteGroupsRequest,
    _version: i16,
) -> Gate<DeleteGroupsRequest, DeleteGroupsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let refused = take_refused(&mut request.groups_names, |group| {
        (!authz.group(AclOperation::Delete, group)).then(|| {
            delete_groups_response::DeletableGroupResult::default()
                .with_group_id(group.clone())
                .with_error_code(code::GROUP_AUTHORIZATION_FAILED)
        })
    });
    pass_merging(request, refused, |response: &mut DeleteGroupsResponse| {
        &mut response.results
    })
}

pub fn offset_delete(
    ctx: &ApiContext,
    mut request: OffsetDeleteRequest,
    _version: i16,
) -> Gate<OffsetDeleteRequest, OffsetDeleteResponse> {
    use kafka_protocol::messages::offset_delete_response::{
        OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
    };
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    if !authz.group(AclOperation::Delete, &request.group_id) {
        return Gate::Refuse(
            OffsetDeleteResponse::default().with_error_code(code::GROUP_AUTHORIZATION_FAILED),
        );
    }
    let refused = take_refused(&mut request.topics, |topic| {
        (!authz.topic(AclOperation::Read, &topic.name)).then(|| {
            OffsetDeleteResponseTopic::default()
                .with_name(topic.name.clone())
                .with_partitions(
                    topic
                        .partitions
                        .iter()
                        .map(|p| {
                            OffsetDeleteResponsePartition::default()
                                .with_partition_index(p.partition_index)
                                .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                        })
                        .collect(),
                )
        })
    });
    pass_merging(request, refused, |response: &mut OffsetDeleteResponse| {
        &mut response.topics
    })
}

/// Why a heartbeat of a KIP-848 or share group member is refused, if it is: READ on the group,
/// DESCRIBE on each subscribed topic.
pub(super) fn membership_error(
    authz: &Authz,
    group: &GroupId,
    subscribed: &Option<Vec<TopicName>>,
) -> Option<i16> {
    if !authz.group(AclOperation::Read, group) {
        Some(code::GROUP_AUTHORIZATION_FAILED)
    } else if subscribed
        .iter()
        .flatten()
        .any(|t| !authz.topic(AclOperation::Describe, t))
    {
        Some(code::TOPIC_AUTHORIZATION_FAILED)
    } else {
        None
    }
}

/// The KIP-848 and share group heartbeats: READ on the group, DESCRIBE on each subscribed
/// topic ([`membership_error`]), or the API's answer with the error and member epoch -1.
macro_rules! heartbeat_gate {
    ($name:ident, $request:ty, $response:ty) => {
        pub fn $name(ctx: &ApiContext, request: $request, _: i16) -> Gate<$request, $response> {
            let Some(authz) = Authz::of(ctx) else {
                return pass(request);
            };
            match membership_error(&authz, &request.group_id, &request.subscribed_topic_names) {
                Some(error_code) => Gate::Refuse(
                    <$response>::default()
                        .with_error_code(error_code)
                        .with_member_epoch(-1),
                ),
                None => pass(request),
            }
        }
    };
}
pub(super) use heartbeat_gate;

heartbeat_gate!(
    consumer_group_heartbeat,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse
);

/// StreamsGroupHeartbeat: READ on the group, DESCRIBE on every topic of the topology a
/// joining member brings (Kafka's `handleStreamsGroupHeartbeat`).
pub fn streams_group_heartbeat(
    ctx: &ApiContext,
    request: StreamsGroupHeartbeatRequest,
    _: i16,
) -> Gate<StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let topics: Option<Vec<TopicName>> = request.topology.as_ref().map(|t| {
        t.subtopologies
            .iter()
            .flat_map(|s| {
                s.source_topics
                    .iter()
                    .chain(&s.repartition_sink_topics)
                    .cloned()
                    .chain(s.repartition_source_topics.iter().map(|i| i.name.clone()))
                    .chain(s.state_changelog_topics.iter().map(|i| i.name.clone()))
            })
            .collect()
    });
    match membership_error(&authz, &request.group_id, &topics) {
        Some(error_code) => Gate::Refuse(
            StreamsGroupHeartbeatResponse::default()
                .with_error_code(error_code)
                .with_member_epoch(-1),
        ),
        None => pass(request),
    }
}

/// StreamsGroupTopologyDescriptionUpdate: READ on the group, as a heartbeat.
pub fn streams_group_topology_description_update(
    ctx: &ApiContext,
    request: StreamsGroupTopologyDescriptionUpdateRequest,
    _: i16,
) -> Gate<StreamsGroupTopologyDescriptionUpdateRequest, StreamsGroupTopologyDescriptionUpdateResponse>
{
    require(
        ctx,
        request,
        |authz, request| authz.group(AclOperation::Read, &request.group_id),
        |_| {
            StreamsGroupTopologyDescriptionUpdateResponse::default()
                .with_error_code(code::GROUP_AUTHORIZATION_FAILED)
        },
    )
}

pub fn streams_group_describe(
    ctx: &ApiContext,
    request: StreamsGroupDescribeRequest,
    _version: i16,
) -> Gate<StreamsGroupDescribeRequest, StreamsGroupDescribeResponse> {
    check_answer(
        ctx,
        request,
        |authz, response: &mut StreamsGroupDescribeResponse| {
            for group in &mut response.groups {
                group.check(authz);
            }
        },
    )
}
