//! Authorization, in one place: for each API the checks Kafka's `KafkaApis` makes, with its
//! error codes. The dispatch table runs an API's gate on the decoded request before the
//! handler: a gate refuses the whole request (a response with the API's authorization
//! error, or a closed connection where no response may be sent), or lets through what is
//! authorized — resources the principal may not touch are taken out of the request — and
//! merges their errors back into the handler's response; read-only APIs filter the response
//! instead (Fetch, ListOffsets, Metadata's topic list). Without an authorizer every gate lets
//! everything through. An API without checks here is `uncovered`: while an authorizer is
//! configured it is left out of ApiVersions and refused, never served unchecked.

use super::ApiContext;
use crate::auth::KafkaPrincipal;
use crate::auth::acl::{AclOperation, ResourceType};
use crate::auth::authorizer::{Authorizer, Requester};
use crate::error::code;
use crate::metadata::image::MetadataImage;
use kafka_protocol::messages::*;
use std::sync::Arc;
use uuid::Uuid;

/// What a gate decided.
pub enum Gate<Req, Resp> {
    /// Handle (what is left of) the request, then apply `merge` to the response.
    Pass(Req, Option<Merge<Resp>>),
    /// Answer with this response, without handling the request.
    Refuse(Resp),
    /// Close the connection (a request that gets no response was refused).
    Close(String),
}

pub type Merge<Resp> = Box<dyn FnOnce(Resp) -> Resp + Send>;

fn pass<Req, Resp>(request: Req) -> Gate<Req, Resp> {
    Gate::Pass(request, None)
}

/// APIs Kafka never authorizes (ApiVersions, the SASL exchange).
pub fn none<Req, Resp>(_: &ApiContext, request: Req, _: i16) -> Gate<Req, Resp> {
    pass(request)
}

/// APIs whose checks are not built yet: with an authorizer they are refused by the
/// dispatcher before this runs (and left out of ApiVersions).
pub fn uncovered<Req, Resp>(_: &ApiContext, request: Req, _: i16) -> Gate<Req, Resp> {
    pass(request)
}

const CLUSTER_NAME: &str = "kafka-cluster";

/// One request's view for checks: the authorizer, the ACLs, who asks from where.
#[derive(Clone)]
struct Authz {
    authorizer: Arc<Authorizer>,
    image: Arc<MetadataImage>,
    principal: Arc<KafkaPrincipal>,
    host: String,
}

impl Authz {
    fn of(ctx: &ApiContext) -> Option<Self> {
        let authorizer = ctx.authorizer.clone()?;
        Some(Self {
            authorizer,
            image: ctx.broker.metadata().image(),
            principal: ctx.principal.clone(),
            host: ctx.client_host.trim_start_matches('/').to_string(),
        })
    }

    fn allowed(&self, operation: AclOperation, resource_type: ResourceType, name: &str) -> bool {
        let who = Requester {
            principal: &self.principal,
            host: &self.host,
        };
        self.authorizer.authorize(
            self.image.acls.values(),
            who,
            operation,
            resource_type,
            name,
        )
    }

    fn cluster(&self, operation: AclOperation) -> bool {
        self.allowed(operation, ResourceType::Cluster, CLUSTER_NAME)
    }

    fn topic(&self, operation: AclOperation, name: &str) -> bool {
        self.allowed(operation, ResourceType::Topic, name)
    }

    fn group(&self, operation: AclOperation, name: &str) -> bool {
        self.allowed(operation, ResourceType::Group, name)
    }

    /// A topic's name from a request naming it by name or (newer versions) id; `None` for an
    /// unknown id (the handler answers UNKNOWN_TOPIC_ID, which says nothing of any topic).
    fn topic_name(&self, name: &str, id: Uuid) -> Option<String> {
        if !name.is_empty() || id.is_nil() {
            return Some(name.to_string());
        }
        self.image.topic_names.get(&id).map(|n| n.to_string())
    }

    /// The authorized-operations bit field of a resource (KIP-430).
    fn operations(&self, resource_type: ResourceType, name: &str, ops: &[i8]) -> i32 {
        ops.iter()
            .filter(|op| {
                AclOperation::from_id(**op).is_some_and(|op| self.allowed(op, resource_type, name))
            })
            .fold(0, |acc, op| acc | (1 << op))
    }
}

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
    let merge = move |mut response: MetadataResponse| {
        use super::{CLUSTER_OPERATIONS, OPERATIONS_NOT_REQUESTED, TOPIC_OPERATIONS};
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
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
}

