//! Authorization, in one place: for each API the checks Kafka's `KafkaApis` makes, with its
//! error codes. The dispatch table runs an API's gate on the decoded request before the
//! handler: a gate refuses the whole request (a response with the API's authorization
//! error, or a closed connection where no response may be sent), or lets through what is
//! authorized — resources the principal may not touch are taken out of the request — and
//! merges their errors back into the handler's response; read-only APIs filter the response
//! instead (Fetch, ListOffsets, Metadata's topic list). Without an authorizer every gate lets
//! everything through. An API without checks here is `uncovered`: while an authorizer is
//! configured it is left out of ApiVersions and refused, never served unchecked.

mod share;

pub use share::*;

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

// --- Transactions ---

pub fn add_partitions_to_txn(
    ctx: &ApiContext,
    request: AddPartitionsToTxnRequest,
    version: i16,
) -> Gate<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse> {
    use kafka_protocol::messages::add_partitions_to_txn_response::{
        AddPartitionsToTxnPartitionResult, AddPartitionsToTxnTopicResult,
    };
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    if version >= 4 {
        // The batched form is what brokers send each other to verify transactions.
        if authz.cluster(AclOperation::ClusterAction) {
            return pass(request);
        }
        return Gate::Refuse(
            AddPartitionsToTxnResponse::default()
                .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED),
        );
    }
    let transaction_allowed = authz.allowed(
        AclOperation::Write,
        ResourceType::TransactionalId,
        &request.v3_and_below_transactional_id,
    );
    let topic_allowed = |name: &str| authz.topic(AclOperation::Write, name);
    if transaction_allowed
        && request
            .v3_and_below_topics
            .iter()
            .all(|t| topic_allowed(&t.name))
    {
        return pass(request);
    }
    // Nothing is added: refused topics say why, the others OPERATION_NOT_ATTEMPTED.
    let results = request
        .v3_and_below_topics
        .iter()
        .map(|topic| {
            let error_code = if !transaction_allowed {
                code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            } else if !topic_allowed(&topic.name) {
                code::TOPIC_AUTHORIZATION_FAILED
            } else {
                code::OPERATION_NOT_ATTEMPTED
            };
            AddPartitionsToTxnTopicResult::default()
                .with_name(topic.name.clone())
                .with_results_by_partition(
                    topic
                        .partitions
                        .iter()
                        .map(|p| {
                            AddPartitionsToTxnPartitionResult::default()
                                .with_partition_index(*p)
                                .with_partition_error_code(error_code)
                        })
                        .collect(),
                )
        })
        .collect();
    Gate::Refuse(AddPartitionsToTxnResponse::default().with_results_by_topic_v3_and_below(results))
}

pub fn add_offsets_to_txn(
    ctx: &ApiContext,
    request: AddOffsetsToTxnRequest,
    _version: i16,
) -> Gate<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let error = if !authz.allowed(
        AclOperation::Write,
        ResourceType::TransactionalId,
        &request.transactional_id,
    ) {
        code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    } else if !authz.group(AclOperation::Read, &request.group_id) {
        code::GROUP_AUTHORIZATION_FAILED
    } else {
        return pass(request);
    };
    Gate::Refuse(AddOffsetsToTxnResponse::default().with_error_code(error))
}

