//! The records of the `__cluster_metadata` log, modelled on KRaft's (`RegisterBrokerRecord`,
//! `TopicRecord`, `PartitionRecord`, `PartitionChangeRecord`, ...): every change to the
//! cluster's metadata is one of these, proposed by the active controller and applied, in log
//! order, by every node to its [`MetadataImage`](super::image::MetadataImage).
//!
//! Departure from KRaft: records are stored as JSON (serde), not in Kafka's generated binary
//! schemas. No Kafka tool reads this log, and a self-describing encoding lets a record gain
//! fields (`#[serde(default)]`) without a schema compiler; metadata volume is small enough
//! that size does not matter. Unknown record types are an error, never skipped: a node must
//! not build an image from records it does not understand.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Kafka's "no leader" (`-1`) in partition records.
pub const NO_LEADER: i32 = -1;

/// One listener a broker can be reached on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    pub name: String,
    pub host: String,
    pub port: u16,
    /// Kafka's security protocol id (0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL).
    pub security_protocol: i16,
}

/// Kafka's `ConfigResource.Type` ids used in config records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ConfigResource {
    Topic,
    Broker,
    /// KIP-848 / KIP-932 group configs (`share.auto.offset.reset`, ...).
    Group,
}

/// A partition's move to other brokers (AlterPartitionReassignments): the replicas it gains
/// and those it will lose once every target replica is in sync. The target is the replicas
/// less `removing`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reassignment {
    pub adding: Vec<i32>,
    pub removing: Vec<i32>,
}

impl Reassignment {
    pub fn is_empty(&self) -> bool {
        self.adding.is_empty() && self.removing.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum MetadataRecord {
    /// The cluster's id, written once by the first active controller (KRaft keeps it in
    /// `meta.properties` from a format step instead; Sluice needs no format step).
    ClusterId {
        cluster_id: String,
    },
    /// A broker (re)registers; a re-registration with a new incarnation replaces the old
    /// one. `broker_epoch` is the offset of this record, as in KRaft.
    RegisterBroker {
        broker_id: i32,
        incarnation_id: Uuid,
        broker_epoch: i64,
        endpoints: Vec<Endpoint>,
        rack: Option<String>,
        fenced: bool,
        /// The broker's online log directories, by `directory.id` (KIP-858); none from a
        /// broker that registered before directories were reported.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        log_dirs: Vec<Uuid>,
    },
    UnregisterBroker {
        broker_id: i32,
        broker_epoch: i64,
    },
    /// KRaft's `BrokerRegistrationChangeRecord`: fencing and controlled shutdown.
    BrokerRegistrationChange {
        broker_id: i32,
        broker_epoch: i64,
        fenced: Option<bool>,
        in_controlled_shutdown: Option<bool>,
        /// The online log directories after a heartbeat reported some offline.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log_dirs: Option<Vec<Uuid>>,
    },
    /// The log directory a replica is in (AssignReplicasToDirs; KRaft writes it as the
    /// `Directories` of a PartitionChangeRecord). A replica with none assigned counts as
    /// online.
    ReplicaDirectory {
        topic_id: Uuid,
        partition_id: i32,
        broker_id: i32,
        directory_id: Uuid,
    },
    Topic {
        name: String,
        topic_id: Uuid,
    },
    Partition {
        topic_id: Uuid,
        partition_id: i32,
        replicas: Vec<i32>,
        isr: Vec<i32>,
        leader: i32,
        leader_epoch: i32,
        partition_epoch: i32,
        /// A reassignment in progress (KRaft's `addingReplicas` / `removingReplicas`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reassignment: Option<Reassignment>,
    },
    /// A change to an existing partition; `None` fields are unchanged. Applying one bumps
    /// the partition epoch, and the leader epoch when the leader changes.
    PartitionChange {
        topic_id: Uuid,
        partition_id: i32,
        #[serde(default)]
        leader: Option<i32>,
        #[serde(default)]
        isr: Option<Vec<i32>>,
        #[serde(default)]
        replicas: Option<Vec<i32>>,
        /// The reassignment in progress after the change (`Some` of an empty one: none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reassignment: Option<Reassignment>,
    },
    RemoveTopic {
        topic_id: Uuid,
    },
    /// A dynamic config of a topic or broker; `None` removes it.
    Config {
        resource: ConfigResource,
        resource_name: String,
        name: String,
        value: Option<String>,
    },
    /// A block of producer ids handed to a broker: ids below `next_producer_id` are used.
    ProducerIds {
        broker_id: i32,
        broker_epoch: i64,
        next_producer_id: i64,
    },
    /// Written by a new active controller so it learns when its term's records are
    /// committed (KRaft's `NoOpRecord`).
    NoOp,
    /// KRaft's `UserScramCredentialRecord`: a user's credential for one SCRAM mechanism
    /// (Kafka's type ids: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512). Replaces an earlier one.
    UserScramCredential {
        name: String,
        mechanism: i8,
        credential: ScramCredentialRecord,
    },
    /// KRaft's `RemoveUserScramCredentialRecord`.
    RemoveUserScramCredential {
        name: String,
        mechanism: i8,
    },
    /// KRaft's `AccessControlEntryRecord`: an ACL, under an id of its own.
    AccessControlEntry {
        id: Uuid,
        acl: super::acl::AclBinding,
    },
    /// KRaft's `RemoveAccessControlEntryRecord`.
    RemoveAccessControlEntry {
        id: Uuid,
    },
    /// KRaft's `ClientQuotaRecord`: one quota of an entity set, or removed (`None`).
    ClientQuota {
        entity: super::quota::QuotaEntity,
        key: String,
        value: Option<super::quota::QuotaValue>,
    },
    /// KRaft's `FeatureLevelRecord`: the level a feature runs at from now on (UpdateFeatures).
    /// Level 0 is kept too: it overrides the feature's default level.
    FeatureLevel {
        name: String,
        level: i16,
    },
    /// KRaft's `DelegationTokenRecord`: a delegation token (KIP-48) created, or its expiry
    /// moved (renew, expire). Replaces an earlier one of the same id.
    DelegationToken {
        token: DelegationTokenData,
    },
    /// KRaft's `RemoveDelegationTokenRecord`: a token expired or was expired at once.
    RemoveDelegationToken {
        token_id: String,
    },
    /// A controller joined a dynamic quorum (KIP-853; KRaft keeps its voters in the
    /// `VotersRecord` control record): its directory id and controller listeners. Written by
    /// `sluice format --standalone / --initial-controllers` for the first voters, and carried
    /// by the Raft configuration change that adds a voter, so every node (brokers too) knows
    /// where each voter listens.
    QuorumVoter {
        node_id: i32,
        directory_id: Uuid,
        endpoints: Vec<Endpoint>,
    },
    /// A controller left the dynamic quorum (RemoveRaftVoter).
    RemoveQuorumVoter {
        node_id: i32,
    },
    /// KRaft's `RegisterControllerRecord` (KIP-919): a controller node (voter or observer)
    /// registers its listeners; a re-registration with a new incarnation replaces the old one.
    RegisterController {
        controller_id: i32,
        incarnation_id: Uuid,
        endpoints: Vec<Endpoint>,
    },
    /// KRaft's `UnregisterControllerRecord` (KIP-1312): a decommissioned controller's
    /// registration is forgotten (UnregisterController).
    UnregisterController {
        controller_id: i32,
    },
}

/// What the cluster keeps of a delegation token, as KRaft's record: never its hmac, which
/// every node derives from the token id and `delegation.token.secret.key`. Principals are
/// `Type:name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelegationTokenData {
    pub token_id: String,
    pub owner: String,
    pub requester: String,
    pub renewers: Vec<String>,
    pub issue_timestamp_ms: i64,
    pub max_timestamp_ms: i64,
    pub expiry_timestamp_ms: i64,
}

impl DelegationTokenData {
    /// Whether the token has passed its expiry or its maximum lifetime at `now_ms`.
    pub fn expired(&self, now_ms: i64) -> bool {
        self.max_timestamp_ms < now_ms || self.expiry_timestamp_ms < now_ms
    }

