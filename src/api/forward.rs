//! The client side of the controller listener: a command for the active controller, sent as
//! the Kafka request another node's controller listener serves, and its response read back.
//! Broker lifecycle requests are built by their own API files; forwarded topic
//! administration (KRaft forwards it to the controller too) is built here.

use super::{
    add_raft_voter, allocate_producer_ids, alter_partition, assign_replicas_to_dirs,
    broker_heartbeat, broker_registration, controller_registration, describe_quorum,
    remove_raft_voter, unregister_broker, unregister_controller, update_raft_voter, wire_str,
};
use crate::controller::control::{Election, TopicRequest};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::net::{PeerConnection, RequestError};
use kafka_protocol::messages::create_partitions_request::{
    CreatePartitionsAssignment, CreatePartitionsTopic,
};
use kafka_protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::{
    AlterConfigsRequest, AlterConfigsResponse, ApiKey, BrokerId, CreatePartitionsRequest,
    CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest,
    DeleteTopicsResponse, ElectLeadersRequest, ElectLeadersResponse, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion};
use std::collections::BTreeMap;
use std::time::Duration;

/// Versions spoken to another Sluice node's controller listener (the newest it decodes).
/// The ACL APIs' version between nodes (flexible, with pattern types).
const ACL_VERSION: i16 = 3;
const CREATE_TOPICS_VERSION: i16 = 7;
const DELETE_TOPICS_VERSION: i16 = 6;
const CREATE_PARTITIONS_VERSION: i16 = 3;
const ALTER_CONFIGS_VERSION: i16 = 2;
const ELECT_LEADERS_VERSION: i16 = 2;
const REGISTRATION_VERSION: i16 = 4;
const HEARTBEAT_VERSION: i16 = 1;
const ALTER_PARTITION_VERSION: i16 = 3;
const DESCRIBE_QUORUM_VERSION: i16 = 2;
const ALTER_CLIENT_QUOTAS_VERSION: i16 = 1;
const UPDATE_FEATURES_VERSION: i16 = 2;
const CREATE_TOKEN_VERSION: i16 = 3;
const RENEW_TOKEN_VERSION: i16 = 2;
const EXPIRE_TOKEN_VERSION: i16 = 2;

/// The tagged field a forwarded delegation-token request names its requester in
/// (`Type:name`): Kafka forwards in an Envelope with the principal, which Sluice does not
/// build. Read only on the controller listener, which serves the cluster's own nodes only.
const REQUESTER_TAG: i32 = 10_000;

/// The requester a forwarding broker named (see [`REQUESTER_TAG`]).
pub fn forwarded_requester(
    fields: &std::collections::BTreeMap<i32, bytes::Bytes>,
) -> Option<String> {
    let bytes = fields.get(&REQUESTER_TAG)?;
    String::from_utf8(bytes.to_vec()).ok()
}

/// A renewed or expired token's answer from another node.
fn token_expiry(error_code: i16, expiry: i64) -> Result<ControllerReply, Error> {
    match Error::from_code(error_code, None) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::TokenExpiry(expiry)),
    }
}

fn requester_field(requester: &str) -> std::collections::BTreeMap<i32, bytes::Bytes> {
    [(
        REQUESTER_TAG,
        bytes::Bytes::copy_from_slice(requester.as_bytes()),
    )]
    .into()
}

/// A failed exchange: the node may have died or stopped leading; the caller finds the
/// active controller again and retries.
pub(super) fn unreachable(e: RequestError) -> Error {
    match &e {
        // A configuration problem, not a node that went away: worth seeing.
        RequestError::Authentication(..) => tracing::warn!(error = %e, "controller request failed"),
        _ => tracing::debug!(error = %e, "controller request failed"),
    }
    match e {
        RequestError::Timeout(..) => Error::RequestTimedOut,
        _ => Error::NotController,
    }
}