pub fn end_txn(
    ctx: &ApiContext,
    request: EndTxnRequest,
    _version: i16,
) -> Gate<EndTxnRequest, EndTxnResponse> {
    match Authz::of(ctx) {
        Some(authz)
            if !authz.allowed(
                AclOperation::Write,
                ResourceType::TransactionalId,
                &request.transactional_id,
            ) =>
        {
            Gate::Refuse(
                EndTxnResponse::default()
                    .with_error_code(code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                    .with_producer_id(ProducerId(-1))
                    .with_producer_epoch(-1),
            )
        }
        _ => pass(request),
    }
}

pub fn txn_offset_commit(
    ctx: &ApiContext,
    mut request: TxnOffsetCommitRequest,
    _version: i16,
) -> Gate<TxnOffsetCommitRequest, TxnOffsetCommitResponse> {
    use kafka_protocol::messages::txn_offset_commit_response::{
        TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
    };
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let failed = |topic: &txn_offset_commit_request::TxnOffsetCommitRequestTopic, error: i16| {
        TxnOffsetCommitResponseTopic::default()
            .with_name(topic.name.clone())
            .with_partitions(
                topic
                    .partitions
                    .iter()
                    .map(|p| {
                        TxnOffsetCommitResponsePartition::default()
                            .with_partition_index(p.partition_index)
                            .with_error_code(error)
                    })
                    .collect(),
            )
    };
    let whole = if !authz.allowed(
        AclOperation::Write,
        ResourceType::TransactionalId,
        &request.transactional_id,
    ) {
        Some(code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    } else if !authz.group(AclOperation::Read, &request.group_id) {
        Some(code::GROUP_AUTHORIZATION_FAILED)
    } else {
        None
    };
    if let Some(error) = whole {
        let topics = request.topics.iter().map(|t| failed(t, error)).collect();
        return Gate::Refuse(TxnOffsetCommitResponse::default().with_topics(topics));
    }
    let mut refused = Vec::new();
    request.topics.retain(|topic| {
        let allowed = authz.topic(AclOperation::Read, &topic.name);
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
        Some(Box::new(move |mut response: TxnOffsetCommitResponse| {
            response.topics.extend(refused);
            response
        })),
    )
}

pub fn write_txn_markers(
    ctx: &ApiContext,
    request: WriteTxnMarkersRequest,
    _version: i16,
) -> Gate<WriteTxnMarkersRequest, WriteTxnMarkersResponse> {
    use kafka_protocol::messages::write_txn_markers_response::{
        WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
    };
    match Authz::of(ctx) {
        Some(authz) if !authz.cluster(AclOperation::ClusterAction) => {
            let markers = request
                .markers
                .iter()
                .map(|marker| {
                    WritableTxnMarkerResult::default()
                        .with_producer_id(marker.producer_id)
                        .with_topics(
                            marker
                                .topics
                                .iter()
                                .map(|t| {
                                    WritableTxnMarkerTopicResult::default()
                                        .with_name(t.name.clone())
                                        .with_partitions(
                                            t.partition_indexes
                                                .iter()
                                                .map(|p| {
                                                    WritableTxnMarkerPartitionResult::default()
                                                        .with_partition_index(*p)
                                                        .with_error_code(
                                                            code::CLUSTER_AUTHORIZATION_FAILED,
                                                        )
                                                })
                                                .collect(),
                                        )
                                })
                                .collect(),
                        )
                })
                .collect();
            Gate::Refuse(WriteTxnMarkersResponse::default().with_markers(markers))
        }
        _ => pass(request),
    }
}

pub fn describe_transactions(
    ctx: &ApiContext,
    request: DescribeTransactionsRequest,
    _version: i16,
) -> Gate<DescribeTransactionsRequest, DescribeTransactionsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let merge = move |mut response: DescribeTransactionsResponse| {
        for state in &mut response.transaction_states {
            if !authz.allowed(
                AclOperation::Describe,
                ResourceType::TransactionalId,
                &state.transactional_id,
            ) {
                *state = describe_transactions_response::TransactionState::default()
                    .with_transactional_id(state.transactional_id.clone())
                    .with_error_code(code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                    .with_producer_id(ProducerId(-1))
                    .with_producer_epoch(-1)
                    .with_transaction_timeout_ms(-1)
                    .with_transaction_start_time_ms(-1);
            } else {
                // Only the topics the principal may describe are shown.
                state
                    .topics
                    .retain(|t| authz.topic(AclOperation::Describe, &t.topic));
            }
        }
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
}

pub fn list_transactions(
    ctx: &ApiContext,
    request: ListTransactionsRequest,
    _version: i16,
) -> Gate<ListTransactionsRequest, ListTransactionsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let merge = move |mut response: ListTransactionsResponse| {
        response.transaction_states.retain(|state| {
            authz.allowed(
                AclOperation::Describe,
                ResourceType::TransactionalId,
                &state.transactional_id,
            )
        });
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
}

pub fn describe_producers(
    ctx: &ApiContext,
    request: DescribeProducersRequest,
    _version: i16,
) -> Gate<DescribeProducersRequest, DescribeProducersResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let merge = move |mut response: DescribeProducersResponse| {
        for topic in &mut response.topics {
            if authz.topic(AclOperation::Read, &topic.name) {
                continue;
            }
            for partition in &mut topic.partitions {
                *partition = describe_producers_response::PartitionResponse::default()
                    .with_partition_index(partition.partition_index)
                    .with_error_code(code::TOPIC_AUTHORIZATION_FAILED);
            }
        }
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
}

// --- Groups ---

pub fn describe_groups(
    ctx: &ApiContext,
    request: DescribeGroupsRequest,
    _version: i16,
) -> Gate<DescribeGroupsRequest, DescribeGroupsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let merge = move |mut response: DescribeGroupsResponse| {
        for group in &mut response.groups {
            if !authz.group(AclOperation::Describe, &group.group_id) {
                *group = describe_groups_response::DescribedGroup::default()
                    .with_group_id(group.group_id.clone())
                    .with_error_code(code::GROUP_AUTHORIZATION_FAILED)
                    .with_authorized_operations(super::OPERATIONS_NOT_REQUESTED);
            } else if group.authorized_operations != super::OPERATIONS_NOT_REQUESTED {
                group.authorized_operations =
                    authz.operations(ResourceType::Group, &group.group_id, GROUP_OPERATIONS);
            }
        }
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
}

/// READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS.
const GROUP_OPERATIONS: &[i8] = &[3, 6, 8, 10, 11];

pub fn consumer_group_describe(
    ctx: &ApiContext,
    request: ConsumerGroupDescribeRequest,
    _version: i16,
) -> Gate<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let merge = move |mut response: ConsumerGroupDescribeResponse| {
        for group in &mut response.groups {
            if !authz.group(AclOperation::Describe, &group.group_id) {
                *group = consumer_group_describe_response::DescribedGroup::default()
                    .with_group_id(group.group_id.clone())
                    .with_error_code(code::GROUP_AUTHORIZATION_FAILED)
                    .with_authorized_operations(super::OPERATIONS_NOT_REQUESTED);
            } else if group.authorized_operations != super::OPERATIONS_NOT_REQUESTED {
                group.authorized_operations =
                    authz.operations(ResourceType::Group, &group.group_id, GROUP_OPERATIONS);
            }
        }
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
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
    let merge = move |mut response: ListGroupsResponse| {
        response
            .groups
            .retain(|g| authz.group(AclOperation::Describe, &g.group_id));
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
}

pub fn delete_groups(
    ctx: &ApiContext,
    mut request: DeleteGroupsRequest,
    _version: i16,
) -> Gate<DeleteGroupsRequest, DeleteGroupsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let mut refused = Vec::new();
    request.groups_names.retain(|group| {
        let allowed = authz.group(AclOperation::Delete, group);
        if !allowed {
            refused.push(
                delete_groups_response::DeletableGroupResult::default()
                    .with_group_id(group.clone())
                    .with_error_code(code::GROUP_AUTHORIZATION_FAILED),
            );
        }
        allowed
    });
    Gate::Pass(
        request,
        Some(Box::new(move |mut response: DeleteGroupsResponse| {
            response.results.extend(refused);
            response
        })),
    )
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
    let mut refused = Vec::new();
    request.topics.retain(|topic| {
        let allowed = authz.topic(AclOperation::Read, &topic.name);
        if !allowed {
            refused.push(
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
                    ),
            );
        }
        allowed
    });
    Gate::Pass(
        request,
        Some(Box::new(move |mut response: OffsetDeleteResponse| {
            response.topics.extend(refused);
            response
        })),
    )
}

/// Why a heartbeat of a KIP-848 or share group member is refused, if it is: READ on the group,
/// DESCRIBE on each subscribed topic.
fn membership_error(
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

pub fn consumer_group_heartbeat(
    ctx: &ApiContext,
    request: ConsumerGroupHeartbeatRequest,
    _version: i16,
) -> Gate<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    match membership_error(&authz, &request.group_id, &request.subscribed_topic_names) {
        Some(error_code) => Gate::Refuse(
            ConsumerGroupHeartbeatResponse::default()
                .with_error_code(error_code)
                .with_member_epoch(-1),
        ),
        None => pass(request),
    }
}

// --- Topics and configs ---

pub fn create_partitions(
    ctx: &ApiContext,
    mut request: CreatePartitionsRequest,
    _version: i16,
) -> Gate<CreatePartitionsRequest, CreatePartitionsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let mut refused = Vec::new();
    request.topics.retain(|topic| {
        let allowed = authz.topic(AclOperation::Alter, &topic.name);
        if !allowed {
            refused.push(
                create_partitions_response::CreatePartitionsTopicResult::default()
                    .with_name(topic.name.clone())
                    .with_error_code(code::TOPIC_AUTHORIZATION_FAILED)
                    .with_error_message(Some(super::wire_str("Authorization failed."))),
            );
        }
        allowed
    });
    Gate::Pass(
        request,
        Some(Box::new(move |mut response: CreatePartitionsResponse| {
            response.results.extend(refused);
            response
        })),
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
    let mut refused = Vec::new();
    request.topics.retain(|topic| {
        let allowed = authz.topic(AclOperation::Delete, &topic.name);
        if !allowed {
            refused.push(
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
                    ),
            );
        }
        allowed
    });
    Gate::Pass(
        request,
        Some(Box::new(move |mut response: DeleteRecordsResponse| {
            response.topics.extend(refused);
            response
        })),
    )
}

/// The permission a config resource needs, and the error its refusal carries.
fn config_check(
    authz: &Authz,
    resource_type: i8,
    name: &str,
    operation: AclOperation,
) -> Option<i16> {
    use super::describe_configs::{RESOURCE_BROKER, RESOURCE_GROUP, RESOURCE_TOPIC};
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
    let merge = move |mut response: DescribeConfigsResponse| {
        for result in &mut response.results {
            if let Some(error_code) = config_check(
                &authz,
                result.resource_type,
                &result.resource_name,
                AclOperation::DescribeConfigs,
            ) {
                result.error_code = error_code;
                result.error_message = Some(super::wire_str("Authorization failed."));
                result.configs.clear();
            }
        }
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
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
            let mut refused = Vec::new();
            request.resources.retain(|resource| {
                match config_check(
                    &authz,
                    resource.resource_type,
                    &resource.resource_name,
                    AclOperation::AlterConfigs,
                ) {
                    Some(error_code) => {
                        refused.push(
                            <$result>::default()
                                .with_resource_type(resource.resource_type)
                                .with_resource_name(resource.resource_name.clone())
                                .with_error_code(error_code)
                                .with_error_message(Some(super::wire_str("Authorization failed."))),
                        );
                        false
                    }
                    None => true,
                }
            });
            Gate::Pass(
                request,
                Some(Box::new(move |mut response: $response| {
                    response.responses.extend(refused);
                    response
                })),
            )
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
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let named = !request.topics.is_empty();
    let merge = move |mut response: DescribeTopicPartitionsResponse| {
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
                        .with_topic_authorized_operations(super::OPERATIONS_NOT_REQUESTED);
                }
            }
        } else {
            response.topics.retain(describable);
        }
        for topic in &mut response.topics {
            if topic.error_code == code::NONE
                && topic.topic_authorized_operations != super::OPERATIONS_NOT_REQUESTED
                && let Some(name) = &topic.name
            {
                topic.topic_authorized_operations =
                    authz.operations(ResourceType::Topic, name, super::TOPIC_OPERATIONS);
            }
        }
        response
    };
    Gate::Pass(request, Some(Box::new(merge)))
}

