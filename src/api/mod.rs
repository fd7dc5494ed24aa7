//! The Kafka APIs: one file per API translating between `kafka-protocol` wire types and the
//! broker core, entered through the dispatch table (`dispatch.rs`: each supported API with its
//! version range and authorization gate, in one list; ApiVersions is generated from it, so it
//! cannot advertise an API or version that is not dispatched).
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the module list, small wire helpers shared by handlers |
//! | `dispatch.rs` | the API tables, decoding, gating, encoding response frames, `DispatchError` |
//! | `context.rs` | `ApiContext`, KIP-951 leader hints, partition state on the wire, coordinator lookup |
//! | `authorize/` | every API's authorization gate (Kafka's `AuthHelper` checks) |
//! | `fetch/` | Fetch, its response writer and the fetch session cache |
//! | `frame.rs` | response frames (bytes and file parts) |
//! | `forward.rs` | the controller APIs' client side (commands as requests to the active controller) |
//! | `forwarder.rs` | the connections those requests travel on, a bounded set per controller |
//! | `follower_fetch.rs` | a follower's Fetch client |
//! | `share_state.rs` | the share coordinator's state RPCs in wire terms, and their client side |
//! | `metadata_fetch.rs` | Fetch of `__cluster_metadata` on the controller listener, and the observer's client |
//! | `acl_wire.rs` | ACL bindings and filters on the wire |
//! | `error_counts.rs` | the error codes of each response as Kafka's request metrics count them |
//! | `throttle.rs` | request-time quotas and the throttle time of every response |
//! | `request_names.rs` | the names Kafka's request metrics go by, at their counters' slots |
//! | `tests/` | every advertised API at every advertised version, through the dispatcher |
//! | `add_offsets_to_txn.rs`, `add_partitions_to_txn.rs`, `add_raft_voter.rs`, `allocate_producer_ids.rs`, `alter_client_quotas.rs`, `alter_configs.rs`, `alter_partition.rs`, `alter_partition_reassignments.rs`, `alter_replica_log_dirs.rs`, `alter_share_group_offsets.rs`, `alter_user_scram_credentials.rs`, `api_versions.rs`, `assign_replicas_to_dirs.rs`, `broker_heartbeat.rs`, `broker_registration.rs`, `consumer_group_describe.rs`, `consumer_group_heartbeat.rs`, `controller_registration.rs`, `create_acls.rs`, `create_delegation_token.rs`, `create_partitions.rs`, `create_topics.rs`, `delete_acls.rs`, `delete_groups.rs`, `delete_records.rs`, `delete_share_group_offsets.rs`, `delete_share_group_state.rs`, `delete_topics.rs`, `describe_acls.rs`, `describe_client_quotas.rs`, `describe_cluster.rs`, `describe_configs.rs`, `describe_delegation_token.rs`, `describe_groups.rs`, `describe_log_dirs.rs`, `describe_producers.rs`, `describe_quorum.rs`, `describe_share_group_offsets.rs`, `describe_topic_partitions.rs`, `describe_transactions.rs`, `describe_user_scram_credentials.rs`, `elect_leaders.rs`, `end_txn.rs`, `expire_delegation_token.rs`, `fetch_snapshot.rs`, `find_coordinator.rs`, `heartbeat.rs`, `incremental_alter_configs.rs`, `init_producer_id.rs`, `initialize_share_group_state.rs`, `join_group.rs`, `leave_group.rs`, `list_config_resources.rs`, `list_groups.rs`, `list_offsets.rs`, `list_partition_reassignments.rs`, `list_transactions.rs`, `metadata.rs`, `offset_commit.rs`, `offset_delete.rs`, `offset_fetch.rs`, `offset_for_leader_epoch.rs`, `produce.rs`, `read_share_group_state.rs`, `read_share_group_state_summary.rs`, `remove_raft_voter.rs`, `renew_delegation_token.rs`, `sasl_authenticate.rs`, `sasl_handshake.rs`, `share_acknowledge.rs`, `share_fetch.rs`, `share_group_describe.rs`, `share_group_heartbeat.rs`, `streams_group_describe.rs`, `streams_group_heartbeat.rs`, `streams_group_topology_description_update.rs`, `sync_group.rs`, `txn_offset_commit.rs`, `unregister_broker.rs`, `unregister_controller.rs`, `update_features.rs`, `update_raft_voter.rs`, `write_share_group_state.rs`, `write_txn_markers.rs` | one Kafka API each, named after it |

