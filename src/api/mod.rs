//! The Kafka APIs: one file per API translating between `kafka-protocol` wire types and the
//! broker core. This file is the dispatch table: each supported API with its version range,
//! in one list. ApiVersions is generated from the same list, so it cannot advertise an API or
//! version that is not dispatched here.

pub mod alter_configs;
pub mod api_versions;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_topics;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_groups;
pub mod fetch;
pub mod find_coordinator;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod join_group;
pub mod leave_group;
pub mod list_groups;
pub mod list_offsets;
pub mod metadata;
pub mod offset_commit;
pub mod offset_delete;
pub mod offset_fetch;
pub mod produce;
pub mod sync_group;

use crate::broker::Broker;
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::ApiKey;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message, StrBytes};
use std::sync::Arc;
use thiserror::Error;

/// What a handler needs besides its request: the broker, the advertised address, and who
/// is asking (cheap to clone: it is cloned per connection and per request).
#[derive(Debug, Clone)]
pub struct ApiContext {
    pub broker: Arc<Broker>,
    /// The address clients are told to connect to (port resolved after binding).
    pub advertised_host: Arc<str>,
    pub advertised_port: i32,
    /// The peer, as Kafka reports it (`/127.0.0.1`).
    pub client_host: Arc<str>,
    /// The request header's client id.
    pub client_id: StrBytes,
}

impl ApiContext {
    pub fn new(broker: Arc<Broker>, advertised_host: &str, advertised_port: i32) -> Self {
        Self {
            broker,
            advertised_host: Arc::from(advertised_host),
            advertised_port,
            client_host: Arc::from(""),
            client_id: StrBytes::default(),
        }
    }

    /// This context for a connection from `peer`.
    pub fn for_peer(&self, peer: std::net::SocketAddr) -> Self {
        Self {
            client_host: Arc::from(format!("/{}", peer.ip()).as_str()),
            ..self.clone()
        }
    }

    /// This context for one request.
    pub fn for_client(&self, client_id: Option<StrBytes>) -> Self {
        Self {
            client_id: client_id.unwrap_or_default(),
            ..self.clone()
        }
    }
}

/// A request that cannot be answered: the connection is closed with one log line.
#[derive(Debug, Error)]
pub enum DispatchError {
    #[error("unknown API key {0}")]
    UnknownApiKey(i16),
    #[error("unsupported version {version} of {api:?}")]
    UnsupportedVersion { api: ApiKey, version: i16 },
    #[error("cannot decode {api:?} v{version}: {reason}")]
    Decode {
        api: ApiKey,
        version: i16,
        reason: String,
    },
    #[error("cannot encode response to {api:?} v{version}: {reason}")]
    Encode {
        api: ApiKey,
        version: i16,
        reason: String,
    },
}

/// Declares the supported APIs once: the version table and the dispatcher come from it.
macro_rules! api_table {
    ($( $key:ident => $module:ident, $request:ty ),* $(,)?) => {
        /// Every supported API with the versions `kafka-protocol` decodes for it.
        pub fn supported_apis() -> Vec<(ApiKey, i16, i16)> {
            vec![$( (ApiKey::$key, <$request as Message>::VERSIONS.min, <$request as Message>::VERSIONS.max) ),*]
        }

        /// Decodes the body, runs the handler and encodes the response body. `Ok(None)` means
        /// the API sends no response (produce with acks=0).
        pub async fn dispatch(ctx: &ApiContext, api: ApiKey, version: i16, mut body: Bytes) -> Result<Option<(BytesMut, i16)>, DispatchError> {
            match api {
                $(
                    ApiKey::$key => {
                        let range = <$request as Message>::VERSIONS;
                        if version < range.min || version > range.max {
                            return Err(DispatchError::UnsupportedVersion { api, version });
                        }
                        let request = <$request as Decodable>::decode(&mut body, version)
                            .map_err(|e| DispatchError::Decode { api, version, reason: e.to_string() })?;
                        let Some(response) = $module::handle(ctx, request, version).await else {
                            return Ok(None);
                        };
                        encode_body(&response, api, version).map(Some)
                    }
                )*
                other => Err(DispatchError::UnknownApiKey(other as i16)),
            }
        }
    };
}

