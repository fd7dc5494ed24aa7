//! The dispatch table: each supported API with its version range and authorization gate, in
//! one list per listener (clients, controller). ApiVersions is generated from the same list,
//! so it cannot advertise an API or version that is not dispatched here. A request is decoded,
//! gated ([`super::authorize`]), handled by its API's file, and its response encoded as one
//! frame.

use super::ApiContext;
use super::frame::ResponseFrame;
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, ResponseHeader};
use kafka_protocol::protocol::types::with_decode_budget;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message};
use thiserror::Error;

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
    /// An API the authorizer has no checks for yet, while an authorizer is configured.
    #[error("{0:?} is not served while an authorizer is configured (its checks are not built)")]
    Unauthorizable(ApiKey),
    #[error("{0}")]
    Refused(String),
}

/// `socket.request.max.bytes`'s default, for requests decoded without a broker's
/// configuration (the fuzz targets).
const DEFAULT_SOCKET_REQUEST_MAX_BYTES: usize = 100 * 1024 * 1024;

/// Declares the supported APIs once: the version table and the dispatcher come from it.
macro_rules! api_table {
    ($apis:ident, $covered:ident, $dispatch:ident, $decode:ident; $( $key:ident => $module:ident, $request:ty, $gate:ident ),* $(,)?) => {
        /// Every supported API with the versions `kafka-protocol` decodes for it.
        pub fn $apis() -> Vec<(ApiKey, i16, i16)> {
            vec![$( (ApiKey::$key, <$request as Message>::VERSIONS.min, <$request as Message>::VERSIONS.max) ),*]
        }

        /// Whether `authorize` checks this API (one that is not is refused while an
        /// authorizer is configured).
        pub fn $covered(api: ApiKey) -> bool {
            match api {
                $( ApiKey::$key => stringify!($gate) != "uncovered", )*
                _ => false,
            }
        }

        /// Decodes a request body as the dispatcher would, without handling it (the fuzz
        /// targets' way in: decoding must refuse bad input, never abort).
        pub fn $decode(api: ApiKey, version: i16, mut body: Bytes) -> Result<(), DispatchError> {
            match api {
                $(
                    ApiKey::$key => {
                        let range = <$request as Message>::VERSIONS;
                        if version < range.min || version > range.max {
                            return Err(DispatchError::UnsupportedVersion { api, version });
                        }
                        with_decode_budget(super::context::decode_budget(DEFAULT_SOCKET_REQUEST_MAX_BYTES), || <$request as Decodable>::decode(&mut body, version))
                            .map(drop)
                            .map_err(|e| DispatchError::Decode { api, version, reason: e.to_string() })
                    }
                )*
                other => Err(DispatchError::UnknownApiKey(other as i16)),
            }
        }

        /// Decodes the body, runs the handler and encodes the complete response frame (size,
        /// header with `correlation_id`, body). `Ok(None)` means the API sends no response
        /// (produce with acks=0).
        pub async fn $dispatch(ctx: &ApiContext, api: ApiKey, version: i16, correlation_id: i32, mut body: Bytes) -> Result<Option<ResponseFrame>, DispatchError> {
            match api {
                $(
                    ApiKey::$key => {
                        let range = <$request as Message>::VERSIONS;
                        if version < range.min || version > range.max {
                            return Err(DispatchError::UnsupportedVersion { api, version });
                        }
                        if ctx.authorizer.is_some() && !$covered(api) {
                            return Err(DispatchError::Unauthorizable(api));
                        }
                        let request = with_decode_budget(ctx.decode_budget, || <$request as Decodable>::decode(&mut body, version))
                            .map_err(|e| DispatchError::Decode { api, version, reason: e.to_string() })?;
                        let (request, merge) = match super::authorize::$gate(ctx, request, version) {
                            super::authorize::Gate::Pass(request, merge) => (request, merge),
                            super::authorize::Gate::Refuse(response) => {
                                return frame_of(response, api, version, correlation_id).map(Some);
                            }
                            super::authorize::Gate::Close(reason) => return Err(DispatchError::Refused(reason)),
                        };
                        let started = std::time::Instant::now();
                        let Some(response) = super::$module::handle(ctx, request, version).await else {
                            return Ok(None);
                        };
                        let mut response = match merge {
                            Some(merge) => merge(response),
                            None => response,
                        };
                        let handling = started
                            .elapsed()
                            .saturating_sub(crate::stats::requests::remote_so_far());
                        super::throttle::apply(ctx, handling, &mut response);
                        count_errors(ctx, api, &response);
                        response.into_frame(api, version, correlation_id).map(Some)
                    }
                )*
                other => Err(DispatchError::UnknownApiKey(other as i16)),
            }
        }
    };
}