// --- Cluster administration ---

pub fn describe_log_dirs(
    ctx: &ApiContext,
    request: DescribeLogDirsRequest,
    _version: i16,
) -> Gate<DescribeLogDirsRequest, DescribeLogDirsResponse> {
    cluster_admin(ctx, request, AclOperation::Describe, |_| {
        DescribeLogDirsResponse::default().with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
    })
}

pub fn alter_replica_log_dirs(
    ctx: &ApiContext,
    request: AlterReplicaLogDirsRequest,
    _version: i16,
) -> Gate<AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse> {
    use kafka_protocol::messages::alter_replica_log_dirs_response::{
        AlterReplicaLogDirPartitionResult, AlterReplicaLogDirTopicResult,
    };
    cluster_admin(ctx, request, AclOperation::Alter, |r| {
        let results = r
            .dirs
            .iter()
            .flat_map(|d| &d.topics)
            .map(|t| {
                AlterReplicaLogDirTopicResult::default()
                    .with_topic_name(t.name.clone())
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                AlterReplicaLogDirPartitionResult::default()
                                    .with_partition_index(*p)
                                    .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
                            })
                            .collect(),
                    )
            })
            .collect();
        AlterReplicaLogDirsResponse::default().with_results(results)
    })
}

pub fn elect_leaders(
    ctx: &ApiContext,
    request: ElectLeadersRequest,
    version: i16,
) -> Gate<ElectLeadersRequest, ElectLeadersResponse> {
    use kafka_protocol::messages::elect_leaders_response::{
        PartitionResult, ReplicaElectionResult,
    };
    cluster_admin(ctx, request, AclOperation::Alter, |r| {
        // Every named partition carries the error; v1+ also has a top-level one.
        let results = r
            .topic_partitions
            .iter()
            .flatten()
            .map(|t| {
                ReplicaElectionResult::default()
                    .with_topic(t.topic.clone())
                    .with_partition_result(
                        t.partitions
                            .iter()
                            .map(|p| {
                                PartitionResult::default()
                                    .with_partition_id(*p)
                                    .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
                            })
                            .collect(),
                    )
            })
            .collect();
        let response = ElectLeadersResponse::default().with_replica_election_results(results);
        if version >= 1 {
            response.with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
        } else {
            response
        }
    })
}