pub mod acl_wire;
pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod add_raft_voter;
pub mod allocate_producer_ids;
pub mod alter_client_quotas;
pub mod alter_configs;
pub mod alter_partition;
pub mod alter_partition_reassignments;
pub mod alter_replica_log_dirs;
pub mod alter_share_group_offsets;
pub mod alter_user_scram_credentials;
pub mod api_versions;
pub mod assign_replicas_to_dirs;
pub mod authorize;
pub mod broker_heartbeat;
pub mod broker_registration;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod context;
pub mod controller_registration;
pub mod create_acls;
pub mod create_delegation_token;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_acls;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_share_group_offsets;
pub mod delete_share_group_state;
pub mod delete_topics;
pub mod describe_acls;
pub mod describe_client_quotas;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_delegation_token;
pub mod describe_groups;
pub mod describe_log_dirs;
pub mod describe_producers;
pub mod describe_quorum;
pub mod describe_share_group_offsets;
pub mod describe_topic_partitions;
pub mod describe_transactions;
pub mod describe_user_scram_credentials;
pub mod dispatch;
pub mod elect_leaders;
pub mod end_txn;
pub mod error_counts;
pub mod expire_delegation_token;
pub mod fetch;
pub mod fetch_snapshot;
pub mod find_coordinator;
pub mod follower_fetch;
pub mod forward;
pub mod forwarder;
pub mod frame;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod initialize_share_group_state;
pub mod join_group;
pub mod leave_group;
pub mod list_config_resources;
pub mod list_groups;
pub mod list_offsets;
pub mod list_partition_reassignments;
pub mod list_transactions;
pub mod metadata;
pub mod metadata_fetch;
pub mod offset_commit;
pub mod offset_delete;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
pub mod produce;
pub mod read_share_group_state;
pub mod read_share_group_state_summary;
pub mod remove_raft_voter;
pub mod renew_delegation_token;
pub mod request_names;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod share_acknowledge;
pub mod share_fetch;
pub mod share_group_describe;
pub mod share_group_heartbeat;
pub mod share_state;
pub mod streams_group_describe;
pub mod streams_group_heartbeat;
pub mod streams_group_topology_description_update;
pub mod sync_group;
#[cfg(test)]
mod tests;
pub mod throttle;
pub mod txn_offset_commit;
pub mod unregister_broker;
pub mod unregister_controller;
pub mod update_features;
pub mod update_raft_voter;
pub mod write_share_group_state;
pub mod write_txn_markers;

pub use context::ApiContext;
pub(crate) use context::{
    LeaderHint, broker_address, coordinator_for, share_coordinator_for, wire_partition_state,
};
pub use dispatch::{
    DispatchError, IntoFrame, authorized_api, authorized_controller_api, controller_apis,
    decode_controller_request, decode_request, dispatch, dispatch_controller, supported_apis,
};

use kafka_protocol::messages as m;
use kafka_protocol::protocol::StrBytes;

/// `&str` to the wire's string type.
pub(crate) fn wire_str(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// A topic's name by its id, empty when unknown (a topic deleted meanwhile).
pub(crate) fn topic_name_of(ctx: &ApiContext, topic_id: uuid::Uuid) -> m::TopicName {
    let name = ctx
        .broker
        .topic_by_id(topic_id)
        .map(|t| t.name.to_string())
        .unwrap_or_default();
    m::TopicName(wire_str(&name))
}

/// Runs a commit (OffsetCommit, TxnOffsetCommit) on the group's coordinator and answers the
/// error code of each offset, in order: the group-level failure (NOT_COORDINATOR, ...) for all
/// of them, else each one's own.
/// A topic a request names: by its name, or (`by_id`) by its id — `None` when no topic has
/// that id.
pub(crate) fn topic_named(
    ctx: &ApiContext,
    name: &str,
    id: uuid::Uuid,
    by_id: bool,
) -> Option<String> {
    if by_id {
        ctx.broker.topic_by_id(id).map(|t| t.name.to_string())
    } else {
        Some(name.to_string())
    }
}

pub(crate) async fn offset_commit_codes(
    ctx: &ApiContext,
    group_id: &str,
    count: usize,
    commit: impl FnOnce(
        &crate::group::GroupCoordinator,
    )
        -> Result<Vec<Result<(), crate::error::GroupError>>, crate::error::GroupError>,
) -> CommitCodes {
    let outcome = match coordinator_for(ctx, group_id).await {
        Err(e) => Err(e),
        Ok(groups) => commit(groups),
    };
    let codes: Vec<i16> = match outcome {
        Ok(results) => results
            .into_iter()
            .map(|r| r.err().map_or(crate::error::code::NONE, |e| e.code()))
            .collect(),
        Err(e) => vec![e.code(); count],
    };
    CommitCodes(codes.into_iter())
}

/// The codes of [`offset_commit_codes`], one per committed partition in request order.
pub(crate) struct CommitCodes(std::vec::IntoIter<i16>);

impl CommitCodes {
    /// The next partition's code (COORDINATOR_NOT_AVAILABLE past the end, which a commit
    /// that answers for every offset never reaches).
    pub(crate) fn next_code(&mut self) -> i16 {
        self.0
            .next()
            .unwrap_or(crate::error::GroupError::CoordinatorNotAvailable.code())
    }
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

/// `Type:name` as the response's two fields.
pub(crate) fn split_principal(principal: &str) -> (StrBytes, StrBytes) {
    match principal.split_once(':') {
        Some((principal_type, name)) => (wire_str(principal_type), wire_str(name)),
        None => (StrBytes::default(), wire_str(principal)),
    }
}

/// The metadata log's topic, as Kafka names it (`__cluster_metadata`, partition 0).
pub fn metadata_topic() -> &'static str {
    crate::storage::manager::CLUSTER_METADATA_DIR.trim_end_matches("-0")
}

/// A Raft term as a Kafka epoch field.
pub fn raft_epoch(term: u64) -> i32 {
    term.min(i32::MAX as u64) as i32
}
