//! The checks of the topic, record and config APIs: Metadata (describable topics only,
//! auto-creation needs CREATE, KIP-430 operations), Produce (WRITE; a transactional producer's
//! id too), Fetch (READ; followers CLUSTER_ACTION; checked on the answer so incremental
//! sessions are rechecked), ListOffsets, OffsetForLeaderEpoch, Create/DeleteTopics,
//! CreatePartitions, DeleteRecords, DescribeConfigs and the AlterConfigs pair,
//! DescribeTopicPartitions.

use super::{Authz, CLUSTER_NAME, Gate, check_answer, pass, pass_merging, take_refused};
use crate::api::ApiContext;
use crate::auth::acl::{AclOperation, ResourceType};
use crate::error::code;
use kafka_protocol::messages::*;
use uuid::Uuid;

pub fn metadata(
    ctx: &ApiContext,
    mut request: MetadataRequest,
    version: i16,
) -> Gate<MetadataRequest, MetadataResponse> {
    use kafka_protocol::messages::metadata_response::MetadataResponseTopic;
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let auto_create = ctx.broker.config().auto_create_topics_enable
        && (version < 4 || request.allow_auto_topic_creation);
    let mut refused: Vec<MetadataResponseTopic> = Vec::new();
    if let Some(topics) = request.topics.as_mut() {
        topics.retain(|wanted| {
            let name = match &wanted.name {
                Some(name) => name.to_string(),
                None => match authz.topic_name("", wanted.topic_id) {
                    Some(name) => name,
                    None => return true,
                },
            };
            // Not describable, or to be auto-created without CREATE.
            let refused_create = auto_create
                && !authz.image.topics.contains_key(name.as_str())
                && !authz.cluster(AclOperation::Create)
                && !authz.topic(AclOperation::Create, &name);
            let error = (!authz.topic(AclOperation::Describe, &name) || refused_create)
                .then_some(code::TOPIC_AUTHORIZATION_FAILED);
            if let Some(error_code) = error {
                refused.push(
                    MetadataResponseTopic::default()
                        .with_error_code(error_code)
                        .with_name(wanted.name.clone())
                        .with_topic_id(wanted.topic_id)
                        .with_topic_authorized_operations(i32::MIN),
                );
            }
            error.is_none()
        });
    }
    authz.check_answer(request, move |authz, response: &mut MetadataResponse| {
        use crate::api::{CLUSTER_OPERATIONS, OPERATIONS_NOT_REQUESTED, TOPIC_OPERATIONS};
        // An all-topics answer lists only the topics the principal may describe.
        response.topics.retain(|t| match &t.name {
            Some(name) if t.error_code == code::NONE => authz.topic(AclOperation::Describe, name),
            _ => true,
        });
        for topic in &mut response.topics {
            if topic.topic_authorized_operations != OPERATIONS_NOT_REQUESTED
                && let Some(name) = &topic.name
            {
                topic.topic_authorized_operations =
                    authz.operations(ResourceType::Topic, name, TOPIC_OPERATIONS);
            }
        }
        response.topics.extend(refused);
        if response.cluster_authorized_operations != OPERATIONS_NOT_REQUESTED {
            response.cluster_authorized_operations =
                authz.operations(ResourceType::Cluster, CLUSTER_NAME, CLUSTER_OPERATIONS);
        }
    })
}