pub fn alter_partition_reassignments(
    ctx: &ApiContext,
    request: AlterPartitionReassignmentsRequest,
    _version: i16,
) -> Gate<AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse> {
    cluster_admin(ctx, request, AclOperation::Alter, |_| {
        AlterPartitionReassignmentsResponse::default()
            .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
    })
}

pub fn list_partition_reassignments(
    ctx: &ApiContext,
    request: ListPartitionReassignmentsRequest,
    _version: i16,
) -> Gate<ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse> {
    cluster_admin(ctx, request, AclOperation::Describe, |_| {
        ListPartitionReassignmentsResponse::default()
            .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
    })
}

pub fn list_config_resources(
    ctx: &ApiContext,
    request: ListConfigResourcesRequest,
    _version: i16,
) -> Gate<ListConfigResourcesRequest, ListConfigResourcesResponse> {
    cluster_admin(ctx, request, AclOperation::DescribeConfigs, |_| {
        ListConfigResourcesResponse::default().with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
    })
}

// The controller listener. Brokers and voters connect to it as their own principal (the
// inter-broker principal Kafka expects in `super.users` or granted CLUSTER_ACTION), never as
// a client: its APIs need CLUSTER_ACTION on the cluster, as Kafka's `ControllerApis`, and
// UnregisterBroker ALTER. Forwarded administration is the exception Kafka handles with
// Envelope (the client's principal, checked again by the controller): here the forwarding
// broker has already run the client-facing gate above, and the controller checks that the
// forwarding connection is a broker's (CLUSTER_ACTION).