    /// Kafka's `ownerOrRenewer`: the owner, the requester and the renewers may see it.
    pub fn owner_or_renewer(&self, principal: &str) -> bool {
        self.owner == principal
            || self.requester == principal
            || self.renewers.iter().any(|r| r == principal)
    }

    /// Kafka's `allowedToRenew`: the owner or a renewer.
    pub fn may_renew(&self, principal: &str) -> bool {
        self.owner == principal || self.renewers.iter().any(|r| r == principal)
    }
}

/// What the cluster keeps of a SCRAM password (RFC 5802's salt, iteration count, stored key
/// and server key; never the password).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScramCredentialRecord {
    pub salt: Vec<u8>,
    pub stored_key: Vec<u8>,
    pub server_key: Vec<u8>,
    pub iterations: i32,
}

#[derive(Debug, thiserror::Error)]
#[error("undecodable metadata record: {0}")]
pub struct RecordDecodeError(String);

impl MetadataRecord {
    pub fn encode(&self) -> Vec<u8> {
        // Serialising these plain data types cannot fail (no maps with non-string keys, no
        // custom serialisers); an empty record would fail to decode and be noticed.
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, RecordDecodeError> {
        serde_json::from_slice(bytes).map_err(|e| RecordDecodeError(e.to_string()))
    }
}

/// Several records that must be applied together (one Raft entry): a topic with its
/// partitions, or a fencing with the leader elections it causes.
pub fn encode_batch(records: &[MetadataRecord]) -> Vec<u8> {
    serde_json::to_vec(records).unwrap_or_default()
}

pub fn decode_batch(bytes: &[u8]) -> Result<Vec<MetadataRecord>, RecordDecodeError> {
    serde_json::from_slice(bytes).map_err(|e| RecordDecodeError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_round_trip_and_garbage_is_an_error() {
        let records = vec![
            MetadataRecord::Topic {
                name: "t".into(),
                topic_id: Uuid::new_v4(),
            },
            MetadataRecord::PartitionChange {
                topic_id: Uuid::nil(),
                partition_id: 3,
                leader: Some(2),
                isr: None,
                replicas: None,
                reassignment: None,
            },
            MetadataRecord::Config {
                resource: ConfigResource::Topic,
                resource_name: "t".into(),
                name: "retention.ms".into(),
                value: None,
            },
            MetadataRecord::NoOp,
        ];
        let bytes = encode_batch(&records);
        assert_eq!(decode_batch(&bytes).unwrap(), records);
        assert!(decode_batch(b"[{\"type\":\"FromTheFuture\"}]").is_err());
        assert!(decode_batch(&bytes[..bytes.len() - 1]).is_err());
        // A field added later defaults when absent.
        let old = br#"[{"type":"PartitionChange","topic_id":"00000000-0000-0000-0000-000000000000","partition_id":1}]"#;
        assert!(matches!(
            decode_batch(old).unwrap()[0],
            MetadataRecord::PartitionChange { leader: None, .. }
        ));
    }
}
