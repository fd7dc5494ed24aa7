//! What a command asks of the active controller ([`ControllerOp`]) and its answer
//! ([`ControllerReply`]): the vocabulary between brokers, the controller listener and the
//! event loop in `service`, which re-exports both.

use super::control::{
    BrokerRegistrationRequest, ControllerRegistrationRequest, DirectoryAssignment, Election,
    HeartbeatReply, HeartbeatRequest, ImportedTopic, IsrChange, TopicRequest,
};
use crate::metadata::image::PartitionRegistration;
use std::collections::BTreeMap;
use uuid::Uuid;

/// What a command asks of the active controller.
#[derive(Debug, Clone)]
pub enum ControllerOp {
    RegisterBroker(BrokerRegistrationRequest),
    Heartbeat(HeartbeatRequest),
    UnregisterBroker(i32),
    /// ControllerRegistration (KIP-919): a controller node registers its listeners.
    RegisterController(ControllerRegistrationRequest),
    /// UnregisterController (KIP-1312): forgets a decommissioned controller's registration.
    UnregisterController(i32),
    /// AssignReplicasToDirs: the log directory of each listed replica of `broker`.
    AssignReplicasToDirs {
        broker: i32,
        broker_epoch: i64,
        assignments: Vec<DirectoryAssignment>,
    },
    CreateTopic {
        request: TopicRequest,
        validate_only: bool,
    },
    DeleteTopic(String),
    CreatePartitions {
        name: String,
        count: i32,
        assignments: Option<Vec<Vec<i32>>>,
        validate_only: bool,
    },
    SetTopicConfigs {
        name: String,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    },
    /// A group's configs become exactly `configs` (validated by the broker that asks).
    SetGroupConfigs {
        group: String,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    },
    /// The dynamic configs of a broker resource (`""`: the cluster defaults, else a broker
    /// id) become exactly `configs` (validated by the broker that asks).
    SetBrokerConfigs {
        resource: String,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    },
    /// KIP-554 credential changes, validated by the broker that asks (mechanisms, iteration
    /// counts, nothing named twice). A user whose deletion names a credential it does not have
    /// is left unchanged and reported.
    AlterScramCredentials {
        upsertions: Vec<crate::auth::scram::ScramUpsertion>,
        deletions: Vec<(String, crate::auth::scram::ScramMechanism)>,
    },
    /// KIP-546 client quota changes, validated here as Kafka's controller does.
    AlterClientQuotas {
        alterations: Vec<super::control::QuotaAlteration>,
        validate_only: bool,
    },
    /// UpdateFeatures (KIP-584): feature levels, checked here as Kafka's controller does.
    UpdateFeatures {
        updates: Vec<crate::metadata::features::FeatureUpdate>,
        validate_only: bool,
    },
    /// CreateDelegationToken (KIP-48): who may ask is checked by the broker that asks.
    CreateDelegationToken(super::control::TokenRequest),
    /// RenewDelegationToken: the token whose hmac is `hmac`, by `requester` (`Type:name`).
    RenewDelegationToken {
        requester: String,
        hmac: Vec<u8>,
        period_ms: i64,
    },
    /// ExpireDelegationToken, likewise (a negative period removes the token at once).
    ExpireDelegationToken {
        requester: String,
        hmac: Vec<u8>,
        period_ms: i64,
    },
    /// ACLs to add (validated by the broker that asks); an ACL that exists already is
    /// left as it is.
    CreateAcls(Vec<crate::metadata::acl::AclBinding>),
    /// ACLs to remove: every ACL matching any of the filters.
    DeleteAcls(Vec<crate::auth::acl::AclFilter>),
    /// AlterPartition: ISR changes of partitions one leader leads, decided together.
    AlterPartition(Vec<IsrChange>),
    ElectLeader {
        topic: String,
        partition: i32,
        election: Election,
    },
    AllocateProducerIds {
        broker: i32,
        broker_epoch: i64,
    },
    /// AlterPartitionReassignments for one partition: move it to `target`, or cancel the
    /// reassignment in progress (`None`).
    ReassignPartition {
        topic: String,
        partition: i32,
        target: Option<Vec<i32>>,
        allow_replication_factor_change: bool,
    },
    ImportTopics {
        broker: i32,
        topics: Vec<ImportedTopic>,
        next_producer_id: i64,
    },
    /// AddRaftVoter (KIP-853): controller `node` joins a dynamic quorum; answered once it
    /// votes, or with REQUEST_TIMED_OUT when it did not catch up within `timeout_ms`.
    AddVoter(NewVoter),
    /// UpdateRaftVoter: voter `node` listens at `endpoints` now; answered once the record
    /// naming them is committed (`timeout_ms` unused).
    UpdateVoter(NewVoter),
    /// RemoveRaftVoter: answered once the change is committed.
    RemoveVoter {
        node: i32,
        directory_id: Uuid,
    },
    /// The quorum's state, answered at once by its leader (nothing is proposed).
    DescribeQuorum,
    /// An observer (a broker-only node) reads the committed metadata from entry
    /// `from_index` on, at most about `max_bytes` of it; answered at once by the leader.
    ReadMetadata {
        observer: u64,
        from_index: u64,
        max_bytes: usize,
    },
    /// A piece of the leader's snapshot at `index` (of `term`), from byte `position`.
    ReadMetadataSnapshot {
        index: u64,
        term: u64,
        position: u64,
        max_bytes: usize,
    },
}