use kafka_protocol::messages as m;

api_table! {
    Produce => produce, m::ProduceRequest,
    Fetch => fetch, m::FetchRequest,
    ListOffsets => list_offsets, m::ListOffsetsRequest,
    Metadata => metadata, m::MetadataRequest,
    ApiVersions => api_versions, m::ApiVersionsRequest,
    CreateTopics => create_topics, m::CreateTopicsRequest,
    DeleteTopics => delete_topics, m::DeleteTopicsRequest,
    DeleteRecords => delete_records, m::DeleteRecordsRequest,
    DescribeConfigs => describe_configs, m::DescribeConfigsRequest,
    AlterConfigs => alter_configs, m::AlterConfigsRequest,
    CreatePartitions => create_partitions, m::CreatePartitionsRequest,
    IncrementalAlterConfigs => incremental_alter_configs, m::IncrementalAlterConfigsRequest,
    DescribeCluster => describe_cluster, m::DescribeClusterRequest,
    FindCoordinator => find_coordinator, m::FindCoordinatorRequest,
    JoinGroup => join_group, m::JoinGroupRequest,
    SyncGroup => sync_group, m::SyncGroupRequest,
    Heartbeat => heartbeat, m::HeartbeatRequest,
    LeaveGroup => leave_group, m::LeaveGroupRequest,
    OffsetCommit => offset_commit, m::OffsetCommitRequest,
    OffsetFetch => offset_fetch, m::OffsetFetchRequest,
    ListGroups => list_groups, m::ListGroupsRequest,
    DescribeGroups => describe_groups, m::DescribeGroupsRequest,
    DeleteGroups => delete_groups, m::DeleteGroupsRequest,
    OffsetDelete => offset_delete, m::OffsetDeleteRequest,
    ConsumerGroupHeartbeat => consumer_group_heartbeat, m::ConsumerGroupHeartbeatRequest,
    ConsumerGroupDescribe => consumer_group_describe, m::ConsumerGroupDescribeRequest,
    InitProducerId => init_producer_id, m::InitProducerIdRequest,
}

/// Encodes a response body and returns it with its response header version.
fn encode_body<R: Encodable + HeaderVersion>(
    response: &R,
    api: ApiKey,
    version: i16,
) -> Result<(BytesMut, i16), DispatchError> {
    let mut buf = BytesMut::new();
    response
        .encode(&mut buf, version)
        .map_err(|e| DispatchError::Encode {
            api,
            version,
            reason: e.to_string(),
        })?;
    Ok((buf, R::header_version(version)))
}