pub fn describe_cluster(
    ctx: &ApiContext,
    request: DescribeClusterRequest,
    _version: i16,
) -> Gate<DescribeClusterRequest, DescribeClusterResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let merge = move |mut response: DescribeClusterResponse| {
        if response.cluster_authorized_operations != super::OPERATIONS_NOT_REQUESTED {
            response.cluster_authorized_operations = authz.operations(
                ResourceType::Cluster,
                CLUSTER_NAME,
                super::CLUSTER_OPERATIONS,
            );
        }
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
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
    Gate::Pass(
        request,
        Some(Box::new(move |mut response: ProduceResponse| {
            response.responses.extend(refused);
            response
        })),
    )
}

pub fn fetch(
    ctx: &ApiContext,
    request: FetchRequest,
    version: i16,
) -> Gate<FetchRequest, super::fetch::FetchReply> {
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
    let merge = move |mut reply: super::fetch::FetchReply| {
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
        reply
    };
    Gate::Pass(request, Some(Box::new(merge)))
}

pub fn list_offsets(
    ctx: &ApiContext,
    request: ListOffsetsRequest,
    _version: i16,
) -> Gate<ListOffsetsRequest, ListOffsetsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let merge = move |mut response: ListOffsetsResponse| {
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
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
}

pub fn offset_for_leader_epoch(
    ctx: &ApiContext,
    request: OffsetForLeaderEpochRequest,
    _version: i16,
) -> Gate<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let follower = request.replica_id.0 >= 0;
    let merge = move |mut response: OffsetForLeaderEpochResponse| {
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
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
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
    let mut refused = Vec::new();
    request.topics.retain(|topic| {
        let allowed = cluster_create || authz.topic(AclOperation::Create, &topic.name);
        if !allowed {
            refused.push(
                CreatableTopicResult::default()
                    .with_name(topic.name.clone())
                    .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                    .with_error_message(Some(super::wire_str("Authorization failed.")))
                    .with_num_partitions(-1)
                    .with_replication_factor(-1),
            );
        }
        allowed
    });
    let merge = move |mut response: CreateTopicsResponse| {
        // A created topic's configs are shown only with DESCRIBE_CONFIGS on it.
        for topic in &mut response.topics {
            if topic.configs.is_some() && !authz.topic(AclOperation::DescribeConfigs, &topic.name) {
                topic.configs = None;
                topic.topic_config_error_code = code::TOPIC_AUTHORIZATION_FAILED;
            }
        }
        response.topics.extend(refused);
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
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
            .with_error_message(Some(super::wire_str("Authorization failed.")))
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
    Gate::Pass(
        request,
        Some(Box::new(move |mut response: DeleteTopicsResponse| {
            response.responses.extend(refused);
            response
        })),
    )
}

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
    Gate::Pass(
        request,
        Some(Box::new(move |mut response: FindCoordinatorResponse| {
            response.coordinators.extend(refused);
            response
        })),
    )
}

/// READ on the group, or the API's response with GROUP_AUTHORIZATION_FAILED.
fn group_read<Req, Resp>(
    ctx: &ApiContext,
    request: Req,
    group: &str,
    refused: impl FnOnce() -> Resp,
) -> Gate<Req, Resp> {
    match Authz::of(ctx) {
        Some(authz) if !authz.group(AclOperation::Read, group) => Gate::Refuse(refused()),
        _ => pass(request),
    }
}

pub fn join_group(
    ctx: &ApiContext,
    request: JoinGroupRequest,
    _version: i16,
) -> Gate<JoinGroupRequest, JoinGroupResponse> {
    let group = request.group_id.to_string();
    group_read(ctx, request, &group, || {
        JoinGroupResponse::default()
            .with_error_code(code::GROUP_AUTHORIZATION_FAILED)
            .with_generation_id(-1)
    })
}

pub fn sync_group(
    ctx: &ApiContext,
    request: SyncGroupRequest,
    _version: i16,
) -> Gate<SyncGroupRequest, SyncGroupResponse> {
    let group = request.group_id.to_string();
    group_read(ctx, request, &group, || {
        SyncGroupResponse::default().with_error_code(code::GROUP_AUTHORIZATION_FAILED)
    })
}

pub fn heartbeat(
    ctx: &ApiContext,
    request: HeartbeatRequest,
    _version: i16,
) -> Gate<HeartbeatRequest, HeartbeatResponse> {
    let group = request.group_id.to_string();
    group_read(ctx, request, &group, || {
        HeartbeatResponse::default().with_error_code(code::GROUP_AUTHORIZATION_FAILED)
    })
}