use kafka_protocol::messages as m;

api_table! {
    supported_apis, authorized_api, dispatch, decode_request;
    Produce => produce, m::ProduceRequest, produce,
    Fetch => fetch, m::FetchRequest, fetch,
    ListOffsets => list_offsets, m::ListOffsetsRequest, list_offsets,
    OffsetForLeaderEpoch => offset_for_leader_epoch, m::OffsetForLeaderEpochRequest, offset_for_leader_epoch,
    Metadata => metadata, m::MetadataRequest, metadata,
    ApiVersions => api_versions, m::ApiVersionsRequest, none,
    SaslHandshake => sasl_handshake, m::SaslHandshakeRequest, none,
    SaslAuthenticate => sasl_authenticate, m::SaslAuthenticateRequest, none,
    CreateTopics => create_topics, m::CreateTopicsRequest, create_topics,
    DeleteTopics => delete_topics, m::DeleteTopicsRequest, delete_topics,
    DeleteRecords => delete_records, m::DeleteRecordsRequest, delete_records,
    DescribeConfigs => describe_configs, m::DescribeConfigsRequest, describe_configs,
    AlterConfigs => alter_configs, m::AlterConfigsRequest, alter_configs,
    CreatePartitions => create_partitions, m::CreatePartitionsRequest, create_partitions,
    IncrementalAlterConfigs => incremental_alter_configs, m::IncrementalAlterConfigsRequest, incremental_alter_configs,
    DescribeCluster => describe_cluster, m::DescribeClusterRequest, describe_cluster,
    UnregisterBroker => unregister_broker, m::UnregisterBrokerRequest, unregister_broker,
    UnregisterController => unregister_controller, m::UnregisterControllerRequest, unregister_controller,
    DescribeQuorum => describe_quorum, m::DescribeQuorumRequest, describe_quorum,
    AddRaftVoter => add_raft_voter, m::AddRaftVoterRequest, add_raft_voter,
    RemoveRaftVoter => remove_raft_voter, m::RemoveRaftVoterRequest, remove_raft_voter,
    FindCoordinator => find_coordinator, m::FindCoordinatorRequest, find_coordinator,
    JoinGroup => join_group, m::JoinGroupRequest, join_group,
    SyncGroup => sync_group, m::SyncGroupRequest, sync_group,
    Heartbeat => heartbeat, m::HeartbeatRequest, heartbeat,
    LeaveGroup => leave_group, m::LeaveGroupRequest, leave_group,
    OffsetCommit => offset_commit, m::OffsetCommitRequest, offset_commit,
    OffsetFetch => offset_fetch, m::OffsetFetchRequest, offset_fetch,
    ListGroups => list_groups, m::ListGroupsRequest, list_groups,
    DescribeGroups => describe_groups, m::DescribeGroupsRequest, describe_groups,
    DeleteGroups => delete_groups, m::DeleteGroupsRequest, delete_groups,
    OffsetDelete => offset_delete, m::OffsetDeleteRequest, offset_delete,
    ConsumerGroupHeartbeat => consumer_group_heartbeat, m::ConsumerGroupHeartbeatRequest, consumer_group_heartbeat,
    ConsumerGroupDescribe => consumer_group_describe, m::ConsumerGroupDescribeRequest, consumer_group_describe,
    InitProducerId => init_producer_id, m::InitProducerIdRequest, init_producer_id,
    AddPartitionsToTxn => add_partitions_to_txn, m::AddPartitionsToTxnRequest, add_partitions_to_txn,
    AddOffsetsToTxn => add_offsets_to_txn, m::AddOffsetsToTxnRequest, add_offsets_to_txn,
    EndTxn => end_txn, m::EndTxnRequest, end_txn,
    TxnOffsetCommit => txn_offset_commit, m::TxnOffsetCommitRequest, txn_offset_commit,
    WriteTxnMarkers => write_txn_markers, m::WriteTxnMarkersRequest, write_txn_markers,
    DescribeProducers => describe_producers, m::DescribeProducersRequest, describe_producers,
    DescribeTransactions => describe_transactions, m::DescribeTransactionsRequest, describe_transactions,
    ListTransactions => list_transactions, m::ListTransactionsRequest, list_transactions,
    DescribeLogDirs => describe_log_dirs, m::DescribeLogDirsRequest, describe_log_dirs,
    AlterReplicaLogDirs => alter_replica_log_dirs, m::AlterReplicaLogDirsRequest, alter_replica_log_dirs,
    ElectLeaders => elect_leaders, m::ElectLeadersRequest, elect_leaders,
    AlterPartitionReassignments => alter_partition_reassignments, m::AlterPartitionReassignmentsRequest, alter_partition_reassignments,
    ListPartitionReassignments => list_partition_reassignments, m::ListPartitionReassignmentsRequest, list_partition_reassignments,
    DescribeTopicPartitions => describe_topic_partitions, m::DescribeTopicPartitionsRequest, describe_topic_partitions,
    ListConfigResources => list_config_resources, m::ListConfigResourcesRequest, list_config_resources,
    ShareGroupHeartbeat => share_group_heartbeat, m::ShareGroupHeartbeatRequest, share_group_heartbeat,
    ShareGroupDescribe => share_group_describe, m::ShareGroupDescribeRequest, share_group_describe,
    StreamsGroupHeartbeat => streams_group_heartbeat, m::StreamsGroupHeartbeatRequest, streams_group_heartbeat,
    StreamsGroupDescribe => streams_group_describe, m::StreamsGroupDescribeRequest, streams_group_describe,
    StreamsGroupTopologyDescriptionUpdate => streams_group_topology_description_update, m::StreamsGroupTopologyDescriptionUpdateRequest, streams_group_topology_description_update,
    ShareFetch => share_fetch, m::ShareFetchRequest, share_fetch,
    ShareAcknowledge => share_acknowledge, m::ShareAcknowledgeRequest, share_acknowledge,
    DescribeShareGroupOffsets => describe_share_group_offsets, m::DescribeShareGroupOffsetsRequest, describe_share_group_offsets,
    AlterShareGroupOffsets => alter_share_group_offsets, m::AlterShareGroupOffsetsRequest, alter_share_group_offsets,
    DeleteShareGroupOffsets => delete_share_group_offsets, m::DeleteShareGroupOffsetsRequest, delete_share_group_offsets,
    InitializeShareGroupState => initialize_share_group_state, m::InitializeShareGroupStateRequest, initialize_share_group_state,
    ReadShareGroupState => read_share_group_state, m::ReadShareGroupStateRequest, read_share_group_state,
    WriteShareGroupState => write_share_group_state, m::WriteShareGroupStateRequest, write_share_group_state,
    DeleteShareGroupState => delete_share_group_state, m::DeleteShareGroupStateRequest, delete_share_group_state,
    ReadShareGroupStateSummary => read_share_group_state_summary, m::ReadShareGroupStateSummaryRequest, read_share_group_state_summary,
    DescribeUserScramCredentials => describe_user_scram_credentials, m::DescribeUserScramCredentialsRequest, describe_user_scram_credentials,
    AlterUserScramCredentials => alter_user_scram_credentials, m::AlterUserScramCredentialsRequest, alter_user_scram_credentials,
    DescribeClientQuotas => describe_client_quotas, m::DescribeClientQuotasRequest, describe_client_quotas,
    AlterClientQuotas => alter_client_quotas, m::AlterClientQuotasRequest, alter_client_quotas,
    UpdateFeatures => update_features, m::UpdateFeaturesRequest, update_features,
    CreateDelegationToken => create_delegation_token, m::CreateDelegationTokenRequest, create_delegation_token,
    RenewDelegationToken => renew_delegation_token, m::RenewDelegationTokenRequest, none,
    ExpireDelegationToken => expire_delegation_token, m::ExpireDelegationTokenRequest, none,
    DescribeDelegationToken => describe_delegation_token, m::DescribeDelegationTokenRequest, describe_delegation_token,
    CreateAcls => create_acls, m::CreateAclsRequest, create_acls,
    DescribeAcls => describe_acls, m::DescribeAclsRequest, describe_acls,
    DeleteAcls => delete_acls, m::DeleteAclsRequest, delete_acls,
}

