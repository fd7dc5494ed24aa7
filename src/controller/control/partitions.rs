//! Leaders and ISRs (KRaft's `ReplicationControlManager` partition paths): AlterPartition
//! from leaders (partition epoch and membership checked), ElectLeaders (preferred, unclean),
//! and the elections a fenced or returning broker causes: a new leader from the ISR, the last
//! in-sync replica kept until it returns, any live replica when unclean election is allowed.

use super::{Changes, ClusterControl, ControlConfig, Election, IsrChange, Outcome};
use crate::error::Error;
use crate::metadata::image::{MetadataImage, PartitionRegistration};
use crate::metadata::records::{MetadataRecord, NO_LEADER};

impl ClusterControl {
    /// AlterPartition from a partition leader: every partition of the request checked as
    /// Kafka's controller does, each on its own (one refused partition does not refuse the
    /// others, and Kafka answers each with its own error), the accepted ones decided into
    /// one entry. Returns each partition as it stands afterwards, in the request's order.
    /// One decision for the whole request matters at scale: a broker rejoining a cluster of
    /// 10,000 partitions asks for thousands at once, and each decision copies the topics it
    /// touches.
    pub fn alter_partitions(
        &mut self,
        offset: u64,
        requests: &[IsrChange],
    ) -> Result<Outcome<Vec<Result<PartitionRegistration, Error>>>, Error> {
        let mut changes = Changes::new(&self.image);
        let replies = requests
            .iter()
            .map(|request| {
                self.check_broker_epoch(request.broker_id, request.broker_epoch)?;
                alter_one(&mut changes, request)
            })
            .collect();
        Ok(self.finish(offset, changes, replies))
    }

    /// [`ClusterControl::alter_partitions`] for one partition.
    #[cfg(test)]
    pub fn alter_partition(
        &mut self,
        offset: u64,
        request: &IsrChange,
    ) -> Result<Outcome<PartitionRegistration>, Error> {
        let outcome = self.alter_partitions(offset, std::slice::from_ref(request))?;
        let reply = outcome
            .reply
            .into_iter()
            .next()
            .unwrap_or(Err(Error::UnknownTopicOrPartition))?;
        Ok(Outcome::new(outcome.records, reply))
    }

    /// A partition of a topic by name, and the topic's id (UNKNOWN_TOPIC_OR_PARTITION when
    /// either does not exist).
    pub(super) fn partition_of(
        &self,
        topic: &str,
        partition: i32,
    ) -> Result<(uuid::Uuid, PartitionRegistration), Error> {
        let topic = self
            .image
            .topic(topic)
            .ok_or(Error::UnknownTopicOrPartition)?;
        let registration = usize::try_from(partition)
            .ok()
            .and_then(|p| topic.partitions.get(p))
            .ok_or(Error::UnknownTopicOrPartition)?;
        Ok((topic.id, (**registration).clone()))
    }

    /// ElectLeaders for one partition, with Kafka's answers.
    pub fn elect_leader(
        &mut self,
        offset: u64,
        topic: &str,
        partition: i32,
        election: Election,
    ) -> Result<Outcome<()>, Error> {
        let (topic_id, current) = self.partition_of(topic, partition)?;
        let current = &current;
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
            topic_id,
            partition_id: partition,
            leader: Some(change.0),
            isr: (change.1 != current.isr).then_some(change.1),
            replicas: None,
            reassignment: None,
        }])?;
        Ok(self.finish(offset, changes, ()))
    }
}

