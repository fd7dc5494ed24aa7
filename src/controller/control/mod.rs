//! The active controller's decisions (KRaft's `ClusterControlManager` +
//! `ReplicationControlManager` + `BrokerHeartbeatManager`): broker registration, heartbeats
//! and fencing, topic creation and placement, leader election and ISR changes. Pure: every
//! operation reads the image, returns the records that carry out its decision and applies
//! them to its own (speculative) image; time comes in as an argument. The quorum proposes
//! the records; nothing here does I/O, so tests drive it with ticks.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the requests and outcomes, the speculative image, bootstrap, producer-id blocks |
//! | `brokers.rs` | registration, heartbeats, fencing, controlled shutdown |
//! | `controllers.rs` | controller registrations (KIP-919) and UnregisterController |
//! | `topics.rs` | topic creation and placement, deletion, partitions, configs, imports |
//! | `partitions.rs` | AlterPartition, ElectLeaders, elections after fencing |
//! | `reassignments.rs` | partition reassignments: start, complete, cancel |
//! | `security.rs` | SCRAM credentials and ACLs |
//! | `quotas.rs` | client quotas |
//! | `features.rs` | feature levels (UpdateFeatures) |
//! | `tokens.rs` | delegation tokens: create, renew, expire, the expiry sweep |

use crate::error::Error;
use crate::metadata::image::MetadataImage;
use crate::metadata::records::{Endpoint, MetadataRecord};
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

pub use controllers::ControllerRegistrationRequest;
pub use quotas::QuotaAlteration;
pub use tokens::{CreatedToken, TokenRequest};

mod brokers;
mod controllers;
mod features;
mod partitions;
mod quotas;
mod reassignments;
mod security;
#[cfg(test)]
mod tests;
mod tokens;
mod topics;

/// Producer ids are handed to brokers in blocks of this many (KRaft's block size).
pub const PRODUCER_ID_BLOCK_SIZE: i64 = 1000;

/// The most partitions one request may create (KRaft's `MAX_PARTITIONS_PER_BATCH`): the
/// records of one operation are built in memory and proposed as one batch, so a count from
/// the wire must not size them unchecked.
pub const MAX_PARTITIONS_PER_REQUEST: i64 = 10_000;

/// Kafka's answer to a CreateTopics request over [`MAX_PARTITIONS_PER_REQUEST`].
pub const TOO_MANY_PARTITIONS: &str = "Excessively large number of partitions per request.";

/// Kafka's answer to any other operation that would write more records than one batch holds.
pub const TOO_LARGE_OPERATION: &str = "Unable to perform excessively large batch operation.";

#[derive(Debug, Clone)]
pub struct ControlConfig {
    /// This controller's node id: on a combined node, a registration of the same id comes
    /// from this very process, so any older incarnation of it is dead.
    pub own_node: i32,
    pub broker_session_timeout_ms: i64,
    pub default_partitions: i32,
    pub default_replication_factor: i32,
    /// `unclean.leader.election.enable` for topics that do not override it.
    pub unclean_leader_election: bool,
    /// The `delegation.token.*` properties.
    pub tokens: crate::auth::delegation_token::TokenSettings,
}