// The controller listener: what brokers ask of the active controller, and the topic
// administration they forward to it.
api_table! {
    controller_apis, authorized_controller_api, dispatch_controller, decode_controller_request;
    ApiVersions => api_versions, m::ApiVersionsRequest, none,
    SaslHandshake => sasl_handshake, m::SaslHandshakeRequest, none,
    SaslAuthenticate => sasl_authenticate, m::SaslAuthenticateRequest, none,
    BrokerRegistration => broker_registration, m::BrokerRegistrationRequest, broker_registration,
    BrokerHeartbeat => broker_heartbeat, m::BrokerHeartbeatRequest, broker_heartbeat,
    UnregisterBroker => unregister_broker, m::UnregisterBrokerRequest, unregister_broker,
    UnregisterController => unregister_controller, m::UnregisterControllerRequest, unregister_controller,
    ControllerRegistration => controller_registration, m::ControllerRegistrationRequest, controller_registration,
    AssignReplicasToDirs => assign_replicas_to_dirs, m::AssignReplicasToDirsRequest, assign_replicas_to_dirs,
    AlterPartition => alter_partition, m::AlterPartitionRequest, alter_partition,
    AllocateProducerIds => allocate_producer_ids, m::AllocateProducerIdsRequest, allocate_producer_ids,
    CreateTopics => create_topics, m::CreateTopicsRequest, forwarded,
    DeleteTopics => delete_topics, m::DeleteTopicsRequest, forwarded,
    CreatePartitions => create_partitions, m::CreatePartitionsRequest, forwarded,
    AlterConfigs => alter_configs, m::AlterConfigsRequest, forwarded,
    ElectLeaders => elect_leaders, m::ElectLeadersRequest, forwarded,
    AlterPartitionReassignments => alter_partition_reassignments, m::AlterPartitionReassignmentsRequest, forwarded,
    AlterUserScramCredentials => alter_user_scram_credentials, m::AlterUserScramCredentialsRequest, forwarded,
    AlterClientQuotas => alter_client_quotas, m::AlterClientQuotasRequest, forwarded,
    UpdateFeatures => update_features, m::UpdateFeaturesRequest, forwarded,
    CreateDelegationToken => create_delegation_token, m::CreateDelegationTokenRequest, forwarded,
    RenewDelegationToken => renew_delegation_token, m::RenewDelegationTokenRequest, forwarded,
    ExpireDelegationToken => expire_delegation_token, m::ExpireDelegationTokenRequest, forwarded,
    CreateAcls => create_acls, m::CreateAclsRequest, forwarded,
    DeleteAcls => delete_acls, m::DeleteAclsRequest, forwarded,
    DescribeQuorum => describe_quorum, m::DescribeQuorumRequest, describe_quorum,
    AddRaftVoter => add_raft_voter, m::AddRaftVoterRequest, add_raft_voter,
    RemoveRaftVoter => remove_raft_voter, m::RemoveRaftVoterRequest, remove_raft_voter,
    UpdateRaftVoter => update_raft_voter, m::UpdateRaftVoterRequest, update_raft_voter,
    DescribeCluster => describe_cluster, m::DescribeClusterRequest, describe_cluster_controllers,
    Fetch => metadata_fetch, m::FetchRequest, forwarded,
    FetchSnapshot => fetch_snapshot, m::FetchSnapshotRequest, forwarded,
}