pub fn produce(
    ctx: &ApiContext,
    mut request: ProduceRequest,
    _version: i16,
) -> Gate<ProduceRequest, ProduceResponse> {
    use kafka_protocol::messages::produce_response::{
        PartitionProduceResponse, TopicProduceResponse,
    };
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let failed = |topic: &produce_request::TopicProduceData, error_code: i16| {
        TopicProduceResponse::default()
            .with_name(topic.name.clone())
            .with_topic_id(topic.topic_id)
            .with_partition_responses(
                topic
                    .partition_data
                    .iter()
                    .map(|p| {
                        PartitionProduceResponse::default()
                            .with_index(p.index)
                            .with_error_code(error_code)
                            .with_base_offset(-1)
                            .with_log_append_time_ms(-1)
                            .with_log_start_offset(-1)
                    })
                    .collect(),
            )
    };
    let transaction_refused = request
        .transactional_id
        .as_ref()
        .is_some_and(|id| !authz.allowed(AclOperation::Write, ResourceType::TransactionalId, id));
    let mut refused = Vec::new();
    if transaction_refused {
        refused = request
            .topic_data
            .iter()
            .map(|t| failed(t, code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
            .collect();
        request.topic_data.clear();
    } else {
        request.topic_data.retain(|topic| {
            let allowed = authz
                .topic_name(&topic.name, topic.topic_id)
                .is_none_or(|name| authz.topic(AclOperation::Write, &name));
            if !allowed {
                refused.push(failed(topic, code::TOPIC_AUTHORIZATION_FAILED));
            }
            allowed
        });
    }
    if refused.is_empty() {
        return pass(request);
    }
    if request.acks == 0 {
        // No response may carry the error: Kafka closes the connection.
        return Gate::Close("produce with acks=0 refused by the authorizer".into());
    }
    if request.topic_data.is_empty() {
        return Gate::Refuse(ProduceResponse::default().with_responses(refused));
    }
    pass_merging(request, refused, |response: &mut ProduceResponse| {
        &mut response.responses
    })
}

pub fn fetch(
    ctx: &ApiContext,
    request: FetchRequest,
    version: i16,
) -> Gate<FetchRequest, crate::api::fetch::FetchReply> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let replica_id = if version >= 15 {
        request.replica_state.replica_id.0
    } else {
        request.replica_id.0
    };
    // A follower needs CLUSTER_ACTION; a consumer READ on each topic, checked on the answer
    // so that partitions an incremental fetch session holds are checked every time too.
    let follower_allowed = replica_id < 0 || authz.cluster(AclOperation::ClusterAction);
    authz.check_answer(
        request,
        move |authz, reply: &mut crate::api::fetch::FetchReply| {
            let mut denied = Vec::new();
            for (t, topic) in reply.response.responses.iter_mut().enumerate() {
                let allowed = follower_allowed
                    && (replica_id >= 0
                        || authz
                            .topic_name(&topic.topic, topic.topic_id)
                            .is_none_or(|name| authz.topic(AclOperation::Read, &name)));
                if allowed {
                    continue;
                }
                for (p, partition) in topic.partitions.iter_mut().enumerate() {
                    *partition = fetch_response::PartitionData::default()
                        .with_partition_index(partition.partition_index)
                        .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                        .with_high_watermark(-1)
                        .with_last_stable_offset(-1)
                        .with_log_start_offset(-1);
                    denied.push((t, p));
                }
            }
            reply.file_records.retain(|(at, _)| !denied.contains(at));
        },
    )
}

pub fn list_offsets(
    ctx: &ApiContext,
    request: ListOffsetsRequest,
    _version: i16,
) -> Gate<ListOffsetsRequest, ListOffsetsResponse> {
    check_answer(
        ctx,
        request,
        move |authz, response: &mut ListOffsetsResponse| {
            for topic in &mut response.topics {
                if authz.topic(AclOperation::Describe, &topic.name) {
                    continue;
                }
                for partition in &mut topic.partitions {
                    *partition = list_offsets_response::ListOffsetsPartitionResponse::default()
                        .with_partition_index(partition.partition_index)
                        .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                        .with_timestamp(-1)
                        .with_offset(-1)
                        .with_leader_epoch(-1);
                }
            }
        },
    )
}

pub fn offset_for_leader_epoch(
    ctx: &ApiContext,
    request: OffsetForLeaderEpochRequest,
    _version: i16,
) -> Gate<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse> {
    let follower = request.replica_id.0 >= 0;
    check_answer(
        ctx,
        request,
        move |authz, response: &mut OffsetForLeaderEpochResponse| {
            let follower_allowed = !follower || authz.cluster(AclOperation::ClusterAction);
            for topic in &mut response.topics {
                let error = if !follower_allowed {
                    code::CLUSTER_AUTHORIZATION_FAILED
                } else if !follower && !authz.topic(AclOperation::Describe, &topic.topic) {
                    code::TOPIC_AUTHORIZATION_FAILED
                } else {
                    continue;
                };
                for partition in &mut topic.partitions {
                    *partition = offset_for_leader_epoch_response::EpochEndOffset::default()
                        .with_partition(partition.partition)
                        .with_error_code(error)
                        .with_leader_epoch(-1)
                        .with_end_offset(-1);
                }
            }
        },
    )
}

/// Of the topics a handler is about to create for the request (a streams group's internal
/// topics), those its principal may not create: CREATE on the cluster covers all, else CREATE
/// on each topic (Kafka's `handleStreamsGroupHeartbeat`). None without an authorizer.
pub fn topics_not_creatable<'a>(
    ctx: &ApiContext,
    names: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let Some(authz) = Authz::of(ctx) else {
        return Vec::new();
    };
    if authz.cluster(AclOperation::Create) {
        return Vec::new();
    }
    names
        .into_iter()
        .filter(|name| !authz.topic(AclOperation::Create, name))
        .map(str::to_string)
        .collect()
}

