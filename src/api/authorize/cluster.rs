//! The checks of the cluster APIs: DescribeCluster, ACLs and SCRAM credentials, log dirs,
//! ElectLeaders, reassignments, ListConfigResources; and the controller listener's, where only
//! the cluster's own nodes are served.

use super::{Authz, CLUSTER_NAME, Gate, check_answer, pass, require};
use crate::api::ApiContext;
use crate::auth::acl::{AclOperation, ResourceType};
use crate::error::code;
use kafka_protocol::messages::*;

pub fn describe_cluster(
    ctx: &ApiContext,
    request: DescribeClusterRequest,
    _version: i16,
) -> Gate<DescribeClusterRequest, DescribeClusterResponse> {
    check_answer(
        ctx,
        request,
        move |authz, response: &mut DescribeClusterResponse| {
            if response.cluster_authorized_operations != crate::api::OPERATIONS_NOT_REQUESTED {
                response.cluster_authorized_operations = authz.operations(
                    ResourceType::Cluster,
                    CLUSTER_NAME,
                    crate::api::CLUSTER_OPERATIONS,
                );
            }
        },
    )
}

/// DescribeCluster on the controller listener (KIP-919): ALTER on the cluster, as Kafka's
/// controllers require, then the same answer marking as on a broker.
pub fn describe_cluster_controllers(
    ctx: &ApiContext,
    request: DescribeClusterRequest,
    version: i16,
) -> Gate<DescribeClusterRequest, DescribeClusterResponse> {
    match Authz::of(ctx) {
        Some(authz) if !authz.cluster(AclOperation::Alter) => Gate::Refuse(
            DescribeClusterResponse::default()
                .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
                .with_error_message(Some(crate::api::wire_str("Cluster authorization failed."))),
        ),
        _ => describe_cluster(ctx, request, version),
    }
}

/// The cluster permission an admin API needs, or its refusal.
fn cluster_admin<Req, Resp>(
    ctx: &ApiContext,
    request: Req,
    operation: AclOperation,
    refused: impl FnOnce(&Req) -> Resp,
) -> Gate<Req, Resp> {
    require(ctx, request, |authz, _| authz.cluster(operation), refused)
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
                    .with_user(crate::api::wire_str(user))
                    .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
                })
                .collect(),
        )
    })
}

/// DESCRIBE_CONFIGS on the cluster, as Kafka asks for client quotas.
pub fn describe_client_quotas(
    ctx: &ApiContext,
    request: DescribeClientQuotasRequest,
    _version: i16,
) -> Gate<DescribeClientQuotasRequest, DescribeClientQuotasResponse> {
    cluster_admin(ctx, request, AclOperation::DescribeConfigs, |_| {
        DescribeClientQuotasResponse::default()
            .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
            .with_error_message(Some(crate::api::wire_str("Cluster authorization failed.")))
    })
}

/// ALTER_CONFIGS on the cluster; refused, every entry carries the error.
pub fn alter_client_quotas(
    ctx: &ApiContext,
    request: AlterClientQuotasRequest,
    _version: i16,
) -> Gate<AlterClientQuotasRequest, AlterClientQuotasResponse> {
    cluster_admin(ctx, request, AclOperation::AlterConfigs, |r| {
        AlterClientQuotasResponse::default().with_entries(
            r.entries
                .iter()
                .map(|entry| {
                    alter_client_quotas_response::EntryData::default()
                        .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
                        .with_error_message(Some(crate::api::wire_str(
                            "Cluster authorization failed.",
                        )))
                        .with_entity(crate::api::alter_client_quotas::entity_of(entry))
                })
                .collect(),
        )
    })
}

/// ALTER on the cluster (Kafka's controller checks it on the forwarded request).
pub fn update_features(
    ctx: &ApiContext,
    request: UpdateFeaturesRequest,
    _version: i16,
) -> Gate<UpdateFeaturesRequest, UpdateFeaturesResponse> {
    cluster_admin(ctx, request, AclOperation::Alter, |_| {
        UpdateFeaturesResponse::default()
            .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED)
            .with_error_message(Some(crate::api::wire_str("Cluster authorization failed.")))
    })
}

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
    describe_quorum,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    AclOperation::Describe
);

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
    assign_replicas_to_dirs,
    AssignReplicasToDirsRequest,
    AssignReplicasToDirsResponse,
    AclOperation::ClusterAction
);

node_gate!(
    add_raft_voter,
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    AclOperation::Alter
);

node_gate!(
    update_raft_voter,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
    AclOperation::ClusterAction
);

node_gate!(
    remove_raft_voter,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    AclOperation::Alter
);

node_gate!(
    unregister_broker,
    UnregisterBrokerRequest,
    UnregisterBrokerResponse,
    AclOperation::Alter
);

node_gate!(
    unregister_controller,
    UnregisterControllerRequest,
    UnregisterControllerResponse,
    AclOperation::Alter
);

node_gate!(
    controller_registration,
    ControllerRegistrationRequest,
    ControllerRegistrationResponse,
    AclOperation::ClusterAction
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
