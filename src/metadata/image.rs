//! The cluster as the committed metadata log describes it (KRaft's `MetadataImage`): brokers,
//! topics with their partitions' replicas, ISR and leaders, dynamic configs and the producer
//! id high-water mark. Built by applying [`MetadataRecord`]s in log order. Cheap to clone:
//! topics are shared `Arc`s, so a node keeps the previous image and diffs it against the new
//! one to learn which partitions it must lead, follow or drop.

use super::records::{ConfigResource, Endpoint, MetadataRecord, NO_LEADER, Reassignment};
use std::collections::BTreeMap;
use std::sync::Arc;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerRegistration {
    pub id: i32,
    pub incarnation_id: Uuid,
    pub epoch: i64,
    pub endpoints: Vec<Endpoint>,
    pub rack: Option<String>,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
    /// Its online log directories (KIP-858); empty when it reported none.
    pub log_dirs: Vec<Uuid>,
}

impl BrokerRegistration {
    /// May lead partitions and be placed on: registered, unfenced, not shutting down.
    pub fn is_active(&self) -> bool {
        !self.fenced && !self.in_controlled_shutdown
    }

    pub fn endpoint(&self, listener: &str) -> Option<&Endpoint> {
        self.endpoints.iter().find(|e| e.name == listener)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRegistration {
    /// Preferred replica first (while a reassignment is in progress, the target replicas
    /// first, then those it removes).
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    /// [`NO_LEADER`] when no replica can lead.
    pub leader: i32,
    pub leader_epoch: i32,
    /// Bumped by every change (AlterPartition's `partitionEpoch`).
    pub partition_epoch: i32,
    /// A reassignment in progress (empty when none).
    pub reassignment: Reassignment,
    /// The log directory of each replica that reported one (AssignReplicasToDirs).
    pub directories: BTreeMap<i32, Uuid>,
}

impl PartitionRegistration {
    pub fn leader(&self) -> Option<i32> {
        (self.leader != NO_LEADER).then_some(self.leader)
    }

    /// The replicas a reassignment in progress moves the partition to (the replicas when
    /// none is).
    pub fn target_replicas(&self) -> Vec<i32> {
        self.replicas
            .iter()
            .copied()
            .filter(|r| !self.reassignment.removing.contains(r))
            .collect()
    }

    /// The replicas before the reassignment in progress (the replicas when none is).
    pub fn original_replicas(&self) -> Vec<i32> {
        self.replicas
            .iter()
            .copied()
            .filter(|r| !self.reassignment.adding.contains(r))
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicImage {
    pub name: Arc<str>,
    pub id: Uuid,
    /// Indexed by partition id. Each shared: a change to one partition copies the topic's
    /// list of pointers, not every partition's registration (and the diff against the
    /// previous image passes the unchanged ones by pointer).
    pub partitions: Vec<Arc<PartitionRegistration>>,
    /// Topic config overrides.
    pub configs: BTreeMap<String, String>,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("metadata record does not apply: {0}")]
pub struct ApplyError(pub String);

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataImage {
    /// The log offset (Raft index) of the last record applied; 0 before any.
    pub offset: u64,
    pub cluster_id: Option<String>,
    pub brokers: BTreeMap<i32, BrokerRegistration>,
    /// Persistent maps: the copy [`MetadataImage::apply`] makes of the image for each entry
    /// shares every node but those on the paths to what changed, and [`local_changes`] skips
    /// the shared subtrees (a change to one of 20,000 topics costs no walk over the rest).
    pub topics: imbl::OrdMap<Arc<str>, Arc<TopicImage>>,
    pub topic_names: imbl::OrdMap<Uuid, Arc<str>>,
    pub broker_configs: BTreeMap<String, BTreeMap<String, String>>,
    /// Dynamic group configs by group id.
    pub group_configs: BTreeMap<String, BTreeMap<String, String>>,
    /// Producer ids below this were handed out.
    pub next_producer_id: i64,
    /// ACLs by id.
    pub acls: BTreeMap<Uuid, super::acl::AclBinding>,
    /// SCRAM credentials by user and mechanism type id.
    pub scram_credentials: BTreeMap<String, BTreeMap<i8, super::records::ScramCredentialRecord>>,
    /// Client quotas by entity (KIP-546).
    pub client_quotas: super::quota::ClientQuotas,
    /// Feature levels set by UpdateFeatures, by name (the others run at their defaults).
    pub feature_levels: BTreeMap<String, i16>,
    /// Delegation tokens (KIP-48) by token id.
    pub delegation_tokens: BTreeMap<String, super::records::DelegationTokenData>,
    /// The voters of a dynamic controller quorum (KIP-853) by node id; empty for a quorum
    /// of `controller.quorum.voters`.
    pub quorum_voters: BTreeMap<i32, QuorumVoter>,
    /// Registered controller nodes (KIP-919) by node id: voters and observers alike, until
    /// UnregisterController forgets one.
    pub controllers: BTreeMap<i32, ControllerRegistration>,
}

/// A controller node's registration: the incarnation that wrote it and its listeners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerRegistration {
    pub incarnation_id: Uuid,
    pub endpoints: Vec<Endpoint>,
}

/// A voter of a dynamic controller quorum: its directory id and controller listeners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumVoter {
    pub directory_id: Uuid,
    pub endpoints: Vec<Endpoint>,
}

impl QuorumVoter {
    /// The voter's `listener` (the controller listener), else its first.
    pub fn endpoint(&self, listener: &str) -> Option<&Endpoint> {
        self.endpoints
            .iter()
            .find(|e| e.name == listener)
            .or_else(|| self.endpoints.first())
    }

    /// `host:port` of [`QuorumVoter::endpoint`].
    pub fn address(&self, listener: &str) -> Option<String> {
        let endpoint = self.endpoint(listener)?;
        Some(format!("{}:{}", endpoint.host, endpoint.port))
    }
}

impl MetadataImage {
    /// The level `feature` runs at (its default unless UpdateFeatures set one).
    pub fn feature_level(&self, feature: &str) -> i16 {
        if feature == super::features::KRAFT_VERSION {
            return self.kraft_version();
        }
        super::features::finalized_level(&self.feature_levels, feature)
    }

    /// `kraft.version`: 1 for a dynamic quorum (its voters are in the metadata), else 0.
    pub fn kraft_version(&self) -> i16 {
        i16::from(!self.quorum_voters.is_empty())
    }

    /// The levels UpdateFeatures set, and `kraft.version` as the quorum runs it.
    pub fn finalized_feature_levels(&self) -> BTreeMap<String, i16> {
        let mut levels = self.feature_levels.clone();
        levels.insert(
            super::features::KRAFT_VERSION.to_string(),
            self.kraft_version(),
        );
        levels
    }

    pub fn topic(&self, name: &str) -> Option<&Arc<TopicImage>> {
        self.topics.get(name)
    }

    pub fn topic_by_id(&self, id: Uuid) -> Option<&Arc<TopicImage>> {
        self.topic_names.get(&id).and_then(|n| self.topics.get(n))
    }

    pub fn partition(&self, topic: &str, partition: i32) -> Option<&PartitionRegistration> {
        self.topic(topic)?
            .partitions
            .get(usize::try_from(partition).ok()?)
            .map(|registration| &**registration)
    }

    /// Brokers that may lead partitions and receive new replicas.
    pub fn active_brokers(&self) -> impl Iterator<Item = &BrokerRegistration> {
        self.brokers.values().filter(|b| b.is_active())
    }

    pub fn is_active(&self, broker: i32) -> bool {
        self.brokers.get(&broker).is_some_and(|b| b.is_active())
    }

    /// Whether `broker`'s replica of `partition` is in a log directory the broker reported
    /// offline (or that it no longer registers): such a replica can neither lead nor be in
    /// sync. A replica with no directory assigned yet counts as online (Kafka's rule).
    pub fn replica_dir_offline(&self, partition: &PartitionRegistration, broker: i32) -> bool {
        let Some(directory) = partition.directories.get(&broker) else {
            return false;
        };
        self.brokers
            .get(&broker)
            .is_some_and(|b| !b.log_dirs.is_empty() && !b.log_dirs.contains(directory))
    }

    /// Active, with its replica of `partition` in an online log directory.
    pub fn replica_online(&self, partition: &PartitionRegistration, broker: i32) -> bool {
        self.is_active(broker) && !self.replica_dir_offline(partition, broker)
    }

    /// Brokers not fenced (controlled shutdown included: they still serve until they stop).
    pub fn is_unfenced(&self, broker: i32) -> bool {
        self.brokers.get(&broker).is_some_and(|b| !b.fenced)
    }

    /// Records that rebuild this image from an empty one (a snapshot's contents).
    pub fn to_records(&self) -> Vec<MetadataRecord> {
        let mut records = Vec::new();
        if let Some(cluster_id) = &self.cluster_id {
            records.push(MetadataRecord::ClusterId {
                cluster_id: cluster_id.clone(),
            });
        }
        for broker in self.brokers.values() {
            records.push(MetadataRecord::RegisterBroker {
                broker_id: broker.id,
                incarnation_id: broker.incarnation_id,
                broker_epoch: broker.epoch,
                endpoints: broker.endpoints.clone(),
                rack: broker.rack.clone(),
                fenced: broker.fenced,
                log_dirs: broker.log_dirs.clone(),
            });
            if broker.in_controlled_shutdown {
                records.push(MetadataRecord::BrokerRegistrationChange {
                    broker_id: broker.id,
                    broker_epoch: broker.epoch,
                    fenced: None,
                    in_controlled_shutdown: Some(true),
                    log_dirs: None,
                });
            }
        }
        for topic in self.topics.values() {
            records.push(MetadataRecord::Topic {
                name: topic.name.to_string(),
                topic_id: topic.id,
            });
            for (name, value) in &topic.configs {
                records.push(MetadataRecord::Config {
                    resource: ConfigResource::Topic,
                    resource_name: topic.name.to_string(),
                    name: name.clone(),
                    value: Some(value.clone()),
                });
            }
            for (p, partition) in topic.partitions.iter().enumerate() {
                records.push(MetadataRecord::Partition {
                    topic_id: topic.id,
                    partition_id: p as i32,
                    replicas: partition.replicas.clone(),
                    isr: partition.isr.clone(),
                    leader: partition.leader,
                    leader_epoch: partition.leader_epoch,
                    partition_epoch: partition.partition_epoch,
                    reassignment: (!partition.reassignment.is_empty())
                        .then(|| partition.reassignment.clone()),
                });
                for (broker, directory) in &partition.directories {
                    records.push(MetadataRecord::ReplicaDirectory {
                        topic_id: topic.id,
                        partition_id: p as i32,
                        broker_id: *broker,
                        directory_id: *directory,
                    });
                }
            }
        }
        let dynamic = [
            (ConfigResource::Broker, &self.broker_configs),
            (ConfigResource::Group, &self.group_configs),
        ];
        for (resource, by_name) in dynamic {
            for (resource_name, configs) in by_name {
                for (name, value) in configs {
                    records.push(MetadataRecord::Config {
                        resource,
                        resource_name: resource_name.clone(),
                        name: name.clone(),
                        value: Some(value.clone()),
                    });
                }
            }
        }
        for (id, acl) in &self.acls {
            records.push(MetadataRecord::AccessControlEntry {
                id: *id,
                acl: acl.clone(),
            });
        }
        for (name, by_mechanism) in &self.scram_credentials {
            for (mechanism, credential) in by_mechanism {
                records.push(MetadataRecord::UserScramCredential {
                    name: name.clone(),
                    mechanism: *mechanism,
                    credential: credential.clone(),
                });
            }
        }
        for (entity, values) in &self.client_quotas {
            for (key, value) in values {
                records.push(MetadataRecord::ClientQuota {
                    entity: entity.clone(),
                    key: key.clone(),
                    value: Some(*value),
                });
            }
        }
        for (name, level) in &self.feature_levels {
            records.push(MetadataRecord::FeatureLevel {
                name: name.clone(),
                level: *level,
            });
        }
        for token in self.delegation_tokens.values() {
            records.push(MetadataRecord::DelegationToken {
                token: token.clone(),
            });
        }
        for (node_id, voter) in &self.quorum_voters {
            records.push(MetadataRecord::QuorumVoter {
                node_id: *node_id,
                directory_id: voter.directory_id,
                endpoints: voter.endpoints.clone(),
            });
        }
        for (controller_id, controller) in &self.controllers {
            records.push(MetadataRecord::RegisterController {
                controller_id: *controller_id,
                incarnation_id: controller.incarnation_id,
                endpoints: controller.endpoints.clone(),
            });
        }
        if self.next_producer_id > 0 {
            records.push(MetadataRecord::ProducerIds {
                broker_id: -1,
                broker_epoch: -1,
                next_producer_id: self.next_producer_id,
            });
        }
        records
    }

    /// Applies the records of one log entry at `offset`. Records are checked against the
    /// image first; on error nothing is applied (the controller never writes such records,
    /// so an error means the log and this code disagree).
    pub fn apply(&mut self, offset: u64, records: &[MetadataRecord]) -> Result<(), ApplyError> {
        let mut next = self.clone();
        for record in records {
            next.apply_one(record)?;
        }
        next.offset = offset;
        *self = next;
        Ok(())
    }

    /// Applies one record in place, without the copy [`MetadataImage::apply`] makes to stay
    /// unchanged on error; a record that does not apply changes nothing the image says (each
    /// kind is checked before anything changes). For a working copy that takes a decision's
    /// records one by one (the controller's): `apply` copies every topic a record touches,
    /// which for one record of a 5,000-partition topic is 5,000 registrations.
    pub fn apply_record(&mut self, record: &MetadataRecord) -> Result<(), ApplyError> {
        self.apply_one(record)
    }

    fn topic_mut(&mut self, id: Uuid) -> Result<&mut TopicImage, ApplyError> {
        let name = self
            .topic_names
            .get(&id)
            .ok_or_else(|| ApplyError(format!("unknown topic id {id}")))?;
        let topic = self
            .topics
            .get_mut(name)
            .ok_or_else(|| ApplyError(format!("topic id {id} has no topic")))?;
        Ok(Arc::make_mut(topic))
    }

    fn partition_mut(
        &mut self,
        topic_id: Uuid,
        partition_id: i32,
    ) -> Result<&mut PartitionRegistration, ApplyError> {
        let topic = self.topic_mut(topic_id)?;
        let name = topic.name.clone();
        usize::try_from(partition_id)
            .ok()
            .and_then(|p| topic.partitions.get_mut(p))
            .map(Arc::make_mut)
            .ok_or_else(|| ApplyError(format!("{name}-{partition_id} unknown")))
    }

    fn apply_one(&mut self, record: &MetadataRecord) -> Result<(), ApplyError> {
        match record {
            MetadataRecord::ClusterId { cluster_id } => {
                if let Some(existing) = &self.cluster_id
                    && existing != cluster_id
                {
                    return Err(ApplyError(format!(
                        "cluster id {cluster_id} after {existing}"
                    )));
                }
                self.cluster_id = Some(cluster_id.clone());
            }
            MetadataRecord::RegisterBroker {
                broker_id,
                incarnation_id,
                broker_epoch,
                endpoints,
                rack,
                fenced,
                log_dirs,
            } => {
                self.brokers.insert(
                    *broker_id,
                    BrokerRegistration {
                        id: *broker_id,
                        incarnation_id: *incarnation_id,
                        epoch: *broker_epoch,
                        endpoints: endpoints.clone(),
                        rack: rack.clone(),
                        fenced: *fenced,
                        in_controlled_shutdown: false,
                        log_dirs: log_dirs.clone(),
                    },
                );
            }
            MetadataRecord::UnregisterBroker {
                broker_id,
                broker_epoch,
            } => {
                if self.brokers.get(broker_id).map(|b| b.epoch) == Some(*broker_epoch) {
                    self.brokers.remove(broker_id);
                }
            }
            MetadataRecord::BrokerRegistrationChange {
                broker_id,
                broker_epoch,
                fenced,
                in_controlled_shutdown,
                log_dirs,
            } => {
                let broker = self
                    .brokers
                    .get_mut(broker_id)
                    .filter(|b| b.epoch == *broker_epoch)
                    .ok_or_else(|| {
                        ApplyError(format!("broker {broker_id} epoch {broker_epoch} unknown"))
                    })?;
                if let Some(fenced) = fenced {
                    broker.fenced = *fenced;
                }
                if let Some(shutdown) = in_controlled_shutdown {
                    broker.in_controlled_shutdown = *shutdown;
                }
                if let Some(log_dirs) = log_dirs {
                    broker.log_dirs = log_dirs.clone();
                }
            }
            MetadataRecord::Topic { name, topic_id } => {
                if self.topics.contains_key(name.as_str())
                    || self.topic_names.contains_key(topic_id)
                {
                    return Err(ApplyError(format!("topic {name} exists")));
                }
                let name: Arc<str> = Arc::from(name.as_str());
                self.topic_names.insert(*topic_id, name.clone());
                self.topics.insert(
                    name.clone(),
                    Arc::new(TopicImage {
                        name,
                        id: *topic_id,
                        partitions: Vec::new(),
                        configs: BTreeMap::new(),
                    }),
                );
            }
            MetadataRecord::Partition {
                topic_id,
                partition_id,
                replicas,
                isr,
                leader,
                leader_epoch,
                partition_epoch,
                reassignment,
            } => {
                let topic = self.topic_mut(*topic_id)?;
                if *partition_id as usize != topic.partitions.len() {
                    return Err(ApplyError(format!(
                        "partition {partition_id} of {} out of order",
                        topic.name
                    )));
                }
                topic.partitions.push(Arc::new(PartitionRegistration {
                    replicas: replicas.clone(),
                    isr: isr.clone(),
                    leader: *leader,
                    leader_epoch: *leader_epoch,
                    partition_epoch: *partition_epoch,
                    reassignment: reassignment.clone().unwrap_or_default(),
                    directories: BTreeMap::new(),
                }));
            }
            MetadataRecord::PartitionChange {
                topic_id,
                partition_id,
                leader,
                isr,
                replicas,
                reassignment,
            } => {
                let partition = self.partition_mut(*topic_id, *partition_id)?;
                if let Some(leader) = leader
                    && *leader != partition.leader
                {
                    partition.leader = *leader;
                    partition.leader_epoch += 1;
                }
                if let Some(isr) = isr {
                    partition.isr = isr.clone();
                }
                if let Some(replicas) = replicas {
                    partition.replicas = replicas.clone();
                    partition
                        .directories
                        .retain(|broker, _| replicas.contains(broker));
                }
                if let Some(reassignment) = reassignment {
                    partition.reassignment = reassignment.clone();
                }
                partition.partition_epoch += 1;
            }
            MetadataRecord::ReplicaDirectory {
                topic_id,
                partition_id,
                broker_id,
                directory_id,
            } => {
                let partition = self.partition_mut(*topic_id, *partition_id)?;
                if partition.replicas.contains(broker_id) {
                    partition.directories.insert(*broker_id, *directory_id);
                }
            }
            MetadataRecord::RemoveTopic { topic_id } => {
                let name = self
                    .topic_names
                    .remove(topic_id)
                    .ok_or_else(|| ApplyError(format!("unknown topic id {topic_id}")))?;
                self.topics.remove(&name);
            }
            MetadataRecord::Config {
                resource,
                resource_name,
                name,
                value,
            } => {
                let configs = match resource {
                    ConfigResource::Topic => {
                        let topic = self
                            .topics
                            .get_mut(resource_name.as_str())
                            .ok_or_else(|| ApplyError(format!("unknown topic {resource_name}")))?;
                        &mut Arc::make_mut(topic).configs
                    }
                    ConfigResource::Broker => self
                        .broker_configs
                        .entry(resource_name.clone())
                        .or_default(),
                    ConfigResource::Group => {
                        self.group_configs.entry(resource_name.clone()).or_default()
                    }
                };
                match value {
                    Some(value) => configs.insert(name.clone(), value.clone()),
                    None => configs.remove(name),
                };
                if *resource == ConfigResource::Group && configs.is_empty() {
                    self.group_configs.remove(resource_name);
                }
            }
            MetadataRecord::ProducerIds {
                next_producer_id, ..
            } => {
                if *next_producer_id < self.next_producer_id {
                    return Err(ApplyError(format!(
                        "producer ids moving back to {next_producer_id}"
                    )));
                }
                self.next_producer_id = *next_producer_id;
            }
            MetadataRecord::NoOp => {}
            MetadataRecord::FeatureLevel { name, level } => {
                self.feature_levels.insert(name.clone(), *level);
            }
            MetadataRecord::DelegationToken { token } => {
                self.delegation_tokens
                    .insert(token.token_id.clone(), token.clone());
            }
            MetadataRecord::RemoveDelegationToken { token_id } => {
                self.delegation_tokens.remove(token_id);
            }
            MetadataRecord::QuorumVoter {
                node_id,
                directory_id,
                endpoints,
            } => {
                self.quorum_voters.insert(
                    *node_id,
                    QuorumVoter {
                        directory_id: *directory_id,
                        endpoints: endpoints.clone(),
                    },
                );
            }
            MetadataRecord::RemoveQuorumVoter { node_id } => {
                self.quorum_voters.remove(node_id);
            }
            MetadataRecord::RegisterController {
                controller_id,
                incarnation_id,
                endpoints,
            } => {
                self.controllers.insert(
                    *controller_id,
                    ControllerRegistration {
                        incarnation_id: *incarnation_id,
                        endpoints: endpoints.clone(),
                    },
                );
            }
            MetadataRecord::UnregisterController { controller_id } => {
                self.controllers.remove(controller_id);
            }
            MetadataRecord::UserScramCredential {
                name,
                mechanism,
                credential,
            } => {
                self.scram_credentials
                    .entry(name.clone())
                    .or_default()
                    .insert(*mechanism, credential.clone());
            }
            MetadataRecord::AccessControlEntry { id, acl } => {
                self.acls.insert(*id, acl.clone());
            }
            MetadataRecord::RemoveAccessControlEntry { id } => {
                if self.acls.remove(id).is_none() {
                    return Err(ApplyError(format!("no ACL with id {id}")));
                }
            }
            MetadataRecord::ClientQuota { entity, key, value } => match value {
                Some(value) => {
                    self.client_quotas
                        .entry(entity.clone())
                        .or_default()
                        .insert(key.clone(), *value);
                }
                None => {
                    // As KRaft replays it: removing a quota that is not there is no error.
                    if let Some(values) = self.client_quotas.get_mut(entity) {
                        values.remove(key);
                        if values.is_empty() {
                            self.client_quotas.remove(entity);
                        }
                    }
                }
            },
            MetadataRecord::RemoveUserScramCredential { name, mechanism } => {
                let removed = self
                    .scram_credentials
                    .get_mut(name)
                    .and_then(|by_mechanism| by_mechanism.remove(mechanism));
                if removed.is_none() {
                    return Err(ApplyError(format!(
                        "no SCRAM credential of mechanism {mechanism} for user {name}"
                    )));
                }
                if self
                    .scram_credentials
                    .get(name)
                    .is_some_and(BTreeMap::is_empty)
                {
                    self.scram_credentials.remove(name);
                }
            }
        }
        Ok(())
    }
}

/// How one broker's role for a partition differs between two images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalChange {
    /// Lead the partition from `leader_epoch` on.
    Lead {
        topic: Arc<str>,
        topic_id: Uuid,
        partition: i32,
        registration: PartitionRegistration,
    },
    /// Follow `leader` (or wait for one: [`NO_LEADER`]).
    Follow {
        topic: Arc<str>,
        topic_id: Uuid,
        partition: i32,
        registration: PartitionRegistration,
    },
    /// No longer a replica: stop and delete the local log.
    Remove { topic: Arc<str>, partition: i32 },
}

/// The partitions whose leader, epoch or replica set changed for `broker` between `old`
/// and `new` (KRaft's `TopicsDelta.localChanges`). Only the topics that differ are visited
/// (the persistent maps' diff skips what the two images share), and within a changed topic
/// the unchanged partitions are passed by pointer.
pub fn local_changes(old: &MetadataImage, new: &MetadataImage, broker: i32) -> Vec<LocalChange> {
    let mut changes = Vec::new();
    let mut removals = Vec::new();
    for item in old.topics.diff(&new.topics) {
        match item {
            imbl::ordmap::DiffItem::Add(name, topic) => {
                topic_changes(None, name, topic, broker, &mut changes);
            }
            imbl::ordmap::DiffItem::Update {
                old: (_, before),
                new: (name, topic),
            } => {
                if before.id == topic.id {
                    topic_changes(Some(before), name, topic, broker, &mut changes);
                } else {
                    // Deleted and created again under the same name.
                    topic_removals(name, before, broker, &mut removals);
                    topic_changes(None, name, topic, broker, &mut changes);
                }
            }
            imbl::ordmap::DiffItem::Remove(name, before) => {
                topic_removals(name, before, broker, &mut removals);
            }
        }
    }
    changes.extend(removals);
    changes
}

/// What `broker` must do for the partitions of `topic` (`before`: the same topic in the old
/// image, if it was there).
fn topic_changes(
    before: Option<&Arc<TopicImage>>,
    name: &Arc<str>,
    topic: &TopicImage,
    broker: i32,
    changes: &mut Vec<LocalChange>,
) {
    for (p, registration) in topic.partitions.iter().enumerate() {
        let previous = before.and_then(|b| b.partitions.get(p));
        if previous.is_some_and(|r| Arc::ptr_eq(r, registration)) {
            continue;
        }
        let hosted_before = previous.is_some_and(|r| r.replicas.contains(&broker));
        if !registration.replicas.contains(&broker) {
            if hosted_before {
                changes.push(LocalChange::Remove {
                    topic: name.clone(),
                    partition: p as i32,
                });
            }
            continue;
        }
        if previous == Some(registration) {
            continue;
        }
        let (topic_name, topic_id, partition, registration) =
            (name.clone(), topic.id, p as i32, (**registration).clone());
        changes.push(if registration.leader == broker {
            LocalChange::Lead {
                topic: topic_name,
                topic_id,
                partition,
                registration,
            }
        } else {
            LocalChange::Follow {
                topic: topic_name,
                topic_id,
                partition,
                registration,
            }
        });
    }
}

/// `broker`'s replicas of a topic that is gone.
fn topic_removals(
    name: &Arc<str>,
    topic: &TopicImage,
    broker: i32,
    removals: &mut Vec<LocalChange>,
) {
    for (p, registration) in topic.partitions.iter().enumerate() {
        if registration.replicas.contains(&broker) {
            removals.push(LocalChange::Remove {
                topic: name.clone(),
                partition: p as i32,
            });
        }
    }
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