/// Whether the connection may act as a node of the cluster (Raft messages, lifecycle).
pub fn is_cluster_member(ctx: &ApiContext) -> bool {
    Authz::of(ctx).is_none_or(|authz| authz.cluster(AclOperation::ClusterAction))
}

/// Administration forwarded by a broker: refused by closing, since only a misconfigured
/// node (or an impostor) can be refused here.
pub fn forwarded<Req, Resp>(ctx: &ApiContext, request: Req, _: i16) -> Gate<Req, Resp> {
    if is_cluster_member(ctx) {
        pass(request)
    } else {
        Gate::Close(format!(
            "{} may not forward requests to the controller (CLUSTER_ACTION on the cluster needed)",
            ctx.principal
        ))
    }
}

macro_rules! node_gate {
    ($name:ident, $request:ty, $response:ty, $operation:expr) => {
        pub fn $name(ctx: &ApiContext, request: $request, _: i16) -> Gate<$request, $response> {
            cluster_admin(ctx, request, $operation, |_| {
                <$response>::default().with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
            })
        }
    };
}

node_gate!(
    broker_registration,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    AclOperation::ClusterAction
);
node_gate!(
    broker_heartbeat,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    AclOperation::ClusterAction
);
node_gate!(
    unregister_broker,
    UnregisterBrokerRequest,
    UnregisterBrokerResponse,
    AclOperation::Alter
);
node_gate!(
    alter_partition,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AclOperation::ClusterAction
);
node_gate!(
    allocate_producer_ids,
    AllocateProducerIdsRequest,
    AllocateProducerIdsResponse,
    AclOperation::ClusterAction
);