/// AddRaftVoter's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewVoter {
    pub node: i32,
    pub directory_id: Uuid,
    /// Its listeners: the controller listener among them is where the voters reach it.
    pub endpoints: Vec<crate::metadata::records::Endpoint>,
    pub timeout_ms: i64,
}

/// Committed metadata for an observer, from the quorum's leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataRead {
    pub leader: u64,
    pub term: u64,
    /// The commit index (Kafka's high watermark of the metadata log).
    pub high_watermark: u64,
    pub content: ReadContent,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadContent {
    /// Committed entries from the index asked for, as record batches
    /// (`metadata_log::entries_as_batches`); none when there is nothing new.
    Entries(bytes::Bytes),
    /// The entries asked for were compacted into the snapshot at `index`: read it first.
    SnapshotNeeded { index: u64, term: u64 },
}

/// A piece of an encoded snapshot (a raft `Snapshot`, protobuf).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotChunk {
    /// The whole snapshot's size in bytes.
    pub size: u64,
    pub position: u64,
    pub bytes: bytes::Bytes,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControllerReply {
    BrokerEpoch(i64),
    Heartbeat(HeartbeatReply),
    TopicCreated {
        topic_id: Uuid,
        partitions: i32,
    },
    TopicDeleted(Uuid),
    /// Each AlterPartition change's partition as it stands afterwards, or the Kafka error
    /// code that refused it (AlterPartition answers each partition on its own), in order.
    Partitions(Vec<Result<PartitionRegistration, i16>>),
    ProducerIds {
        first: i64,
        count: i64,
    },
    /// The users of an AlterScramCredentials left unchanged: a deletion named a credential
    /// they do not have.
    ScramAltered {
        missing: Vec<String>,
    },
    /// Each AlterClientQuotas alteration's outcome, in order (`Err`: INVALID_REQUEST's
    /// message).
    QuotasAltered(Vec<Result<(), String>>),
    /// The ACLs each DeleteAcls filter removed, in filter order.
    AclsDeleted(Vec<Vec<crate::metadata::acl::AclBinding>>),
    Quorum(super::quorum_view::QuorumDescription),
    Metadata(MetadataRead),
    MetadataSnapshot(SnapshotChunk),
    TokenCreated(super::control::CreatedToken),
    /// A delegation token's new expiry timestamp.
    TokenExpiry(i64),
    /// Each AssignReplicasToDirs assignment's outcome, in order (Kafka's error codes).
    DirectoriesAssigned(Vec<i16>),
    Done,
}