/// Counts the error codes of a response under its API's name, as Kafka's request metrics do.
fn count_errors<R: super::error_counts::ErrorCounts>(ctx: &ApiContext, api: ApiKey, response: &R) {
    if let Some(counts) = ctx.broker.stats().requests.slot(api as usize) {
        response.error_codes(&mut |code| counts.error(code, 1));
    }
}

/// `into_frame` as a function: its trait bound is checked once the response type is known
/// (a gate's refusal is typed by the handler's response, further down).
fn frame_of<R: IntoFrame>(
    response: R,
    api: ApiKey,
    version: i16,
    correlation_id: i32,
) -> Result<ResponseFrame, DispatchError> {
    response.into_frame(api, version, correlation_id)
}

/// Encodes a response as a complete frame: size, response header, body. The buffer is sized
/// up front and the body encoded in place, so a large fetch response is not copied again.
/// How a handler's answer becomes a response frame: encoded whole by `kafka-protocol`, except
/// for answers that carry file data (Fetch) and write themselves.
pub trait IntoFrame {
    fn into_frame(
        self,
        api: ApiKey,
        version: i16,
        correlation_id: i32,
    ) -> Result<ResponseFrame, DispatchError>;
}

impl<R: Encodable + HeaderVersion> IntoFrame for R {
    fn into_frame(
        self,
        api: ApiKey,
        version: i16,
        correlation_id: i32,
    ) -> Result<ResponseFrame, DispatchError> {
        encode_frame(&self, api, version, correlation_id).map(ResponseFrame::from)
    }
}

fn encode_frame<R: Encodable + HeaderVersion>(
    response: &R,
    api: ApiKey,
    version: i16,
    correlation_id: i32,
) -> Result<BytesMut, DispatchError> {
    // kafka-protocol reports encoding errors as `anyhow::Error`; only their text is kept.
    let failed = |e: anyhow::Error| DispatchError::Encode {
        api,
        version,
        reason: e.to_string(),
    };
    let header_version = R::header_version(version);
    let header = ResponseHeader::default().with_correlation_id(correlation_id);
    let header_size = header.compute_size(header_version).map_err(failed)?;
    let body_size = response.compute_size(version).map_err(failed)?;
    let mut buf = BytesMut::with_capacity(4 + header_size + body_size);
    buf.put_i32((header_size + body_size) as i32);
    header.encode(&mut buf, header_version).map_err(failed)?;
    response.encode(&mut buf, version).map_err(failed)?;
    Ok(buf)
}
