//! The share-group APIs' checks (KIP-932), as Kafka's `KafkaApis` makes them: READ on the
//! group to be a member, fetch or acknowledge (GROUP_AUTHORIZATION_FAILED for the whole
//! request), READ on each topic fetched or acknowledged (its partitions answer
//! TOPIC_AUTHORIZATION_FAILED), DESCRIBE on the subscribed topics; DESCRIBE on a group to
//! describe it or its offsets, READ to alter them, DELETE to delete them (and READ on their
//! topics); CLUSTER_ACTION on the cluster for the share coordinator's state RPCs.

use super::groups::{DescribedGroup, heartbeat_gate, membership_error};
use super::{Authz, Gate, check_answer, pass, pass_merging, take_refused};
use crate::api::ApiContext;
use crate::auth::acl::AclOperation;
use crate::error::code;
use kafka_protocol::messages::*;
use uuid::Uuid;

heartbeat_gate!(
    share_group_heartbeat,
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse
);

pub fn share_group_describe(
    ctx: &ApiContext,
    request: ShareGroupDescribeRequest,
    _version: i16,
) -> Gate<ShareGroupDescribeRequest, ShareGroupDescribeResponse> {
    check_answer(
        ctx,
        request,
        |authz, response: &mut ShareGroupDescribeResponse| {
            for group in &mut response.groups {
                group.check(authz);
            }
        },
    )
}

/// Whether the principal may read the topic of this id (an unknown id is left to the handler,
/// which answers UNKNOWN_TOPIC_ID and says nothing of any topic).
fn readable(authz: &Authz, topic_id: Uuid) -> bool {
    authz
        .topic_name("", topic_id)
        .is_none_or(|name| authz.topic(AclOperation::Read, &name))
}

fn is_share_group_reader(authz: &Authz, group: &Option<GroupId>) -> bool {
    authz.group(
        AclOperation::Read,
        group.as_ref().map_or("", |g| g.as_str()),
    )
}

pub fn share_fetch(
    ctx: &ApiContext,
    mut request: ShareFetchRequest,
    _version: i16,
) -> Gate<ShareFetchRequest, ShareFetchResponse> {
    use share_fetch_response::{LeaderIdAndEpoch, PartitionData, ShareFetchableTopicResponse};
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    if !is_share_group_reader(&authz, &request.group_id) {
        return Gate::Refuse(
            ShareFetchResponse::default().with_error_code(code::GROUP_AUTHORIZATION_FAILED),
        );
    }
    let refused_partition = |partition: i32, acknowledged: bool| {
        PartitionData::default()
            .with_partition_index(partition)
            .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
            .with_acknowledge_error_code(if acknowledged {
                code::TOPIC_AUTHORIZATION_FAILED
            } else {
                code::NONE
            })
            .with_current_leader(
                LeaderIdAndEpoch::default()
                    .with_leader_id(-1)
                    .with_leader_epoch(-1),
            )
    };
    let refused = take_refused(&mut request.topics, |topic| {
        (!(readable(&authz, topic.topic_id))).then(|| {
            ShareFetchableTopicResponse::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(
                    topic
                        .partitions
                        .iter()
                        .map(|p| {
                            refused_partition(
                                p.partition_index,
                                !p.acknowledgement_batches.is_empty(),
                            )
                        })
                        .collect(),
                )
        })
    });
    authz.check_answer(request, move |authz, response: &mut ShareFetchResponse| {
        // Checked on the answer too: a share session's partitions are fetched without being
        // named again, and the principal's ACLs may have changed since they were added.
        for topic in &mut response.responses {
            if !readable(authz, topic.topic_id) {
                for partition in &mut topic.partitions {
                    *partition = refused_partition(partition.partition_index, false);
                }
            }
        }
        response.responses.extend(refused);
    })
}

pub fn share_acknowledge(
    ctx: &ApiContext,
    mut request: ShareAcknowledgeRequest,
    _version: i16,
) -> Gate<ShareAcknowledgeRequest, ShareAcknowledgeResponse> {
    use share_acknowledge_response::{
        LeaderIdAndEpoch, PartitionData, ShareAcknowledgeTopicResponse,
    };
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    if !is_share_group_reader(&authz, &request.group_id) {
        return Gate::Refuse(
            ShareAcknowledgeResponse::default().with_error_code(code::GROUP_AUTHORIZATION_FAILED),
        );
    }
    let refused = take_refused(&mut request.topics, |topic| {
        (!(readable(&authz, topic.topic_id))).then(|| {
            ShareAcknowledgeTopicResponse::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(
                    topic
                        .partitions
                        .iter()
                        .map(|p| {
                            PartitionData::default()
                                .with_partition_index(p.partition_index)
                                .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                                .with_current_leader(
                                    LeaderIdAndEpoch::default()
                                        .with_leader_id(-1)
                                        .with_leader_epoch(-1),
                                )
                        })
                        .collect(),
                )
        })
    });
    pass_merging(
        request,
        refused,
        |response: &mut ShareAcknowledgeResponse| &mut response.responses,
    )
}