pub fn create_topics(
    ctx: &ApiContext,
    mut request: CreateTopicsRequest,
    _version: i16,
) -> Gate<CreateTopicsRequest, CreateTopicsResponse> {
    use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let cluster_create = authz.cluster(AclOperation::Create);
    let refused = take_refused(&mut request.topics, |topic| {
        (!(cluster_create || authz.topic(AclOperation::Create, &topic.name))).then(|| {
            CreatableTopicResult::default()
                .with_name(topic.name.clone())
                .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                .with_error_message(Some(crate::api::wire_str("Authorization failed.")))
                .with_num_partitions(-1)
                .with_replication_factor(-1)
        })
    });
    authz.check_answer(
        request,
        move |authz, response: &mut CreateTopicsResponse| {
            // A created topic's configs are shown only with DESCRIBE_CONFIGS on it.
            for topic in &mut response.topics {
                if topic.configs.is_some()
                    && !authz.topic(AclOperation::DescribeConfigs, &topic.name)
                {
                    topic.configs = None;
                    topic.topic_config_error_code = code::TOPIC_AUTHORIZATION_FAILED;
                }
            }
            response.topics.extend(refused);
        },
    )
}

pub fn delete_topics(
    ctx: &ApiContext,
    mut request: DeleteTopicsRequest,
    _version: i16,
) -> Gate<DeleteTopicsRequest, DeleteTopicsResponse> {
    use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let mut refused = Vec::new();
    let denied = |name: &str| !authz.topic(AclOperation::Delete, name);
    let result = |name: Option<TopicName>, id: Uuid| {
        DeletableTopicResult::default()
            .with_name(name)
            .with_topic_id(id)
            .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
            .with_error_message(Some(crate::api::wire_str("Authorization failed.")))
    };
    request.topic_names.retain(|name| {
        let refuse = denied(name);
        if refuse {
            refused.push(result(Some(name.clone()), Uuid::nil()));
        }
        !refuse
    });
    request.topics.retain(|topic| {
        let name = topic
            .name
            .as_ref()
            .map(|n| n.to_string())
            .unwrap_or_default();
        let refuse = authz
            .topic_name(&name, topic.topic_id)
            .is_some_and(|name| denied(&name));
        if refuse {
            refused.push(result(topic.name.clone(), topic.topic_id));
        }
        !refuse
    });
    pass_merging(request, refused, |response: &mut DeleteTopicsResponse| {
        &mut response.responses
    })
}

pub fn create_partitions(
    ctx: &ApiContext,
    mut request: CreatePartitionsRequest,
    _version: i16,
) -> Gate<CreatePartitionsRequest, CreatePartitionsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let refused = take_refused(&mut request.topics, |topic| {
        (!authz.topic(AclOperation::Alter, &topic.name)).then(|| {
            create_partitions_response::CreatePartitionsTopicResult::default()
                .with_name(topic.name.clone())
                .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                .with_error_message(Some(crate::api::wire_str("Authorization failed.")))
        })
    });
    pass_merging(
        request,
        refused,
        |response: &mut CreatePartitionsResponse| &mut response.results,
    )
}

pub fn delete_records(
    ctx: &ApiContext,
    mut request: DeleteRecordsRequest,
    _version: i16,
) -> Gate<DeleteRecordsRequest, DeleteRecordsResponse> {
    use kafka_protocol::messages::delete_records_response::{
        DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
    };
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let refused = take_refused(&mut request.topics, |topic| {
        (!authz.topic(AclOperation::Delete, &topic.name)).then(|| {
            DeleteRecordsTopicResult::default()
                .with_name(topic.name.clone())
                .with_partitions(
                    topic
                        .partitions
                        .iter()
                        .map(|p| {
                            DeleteRecordsPartitionResult::default()
                                .with_partition_index(p.partition_index)
                                .with_low_watermark(-1)
                                .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                        })
                        .collect(),
                )
        })
    });
    pass_merging(request, refused, |response: &mut DeleteRecordsResponse| {
        &mut response.topics
    })
}