/// A topic to create, as CreateTopics asks for it; `-1` means the default.
#[derive(Debug, Clone)]
pub struct TopicRequest {
    pub name: String,
    pub partitions: i32,
    pub replication_factor: i16,
    /// Explicit replicas per partition, in partition order.
    pub assignments: Vec<Vec<i32>>,
    pub configs: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerRegistrationRequest {
    pub broker_id: i32,
    pub cluster_id: String,
    pub incarnation_id: Uuid,
    pub endpoints: Vec<Endpoint>,
    pub rack: Option<String>,
    /// Its log directories' ids (KIP-858).
    pub log_dirs: Vec<Uuid>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatRequest {
    pub broker_id: i32,
    pub broker_epoch: i64,
    /// The metadata offset the broker has applied.
    pub metadata_offset: u64,
    pub want_fence: bool,
    pub want_shutdown: bool,
    /// Its log directories that failed (KIP-858).
    pub offline_log_dirs: Vec<Uuid>,
}

/// One replica's log directory, as a broker reports it (AssignReplicasToDirs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryAssignment {
    pub topic_id: Uuid,
    pub partition: i32,
    pub directory_id: Uuid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatReply {
    pub is_caught_up: bool,
    pub is_fenced: bool,
    pub should_shutdown: bool,
}

/// AlterPartition for one partition, from its leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IsrChange {
    pub broker_id: i32,
    pub broker_epoch: i64,
    pub topic_id: Uuid,
    pub partition: i32,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub new_isr: Vec<i32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Election {
    Preferred,
    Unclean,
}

/// A topic of a single node from before the metadata log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedTopic {
    pub name: String,
    pub id: Uuid,
    pub partitions: i32,
    pub configs: BTreeMap<String, String>,
}

/// A created (or validated) topic: its id and the replicas of each partition.
pub type CreatedTopic = (Uuid, Vec<Vec<i32>>);

/// The records an operation decided on, and its answer.
#[derive(Debug)]
pub struct Outcome<T> {
    pub records: Vec<MetadataRecord>,
    pub reply: T,
}

impl<T> Outcome<T> {
    fn new(records: Vec<MetadataRecord>, reply: T) -> Self {
        Self { records, reply }
    }
}

/// Records decided so far by one operation, applied to a working copy of the image so later
/// decisions of the same operation build on earlier ones.
struct Changes {
    image: MetadataImage,
    records: Vec<MetadataRecord>,
}

impl Changes {
    fn new(image: &MetadataImage) -> Self {
        Self {
            image: image.clone(),
            records: Vec::new(),
        }
    }

    /// Takes `records` in order; the image and the records taken stay in step when one does
    /// not apply (it and those after it are left out, and the error returned).
    fn push(&mut self, records: Vec<MetadataRecord>) -> Result<(), Error> {
        for record in records {
            self.image.apply_record(&record).map_err(|e| {
                Error::InvalidRequest(format!("controller decision does not apply: {e}"))
            })?;
            self.records.push(record);
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct ClusterControl {
    config: ControlConfig,
    /// The committed image plus every record proposed since: what the next decision must
    /// see. The quorum drops this object when leadership is lost.
    image: MetadataImage,
    /// Last heartbeat per broker (controller memory, not in the log: a new active
    /// controller gives every broker a fresh session).
    last_heartbeat_ms: HashMap<i32, i64>,
}

impl ClusterControl {
    /// Becomes the active controller over `committed`, at time `now_ms`.
    pub fn activate(config: ControlConfig, committed: MetadataImage, now_ms: i64) -> Self {
        let last_heartbeat_ms = committed.brokers.keys().map(|id| (*id, now_ms)).collect();
        Self {
            config,
            image: committed,
            last_heartbeat_ms,
        }
    }

    pub fn image(&self) -> &MetadataImage {
        &self.image
    }

    /// Takes an operation's changes into the speculative image as the entry at `offset`.
    fn finish<T>(&mut self, offset: u64, changes: Changes, reply: T) -> Outcome<T> {
        if !changes.records.is_empty() {
            self.image = changes.image;
            self.image.offset = offset;
        }
        Outcome::new(changes.records, reply)
    }

    /// The first records of a new quorum, once: the cluster id, then what `sluice format`
    /// left to start with (`bootstrap`: SCRAM users).
    pub fn bootstrap(
        &mut self,
        offset: u64,
        cluster_id: &str,
        bootstrap: &[MetadataRecord],
    ) -> Result<Outcome<()>, Error> {
        let mut changes = Changes::new(&self.image);
        if self.image.cluster_id.is_none() {
            let mut records = vec![MetadataRecord::ClusterId {
                cluster_id: cluster_id.to_string(),
            }];
            records.extend(bootstrap.iter().cloned());
            changes.push(records)?;
        }
        Ok(self.finish(offset, changes, ()))
    }

    /// AllocateProducerIds: the next block for a broker. Returns (first id, count).
    pub fn allocate_producer_ids(
        &mut self,
        offset: u64,
        broker: i32,
        broker_epoch: i64,
    ) -> Result<Outcome<(i64, i64)>, Error> {
        self.check_broker_epoch(broker, broker_epoch)?;
        let start = self.image.next_producer_id;
        let mut changes = Changes::new(&self.image);
        changes.push(vec![MetadataRecord::ProducerIds {
            broker_id: broker,
            broker_epoch,
            next_producer_id: start + PRODUCER_ID_BLOCK_SIZE,
        }])?;
        Ok(self.finish(offset, changes, (start, PRODUCER_ID_BLOCK_SIZE)))
    }
}