fn message(text: &Option<kafka_protocol::protocol::StrBytes>) -> Option<&str> {
    text.as_deref()
}

/// One request to the controller and its answer; a failure is NOT_CONTROLLER (or a timeout),
/// so the caller looks for the active controller again.
async fn exchange<Req, Resp>(
    connection: &mut PeerConnection,
    api: ApiKey,
    version: i16,
    request: &Req,
    timeout: Duration,
) -> Result<Resp, Error>
where
    Req: Encodable + HeaderVersion,
    Resp: Decodable + HeaderVersion,
{
    connection
        .request(api, version, request, timeout)
        .await
        .map_err(unreachable)
}

/// Sends `op` over `connection` and reads the answer.
pub async fn forward(
    connection: &mut PeerConnection,
    op: &ControllerOp,
    timeout: Duration,
) -> Result<ControllerReply, Error> {
    match op {
        ControllerOp::DescribeQuorum => {
            let request = describe_quorum::request_for();
            let response = exchange(
                connection,
                ApiKey::DescribeQuorum,
                DESCRIBE_QUORUM_VERSION,
                &request,
                timeout,
            )
            .await?;
            describe_quorum::reply_from(response)
        }
        ControllerOp::RegisterBroker(registration) => {
            let request = broker_registration::request_for(registration);
            let response = exchange(
                connection,
                ApiKey::BrokerRegistration,
                REGISTRATION_VERSION,
                &request,
                timeout,
            )
            .await?;
            broker_registration::reply_from(response)
        }
        ControllerOp::Heartbeat(heartbeat) => {
            let request = broker_heartbeat::request_for(heartbeat);
            let response = exchange(
                connection,
                ApiKey::BrokerHeartbeat,
                HEARTBEAT_VERSION,
                &request,
                timeout,
            )
            .await?;
            broker_heartbeat::reply_from(response)
        }
        ControllerOp::AddVoter(voter) => {
            let request = add_raft_voter::request_for(voter, None);
            // The leader waits for the new voter as long as the request says.
            let wait = timeout.max(Duration::from_millis(voter.timeout_ms.max(0) as u64));
            let response = exchange(connection, ApiKey::AddRaftVoter, 0, &request, wait).await?;
            add_raft_voter::reply_from(response)
        }
        ControllerOp::UpdateVoter(voter) => {
            let request = update_raft_voter::request_for(voter, None);
            let response =
                exchange(connection, ApiKey::UpdateRaftVoter, 0, &request, timeout).await?;
            update_raft_voter::reply_from(response)
        }
        ControllerOp::RemoveVoter { node, directory_id } => {
            let request = remove_raft_voter::request_for(*node, *directory_id);
            let response =
                exchange(connection, ApiKey::RemoveRaftVoter, 0, &request, timeout).await?;
            remove_raft_voter::reply_from(response)
        }
        ControllerOp::AssignReplicasToDirs {
            broker,
            broker_epoch,
            assignments,
        } => {
            let request = assign_replicas_to_dirs::request_for(*broker, *broker_epoch, assignments);
            let response = exchange(
                connection,
                ApiKey::AssignReplicasToDirs,
                0,
                &request,
                timeout,
            )
            .await?;
            assign_replicas_to_dirs::reply_from(response, assignments)
        }
        ControllerOp::UnregisterBroker(broker) => {
            let request = unregister_broker::request_for(*broker);
            let response =
                exchange(connection, ApiKey::UnregisterBroker, 0, &request, timeout).await?;
            unregister_broker::reply_from(response)
        }
        ControllerOp::UnregisterController(controller) => {
            let request = unregister_controller::request_for(*controller);
            let response = exchange(
                connection,
                ApiKey::UnregisterController,
                0,
                &request,
                timeout,
            )
            .await?;
            unregister_controller::reply_from(response)
        }
        ControllerOp::RegisterController(registration) => {
            let request = controller_registration::request_for(registration);
            let response = exchange(
                connection,
                ApiKey::ControllerRegistration,
                0,
                &request,
                timeout,
            )
            .await?;
            controller_registration::reply_from(response)
        }
        ControllerOp::AlterPartition(changes) => {
            let request = alter_partition::request_for(changes);
            let response = exchange(
                connection,
                ApiKey::AlterPartition,
                ALTER_PARTITION_VERSION,
                &request,
                timeout,
            )
            .await?;
            alter_partition::reply_from(response, changes)
        }
        ControllerOp::AllocateProducerIds {
            broker,
            broker_epoch,
        } => {
            let request = allocate_producer_ids::request_for(*broker, *broker_epoch);
            let response = exchange(
                connection,
                ApiKey::AllocateProducerIds,
                0,
                &request,
                timeout,
            )
            .await?;
            allocate_producer_ids::reply_from(response)
        }
        ControllerOp::CreateTopic {
            request,
            validate_only,
        } => create_topic(connection, request, *validate_only, timeout).await,
        ControllerOp::DeleteTopic(name) => {
            let request = DeleteTopicsRequest::default()
                .with_topics(vec![
                    DeleteTopicState::default().with_name(Some(TopicName(wire_str(name)))),
                ])
                .with_timeout_ms(timeout.as_millis() as i32);
            let response: DeleteTopicsResponse = exchange(
                connection,
                ApiKey::DeleteTopics,
                DELETE_TOPICS_VERSION,
                &request,
                timeout,
            )
            .await?;
            let result = response
                .responses
                .into_iter()
                .next()
                .ok_or_else(|| Error::InvalidRequest("DeleteTopics answered nothing".into()))?;
            match Error::from_code(result.error_code, message(&result.error_message)) {
                Some(e) => Err(e),
                None => Ok(ControllerReply::TopicDeleted(result.topic_id)),
            }
        }
        ControllerOp::CreatePartitions {
            name,
            count,
            assignments,
            validate_only,
        } => {
            let topic = CreatePartitionsTopic::default()
                .with_name(TopicName(wire_str(name)))
                .with_count(*count)
                .with_assignments(assignments.as_ref().map(|a| {
                    a.iter()
                        .map(|brokers| {
                            CreatePartitionsAssignment::default()
                                .with_broker_ids(brokers.iter().copied().map(BrokerId).collect())
                        })
                        .collect()
                }));
            let request = CreatePartitionsRequest::default()
                .with_topics(vec![topic])
                .with_timeout_ms(timeout.as_millis() as i32)
                .with_validate_only(*validate_only);
            let response: CreatePartitionsResponse = exchange(
                connection,
                ApiKey::CreatePartitions,
                CREATE_PARTITIONS_VERSION,
                &request,
                timeout,
            )
            .await?;
            let result =
                response.results.into_iter().next().ok_or_else(|| {
                    Error::InvalidRequest("CreatePartitions answered nothing".into())
                })?;
            match Error::from_code(result.error_code, message(&result.error_message)) {
                Some(e) => Err(e),
                None => Ok(ControllerReply::Done),
            }
        }
        ControllerOp::SetTopicConfigs {
            name,
            configs,
            validate_only,
        } => {
            let resource = super::describe_configs::RESOURCE_TOPIC;
            set_configs(connection, resource, name, configs, *validate_only, timeout).await
        }
        ControllerOp::AlterScramCredentials {
            upsertions,
            deletions,
        } => {
            use kafka_protocol::messages::alter_user_scram_credentials_request::{
                ScramCredentialDeletion, ScramCredentialUpsertion,
            };
            let request = kafka_protocol::messages::AlterUserScramCredentialsRequest::default()
                .with_deletions(
                    deletions
                        .iter()
                        .map(|(user, mechanism)| {
                            ScramCredentialDeletion::default()
                                .with_name(wire_str(user))
                                .with_mechanism(mechanism.type_id())
                        })
                        .collect(),
                )
                .with_upsertions(
                    upsertions
                        .iter()
                        .map(|u| {
                            ScramCredentialUpsertion::default()
                                .with_name(wire_str(&u.user))
                                .with_mechanism(u.mechanism.type_id())
                                .with_iterations(u.iterations)
                                .with_salt(u.salt.clone().into())
                                .with_salted_password(u.salted_password.clone().into())
                        })
                        .collect(),
                );
            let response: kafka_protocol::messages::AlterUserScramCredentialsResponse = exchange(
                connection,
                ApiKey::AlterUserScramCredentials,
                0,
                &request,
                timeout,
            )
            .await?;
            let mut missing = Vec::new();
            for result in response.results {
                if result.error_code == crate::error::code::RESOURCE_NOT_FOUND {
                    missing.push(result.user.to_string());
                } else if let Some(e) =
                    Error::from_code(result.error_code, message(&result.error_message))
                {
                    return Err(e);
                }
            }
            Ok(ControllerReply::ScramAltered { missing })
        }
        ControllerOp::AlterClientQuotas {
            alterations,
            validate_only,
        } => {
            use kafka_protocol::messages::alter_client_quotas_request::{
                EntityData, EntryData, OpData,
            };
            let request = kafka_protocol::messages::AlterClientQuotasRequest::default()
                .with_validate_only(*validate_only)
                .with_entries(
                    alterations
                        .iter()
                        .map(|a| {
                            EntryData::default()
                                .with_entity(
                                    a.entity
                                        .iter()
                                        .map(|(t, n)| {
                                            EntityData::default()
                                                .with_entity_type(wire_str(t))
                                                .with_entity_name(n.as_deref().map(wire_str))
                                        })
                                        .collect(),
                                )
                                .with_ops(
                                    a.ops
                                        .iter()
                                        .map(|(key, value)| {
                                            OpData::default()
                                                .with_key(wire_str(key))
                                                .with_value(value.unwrap_or(0.0))
                                                .with_remove(value.is_none())
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                );
            let response: kafka_protocol::messages::AlterClientQuotasResponse = exchange(
                connection,
                ApiKey::AlterClientQuotas,
                ALTER_CLIENT_QUOTAS_VERSION,
                &request,
                timeout,
            )
            .await?;
            let mut results = Vec::with_capacity(response.entries.len());
            for entry in response.entries {
                if entry.error_code == crate::error::code::INVALID_REQUEST {
                    let text = message(&entry.error_message).unwrap_or_default();
                    results.push(Err(text.to_string()));
                } else if let Some(e) =
                    Error::from_code(entry.error_code, message(&entry.error_message))
                {
                    return Err(e);
                } else {
                    results.push(Ok(()));
                }
            }
            Ok(ControllerReply::QuotasAltered(results))
        }
        ControllerOp::CreateAcls(acls) => {
            use kafka_protocol::messages::create_acls_request::AclCreation;
            let request = kafka_protocol::messages::CreateAclsRequest::default().with_creations(
                acls.iter()
                    .map(|acl| {
                        AclCreation::default()
                            .with_resource_type(acl.resource_type.id())
                            .with_resource_name(wire_str(&acl.resource_name))
                            .with_resource_pattern_type(acl.pattern_type.id())
                            .with_principal(wire_str(&acl.principal))
                            .with_host(wire_str(&acl.host))
                            .with_operation(acl.operation.id())
                            .with_permission_type(acl.permission.id())
                    })
                    .collect(),
            );
            let response: kafka_protocol::messages::CreateAclsResponse = exchange(
                connection,
                ApiKey::CreateAcls,
                ACL_VERSION,
                &request,
                timeout,
            )
            .await?;
            for result in response.results {
                if let Some(e) = Error::from_code(result.error_code, message(&result.error_message))
                {
                    return Err(e);
                }
            }
            Ok(ControllerReply::Done)
        }
        ControllerOp::DeleteAcls(filters) => {
            use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
            let request = kafka_protocol::messages::DeleteAclsRequest::default().with_filters(
                filters
                    .iter()
                    .map(|f| {
                        DeleteAclsFilter::default()
                            .with_resource_type_filter(f.resource_type.id())
                            .with_resource_name_filter(f.resource_name.as_deref().map(wire_str))
                            .with_pattern_type_filter(f.pattern_type.id())
                            .with_principal_filter(f.principal.as_deref().map(wire_str))
                            .with_host_filter(f.host.as_deref().map(wire_str))
                            .with_operation(f.operation.id())
                            .with_permission_type(f.permission.id())
                    })
                    .collect(),
            );
            let response: kafka_protocol::messages::DeleteAclsResponse = exchange(
                connection,
                ApiKey::DeleteAcls,
                ACL_VERSION,
                &request,
                timeout,
            )
            .await?;
            let mut matched = Vec::new();
            for result in response.filter_results {
                if let Some(e) = Error::from_code(result.error_code, message(&result.error_message))
                {
                    return Err(e);
                }
                let mut of_filter = Vec::new();
                for acl in result.matching_acls {
                    let binding = super::acl_wire::binding(super::acl_wire::WireAcl {
                        resource_type: acl.resource_type,
                        resource_name: &acl.resource_name,
                        pattern_type: acl.pattern_type,
                        principal: &acl.principal,
                        host: &acl.host,
                        operation: acl.operation,
                        permission: acl.permission_type,
                    })
                    .map_err(Error::InvalidRequest)?;
                    of_filter.push(binding);
                }
                matched.push(of_filter);
            }
            Ok(ControllerReply::AclsDeleted(matched))
        }
        ControllerOp::UpdateFeatures {
            updates,
            validate_only,
        } => {
            let request = super::update_features::request_for(updates, *validate_only)
                .with_timeout_ms(timeout.as_millis().try_into().unwrap_or(i32::MAX));
            let response: kafka_protocol::messages::UpdateFeaturesResponse = exchange(
                connection,
                ApiKey::UpdateFeatures,
                UPDATE_FEATURES_VERSION,
                &request,
                timeout,
            )
            .await?;
            match Error::from_code(response.error_code, message(&response.error_message)) {
                Some(e) => Err(e),
                None => Ok(ControllerReply::Done),
            }
        }
        ControllerOp::CreateDelegationToken(token_request) => {
            use kafka_protocol::messages::create_delegation_token_request::CreatableRenewers;
            let (owner_type, owner_name) = super::split_principal(&token_request.owner);
            let request = kafka_protocol::messages::CreateDelegationTokenRequest::default()
                .with_owner_principal_type(Some(owner_type))
                .with_owner_principal_name(Some(owner_name))
                .with_renewers(
                    token_request
                        .renewers
                        .iter()
                        .map(|r| {
                            let (principal_type, principal_name) = super::split_principal(r);
                            CreatableRenewers::default()
                                .with_principal_type(principal_type)
                                .with_principal_name(principal_name)
                        })
                        .collect(),
                )
                .with_max_lifetime_ms(token_request.max_lifetime_ms)
                .with_unknown_tagged_fields(requester_field(&token_request.requester));
            let response: kafka_protocol::messages::CreateDelegationTokenResponse = exchange(
                connection,
                ApiKey::CreateDelegationToken,
                CREATE_TOKEN_VERSION,
                &request,
                timeout,
            )
            .await?;
            if let Some(e) = Error::from_code(response.error_code, None) {
                return Err(e);
            }
            let principal = |t: &str, n: &str| format!("{t}:{n}");
            Ok(ControllerReply::TokenCreated(
                crate::controller::control::CreatedToken {
                    token: crate::metadata::records::DelegationTokenData {
                        token_id: response.token_id.to_string(),
                        owner: principal(&response.principal_type, &response.principal_name),
                        requester: principal(
                            &response.token_requester_principal_type,
                            &response.token_requester_principal_name,
                        ),
                        renewers: token_request.renewers.clone(),
                        issue_timestamp_ms: response.issue_timestamp_ms,
                        max_timestamp_ms: response.max_timestamp_ms,
                        expiry_timestamp_ms: response.expiry_timestamp_ms,
                    },
                    hmac: response.hmac.to_vec(),
                },
            ))
        }
        ControllerOp::RenewDelegationToken {
            requester,
            hmac,
            period_ms,
        } => {
            let request = kafka_protocol::messages::RenewDelegationTokenRequest::default()
                .with_hmac(bytes::Bytes::copy_from_slice(hmac))
                .with_renew_period_ms(*period_ms)
                .with_unknown_tagged_fields(requester_field(requester));
            let response: kafka_protocol::messages::RenewDelegationTokenResponse = exchange(
                connection,
                ApiKey::RenewDelegationToken,
                RENEW_TOKEN_VERSION,
                &request,
                timeout,
            )
            .await?;
            token_expiry(response.error_code, response.expiry_timestamp_ms)
        }
        ControllerOp::ExpireDelegationToken {
            requester,
            hmac,
            period_ms,
        } => {
            let request = kafka_protocol::messages::ExpireDelegationTokenRequest::default()
                .with_hmac(bytes::Bytes::copy_from_slice(hmac))
                .with_expiry_time_period_ms(*period_ms)
                .with_unknown_tagged_fields(requester_field(requester));
            let response: kafka_protocol::messages::ExpireDelegationTokenResponse = exchange(
                connection,
                ApiKey::ExpireDelegationToken,
                EXPIRE_TOKEN_VERSION,
                &request,
                timeout,
            )
            .await?;
            token_expiry(response.error_code, response.expiry_timestamp_ms)
        }
        ControllerOp::SetBrokerConfigs {
            resource,
            configs,
            validate_only,
        } => {
            set_configs(
                connection,
                super::describe_configs::RESOURCE_BROKER,
                resource,
                configs,
                *validate_only,
                timeout,
            )
            .await
        }
        ControllerOp::SetGroupConfigs {
            group,
            configs,
            validate_only,
        } => {
            let resource = super::describe_configs::RESOURCE_GROUP;
            set_configs(
                connection,
                resource,
                group,
                configs,
                *validate_only,
                timeout,
            )
            .await
        }
        ControllerOp::ElectLeader {
            topic,
            partition,
            election,
        } => {
            use kafka_protocol::messages::elect_leaders_request::TopicPartitions;
            let request = ElectLeadersRequest::default()
                .with_election_type(match election {
                    Election::Preferred => 0,
                    Election::Unclean => 1,
                })
                .with_topic_partitions(Some(vec![
                    TopicPartitions::default()
                        .with_topic(TopicName(wire_str(topic)))
                        .with_partitions(vec![*partition]),
                ]))
                .with_timeout_ms(timeout.as_millis() as i32);
            let response: ElectLeadersResponse = exchange(
                connection,
                ApiKey::ElectLeaders,
                ELECT_LEADERS_VERSION,
                &request,
                timeout,
            )
            .await?;
            if let Some(e) = Error::from_code(response.error_code, None) {
                return Err(e);
            }
            let result = response
                .replica_election_results
                .into_iter()
                .flat_map(|t| t.partition_result)
                .next()
                .ok_or_else(|| Error::InvalidRequest("ElectLeaders answered nothing".into()))?;
            match Error::from_code(result.error_code, message(&result.error_message)) {
                Some(e) => Err(e),
                None => Ok(ControllerReply::Done),
            }
        }
        ControllerOp::ReassignPartition {
            topic,
            partition,
            target,
            allow_replication_factor_change,
        } => {
            let request = super::alter_partition_reassignments::request_for(
                topic,
                *partition,
                target.as_deref(),
                *allow_replication_factor_change,
                timeout,
            );
            let response = exchange(
                connection,
                ApiKey::AlterPartitionReassignments,
                super::alter_partition_reassignments::FORWARD_VERSION,
                &request,
                timeout,
            )
            .await?;
            super::alter_partition_reassignments::reply_from(response)
        }
        ControllerOp::ImportTopics { .. } => Err(Error::InvalidRequest(
            "importing topics is local to a single node".into(),
        )),
        // An observer reads the metadata with Fetch and FetchSnapshot (`metadata_fetch`).
        ControllerOp::ReadMetadata { .. } | ControllerOp::ReadMetadataSnapshot { .. } => Err(
            Error::InvalidRequest("observers read the metadata themselves".into()),
        ),
    }
}

async fn create_topic(
    connection: &mut PeerConnection,
    topic: &TopicRequest,
    validate_only: bool,
    timeout: Duration,
) -> Result<ControllerReply, Error> {
    let creatable = CreatableTopic::default()
        .with_name(TopicName(wire_str(&topic.name)))
        .with_num_partitions(topic.partitions)
        .with_replication_factor(topic.replication_factor)
        .with_assignments(
            topic
                .assignments
                .iter()
                .enumerate()
                .map(|(p, brokers)| {
                    CreatableReplicaAssignment::default()
                        .with_partition_index(p as i32)
                        .with_broker_ids(brokers.iter().copied().map(BrokerId).collect())
                })
                .collect(),
        )
        .with_configs(
            topic
                .configs
                .iter()
                .map(|(name, value)| {
                    CreatableTopicConfig::default()
                        .with_name(wire_str(name))
                        .with_value(Some(wire_str(value)))
                })
                .collect(),
        );
    let request = CreateTopicsRequest::default()
        .with_topics(vec![creatable])
        .with_timeout_ms(timeout.as_millis() as i32)
        .with_validate_only(validate_only);
    let response: CreateTopicsResponse = exchange(
        connection,
        ApiKey::CreateTopics,
        CREATE_TOPICS_VERSION,
        &request,
        timeout,
    )
    .await?;
    let result = response
        .topics
        .into_iter()
        .next()
        .ok_or_else(|| Error::InvalidRequest("CreateTopics answered nothing".into()))?;
    match Error::from_code(result.error_code, message(&result.error_message)) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::TopicCreated {
            topic_id: result.topic_id,
            partitions: result.num_partitions,
        }),
    }
}

async fn set_configs(
    connection: &mut PeerConnection,
    resource_type: i8,
    name: &str,
    configs: &BTreeMap<String, String>,
    validate_only: bool,
    timeout: Duration,
) -> Result<ControllerReply, Error> {
    use kafka_protocol::messages::alter_configs_request::{AlterConfigsResource, AlterableConfig};
    // AlterConfigs replaces a resource's overrides with exactly the ones given.
    let resource = AlterConfigsResource::default()
        .with_resource_type(resource_type)
        .with_resource_name(wire_str(name))
        .with_configs(
            configs
                .iter()
                .map(|(k, v)| {
                    AlterableConfig::default()
                        .with_name(wire_str(k))
                        .with_value(Some(wire_str(v)))
                })
                .collect(),
        );
    let request = AlterConfigsRequest::default()
        .with_resources(vec![resource])
        .with_validate_only(validate_only);
    let response: AlterConfigsResponse = exchange(
        connection,
        ApiKey::AlterConfigs,
        ALTER_CONFIGS_VERSION,
        &request,
        timeout,
    )
    .await?;
    let result = response
        .responses
        .into_iter()
        .next()
        .ok_or_else(|| Error::InvalidRequest("AlterConfigs answered nothing".into()))?;
    match Error::from_code(result.error_code, message(&result.error_message)) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::Done),
    }
}
