//! Topics as the active controller decides them (KRaft's `ReplicationControlManager` topic
//! paths and `ConfigurationControlManager`): creation with replicas placed round robin over
//! live brokers (alternating racks), explicit assignments checked, deletion, new partitions,
//! topic and group configs, and a single node's earlier topics imported.

use super::{
    Changes, ClusterControl, CreatedTopic, ImportedTopic, MAX_PARTITIONS_PER_REQUEST, Outcome,
    TOO_LARGE_OPERATION, TOO_MANY_PARTITIONS, TopicRequest,
};
use crate::config::validate_topic_overrides;
use crate::error::Error;
use crate::metadata::image::MetadataImage;
use crate::metadata::records::{ConfigResource, MetadataRecord, NO_LEADER};
use crate::metadata::validate_topic_name;
use std::collections::BTreeMap;
use uuid::Uuid;

impl ClusterControl {
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
                    reassignment: None,
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

    /// A broker resource's dynamic configs (`""`: the cluster defaults) become exactly
    /// `configs`, checked again here as Kafka's controller checks what brokers forward.
    pub fn set_broker_configs(
        &mut self,
        offset: u64,
        resource: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<Outcome<()>, Error> {
        if !resource.is_empty() && resource.parse::<i32>().is_err() {
            return Err(Error::InvalidRequest(format!(
                "Broker id must be an integer, but it is: {resource}"
            )));
        }
        crate::config::validate_dynamic_configs(&configs, !resource.is_empty())
            .map_err(|e| Error::InvalidRequest(e.to_string()))?;
        let mut changes = Changes::new(&self.image);
        if validate_only {
            return Ok(self.finish(offset, changes, ()));
        }
        let current = self
            .image
            .broker_configs
            .get(resource)
            .cloned()
            .unwrap_or_default();
        changes.push(config_changes(
            ConfigResource::Broker,
            resource,
            &current,
            &configs,
        ))?;
        Ok(self.finish(offset, changes, ()))
    }
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
/// A replica on a broker with a single log directory is placed in it at once (Kafka's
/// `defaultDir`); a broker with several reports where it put each (AssignReplicasToDirs).
fn partition_records(
    image: &MetadataImage,
    topic_id: Uuid,
    first: i32,
    assignments: &[Vec<i32>],
) -> Vec<MetadataRecord> {
    let mut records = Vec::with_capacity(assignments.len() * 2);
    for (i, replicas) in assignments.iter().enumerate() {
        let partition_id = first + i as i32;
        let isr: Vec<i32> = replicas
            .iter()
            .copied()
            .filter(|r| image.is_active(*r))
            .collect();
        records.push(MetadataRecord::Partition {
            topic_id,
            partition_id,
            replicas: replicas.clone(),
            leader: isr.first().copied().unwrap_or(NO_LEADER),
            isr,
            leader_epoch: 0,
            partition_epoch: 0,
            reassignment: None,
        });
        for &broker_id in replicas {
            if let Some(directory_id) = default_directory(image, broker_id) {
                records.push(MetadataRecord::ReplicaDirectory {
                    topic_id,
                    partition_id,
                    broker_id,
                    directory_id,
                });
            }
        }
    }
    records
}

/// Where a new replica on `broker` goes without the broker saying: its only log directory,
/// when it registered exactly one.
fn default_directory(image: &MetadataImage, broker: i32) -> Option<Uuid> {
    match image.brokers.get(&broker)?.log_dirs.as_slice() {
        [only] => Some(*only),
        _ => None,
    }
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