/// One partition of an AlterPartition, checked against `changes` (so two changes of one
/// partition in a request see each other: the second carries a stale partition epoch).
fn alter_one(changes: &mut Changes, request: &IsrChange) -> Result<PartitionRegistration, Error> {
    let image = &changes.image;
    let topic = image
        .topic_by_id(request.topic_id)
        .ok_or(Error::UnknownTopicId)?;
    let current = usize::try_from(request.partition)
        .ok()
        .and_then(|p| topic.partitions.get(p))
        .map(|registration| (**registration).clone())
        .ok_or(Error::UnknownTopicOrPartition)?;
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
        if !current.isr.contains(replica) && !image.is_active(*replica) {
            return Err(Error::IneligibleReplica(
                *replica,
                "fenced or shutting down".into(),
            ));
        }
        if !current.isr.contains(replica) && image.replica_dir_offline(&current, *replica) {
            return Err(Error::IneligibleReplica(
                *replica,
                "its log directory is offline".into(),
            ));
        }
    }
    let (topic_id, name) = (topic.id, topic.name.clone());
    let mut isr = request.new_isr.clone();
    isr.sort_by_key(|r| current.replicas.iter().position(|x| x == r));
    isr.dedup();
    if isr == current.isr {
        return Ok(current);
    }
    changes.push(vec![MetadataRecord::PartitionChange {
        topic_id,
        partition_id: request.partition,
        leader: None,
        isr: Some(isr),
        replicas: None,
        reassignment: None,
    }])?;
    // A reassignment whose target replicas are all in sync now completes.
    if let Some(partition) = changes.image.partition(&name, request.partition)
        && let Some(completed) = super::reassignments::complete_after_isr_change(
            &changes.image,
            topic_id,
            request.partition,
            partition,
        )
    {
        changes.push(vec![completed])?;
    }
    Ok(changes
        .image
        .partition(&name, request.partition)
        .cloned()
        .unwrap_or(current))
}

/// `unclean.leader.election.enable` for a topic, as Kafka's controller resolves it: the
/// topic's config, else the dynamic one of this controller's node, else the dynamic cluster
/// default, else the static one.
fn unclean_allowed(
    config: &ControlConfig,
    image: &MetadataImage,
    topic: &crate::metadata::image::TopicImage,
) -> bool {
    const NAME: &str = "unclean.leader.election.enable";
    let dynamic = |resource: &str| image.broker_configs.get(resource).and_then(|c| c.get(NAME));
    topic
        .configs
        .get(NAME)
        .or_else(|| dynamic(&config.own_node.to_string()))
        .or_else(|| dynamic(""))
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
    let eligible = |r: &&i32| Some(**r) != excluded && image.replica_online(partition, **r);
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
pub(super) fn leader_and_isr_updates(
    config: &ControlConfig,
    image: &MetadataImage,
    broker: i32,
) -> Vec<MetadataRecord> {
    leader_and_isr_updates_where(config, image, broker, |_, _, _| true)
}

/// [`leader_and_isr_updates`] for the partitions `affected` picks (by topic id, index and
/// registration): those whose replica on `broker` sits in a failed log directory.
pub(super) fn leader_and_isr_updates_where(
    config: &ControlConfig,
    image: &MetadataImage,
    broker: i32,
    affected: impl Fn(uuid::Uuid, i32, &PartitionRegistration) -> bool,
) -> Vec<MetadataRecord> {
    let mut records = Vec::new();
    for topic in image.topics.values() {
        for (p, partition) in topic.partitions.iter().enumerate() {
            if !affected(topic.id, p as i32, partition) {
                continue;
            }
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
                    unclean_allowed(config, image, topic),
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
                reassignment: None,
            });
        }
    }
    records
}

/// Leaders for partitions of `broker` that have none, now that it is back.
pub(super) fn elect_for_leaderless(
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
            let unclean = unclean_allowed(config, image, topic);
            if let Some((leader, isr)) =
                choose_leader(image, partition, &partition.isr, None, unclean)
            {
                records.push(MetadataRecord::PartitionChange {
                    topic_id: topic.id,
                    partition_id: p as i32,
                    leader: Some(leader),
                    isr: (isr != partition.isr).then_some(isr),
                    replicas: None,
                    reassignment: None,
                });
            }
        }
    }
    records
}