/// The permission a config resource needs, and the error its refusal carries.
fn config_check(
    authz: &Authz,
    resource_type: i8,
    name: &str,
    operation: AclOperation,
) -> Option<i16> {
    use crate::api::describe_configs::{RESOURCE_BROKER, RESOURCE_GROUP, RESOURCE_TOPIC};
    match resource_type {
        RESOURCE_TOPIC if !authz.topic(operation, name) => Some(code::TOPIC_AUTHORIZATION_FAILED),
        RESOURCE_GROUP if !authz.group(operation, name) => Some(code::GROUP_AUTHORIZATION_FAILED),
        RESOURCE_BROKER | RESOURCE_BROKER_LOGGER if !authz.cluster(operation) => {
            Some(code::CLUSTER_AUTHORIZATION_FAILED)
        }
        _ => None,
    }
}

/// Kafka's BROKER_LOGGER config resource type.
const RESOURCE_BROKER_LOGGER: i8 = 8;

pub fn describe_configs(
    ctx: &ApiContext,
    request: DescribeConfigsRequest,
    _version: i16,
) -> Gate<DescribeConfigsRequest, DescribeConfigsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    authz.check_answer(
        request,
        move |authz, response: &mut DescribeConfigsResponse| {
            for result in &mut response.results {
                if let Some(error_code) = config_check(
                    authz,
                    result.resource_type,
                    &result.resource_name,
                    AclOperation::DescribeConfigs,
                ) {
                    result.error_code = error_code;
                    result.error_message = Some(crate::api::wire_str("Authorization failed."));
                    result.configs.clear();
                }
            }
        },
    )
}

/// AlterConfigs and IncrementalAlterConfigs: ALTER_CONFIGS on each resource.
macro_rules! alter_configs_gate {
    ($name:ident, $request:ty, $response:ty, $result:ty) => {
        pub fn $name(
            ctx: &ApiContext,
            mut request: $request,
            _version: i16,
        ) -> Gate<$request, $response> {
            let Some(authz) = Authz::of(ctx) else {
                return pass(request);
            };
            let refused = take_refused(&mut request.resources, |resource| {
                let error_code = config_check(
                    &authz,
                    resource.resource_type,
                    &resource.resource_name,
                    AclOperation::AlterConfigs,
                )?;
                Some(
                    <$result>::default()
                        .with_resource_type(resource.resource_type)
                        .with_resource_name(resource.resource_name.clone())
                        .with_error_code(error_code)
                        .with_error_message(Some(crate::api::wire_str("Authorization failed."))),
                )
            });
            pass_merging(request, refused, |response: &mut $response| {
                &mut response.responses
            })
        }
    };
}

alter_configs_gate!(
    alter_configs,
    AlterConfigsRequest,
    AlterConfigsResponse,
    alter_configs_response::AlterConfigsResourceResponse
);

alter_configs_gate!(
    incremental_alter_configs,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
    incremental_alter_configs_response::AlterConfigsResourceResponse
);

pub fn describe_topic_partitions(
    ctx: &ApiContext,
    request: DescribeTopicPartitionsRequest,
    _version: i16,
) -> Gate<DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse> {
    let named = !request.topics.is_empty();
    check_answer(
        ctx,
        request,
        move |authz, response: &mut DescribeTopicPartitionsResponse| {
            let describable =
                |t: &describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic| {
                    t.name
                        .as_ref()
                        .is_none_or(|name| authz.topic(AclOperation::Describe, name))
                };
            if named {
                for topic in &mut response.topics {
                    if !describable(topic) {
                        *topic = describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic::default()
                        .with_name(topic.name.clone())
                        .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                        .with_topic_authorized_operations(crate::api::OPERATIONS_NOT_REQUESTED);
                    }
                }
            } else {
                response.topics.retain(describable);
            }
            for topic in &mut response.topics {
                if topic.error_code == code::NONE
                    && topic.topic_authorized_operations != crate::api::OPERATIONS_NOT_REQUESTED
                    && let Some(name) = &topic.name
                {
                    topic.topic_authorized_operations =
                        authz.operations(ResourceType::Topic, name, crate::api::TOPIC_OPERATIONS);
                }
            }
        },
    )
}
