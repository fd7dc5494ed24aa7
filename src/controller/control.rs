//! The active controller's decisions (KRaft's `ClusterControlManager` +
//! `ReplicationControlManager` + `BrokerHeartbeatManager`): broker registration, heartbeats
//! and fencing, topic creation and placement, leader election and ISR changes. Pure: every
//! operation reads the image, returns the records that carry out its decision and applies
//! them to its own (speculative) image; time comes in as an argument. The quorum proposes
//! the records; nothing here does I/O, so tests drive it with ticks.

use crate::config::validate_topic_overrides;
use crate::error::Error;
use crate::metadata::image::{MetadataImage, PartitionRegistration};
use crate::metadata::records::{ConfigResource, Endpoint, MetadataRecord, NO_LEADER};
use crate::metadata::validate_topic_name;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use uuid::Uuid;

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatRequest {
    pub broker_id: i32,
    pub broker_epoch: i64,
    /// The metadata offset the broker has applied.
    pub metadata_offset: u64,
    pub want_fence: bool,
    pub want_shutdown: bool,
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

    fn push(&mut self, records: Vec<MetadataRecord>) -> Result<(), Error> {
        self.image.apply(self.image.offset, &records).map_err(|e| {
            Error::InvalidRequest(format!("controller decision does not apply: {e}"))
        })?;
        self.records.extend(records);
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

    /// BrokerRegistration. The broker epoch is `offset`, the log offset of the registration
    /// (as in KRaft). A retry with the same incarnation gets the epoch it already has; a new
    /// incarnation is refused while the old one's session lives.
    pub fn register_broker(
        &mut self,
        offset: u64,
        request: BrokerRegistrationRequest,
        now_ms: i64,
    ) -> Result<Outcome<i64>, Error> {
        if let Some(expected) = &self.image.cluster_id
            && *expected != request.cluster_id
        {
            return Err(Error::InconsistentClusterId {
                got: request.cluster_id,
                expected: expected.clone(),
            });
        }
        let mut changes = Changes::new(&self.image);
        if let Some(existing) = self.image.brokers.get(&request.broker_id) {
            if existing.incarnation_id == request.incarnation_id {
                return Ok(self.finish(offset, changes, existing.epoch));
            }
            let alive = !existing.fenced && !self.session_expired(request.broker_id, now_ms);
            if alive && request.broker_id != self.config.own_node {
                return Err(Error::DuplicateBrokerRegistration(request.broker_id));
            }
            // The old incarnation may have led or been in sync; it no longer is.
            let updates = leader_and_isr_updates(&self.config, &changes.image, request.broker_id);
            changes.push(updates)?;
        }
        let epoch = offset as i64;
        changes.push(vec![MetadataRecord::RegisterBroker {
            broker_id: request.broker_id,
            incarnation_id: request.incarnation_id,
            broker_epoch: epoch,
            endpoints: request.endpoints,
            rack: request.rack,
            fenced: true,
        }])?;
        self.last_heartbeat_ms.insert(request.broker_id, now_ms);
        Ok(self.finish(offset, changes, epoch))
    }

    fn session_expired(&self, broker: i32, now_ms: i64) -> bool {
        self.last_heartbeat_ms
            .get(&broker)
            .is_none_or(|last| now_ms - last > self.config.broker_session_timeout_ms)
    }

    fn check_broker_epoch(&self, broker: i32, epoch: i64) -> Result<(), Error> {
        let registration = self
            .image
            .brokers
            .get(&broker)
            .ok_or(Error::BrokerIdNotRegistered(broker))?;
        if registration.epoch != epoch {
            return Err(Error::StaleBrokerEpoch {
                got: epoch,
                current: registration.epoch,
            });
        }
        Ok(())
    }

    /// BrokerHeartbeat: keeps the session alive, unfences a caught-up broker, and runs a
    /// controlled shutdown (leadership and ISR membership moved away, then the broker is
    /// fenced and told it may stop).
    pub fn heartbeat(
        &mut self,
        offset: u64,
        request: HeartbeatRequest,
        now_ms: i64,
    ) -> Result<Outcome<HeartbeatReply>, Error> {
        let broker = request.broker_id;
        self.check_broker_epoch(broker, request.broker_epoch)?;
        self.last_heartbeat_ms.insert(broker, now_ms);
        let Some(registration) = self.image.brokers.get(&broker).cloned() else {
            return Err(Error::BrokerIdNotRegistered(broker));
        };
        // Caught up once it has applied its own registration (KRaft's rule).
        let is_caught_up = request.metadata_offset >= registration.epoch as u64;
        let mut changes = Changes::new(&self.image);
        let change = |fenced: Option<bool>, in_controlled_shutdown: Option<bool>| {
            MetadataRecord::BrokerRegistrationChange {
                broker_id: broker,
                broker_epoch: registration.epoch,
                fenced,
                in_controlled_shutdown,
            }
        };
        let mut should_shutdown = false;
        if request.want_shutdown {
            if registration.fenced {
                should_shutdown = true;
            } else {
                if !registration.in_controlled_shutdown {
                    changes.push(vec![change(None, Some(true))])?;
                }
                let updates = leader_and_isr_updates(&self.config, &changes.image, broker);
                changes.push(updates)?;
                if !leads_any(&changes.image, broker) {
                    changes.push(vec![change(Some(true), None)])?;
                    should_shutdown = true;
                }
            }
        } else if registration.fenced && !request.want_fence && is_caught_up {
            changes.push(vec![change(Some(false), Some(false))])?;
            // Partitions left without a leader may have one now.
            let elections = elect_for_leaderless(&self.config, &changes.image, broker);
            changes.push(elections)?;
        } else if !registration.fenced && request.want_fence {
            changes.push(vec![change(Some(true), None)])?;
            let updates = leader_and_isr_updates(&self.config, &changes.image, broker);
            changes.push(updates)?;
        }
        let is_fenced = changes.image.brokers.get(&broker).is_none_or(|b| b.fenced);
        let reply = HeartbeatReply {
            is_caught_up,
            is_fenced,
            should_shutdown,
        };
        Ok(self.finish(offset, changes, reply))
    }

    /// Periodic work: fences every broker whose session expired, moving its leaderships
    /// and removing it from ISRs. Returns the brokers fenced.
    pub fn tick(&mut self, offset: u64, now_ms: i64) -> Result<Outcome<Vec<i32>>, Error> {
        let expired: Vec<(i32, i64)> = self
            .image
            .brokers
            .values()
            .filter(|b| !b.fenced && self.session_expired(b.id, now_ms))
            .map(|b| (b.id, b.epoch))
            .collect();
        let mut changes = Changes::new(&self.image);
        let mut fenced = Vec::new();
        for (broker, epoch) in expired {
            tracing::info!(
                broker,
                "fencing broker: no heartbeat within broker.session.timeout.ms"
            );
            changes.push(vec![MetadataRecord::BrokerRegistrationChange {
                broker_id: broker,
                broker_epoch: epoch,
                fenced: Some(true),
                in_controlled_shutdown: None,
            }])?;
            let updates = leader_and_isr_updates(&self.config, &changes.image, broker);
            changes.push(updates)?;
            fenced.push(broker);
        }
        Ok(self.finish(offset, changes, fenced))
    }

    /// UnregisterBroker: forgets a broker (decommissioning); its replicas stay assigned.
    pub fn unregister_broker(&mut self, offset: u64, broker: i32) -> Result<Outcome<()>, Error> {
        let registration = self
            .image
            .brokers
            .get(&broker)
            .cloned()
            .ok_or(Error::BrokerIdNotRegistered(broker))?;
        let mut changes = Changes::new(&self.image);
        if !registration.fenced {
            changes.push(vec![MetadataRecord::BrokerRegistrationChange {
                broker_id: broker,
                broker_epoch: registration.epoch,
                fenced: Some(true),
                in_controlled_shutdown: None,
            }])?;
        }
        let updates = leader_and_isr_updates(&self.config, &changes.image, broker);
        changes.push(updates)?;
        changes.push(vec![MetadataRecord::UnregisterBroker {
            broker_id: broker,
            broker_epoch: registration.epoch,
        }])?;
        self.last_heartbeat_ms.remove(&broker);
        Ok(self.finish(offset, changes, ()))
    }

    /// Brings topics of a single node from before the metadata log into it, once: every
    /// partition on `broker`, leaderless until the broker registers and is unfenced.
    pub fn import_topics(
        &mut self,
        offset: u64,
        broker: i32,
        topics: Vec<ImportedTopic>,
        next_producer_id: i64,
    ) -> Result<Outcome<()>, Error> {
        if !self.image.topics.is_empty() {
            return Err(Error::InvalidRequest(
                "topics can only be imported into an empty cluster".into(),
            ));
        }
        let mut records = Vec::new();
        for topic in topics {
            records.push(MetadataRecord::Topic {
                name: topic.name.clone(),
                topic_id: topic.id,
            });
            for (name, value) in &topic.configs {
                records.push(MetadataRecord::Config {
                    resource: ConfigResource::Topic,
                    resource_name: topic.name.clone(),
                    name: name.clone(),
                    value: Some(value.clone()),
                });
            }
            for p in 0..topic.partitions {
                records.push(MetadataRecord::Partition {
                    topic_id: topic.id,
                    partition_id: p,
                    replicas: vec![broker],
                    isr: vec![broker],
                    leader: NO_LEADER,
                    leader_epoch: 0,
                    partition_epoch: 0,
                });
            }
        }
        if next_producer_id > self.image.next_producer_id {
            records.push(MetadataRecord::ProducerIds {
                broker_id: broker,
                broker_epoch: -1,
                next_producer_id,
            });
        }
        let mut changes = Changes::new(&self.image);
        changes.push(records)?;
        Ok(self.finish(offset, changes, ()))
    }

    /// CreateTopics for one topic (or only its validation). Replica j of partition i goes
    /// to broker (i + j) mod n of the active brokers, ordered so that consecutive brokers
    /// are in different racks when racks are set.
    pub fn create_topic(
        &mut self,
        offset: u64,
        request: TopicRequest,
        validate_only: bool,
    ) -> Result<Outcome<CreatedTopic>, Error> {
        validate_topic_name(&request.name).map_err(Error::InvalidTopic)?;
        if self.image.topic(&request.name).is_some() {
            return Err(Error::TopicAlreadyExists(request.name));
        }
        let assignments = if request.assignments.is_empty() {
            let partitions = match request.partitions {
                -1 => self.config.default_partitions,
                n if n <= 0 => {
                    return Err(Error::InvalidPartitions(
                        "number of partitions must be larger than 0, or -1 to use the default"
                            .into(),
                    ));
                }
                n => n,
            };
            if i64::from(partitions) > MAX_PARTITIONS_PER_REQUEST {
                return Err(Error::PolicyViolation(TOO_MANY_PARTITIONS.into()));
            }
            let replication_factor = match request.replication_factor {
                -1 => self.config.default_replication_factor,
                n if n <= 0 => {
                    return Err(Error::InvalidReplicationFactor(
                        "replication factor must be larger than 0, or -1 to use the default".into(),
                    ));
                }
                n => n as i32,
            };
            place(&self.image, 0..partitions, replication_factor)?
        } else {
            if request.partitions != -1 || request.replication_factor != -1 {
                return Err(Error::InvalidRequest(
                    "both the number of partitions and replica assignments were given".into(),
                ));
            }
            if request.assignments.len() as i64 > MAX_PARTITIONS_PER_REQUEST {
                return Err(Error::PolicyViolation(TOO_MANY_PARTITIONS.into()));
            }
            check_assignments(&self.image, &request.assignments)?;
            request.assignments.clone()
        };
        validate_topic_overrides(&request.configs)?;
        let topic_id = Uuid::new_v4();
        let mut changes = Changes::new(&self.image);
        if validate_only {
            return Ok(self.finish(offset, changes, (topic_id, assignments)));
        }
        let mut records = vec![MetadataRecord::Topic {
            name: request.name.clone(),
            topic_id,
        }];
        for (name, value) in &request.configs {
            records.push(MetadataRecord::Config {
                resource: ConfigResource::Topic,
                resource_name: request.name.clone(),
                name: name.clone(),
                value: Some(value.clone()),
            });
        }
        records.extend(partition_records(&self.image, topic_id, 0, &assignments));
        changes.push(records)?;
        Ok(self.finish(offset, changes, (topic_id, assignments)))
    }

    /// DeleteTopics for one topic.
    pub fn delete_topic(&mut self, offset: u64, name: &str) -> Result<Outcome<Uuid>, Error> {
        let topic_id = self
            .image
            .topic(name)
            .ok_or(Error::UnknownTopicOrPartition)?
            .id;
        let mut changes = Changes::new(&self.image);
        changes.push(vec![MetadataRecord::RemoveTopic { topic_id }])?;
        Ok(self.finish(offset, changes, topic_id))
    }

    /// CreatePartitions: grows `name` to `count` partitions.
    pub fn create_partitions(
        &mut self,
        offset: u64,
        name: &str,
        count: i32,
        assignments: Option<&[Vec<i32>]>,
        validate_only: bool,
    ) -> Result<Outcome<()>, Error> {
        let topic = self
            .image
            .topic(name)
            .ok_or(Error::UnknownTopicOrPartition)?
            .clone();
        let current = topic.partitions.len() as i32;
        if count < current {
            return Err(Error::InvalidPartitions(format!(
                "topic currently has {current} partitions, which is higher than the requested {count}"
            )));
        }
        if count == current {
            return Err(Error::InvalidPartitions(format!(
                "topic already has {current} partitions"
            )));
        }
        if i64::from(count) - i64::from(current) > MAX_PARTITIONS_PER_REQUEST {
            return Err(Error::PolicyViolation(TOO_LARGE_OPERATION.into()));
        }
        let new = match assignments {
            Some(assignments) => {
                if assignments.len() as i32 != count - current {
                    return Err(Error::InvalidReplicaAssignment(format!(
                        "increasing the number of partitions by {} but {} assignments provided",
                        count - current,
                        assignments.len()
                    )));
                }
                check_assignments(&self.image, assignments)?;
                assignments.to_vec()
            }
            None => {
                let replication_factor = topic.partitions.first().map_or(1, |p| p.replicas.len());
                place(&self.image, current..count, replication_factor as i32)?
            }
        };
        let mut changes = Changes::new(&self.image);
        if !validate_only {
            let records = partition_records(&self.image, topic.id, current, &new);
            changes.push(records)?;
        }
        Ok(self.finish(offset, changes, ()))
    }

    /// Replaces a topic's config overrides with `configs` (validated).
    pub fn set_topic_configs(
        &mut self,
        offset: u64,
        name: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<Outcome<()>, Error> {
        let topic = self
            .image
            .topic(name)
            .ok_or(Error::UnknownTopicOrPartition)?
            .clone();
        validate_topic_overrides(&configs)?;
        let mut changes = Changes::new(&self.image);
        if validate_only {
            return Ok(self.finish(offset, changes, ()));
        }
        changes.push(config_changes(
            ConfigResource::Topic,
            name,
            &topic.configs,
            &configs,
        ))?;
        Ok(self.finish(offset, changes, ()))
    }

    /// A group's dynamic configs become exactly `configs`.
    pub fn set_group_configs(
        &mut self,
        offset: u64,
        group: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<Outcome<()>, Error> {
        let mut changes = Changes::new(&self.image);
        if validate_only {
            return Ok(self.finish(offset, changes, ()));
        }
        let current = self
            .image
            .group_configs
            .get(group)
            .cloned()
            .unwrap_or_default();
        changes.push(config_changes(
            ConfigResource::Group,
            group,
            &current,
            &configs,
        ))?;
        Ok(self.finish(offset, changes, ()))
    }

    /// SCRAM credentials set and deleted, all of a user's changes or none (Kafka's
    /// `ScramControlManager`). Returns the users left unchanged because a deletion named a
    /// credential they do not have.
    pub fn alter_scram_credentials(
        &mut self,
        offset: u64,
        upsertions: &[crate::auth::scram::ScramUpsertion],
        deletions: &[(String, crate::auth::scram::ScramMechanism)],
    ) -> Result<Outcome<Vec<String>>, Error> {
        use crate::auth::scram::ScramCredential;
        use crate::metadata::records::ScramCredentialRecord;
        let mut changes = Changes::new(&self.image);
        let has = |user: &str, mechanism: crate::auth::scram::ScramMechanism| {
            self.image
                .scram_credentials
                .get(user)
                .is_some_and(|m| m.contains_key(&mechanism.type_id()))
        };
        let missing: BTreeSet<String> = deletions
            .iter()
            .filter(|(user, mechanism)| !has(user, *mechanism))
            .map(|(user, _)| user.clone())
            .collect();
        let mut records = Vec::new();
        for (user, mechanism) in deletions.iter().filter(|(u, _)| !missing.contains(u)) {
            records.push(MetadataRecord::RemoveUserScramCredential {
                name: user.clone(),
                mechanism: mechanism.type_id(),
            });
        }
        for upsertion in upsertions.iter().filter(|u| !missing.contains(&u.user)) {
            let credential = ScramCredential::from_salted_password(
                upsertion.mechanism,
                upsertion.salt.clone(),
                &upsertion.salted_password,
                upsertion.iterations,
            );
            records.push(MetadataRecord::UserScramCredential {
                name: upsertion.user.clone(),
                mechanism: upsertion.mechanism.type_id(),
                credential: ScramCredentialRecord {
                    salt: credential.salt,
                    stored_key: credential.stored_key,
                    server_key: credential.server_key,
                    iterations: credential.iterations,
                },
            });
        }
        if !records.is_empty() {
            changes.push(records)?;
        }
        Ok(self.finish(offset, changes, missing.into_iter().collect()))
    }

    /// ACLs added under fresh ids; one identical to an existing ACL (or named twice) is
    /// added once (Kafka's `AclControlManager`).
    pub fn create_acls(
        &mut self,
        offset: u64,
        acls: &[crate::metadata::acl::AclBinding],
    ) -> Result<Outcome<()>, Error> {
        let mut changes = Changes::new(&self.image);
        let mut known: BTreeSet<&crate::metadata::acl::AclBinding> =
            self.image.acls.values().collect();
        let mut records = Vec::new();
        for acl in acls {
            if known.insert(acl) {
                records.push(MetadataRecord::AccessControlEntry {
                    id: Uuid::new_v4(),
                    acl: acl.clone(),
                });
            }
        }
        if !records.is_empty() {
            changes.push(records)?;
        }
        Ok(self.finish(offset, changes, ()))
    }

    /// Every ACL matching a filter removed; returns what each filter matched.
    pub fn delete_acls(
        &mut self,
        offset: u64,
        filters: &[crate::auth::acl::AclFilter],
    ) -> Result<Outcome<Vec<Vec<crate::metadata::acl::AclBinding>>>, Error> {
        let mut changes = Changes::new(&self.image);
        let mut removed = BTreeSet::new();
        let mut matched = Vec::with_capacity(filters.len());
        for filter in filters {
            let mut of_filter = Vec::new();
            for (id, acl) in &self.image.acls {
                if filter.matches(acl) {
                    of_filter.push(acl.clone());
                    removed.insert(*id);
                }
            }
            matched.push(of_filter);
        }
        let records: Vec<MetadataRecord> = removed
            .into_iter()
            .map(|id| MetadataRecord::RemoveAccessControlEntry { id })
            .collect();
        if !records.is_empty() {
            changes.push(records)?;
        }
        Ok(self.finish(offset, changes, matched))
    }

    /// AlterPartition from a partition leader, checked as Kafka's controller does. Returns
    /// the partition as it stands afterwards.
    pub fn alter_partition(
        &mut self,
        offset: u64,
        request: &IsrChange,
    ) -> Result<Outcome<PartitionRegistration>, Error> {
        self.check_broker_epoch(request.broker_id, request.broker_epoch)?;
        let topic = self
            .image
            .topic_by_id(request.topic_id)
            .ok_or(Error::UnknownTopicId)?
            .clone();
        let current = usize::try_from(request.partition)
            .ok()
            .and_then(|p| topic.partitions.get(p))
            .ok_or(Error::UnknownTopicOrPartition)?
            .clone();
        if request.leader_epoch != current.leader_epoch {
            return Err(Error::FencedLeaderEpoch {
                got: request.leader_epoch,
                current: current.leader_epoch,
            });
        }
        if request.broker_id != current.leader {
            return Err(Error::InvalidRequest(format!(
                "broker {} is not the leader of {}-{}",
                request.broker_id, topic.name, request.partition
            )));
        }
        if request.partition_epoch != current.partition_epoch {
            return Err(Error::InvalidUpdateVersion {
                got: request.partition_epoch,
                current: current.partition_epoch,
            });
        }
        if !request.new_isr.contains(&request.broker_id) {
            return Err(Error::InvalidRequest(
                "the leader must be in the new ISR".into(),
            ));
        }
        for replica in &request.new_isr {
            if !current.replicas.contains(replica) {
                return Err(Error::InvalidRequest(format!(
                    "{replica} is not a replica of {}-{}",
                    topic.name, request.partition
                )));
            }
            if !current.isr.contains(replica) && !self.image.is_active(*replica) {
                return Err(Error::IneligibleReplica(
                    *replica,
                    "fenced or shutting down".into(),
                ));
            }
        }
        let mut isr = request.new_isr.clone();
        isr.sort_by_key(|r| current.replicas.iter().position(|x| x == r));
        isr.dedup();
        let mut changes = Changes::new(&self.image);
        if isr != current.isr {
            changes.push(vec![MetadataRecord::PartitionChange {
                topic_id: topic.id,
                partition_id: request.partition,
                leader: None,
                isr: Some(isr),
                replicas: None,
            }])?;
        }
        let now = changes
            .image
            .partition(&topic.name, request.partition)
            .cloned()
            .unwrap_or(current);
        Ok(self.finish(offset, changes, now))
    }

    /// ElectLeaders for one partition, with Kafka's answers.
    pub fn elect_leader(
        &mut self,
        offset: u64,
        topic: &str,
        partition: i32,
        election: Election,
    ) -> Result<Outcome<()>, Error> {
        let topic_image = self
            .image
            .topic(topic)
            .ok_or(Error::UnknownTopicOrPartition)?
            .clone();
        let current = usize::try_from(partition)
            .ok()
            .and_then(|p| topic_image.partitions.get(p))
            .ok_or(Error::UnknownTopicOrPartition)?;
        let change = match election {
            Election::Preferred => {
                let preferred = current.replicas.first().copied().unwrap_or(NO_LEADER);
                if current.leader == preferred {
                    return Err(Error::ElectionNotNeeded);
                }
                if !current.isr.contains(&preferred) || !self.image.is_active(preferred) {
                    return Err(Error::PreferredLeaderNotAvailable);
                }
                (preferred, current.isr.clone())
            }
            Election::Unclean => {
                if current.leader != NO_LEADER {
                    return Err(Error::ElectionNotNeeded);
                }
                match choose_leader(&self.image, current, &current.isr, None, true) {
                    Some(choice) => choice,
                    None => return Err(Error::EligibleLeadersNotAvailable),
                }
            }
        };
        let mut changes = Changes::new(&self.image);
        changes.push(vec![MetadataRecord::PartitionChange {
            topic_id: topic_image.id,
            partition_id: partition,
            leader: Some(change.0),
            isr: (change.1 != current.isr).then_some(change.1),
            replicas: None,
        }])?;
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

/// Whether `broker` leads a partition that another in-sync, active replica could lead.
fn leads_any(image: &MetadataImage, broker: i32) -> bool {
    image.topics.values().any(|t| {
        t.partitions.iter().any(|p| {
            p.leader == broker && p.isr.iter().any(|r| *r != broker && image.is_active(*r))
        })
    })
}

fn unclean_allowed(config: &ControlConfig, topic: &crate::metadata::image::TopicImage) -> bool {
    topic
        .configs
        .get("unclean.leader.election.enable")
        .map_or(config.unclean_leader_election, |v| {
            v.eq_ignore_ascii_case("true")
        })
}

/// A leader for a partition: the first replica (preference order) in `isr` that is active
/// and not `excluded`; with `unclean`, failing that, any active replica, which then is the
/// whole ISR. Returns (leader, isr).
fn choose_leader(
    image: &MetadataImage,
    partition: &PartitionRegistration,
    isr: &[i32],
    excluded: Option<i32>,
    unclean: bool,
) -> Option<(i32, Vec<i32>)> {
    let eligible = |r: &&i32| Some(**r) != excluded && image.is_active(**r);
    if let Some(leader) = partition
        .replicas
        .iter()
        .filter(|r| isr.contains(r))
        .find(eligible)
    {
        return Some((*leader, isr.to_vec()));
    }
    if unclean {
        return partition
            .replicas
            .iter()
            .find(eligible)
            .map(|r| (*r, vec![*r]));
    }
    None
}

/// The partition changes when `broker` can no longer lead or be in sync (fenced, shutting
/// down, restarted): out of every ISR it is in, unless it is the last member (an ISR is
/// never empty: the last member is the one that has everything committed); a new leader
/// where it led, from the remaining ISR (or any live replica for unclean elections), or none.
fn leader_and_isr_updates(
    config: &ControlConfig,
    image: &MetadataImage,
    broker: i32,
) -> Vec<MetadataRecord> {
    let mut records = Vec::new();
    for topic in image.topics.values() {
        for (p, partition) in topic.partitions.iter().enumerate() {
            let in_isr = partition.isr.contains(&broker);
            if !in_isr && partition.leader != broker {
                continue;
            }
            let mut isr = partition.isr.clone();
            if in_isr && isr.len() > 1 {
                isr.retain(|r| *r != broker);
            }
            let (leader, isr) = if partition.leader == broker || partition.leader == NO_LEADER {
                choose_leader(
                    image,
                    partition,
                    &isr,
                    Some(broker),
                    unclean_allowed(config, topic),
                )
                .unwrap_or((NO_LEADER, isr))
            } else {
                (partition.leader, isr)
            };
            if leader == partition.leader && isr == partition.isr {
                continue;
            }
            records.push(MetadataRecord::PartitionChange {
                topic_id: topic.id,
                partition_id: p as i32,
                leader: (leader != partition.leader).then_some(leader),
                isr: (isr != partition.isr).then_some(isr),
                replicas: None,
            });
        }
    }
    records
}

/// Leaders for partitions of `broker` that have none, now that it is back.
fn elect_for_leaderless(
    config: &ControlConfig,
    image: &MetadataImage,
    broker: i32,
) -> Vec<MetadataRecord> {
    let mut records = Vec::new();
    for topic in image.topics.values() {
        for (p, partition) in topic.partitions.iter().enumerate() {
            if partition.leader != NO_LEADER || !partition.replicas.contains(&broker) {
                continue;
            }
            let unclean = unclean_allowed(config, topic);
            if let Some((leader, isr)) =
                choose_leader(image, partition, &partition.isr, None, unclean)
            {
                records.push(MetadataRecord::PartitionChange {
                    topic_id: topic.id,
                    partition_id: p as i32,
                    leader: Some(leader),
                    isr: (isr != partition.isr).then_some(isr),
                    replicas: None,
                });
            }
        }
    }
    records
}

/// Active brokers in placement order: by id, or interleaved across racks when racks are set.
fn placement_order(image: &MetadataImage) -> Vec<i32> {
    let active: Vec<_> = image.active_brokers().collect();
    if active.iter().all(|b| b.rack.is_none()) {
        return active.iter().map(|b| b.id).collect();
    }
    let mut by_rack: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for broker in &active {
        by_rack
            .entry(broker.rack.as_deref().unwrap_or(""))
            .or_default()
            .push(broker.id);
    }
    let mut order = Vec::with_capacity(active.len());
    for round in 0.. {
        let before = order.len();
        for brokers in by_rack.values() {
            if let Some(id) = brokers.get(round) {
                order.push(*id);
            }
        }
        if order.len() == before {
            break;
        }
    }
    order
}

fn place(
    image: &MetadataImage,
    partitions: std::ops::Range<i32>,
    replication_factor: i32,
) -> Result<Vec<Vec<i32>>, Error> {
    let brokers = placement_order(image);
    let n = brokers.len();
    if replication_factor as usize > n || n == 0 {
        return Err(Error::InvalidReplicationFactor(format!(
            "Unable to replicate the partition {replication_factor} time(s): The target replication factor of {replication_factor} cannot be reached because only {n} broker(s) are registered."
        )));
    }
    Ok(partitions
        .map(|p| {
            (0..replication_factor as usize)
                .map(|j| brokers[(p as usize + j) % n])
                .collect()
        })
        .collect())
}

fn check_assignments(image: &MetadataImage, assignments: &[Vec<i32>]) -> Result<(), Error> {
    for (p, replicas) in assignments.iter().enumerate() {
        if replicas.is_empty() {
            return Err(Error::InvalidReplicaAssignment(format!(
                "partition {p} has no replicas"
            )));
        }
        let mut seen = replicas.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != replicas.len() {
            return Err(Error::InvalidReplicaAssignment(format!(
                "partition {p} lists a broker twice: {replicas:?}"
            )));
        }
        if let Some(unknown) = replicas.iter().find(|b| !image.brokers.contains_key(b)) {
            return Err(Error::InvalidReplicaAssignment(format!(
                "broker {unknown} is not registered"
            )));
        }
        if !replicas.iter().any(|r| image.is_active(*r)) {
            return Err(Error::InvalidReplicaAssignment(format!(
                "all brokers assigned to partition {p} are fenced or in controlled shutdown"
            )));
        }
    }
    if assignments.windows(2).any(|w| w[0].len() != w[1].len()) {
        return Err(Error::InvalidReplicaAssignment(
            "all partitions must have the same number of replicas".into(),
        ));
    }
    Ok(())
}

/// Partition records for new partitions `first..`: the active replicas in sync, the first
/// of them leading (placement only uses active brokers; explicit assignments have one).
fn partition_records(
    image: &MetadataImage,
    topic_id: Uuid,
    first: i32,
    assignments: &[Vec<i32>],
) -> Vec<MetadataRecord> {
    assignments
        .iter()
        .enumerate()
        .map(|(i, replicas)| {
            let isr: Vec<i32> = replicas
                .iter()
                .copied()
                .filter(|r| image.is_active(*r))
                .collect();
            MetadataRecord::Partition {
                topic_id,
                partition_id: first + i as i32,
                replicas: replicas.clone(),
                leader: isr.first().copied().unwrap_or(NO_LEADER),
                isr,
                leader_epoch: 0,
                partition_epoch: 0,
            }
        })
        .collect()
}

/// The config records that turn a resource's `current` overrides into exactly `wanted`.
fn config_changes(
    resource: ConfigResource,
    resource_name: &str,
    current: &BTreeMap<String, String>,
    wanted: &BTreeMap<String, String>,
) -> Vec<MetadataRecord> {
    let config = |key: &String, value: Option<&String>| MetadataRecord::Config {
        resource,
        resource_name: resource_name.to_string(),
        name: key.clone(),
        value: value.cloned(),
    };
    let mut records: Vec<MetadataRecord> = current
        .keys()
        .filter(|k| !wanted.contains_key(*k))
        .map(|k| config(k, None))
        .collect();
    records.extend(
        wanted
            .iter()
            .filter(|(k, v)| current.get(*k) != Some(*v))
            .map(|(k, v)| config(k, Some(v))),
    );
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION_MS: i64 = 9_000;

    /// A controller with a log offset counter: each operation is the next entry.
    struct Harness {
        control: ClusterControl,
        offset: u64,
        epochs: BTreeMap<i32, i64>,
        now: i64,
    }

    impl Harness {
        fn new(unclean: bool) -> Self {
            let config = ControlConfig {
                own_node: 100,
                broker_session_timeout_ms: SESSION_MS,
                default_partitions: 1,
                default_replication_factor: 1,
                unclean_leader_election: unclean,
            };
            let mut control = ClusterControl::activate(config, MetadataImage::default(), 0);
            control.bootstrap(1, "cluster-a", &[]).unwrap();
            Self {
                control,
                offset: 1,
                epochs: BTreeMap::new(),
                now: 0,
            }
        }

        fn next(&mut self) -> u64 {
            self.offset += 1;
            self.offset
        }

        fn register_as(&mut self, id: i32, rack: Option<&str>) -> Result<i64, Error> {
            let offset = self.next();
            let request = BrokerRegistrationRequest {
                broker_id: id,
                cluster_id: "cluster-a".into(),
                incarnation_id: Uuid::new_v4(),
                endpoints: vec![Endpoint {
                    name: "PLAINTEXT".into(),
                    host: "127.0.0.1".into(),
                    port: 9000 + id as u16,
                    security_protocol: 0,
                }],
                rack: rack.map(str::to_string),
            };
            let epoch = self
                .control
                .register_broker(offset, request, self.now)?
                .reply;
            self.epochs.insert(id, epoch);
            Ok(epoch)
        }

        fn heartbeat(&mut self, id: i32, shutdown: bool) -> Result<HeartbeatReply, Error> {
            let offset = self.next();
            let request = HeartbeatRequest {
                broker_id: id,
                broker_epoch: self.epochs[&id],
                metadata_offset: offset,
                want_fence: false,
                want_shutdown: shutdown,
            };
            Ok(self.control.heartbeat(offset, request, self.now)?.reply)
        }

        fn start(&mut self, ids: &[i32]) {
            for id in ids {
                self.register_as(*id, None).unwrap();
                assert!(!self.heartbeat(*id, false).unwrap().is_fenced);
            }
        }

        /// Time passes; only `alive` keep heartbeating (every 2 s, as brokers do).
        fn advance(&mut self, ms: i64, alive: &[i32]) -> Vec<i32> {
            let mut fenced = Vec::new();
            let end = self.now + ms;
            while self.now < end {
                self.now = (self.now + 2_000).min(end);
                for id in alive {
                    self.heartbeat(*id, false).unwrap();
                }
                let offset = self.next();
                fenced.extend(self.control.tick(offset, self.now).unwrap().reply);
            }
            fenced
        }

        fn create(
            &mut self,
            name: &str,
            partitions: i32,
            rf: i16,
            configs: &[(&str, &str)],
        ) -> Uuid {
            let offset = self.next();
            let request = TopicRequest {
                name: name.into(),
                partitions,
                replication_factor: rf,
                assignments: Vec::new(),
                configs: configs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            };
            self.control
                .create_topic(offset, request, false)
                .unwrap()
                .reply
                .0
        }

        fn partition(&self, topic: &str, p: i32) -> PartitionRegistration {
            self.control.image().partition(topic, p).unwrap().clone()
        }

        fn alter_isr(
            &mut self,
            topic_id: Uuid,
            p: i32,
            by: i32,
            isr: &[i32],
        ) -> Result<PartitionRegistration, Error> {
            let name = self
                .control
                .image()
                .topic_by_id(topic_id)
                .unwrap()
                .name
                .clone();
            let current = self.partition(&name, p);
            let offset = self.next();
            let request = IsrChange {
                broker_id: by,
                broker_epoch: self.epochs[&by],
                topic_id,
                partition: p,
                leader_epoch: current.leader_epoch,
                partition_epoch: current.partition_epoch,
                new_isr: isr.to_vec(),
            };
            Ok(self.control.alter_partition(offset, &request)?.reply)
        }
    }

    #[test]
    fn replicas_are_placed_round_robin_and_the_first_replica_leads() {
        let mut h = Harness::new(false);
        h.start(&[1, 2, 3]);
        h.create("t", 4, 3, &[]);
        let placed: Vec<(Vec<i32>, i32)> = (0..4)
            .map(|p| {
                let r = h.partition("t", p);
                (r.replicas, r.leader)
            })
            .collect();
        assert_eq!(
            placed,
            vec![
                (vec![1, 2, 3], 1),
                (vec![2, 3, 1], 2),
                (vec![3, 1, 2], 3),
                (vec![1, 2, 3], 1)
            ]
        );
        let offset = h.next();
        let too_many = TopicRequest {
            name: "u".into(),
            partitions: 1,
            replication_factor: 4,
            assignments: Vec::new(),
            configs: BTreeMap::new(),
        };
        assert!(matches!(
            h.control.create_topic(offset, too_many, false),
            Err(Error::InvalidReplicationFactor(_))
        ));
        // Brokers not yet unfenced are not placed on.
        h.register_as(4, None).unwrap();
        h.create("v", 4, 3, &[]);
        assert!((0..4).all(|p| !h.partition("v", p).replicas.contains(&4)));
    }

    /// A partition count from the wire must not size the records unchecked (a request for
    /// 2^31 - 1 partitions aborted the process): over Kafka's cap the request is refused
    /// before anything is placed, with or without `validate_only`.
    #[test]
    fn too_many_partitions_are_a_policy_violation() {
        let mut h = Harness::new(false);
        h.start(&[1]);
        for (partitions, validate_only) in [(i32::MAX, false), (i32::MAX, true), (10_001, false)] {
            let offset = h.next();
            let request = TopicRequest {
                name: "huge".into(),
                partitions,
                replication_factor: 1,
                assignments: Vec::new(),
                configs: BTreeMap::new(),
            };
            match h.control.create_topic(offset, request, validate_only) {
                Err(Error::PolicyViolation(message)) => assert_eq!(message, TOO_MANY_PARTITIONS),
                other => panic!("{partitions} partitions: {other:?}"),
            }
        }
        h.create("t", 1, 1, &[]);
        let offset = h.next();
        assert!(matches!(
            h.control
                .create_partitions(offset, "t", i32::MAX, None, false),
            Err(Error::PolicyViolation(_))
        ));
        let offset = h.next();
        h.control
            .create_partitions(offset, "t", 10_001, None, true)
            .unwrap();
    }

    #[test]
    fn placement_alternates_racks() {
        let mut h = Harness::new(false);
        for (id, rack) in [(1, "a"), (2, "a"), (3, "b"), (4, "b")] {
            h.register_as(id, Some(rack)).unwrap();
            h.heartbeat(id, false).unwrap();
        }
        h.create("t", 4, 2, &[]);
        let rack = |id: i32| if id <= 2 { "a" } else { "b" };
        for p in 0..4 {
            let replicas = h.partition("t", p).replicas;
            assert_ne!(
                rack(replicas[0]),
                rack(replicas[1]),
                "partition {p}: {replicas:?}"
            );
        }
    }

    #[test]
    fn a_silent_leader_is_fenced_and_a_new_leader_is_elected_from_the_isr() {
        let mut h = Harness::new(false);
        h.start(&[1, 2, 3]);
        let id = h.create("t", 3, 3, &[]);
        let before = h.partition("t", 0);
        assert_eq!(before.leader, 1);
        // Sessions survive as long as heartbeats come.
        assert!(h.advance(SESSION_MS * 3, &[1, 2, 3]).is_empty());
        // Broker 1 goes quiet: fenced once its session runs out, not before.
        assert!(h.advance(SESSION_MS - 1_000, &[2, 3]).is_empty());
        assert_eq!(h.advance(2_000, &[2, 3]), vec![1]);
        let after = h.partition("t", 0);
        assert_eq!(after.leader, 2);
        assert_eq!(after.leader_epoch, before.leader_epoch + 1);
        assert_eq!(after.isr, vec![2, 3]);
        for p in 1..3 {
            assert!(!h.partition("t", p).isr.contains(&1));
        }
        // The deposed leader cannot change the ISR with its old epoch: no split brain.
        let offset = h.next();
        let stale = IsrChange {
            broker_id: 1,
            broker_epoch: h.epochs[&1],
            topic_id: id,
            partition: 0,
            leader_epoch: before.leader_epoch,
            partition_epoch: before.partition_epoch,
            new_isr: vec![1],
        };
        assert!(matches!(
            h.control.alter_partition(offset, &stale),
            Err(Error::FencedLeaderEpoch { .. })
        ));
        // Nor may the new leader add the fenced broker back.
        assert!(matches!(
            h.alter_isr(id, 0, 2, &[1, 2, 3]),
            Err(Error::IneligibleReplica(1, _))
        ));
        // Broker 1 heartbeats again (a healed network partition): unfenced, but still out
        // of the ISR and not leading until the leader takes it back.
        assert!(!h.heartbeat(1, false).unwrap().is_fenced);
        let healed = h.partition("t", 0);
        assert_eq!((healed.leader, healed.isr), (2, vec![2, 3]));
        let rejoined = h.alter_isr(id, 0, 2, &[1, 2, 3]).unwrap();
        assert_eq!(rejoined.isr, vec![1, 2, 3], "ISR kept in replica order");
        assert_eq!(
            rejoined.leader, 2,
            "no automatic move back to the preferred leader"
        );
        // ElectLeaders moves it back.
        let offset = h.next();
        h.control
            .elect_leader(offset, "t", 0, Election::Preferred)
            .unwrap();
        assert_eq!(h.partition("t", 0).leader, 1);
        let offset = h.next();
        assert!(matches!(
            h.control.elect_leader(offset, "t", 0, Election::Preferred),
            Err(Error::ElectionNotNeeded)
        ));
    }

    #[test]
    fn the_last_in_sync_replica_keeps_the_partition_until_it_returns() {
        let mut h = Harness::new(false);
        h.start(&[1, 2, 3]);
        h.create("t", 1, 3, &[]);
        assert_eq!(h.advance(SESSION_MS + 2_000, &[1, 2]), vec![3]);
        assert_eq!(h.advance(SESSION_MS + 2_000, &[1]), vec![2]);
        let one_left = h.partition("t", 0);
        assert_eq!((one_left.leader, one_left.isr.clone()), (1, vec![1]));
        assert_eq!(h.advance(SESSION_MS + 2_000, &[]), vec![1]);
        let none_left = h.partition("t", 0);
        assert_eq!(none_left.leader, NO_LEADER);
        assert_eq!(none_left.isr, vec![1], "the ISR is never empty");
        // Broker 3 returns first: not in sync, so without unclean election nobody leads.
        h.register_as(3, None).unwrap();
        h.heartbeat(3, false).unwrap();
        assert_eq!(h.partition("t", 0).leader, NO_LEADER);
        let offset = h.next();
        assert!(matches!(
            h.control.elect_leader(offset, "t", 0, Election::Preferred),
            Err(Error::PreferredLeaderNotAvailable)
        ));
        // The last in-sync replica comes back and leads again.
        h.register_as(1, None).unwrap();
        h.heartbeat(1, false).unwrap();
        let back = h.partition("t", 0);
        assert_eq!((back.leader, back.isr), (1, vec![1]));
    }

    #[test]
    fn unclean_election_takes_any_live_replica_when_allowed() {
        let mut h = Harness::new(false);
        h.start(&[1, 2]);
        h.create("safe", 1, 2, &[]);
        h.create("lossy", 1, 2, &[("unclean.leader.election.enable", "true")]);
        // 2 drops out of the ISRs, then 1 (the last in sync) dies while 2 is back.
        assert_eq!(h.advance(SESSION_MS + 2_000, &[1]), vec![2]);
        h.register_as(2, None).unwrap();
        h.heartbeat(2, false).unwrap();
        assert_eq!(h.advance(SESSION_MS + 2_000, &[2]), vec![1]);
        assert_eq!(h.partition("safe", 0).leader, NO_LEADER);
        let lossy = h.partition("lossy", 0);
        assert_eq!((lossy.leader, lossy.isr), (2, vec![2]));
        // An operator may force it for the other topic.
        let offset = h.next();
        h.control
            .elect_leader(offset, "safe", 0, Election::Unclean)
            .unwrap();
        assert_eq!(h.partition("safe", 0).leader, 2);
    }

    #[test]
    fn controlled_shutdown_moves_leadership_before_the_broker_may_stop() {
        let mut h = Harness::new(false);
        h.start(&[1, 2, 3]);
        h.create("t", 3, 2, &[]);
        // Broker 1 leads partition 0 and is a follower of partition 2.
        let reply = h.heartbeat(1, true).unwrap();
        assert!(reply.should_shutdown);
        assert!(reply.is_fenced);
        for p in 0..3 {
            let r = h.partition("t", p);
            assert_ne!(r.leader, 1);
            assert!(!r.isr.contains(&1));
        }
        assert_eq!(h.partition("t", 0).leader, 2);
        // New topics avoid it.
        h.create("u", 3, 2, &[]);
        assert!((0..3).all(|p| !h.partition("u", p).replicas.contains(&1)));
    }

    #[test]
    fn registration_rules() {
        let mut h = Harness::new(false);
        h.start(&[1]);
        let epoch = h.epochs[&1];
        // A live broker's id cannot be taken by another process...
        assert!(matches!(
            h.register_as(1, None),
            Err(Error::DuplicateBrokerRegistration(1))
        ));
        h.epochs.insert(1, epoch);
        // ... until its session ends.
        h.advance(SESSION_MS + 2_000, &[]);
        let new_epoch = h.register_as(1, None).unwrap();
        assert!(new_epoch > epoch);
        h.epochs.insert(1, epoch);
        assert!(matches!(
            h.heartbeat(1, false),
            Err(Error::StaleBrokerEpoch { .. })
        ));
        let offset = h.next();
        let wrong_cluster = BrokerRegistrationRequest {
            broker_id: 5,
            cluster_id: "other".into(),
            incarnation_id: Uuid::new_v4(),
            endpoints: Vec::new(),
            rack: None,
        };
        assert!(matches!(
            h.control.register_broker(offset, wrong_cluster, 0),
            Err(Error::InconsistentClusterId { .. })
        ));
        // A registered broker stays fenced until it has caught up with its registration.
        let offset = h.next();
        let request = HeartbeatRequest {
            broker_id: 1,
            broker_epoch: new_epoch,
            metadata_offset: new_epoch as u64 - 1,
            want_fence: false,
            want_shutdown: false,
        };
        let reply = h.control.heartbeat(offset, request, h.now).unwrap().reply;
        assert!(reply.is_fenced && !reply.is_caught_up);
    }

    #[test]
    fn alter_partition_checks_the_partition_epoch_and_membership() {
        let mut h = Harness::new(false);
        h.start(&[1, 2, 3]);
        let id = h.create("t", 1, 3, &[]);
        let shrunk = h.alter_isr(id, 0, 1, &[1, 2]).unwrap();
        assert_eq!(shrunk.isr, vec![1, 2]);
        assert_eq!(shrunk.partition_epoch, 1);
        assert_eq!(shrunk.leader_epoch, 0, "ISR changes keep the leader epoch");
        let offset = h.next();
        let outdated = IsrChange {
            broker_id: 1,
            broker_epoch: h.epochs[&1],
            topic_id: id,
            partition: 0,
            leader_epoch: 0,
            partition_epoch: 0,
            new_isr: vec![1],
        };
        assert!(matches!(
            h.control.alter_partition(offset, &outdated),
            Err(Error::InvalidUpdateVersion { .. })
        ));
        assert!(matches!(
            h.alter_isr(id, 0, 2, &[2]),
            Err(Error::InvalidRequest(_))
        ));
        assert!(matches!(
            h.alter_isr(id, 0, 1, &[2, 3]),
            Err(Error::InvalidRequest(_))
        ));
        assert!(matches!(
            h.alter_isr(id, 0, 1, &[1, 7]),
            Err(Error::InvalidRequest(_))
        ));
    }

    #[test]
    fn topic_admin_and_producer_id_blocks() {
        let mut h = Harness::new(false);
        h.start(&[1, 2]);
        h.create("t", 2, 2, &[("retention.ms", "1000")]);
        let offset = h.next();
        h.control
            .create_partitions(offset, "t", 5, None, false)
            .unwrap();
        assert_eq!(h.partition("t", 4).replicas, vec![1, 2]);
        let offset = h.next();
        let configs = [("cleanup.policy".to_string(), "compact".to_string())].into();
        h.control
            .set_topic_configs(offset, "t", configs, false)
            .unwrap();
        let topic = h.control.image().topic("t").unwrap().clone();
        assert_eq!(topic.configs.len(), 1);
        assert_eq!(topic.configs["cleanup.policy"], "compact");
        let offset = h.next();
        let first = h
            .control
            .allocate_producer_ids(offset, 1, h.epochs[&1])
            .unwrap()
            .reply;
        let offset = h.next();
        let second = h
            .control
            .allocate_producer_ids(offset, 2, h.epochs[&2])
            .unwrap()
            .reply;
        assert_eq!(second.0, first.0 + first.1);
        let offset = h.next();
        h.control.delete_topic(offset, "t").unwrap();
        assert!(h.control.image().topic("t").is_none());
    }
}