/// `&str` to the wire's string type.
pub(crate) fn wire_str(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// Kafka's ACL operation codes, for the authorized-operations bitfields (no authorizer: all
/// operations are allowed).
pub(crate) fn authorized_operations(ops: &[i8]) -> i32 {
    ops.iter().fold(0, |acc, op| acc | (1 << op))
}

/// READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS.
pub(crate) const TOPIC_OPERATIONS: &[i8] = &[3, 4, 5, 6, 7, 8, 10, 11];
/// CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE,
/// CREATE_TOKENS, DESCRIBE_TOKENS.
pub(crate) const CLUSTER_OPERATIONS: &[i8] = &[5, 7, 8, 9, 10, 11, 12, 13, 14];
/// The "not requested" value of an authorized-operations field.
pub(crate) const OPERATIONS_NOT_REQUESTED: i32 = i32::MIN;

#[cfg(test)]
mod tests {
    //! Every advertised API at every advertised version, through the real dispatcher: requests
    //! that reach the success and the error paths must encode a response. This is what keeps
    //! ApiVersions truthful.
    use super::*;
    use crate::broker::NewTopic;
    use crate::config::BrokerConfig;
    use crate::types::TopicPartition;
    use kafka_protocol::messages::*;
    use kafka_protocol::protocol::StrBytes;

    fn s(text: &str) -> StrBytes {
        StrBytes::from_string(text.to_string())
    }
    fn topic_name(text: &str) -> TopicName {
        TopicName(s(text))
    }

    fn context(dir: &std::path::Path) -> ApiContext {
        let config =
            BrokerConfig::with_overrides(&[("log.dirs", &dir.display().to_string())]).unwrap();
        let broker = Arc::new(Broker::open(config).unwrap());
        let topic = NewTopic {
            name: "t".into(),
            partitions: 2,
            replication_factor: 1,
            assignments: vec![],
            configs: Default::default(),
        };
        broker.create_topic(topic, false).unwrap();
        let batch = crate::record::test_support::batch(0, 3, 1_000, 10);
        broker
            .replicas()
            .get(&TopicPartition::new("t", 0))
            .unwrap()
            .append(&batch, 1)
            .unwrap();
        ApiContext::new(broker, "127.0.0.1", 9092)
    }

    fn encode<R: Encodable>(request: &R, version: i16, what: &str) -> Bytes {
        let mut buf = BytesMut::new();
        request
            .encode(&mut buf, version)
            .unwrap_or_else(|e| panic!("building {what} v{version}: {e}"));
        buf.freeze()
    }

    fn request(ctx: &ApiContext, api: ApiKey, v: i16) -> Bytes {
        let topic_id = ctx.broker.topic("t").unwrap().id;
        match api {
            ApiKey::Produce => {
                let records = Bytes::from(crate::record::test_support::batch(0, 2, 5, 10).to_vec());
                let partitions = vec![
                    produce_request::PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(records.clone())),
                    produce_request::PartitionProduceData::default()
                        .with_index(9)
                        .with_records(Some(records)),
                ];
                let mut topic =
                    produce_request::TopicProduceData::default().with_partition_data(partitions);
                topic = if v >= 13 {
                    topic.with_topic_id(topic_id)
                } else {
                    topic.with_name(topic_name("t"))
                };
                encode(
                    &ProduceRequest::default()
                        .with_acks(1)
                        .with_timeout_ms(1000)
                        .with_topic_data(vec![topic]),
                    v,
                    "produce",
                )
            }
            ApiKey::Fetch => {
                let partitions = vec![
                    fetch_request::FetchPartition::default()
                        .with_partition(0)
                        .with_fetch_offset(0)
                        .with_partition_max_bytes(1 << 20),
                    fetch_request::FetchPartition::default()
                        .with_partition(1)
                        .with_fetch_offset(99)
                        .with_partition_max_bytes(1 << 20),
                ];
                let mut topic = fetch_request::FetchTopic::default().with_partitions(partitions);
                topic = if v >= 13 {
                    topic.with_topic_id(topic_id)
                } else {
                    topic.with_topic(topic_name("t"))
                };
                let mut request = FetchRequest::default()
                    .with_replica_id(BrokerId(-1))
                    .with_max_wait_ms(0)
                    .with_min_bytes(0)
                    .with_max_bytes(1 << 20)
                    .with_topics(vec![topic]);
                if v >= 4 {
                    request = request.with_isolation_level(1);
                }
                if v >= 7 {
                    request = request.with_session_epoch(-1);
                }
                encode(&request, v, "fetch")
            }
            ApiKey::ListOffsets => {
                let mut partitions = vec![
                    list_offsets_request::ListOffsetsPartition::default()
                        .with_partition_index(0)
                        .with_timestamp(-1),
                    list_offsets_request::ListOffsetsPartition::default()
                        .with_partition_index(1)
                        .with_timestamp(0),
                    list_offsets_request::ListOffsetsPartition::default()
                        .with_partition_index(9)
                        .with_timestamp(-2),
                ];
                if v >= 7 {
                    partitions.push(
                        list_offsets_request::ListOffsetsPartition::default()
                            .with_partition_index(0)
                            .with_timestamp(-3),
                    );
                }
                let topic = list_offsets_request::ListOffsetsTopic::default()
                    .with_name(topic_name("t"))
                    .with_partitions(partitions);
                encode(
                    &ListOffsetsRequest::default()
                        .with_replica_id(BrokerId(-1))
                        .with_topics(vec![topic]),
                    v,
                    "list_offsets",
                )
            }
            ApiKey::Metadata => {
                let topics = ["t", "missing"]
                    .iter()
                    .map(|n| {
                        metadata_request::MetadataRequestTopic::default()
                            .with_name(Some(topic_name(n)))
                    })
                    .collect();
                let mut request = MetadataRequest::default().with_topics(Some(topics));
                if (8..=10).contains(&v) {
                    request = request.with_include_cluster_authorized_operations(true);
                }
                if v >= 8 {
                    request = request.with_include_topic_authorized_operations(true);
                }
                encode(&request, v, "metadata")
            }
            ApiKey::ApiVersions => {
                let mut request = ApiVersionsRequest::default();
                if v >= 3 {
                    request = request
                        .with_client_software_name(s("test"))
                        .with_client_software_version(s("1.0"));
                }
                encode(&request, v, "api_versions")
            }
            ApiKey::CreateTopics => {
                let config = create_topics_request::CreatableTopicConfig::default()
                    .with_name(s("retention.ms"))
                    .with_value(Some(s("1000")));
                let topics = vec![
                    create_topics_request::CreatableTopic::default()
                        .with_name(topic_name(&format!("new-{v}")))
                        .with_num_partitions(1)
                        .with_replication_factor(1)
                        .with_configs(vec![config]),
                    create_topics_request::CreatableTopic::default()
                        .with_name(topic_name("t"))
                        .with_num_partitions(1)
                        .with_replication_factor(1),
                ];
                encode(
                    &CreateTopicsRequest::default()
                        .with_topics(topics)
                        .with_timeout_ms(1000),
                    v,
                    "create_topics",
                )
            }
            ApiKey::DeleteTopics => {
                let request = if v >= 6 {
                    DeleteTopicsRequest::default().with_topics(vec![
                        delete_topics_request::DeleteTopicState::default()
                            .with_name(Some(topic_name("nope"))),
                    ])
                } else {
                    DeleteTopicsRequest::default().with_topic_names(vec![topic_name("nope")])
                };
                encode(&request, v, "delete_topics")
            }
            ApiKey::DeleteRecords => {
                let partitions = vec![
                    delete_records_request::DeleteRecordsPartition::default()
                        .with_partition_index(0)
                        .with_offset(1),
                    delete_records_request::DeleteRecordsPartition::default()
                        .with_partition_index(9)
                        .with_offset(0),
                ];
                let topic = delete_records_request::DeleteRecordsTopic::default()
                    .with_name(topic_name("t"))
                    .with_partitions(partitions);
                encode(
                    &DeleteRecordsRequest::default().with_topics(vec![topic]),
                    v,
                    "delete_records",
                )
            }
            ApiKey::DescribeConfigs => {
                let resources = vec![
                    describe_configs_request::DescribeConfigsResource::default()
                        .with_resource_type(2)
                        .with_resource_name(s("t"))
                        .with_configuration_keys(None),
                    describe_configs_request::DescribeConfigsResource::default()
                        .with_resource_type(4)
                        .with_resource_name(s("1"))
                        .with_configuration_keys(None),
                    describe_configs_request::DescribeConfigsResource::default()
                        .with_resource_type(2)
                        .with_resource_name(s("missing"))
                        .with_configuration_keys(None),
                ];
                let mut request = DescribeConfigsRequest::default()
                    .with_resources(resources)
                    .with_include_synonyms(true);
                if v >= 3 {
                    request = request.with_include_documentation(true);
                }
                encode(&request, v, "describe_configs")
            }
            ApiKey::AlterConfigs => {
                let config = alter_configs_request::AlterableConfig::default()
                    .with_name(s("retention.ms"))
                    .with_value(Some(s("5000")));
                let resources = vec![
                    alter_configs_request::AlterConfigsResource::default()
                        .with_resource_type(2)
                        .with_resource_name(s("t"))
                        .with_configs(vec![config]),
                    alter_configs_request::AlterConfigsResource::default()
                        .with_resource_type(4)
                        .with_resource_name(s("1")),
                ];
                encode(
                    &AlterConfigsRequest::default().with_resources(resources),
                    v,
                    "alter_configs",
                )
            }
            ApiKey::IncrementalAlterConfigs => {
                let config = incremental_alter_configs_request::AlterableConfig::default()
                    .with_name(s("retention.ms"))
                    .with_config_operation(0)
                    .with_value(Some(s("6000")));
                let resources = vec![
                    incremental_alter_configs_request::AlterConfigsResource::default()
                        .with_resource_type(2)
                        .with_resource_name(s("t"))
                        .with_configs(vec![config]),
                ];
                encode(
                    &IncrementalAlterConfigsRequest::default().with_resources(resources),
                    v,
                    "incremental_alter_configs",
                )
            }
            ApiKey::CreatePartitions => {
                let topics = vec![
                    create_partitions_request::CreatePartitionsTopic::default()
                        .with_name(topic_name("t"))
                        .with_count(1),
                    create_partitions_request::CreatePartitionsTopic::default()
                        .with_name(topic_name("missing"))
                        .with_count(3),
                ];
                encode(
                    &CreatePartitionsRequest::default().with_topics(topics),
                    v,
                    "create_partitions",
                )
            }
            ApiKey::DescribeCluster => encode(
                &DescribeClusterRequest::default().with_include_cluster_authorized_operations(true),
                v,
                "describe_cluster",
            ),
            ApiKey::FindCoordinator => {
                let request = if v >= 4 {
                    FindCoordinatorRequest::default().with_coordinator_keys(vec![s("g"), s("t-id")])
                } else {
                    FindCoordinatorRequest::default().with_key(s("g"))
                };
                encode(&request, v, "find_coordinator")
            }
            ApiKey::JoinGroup => {
                // Unknown member of an unknown group: answered at once (MEMBER_ID_REQUIRED from v4,
                // else parked; a bad session timeout keeps it immediate for every version).
                let protocol = join_group_request::JoinGroupRequestProtocol::default()
                    .with_name(s("range"))
                    .with_metadata(Bytes::from_static(b"m"));
                let mut request = JoinGroupRequest::default()
                    .with_group_id(GroupId(s("g")))
                    .with_session_timeout_ms(1)
                    .with_protocol_type(s("consumer"))
                    .with_protocols(vec![protocol]);
                if v >= 1 {
                    request = request.with_rebalance_timeout_ms(1000);
                }
                encode(&request, v, "join_group")
            }
            ApiKey::SyncGroup => {
                let mut request = SyncGroupRequest::default()
                    .with_group_id(GroupId(s("g")))
                    .with_generation_id(1)
                    .with_member_id(s("nobody"));
                if v >= 5 {
                    request = request
                        .with_protocol_type(Some(s("consumer")))
                        .with_protocol_name(Some(s("range")));
                }
                encode(&request, v, "sync_group")
            }
            ApiKey::Heartbeat => encode(
                &HeartbeatRequest::default()
                    .with_group_id(GroupId(s("g")))
                    .with_generation_id(1)
                    .with_member_id(s("nobody")),
                v,
                "heartbeat",
            ),
            ApiKey::LeaveGroup => {
                let request = if v >= 3 {
                    LeaveGroupRequest::default()
                        .with_group_id(GroupId(s("simple")))
                        .with_members(vec![
                            leave_group_request::MemberIdentity::default()
                                .with_member_id(s("nobody")),
                        ])
                } else {
                    LeaveGroupRequest::default()
                        .with_group_id(GroupId(s("simple")))
                        .with_member_id(s("nobody"))
                };
                encode(&request, v, "leave_group")
            }
            ApiKey::OffsetCommit => {
                let partition = offset_commit_request::OffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(2)
                    .with_committed_metadata(Some(s("meta")));
                let mut topic = offset_commit_request::OffsetCommitRequestTopic::default()
                    .with_partitions(vec![partition]);
                topic = topic.with_name(topic_name("t"));
                encode(
                    &OffsetCommitRequest::default()
                        .with_group_id(GroupId(s("simple")))
                        .with_generation_id_or_member_epoch(-1)
                        .with_topics(vec![topic]),
                    v,
                    "offset_commit",
                )
            }
            ApiKey::OffsetFetch => {
                let request = if v >= 8 {
                    let topic = offset_fetch_request::OffsetFetchRequestTopics::default()
                        .with_name(topic_name("t"))
                        .with_partition_indexes(vec![0, 1]);
                    OffsetFetchRequest::default().with_groups(vec![
                        offset_fetch_request::OffsetFetchRequestGroup::default()
                            .with_group_id(GroupId(s("simple")))
                            .with_topics(Some(vec![topic])),
                        offset_fetch_request::OffsetFetchRequestGroup::default()
                            .with_group_id(GroupId(s("simple")))
                            .with_topics(None),
                    ])
                } else {
                    let topic = offset_fetch_request::OffsetFetchRequestTopic::default()
                        .with_name(topic_name("t"))
                        .with_partition_indexes(vec![0, 1]);
                    OffsetFetchRequest::default()
                        .with_group_id(GroupId(s("simple")))
                        .with_topics(Some(vec![topic]))
                };
                encode(&request, v, "offset_fetch")
            }
            ApiKey::ListGroups => encode(&ListGroupsRequest::default(), v, "list_groups"),
            ApiKey::DescribeGroups => encode(
                &DescribeGroupsRequest::default()
                    .with_groups(vec![GroupId(s("simple")), GroupId(s("missing"))]),
                v,
                "describe_groups",
            ),
            ApiKey::DeleteGroups => encode(
                &DeleteGroupsRequest::default().with_groups_names(vec![GroupId(s("missing"))]),
                v,
                "delete_groups",
            ),
            ApiKey::OffsetDelete => {
                let topic = offset_delete_request::OffsetDeleteRequestTopic::default()
                    .with_name(topic_name("t"))
                    .with_partitions(vec![
                        offset_delete_request::OffsetDeleteRequestPartition::default()
                            .with_partition_index(0),
                    ]);
                encode(
                    &OffsetDeleteRequest::default()
                        .with_group_id(GroupId(s("simple")))
                        .with_topics(vec![topic]),
                    v,
                    "offset_delete",
                )
            }
            ApiKey::ConsumerGroupHeartbeat => {
                let request = ConsumerGroupHeartbeatRequest::default()
                    .with_group_id(GroupId(s(&format!("kip848-{v}"))))
                    .with_member_id(s(&format!("member-{v}")))
                    .with_member_epoch(0)
                    .with_rebalance_timeout_ms(5000)
                    .with_subscribed_topic_names(Some(vec![topic_name("t")]))
                    .with_topic_partitions(Some(vec![]));
                encode(&request, v, "consumer_group_heartbeat")
            }
            ApiKey::ConsumerGroupDescribe => encode(
                &ConsumerGroupDescribeRequest::default()
                    .with_group_ids(vec![GroupId(s("kip848-0")), GroupId(s("simple"))]),
                v,
                "consumer_group_describe",
            ),
            ApiKey::InitProducerId => {
                let mut request = InitProducerIdRequest::default()
                    .with_transactional_id(None)
                    .with_transaction_timeout_ms(60_000);
                if v >= 3 {
                    request = request
                        .with_producer_id(ProducerId(-1))
                        .with_producer_epoch(-1);
                }
                encode(&request, v, "init_producer_id")
            }
            other => panic!("no test request for {other:?}: add one when adding the API"),
        }
    }

    /// The README's compatibility table states exactly the advertised version ranges.
    #[test]
    fn readme_table_matches_the_dispatch_table() {
        let readme = include_str!("../../README.md");
        for (api, min, max) in supported_apis() {
            let row = format!("| {api:?} ({}) | {min}–{max} |", api as i16);
            assert!(readme.contains(&row), "README row missing or wrong: {row}");
        }
        let rows = readme
            .lines()
            .filter(|l| l.starts_with("| ") && l.contains(") | ") && l.contains('–'))
            .count();
        assert_eq!(
            rows,
            supported_apis().len(),
            "README lists an API that is not dispatched"
        );
    }

    #[tokio::test]
    async fn every_advertised_version_answers() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        for (api, min, max) in supported_apis() {
            for version in min..=max {
                let body = request(&ctx, api, version);
                match dispatch(&ctx, api, version, body).await {
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("{api:?} v{version}: no response"),
                    Err(e) => panic!("{api:?} v{version}: {e}"),
                }
            }
        }
    }
}