pub fn describe_share_group_offsets(
    ctx: &ApiContext,
    request: DescribeShareGroupOffsetsRequest,
    _version: i16,
) -> Gate<DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    // Which groups' requests named their topics (the others ask for all of them).
    let named: Vec<(String, bool)> = request
        .groups
        .iter()
        .map(|g| (g.group_id.to_string(), g.topics.is_some()))
        .collect();
    authz.check_answer(
        request,
        move |authz, response: &mut DescribeShareGroupOffsetsResponse| {
            for group in &mut response.groups {
                if !authz.group(AclOperation::Describe, &group.group_id) {
                    group.error_code = code::GROUP_AUTHORIZATION_FAILED;
                    group.error_message = None;
                    group.topics.clear();
                    continue;
                }
                let describable = |name: &str| authz.topic(AclOperation::Describe, name);
                let named = named
                    .iter()
                    .any(|(id, named)| *id == group.group_id.as_str() && *named);
                if named {
                    for topic in &mut group.topics {
                        if !describable(&topic.topic_name) {
                            for partition in &mut topic.partitions {
                                partition.error_code = code::TOPIC_AUTHORIZATION_FAILED;
                                partition.error_message = None;
                                partition.start_offset = -1;
                                partition.leader_epoch = -1;
                                partition.lag = -1;
                            }
                        }
                    }
                } else {
                    group.topics.retain(|t| describable(&t.topic_name));
                }
            }
        },
    )
}

pub fn alter_share_group_offsets(
    ctx: &ApiContext,
    mut request: AlterShareGroupOffsetsRequest,
    _version: i16,
) -> Gate<AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse> {
    use alter_share_group_offsets_response::{
        AlterShareGroupOffsetsResponsePartition, AlterShareGroupOffsetsResponseTopic,
    };
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    if !authz.group(AclOperation::Read, &request.group_id) {
        return Gate::Refuse(
            AlterShareGroupOffsetsResponse::default()
                .with_error_code(code::GROUP_AUTHORIZATION_FAILED),
        );
    }
    let refused = take_refused(&mut request.topics, |topic| {
        (!authz.topic(AclOperation::Read, &topic.topic_name)).then(|| {
            AlterShareGroupOffsetsResponseTopic::default()
                .with_topic_name(topic.topic_name.clone())
                .with_partitions(
                    topic
                        .partitions
                        .iter()
                        .map(|p| {
                            AlterShareGroupOffsetsResponsePartition::default()
                                .with_partition_index(p.partition_index)
                                .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                        })
                        .collect(),
                )
        })
    });
    pass_merging(
        request,
        refused,
        |response: &mut AlterShareGroupOffsetsResponse| &mut response.responses,
    )
}

pub fn delete_share_group_offsets(
    ctx: &ApiContext,
    mut request: DeleteShareGroupOffsetsRequest,
    _version: i16,
) -> Gate<DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse> {
    use delete_share_group_offsets_response::DeleteShareGroupOffsetsResponseTopic;
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    if !authz.group(AclOperation::Delete, &request.group_id) {
        return Gate::Refuse(
            DeleteShareGroupOffsetsResponse::default()
                .with_error_code(code::GROUP_AUTHORIZATION_FAILED),
        );
    }
    let refused = take_refused(&mut request.topics, |topic| {
        (!authz.topic(AclOperation::Read, &topic.topic_name)).then(|| {
            DeleteShareGroupOffsetsResponseTopic::default()
                .with_topic_name(topic.topic_name.clone())
                .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
        })
    });
    pass_merging(
        request,
        refused,
        |response: &mut DeleteShareGroupOffsetsResponse| &mut response.responses,
    )
}

/// The share coordinator's state RPCs (83–87), which brokers send one another: without
/// CLUSTER_ACTION on the cluster every partition is answered CLUSTER_AUTHORIZATION_FAILED,
/// as Kafka answers them.
macro_rules! state_gate {
    ($name:ident, $request:ty, $response:ty, $module:ident, $result:ident) => {
        pub fn $name(ctx: &ApiContext, request: $request, _: i16) -> Gate<$request, $response> {
            if super::cluster::is_cluster_member(ctx) {
                return pass(request);
            }
            let results = request
                .topics
                .iter()
                .map(|topic| {
                    $module::$result::default()
                        .with_topic_id(topic.topic_id)
                        .with_partitions(
                            topic
                                .partitions
                                .iter()
                                .map(|p| {
                                    $module::PartitionResult::default()
                                        .with_partition(p.partition)
                                        .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
                                        .with_error_message(Some(crate::api::wire_str(
                                            "Cluster authorization failed.",
                                        )))
                                })
                                .collect(),
                        )
                })
                .collect();
            Gate::Refuse(<$response>::default().with_results(results))
        }
    };
}

state_gate!(
    initialize_share_group_state,
    InitializeShareGroupStateRequest,
    InitializeShareGroupStateResponse,
    initialize_share_group_state_response,
    InitializeStateResult
);
state_gate!(
    read_share_group_state,
    ReadShareGroupStateRequest,
    ReadShareGroupStateResponse,
    read_share_group_state_response,
    ReadStateResult
);
state_gate!(
    write_share_group_state,
    WriteShareGroupStateRequest,
    WriteShareGroupStateResponse,
    write_share_group_state_response,
    WriteStateResult
);
state_gate!(
    delete_share_group_state,
    DeleteShareGroupStateRequest,
    DeleteShareGroupStateResponse,
    delete_share_group_state_response,
    DeleteStateResult
);
state_gate!(
    read_share_group_state_summary,
    ReadShareGroupStateSummaryRequest,
    ReadShareGroupStateSummaryResponse,
    read_share_group_state_summary_response,
    ReadStateSummaryResult
);