pub fn leave_group(
    ctx: &ApiContext,
    request: LeaveGroupRequest,
    _version: i16,
) -> Gate<LeaveGroupRequest, LeaveGroupResponse> {
    let group = request.group_id.to_string();
    group_read(ctx, request, &group, || {
        LeaveGroupResponse::default().with_error_code(code::GROUP_AUTHORIZATION_FAILED)
    })
}

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
    let mut refused = Vec::new();
    request.topics.retain(|topic| {
        let allowed = authz
            .topic_name(&topic.name, topic.topic_id)
            .is_none_or(|name| authz.topic(AclOperation::Read, &name));
        if !allowed {
            refused.push(failed(topic, code::TOPIC_AUTHORIZATION_FAILED));
        }
        allowed
    });
    if refused.is_empty() {
        return pass(request);
    }
    Gate::Pass(
        request,
        Some(Box::new(move |mut response: OffsetCommitResponse| {
            response.topics.extend(refused);
            response
        })),
    )
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
    let merge = move |mut response: OffsetFetchResponse| {
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
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
}

pub fn init_producer_id(
    ctx: &ApiContext,
    request: InitProducerIdRequest,
    _version: i16,
) -> Gate<InitProducerIdRequest, InitProducerIdResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let error = match &request.transactional_id {
        Some(id) if !authz.allowed(AclOperation::Write, ResourceType::TransactionalId, id) => {
            Some(code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        }
        Some(_) => None,
        // An idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic.
        None => {
            let who = Requester {
                principal: &authz.principal,
                host: &authz.host,
            };
            let allowed = authz.cluster(AclOperation::IdempotentWrite)
                || authz.authorizer.authorize_by_resource_type(
                    authz.image.acls.values(),
                    who,
                    AclOperation::Write,
                    ResourceType::Topic,
                );
            (!allowed).then_some(code::CLUSTER_AUTHORIZATION_FAILED)
        }
    };
    match error {
        Some(error_code) => Gate::Refuse(
            InitProducerIdResponse::default()
                .with_error_code(error_code)
                .with_producer_id(ProducerId(-1))
                .with_producer_epoch(-1),
        ),
        None => pass(request),
    }
}

/// The cluster permission an admin API needs, or its refusal.
fn cluster_admin<Req, Resp>(
    ctx: &ApiContext,
    request: Req,
    operation: AclOperation,
    refused: impl FnOnce(&Req) -> Resp,
) -> Gate<Req, Resp> {
    match Authz::of(ctx) {
        Some(authz) if !authz.cluster(operation) => Gate::Refuse(refused(&request)),
        _ => pass(request),
    }
}

pub fn create_acls(
    ctx: &ApiContext,
    request: CreateAclsRequest,
    _version: i16,
) -> Gate<CreateAclsRequest, CreateAclsResponse> {
    cluster_admin(ctx, request, AclOperation::Alter, |r| {
        CreateAclsResponse::default().with_results(
            r.creations
                .iter()
                .map(|_| {
                    create_acls_response::AclCreationResult::default()
                        .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
                })
                .collect(),
        )
    })
}

pub fn describe_acls(
    ctx: &ApiContext,
    request: DescribeAclsRequest,
    _version: i16,
) -> Gate<DescribeAclsRequest, DescribeAclsResponse> {
    cluster_admin(ctx, request, AclOperation::Describe, |_| {
        DescribeAclsResponse::default().with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
    })
}

pub fn delete_acls(
    ctx: &ApiContext,
    request: DeleteAclsRequest,
    _version: i16,
) -> Gate<DeleteAclsRequest, DeleteAclsResponse> {
    cluster_admin(ctx, request, AclOperation::Alter, |r| {
        DeleteAclsResponse::default().with_filter_results(
            r.filters
                .iter()
                .map(|_| {
                    delete_acls_response::DeleteAclsFilterResult::default()
                        .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
                })
                .collect(),
        )
    })
}

pub fn describe_user_scram_credentials(
    ctx: &ApiContext,
    request: DescribeUserScramCredentialsRequest,
    _version: i16,
) -> Gate<DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse> {
    cluster_admin(ctx, request, AclOperation::Describe, |_| {
        DescribeUserScramCredentialsResponse::default()
            .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
    })
}

pub fn alter_user_scram_credentials(
    ctx: &ApiContext,
    request: AlterUserScramCredentialsRequest,
    _version: i16,
) -> Gate<AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse> {
    cluster_admin(ctx, request, AclOperation::Alter, |r| {
        let users: std::collections::BTreeSet<&str> = r
            .deletions
            .iter()
            .map(|d| d.name.as_str())
            .chain(r.upsertions.iter().map(|u| u.name.as_str()))
            .collect();
        AlterUserScramCredentialsResponse::default().with_results(
            users
                .into_iter()
                .map(|user| {
                    alter_user_scram_credentials_response::AlterUserScramCredentialsResult::default(
                    )
                    .with_user(super::wire_str(user))
                    .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
                })
                .collect(),
        )
    })
}
