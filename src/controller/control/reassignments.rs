//! Partition reassignments (KRaft's `changePartitionReassignment`,
//! `cancelPartitionReassignment` and `PartitionChangeBuilder`'s completion): a reassignment
//! puts the target replicas first and the replicas it removes after them, records what it adds
//! and removes, and completes once every target replica is in the ISR: the replicas become the
//! target, the ISR loses the removed ones and a removed leader hands over to the first
//! in-sync target replica. The added replicas catch up as ordinary followers; the leader
//! brings them into the ISR with AlterPartition, which is where completion is checked.
//! Cancelling goes back to the replicas before the reassignment.

use super::{Changes, ClusterControl, Outcome};
use crate::error::Error;
use crate::metadata::image::{MetadataImage, PartitionRegistration};
use crate::metadata::records::{MetadataRecord, NO_LEADER, Reassignment};
use std::collections::BTreeSet;
use uuid::Uuid;

impl ClusterControl {
    /// AlterPartitionReassignments for one partition: move it to `target`, or with `None`
    /// cancel the reassignment in progress. Checked as Kafka's controller does, with its
    /// messages.
    pub fn reassign_partition(
        &mut self,
        offset: u64,
        topic: &str,
        partition: i32,
        target: Option<&[i32]>,
        allow_replication_factor_change: bool,
    ) -> Result<Outcome<()>, Error> {
        let (topic_id, current) = self.partition_of(topic, partition)?;
        let change = match target {
            None => revert(topic, partition, &current)?,
            Some(target) => {
                self.validate_target(target)?;
                let current_size = current.target_replicas().len();
                if !allow_replication_factor_change && target.len() != current_size {
                    return Err(Error::InvalidReplicationFactor(format!(
                        "The replication factor is changed from {current_size} to {}",
                        target.len()
                    )));
                }
                reassign(&current, target)
            }
        };
        let mut changes = Changes::new(&self.image);
        let Some(change) = change else {
            return Ok(self.finish(offset, changes, ()));
        };
        let mut record = change.record(topic_id, partition, &current);
        if let Some(completed) = completion(&self.image, &change.partition) {
            completed.merge_into(&mut record);
        }
        changes.push(vec![record])?;
        tracing::info!(topic, partition, replicas = ?change.partition.replicas, adding = ?change.partition.reassignment.adding, removing = ?change.partition.reassignment.removing, "partition reassignment");
        Ok(self.finish(offset, changes, ()))
    }

    /// Kafka's `validateManualPartitionAssignment`: a non-empty list of distinct registered
    /// brokers.
    fn validate_target(&self, target: &[i32]) -> Result<(), Error> {
        if target.is_empty() {
            return Err(Error::InvalidReplicaAssignment(
                "The manual partition assignment includes an empty replica list.".into(),
            ));
        }
        let mut seen = BTreeSet::new();
        for broker in target {
            if !seen.insert(*broker) {
                return Err(Error::InvalidReplicaAssignment(format!(
                    "The manual partition assignment includes the broker {broker} more than once."
                )));
            }
            if !self.image.brokers.contains_key(broker) {
                return Err(Error::InvalidReplicaAssignment(format!(
                    "The manual partition assignment includes broker {broker}, but no such broker is registered."
                )));
            }
        }
        Ok(())
    }
}

/// A partition as a reassignment (or its cancellation, or completion) leaves it.
struct Change {
    partition: PartitionRegistration,
}

impl Change {
    /// The PartitionChange that turns `before` into this.
    fn record(
        &self,
        topic_id: Uuid,
        partition_id: i32,
        before: &PartitionRegistration,
    ) -> MetadataRecord {
        let after = &self.partition;
        MetadataRecord::PartitionChange {
            topic_id,
            partition_id,
            leader: (after.leader != before.leader).then_some(after.leader),
            isr: (after.isr != before.isr).then(|| after.isr.clone()),
            replicas: (after.replicas != before.replicas).then(|| after.replicas.clone()),
            reassignment: (after.reassignment != before.reassignment)
                .then(|| after.reassignment.clone()),
        }
    }

    /// Folds this (a completion) into a change of the same partition decided before it.
    fn merge_into(&self, record: &mut MetadataRecord) {
        if let MetadataRecord::PartitionChange {
            leader,
            isr,
            replicas,
            reassignment,
            ..
        } = record
        {
            let after = &self.partition;
            *leader = Some(after.leader);
            *isr = Some(after.isr.clone());
            *replicas = Some(after.replicas.clone());
            *reassignment = Some(Reassignment::default());
        }
    }
}

/// The partition moving to `target` (Kafka's `PartitionReassignmentReplicas`): the target
/// first, then the current replicas it does not keep; adding what the current replicas lack.
fn reassign(current: &PartitionRegistration, target: &[i32]) -> Option<Change> {
    let removing: Vec<i32> = current
        .replicas
        .iter()
        .copied()
        .filter(|r| !target.contains(r))
        .collect();
    let adding: Vec<i32> = target
        .iter()
        .copied()
        .filter(|r| !current.replicas.contains(r))
        .collect();
    let mut replicas = target.to_vec();
    replicas.extend(&removing);
    let reassignment = Reassignment { adding, removing };
    if replicas == current.replicas && reassignment == current.reassignment {
        return None;
    }
    Some(Change {
        partition: PartitionRegistration {
            replicas,
            reassignment,
            ..current.clone()
        },
    })
}

/// Back to the replicas before the reassignment (Kafka's `PartitionReassignmentRevert`): the
/// added replicas leave the replicas and the ISR; a leader among them hands over.
fn revert(
    topic: &str,
    partition: i32,
    current: &PartitionRegistration,
) -> Result<Option<Change>, Error> {
    if current.reassignment.is_empty() {
        return Err(Error::NoReassignmentInProgress);
    }
    let replicas = current.original_replicas();
    let isr: Vec<i32> = current
        .isr
        .iter()
        .copied()
        .filter(|r| replicas.contains(r))
        .collect();
    if isr.is_empty() {
        return Err(Error::InvalidReplicaAssignment(format!(
            "Unable to revert partition assignment for {topic}:{partition} because it would require an unclean leader election."
        )));
    }
    let leader = if replicas.contains(&current.leader) {
        current.leader
    } else {
        replicas
            .iter()
            .copied()
            .find(|r| isr.contains(r))
            .unwrap_or(NO_LEADER)
    };
    Ok(Some(Change {
        partition: PartitionRegistration {
            replicas,
            isr,
            leader,
            reassignment: Reassignment::default(),
            ..current.clone()
        },
    }))
}

/// The partition with its reassignment complete, when every target replica is in the ISR:
/// the target as replicas, the ISR without the removed replicas, and a leader from the
/// target (the current one if it stays, else the first in-sync target replica that is
/// active).
fn completion(image: &MetadataImage, partition: &PartitionRegistration) -> Option<Change> {
    if partition.reassignment.is_empty() {
        return None;
    }
    let target = partition.target_replicas();
    if !target.iter().all(|r| partition.isr.contains(r)) {
        return None;
    }
    let isr: Vec<i32> = partition
        .isr
        .iter()
        .copied()
        .filter(|r| target.contains(r))
        .collect();
    let leader = if target.contains(&partition.leader) {
        partition.leader
    } else {
        target
            .iter()
            .copied()
            .find(|r| isr.contains(r) && image.is_active(*r))
            .or_else(|| target.first().copied())
            .unwrap_or(NO_LEADER)
    };
    Some(Change {
        partition: PartitionRegistration {
            replicas: target,
            isr,
            leader,
            reassignment: Reassignment::default(),
            ..partition.clone()
        },
    })
}

/// The record completing `partition`'s reassignment once an ISR change let every target
/// replica in (`None` when it is not complete yet).
pub(super) fn complete_after_isr_change(
    image: &MetadataImage,
    topic_id: Uuid,
    partition_id: i32,
    partition: &PartitionRegistration,
) -> Option<MetadataRecord> {
    let done = completion(image, partition)?;
    tracing::info!(partition_id, replicas = ?done.partition.replicas, leader = done.partition.leader, "partition reassignment completed");
    Some(done.record(topic_id, partition_id, partition))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registration(replicas: &[i32], isr: &[i32], leader: i32) -> PartitionRegistration {
        PartitionRegistration {
            replicas: replicas.to_vec(),
            isr: isr.to_vec(),
            leader,
            leader_epoch: 3,
            partition_epoch: 7,
            reassignment: Reassignment::default(),
            directories: Default::default(),
        }
    }

    #[test]
    fn a_move_puts_the_target_first_and_completes_once_the_target_is_in_sync() {
        let current = registration(&[1, 2, 3], &[1, 2, 3], 1);
        let moving = reassign(&current, &[4, 2, 3]).unwrap().partition;
        assert_eq!(moving.replicas, vec![4, 2, 3, 1]);
        assert_eq!(moving.reassignment.adding, vec![4]);
        assert_eq!(moving.reassignment.removing, vec![1]);
        assert_eq!(moving.target_replicas(), vec![4, 2, 3]);
        assert_eq!(moving.original_replicas(), vec![2, 3, 1]);
        let image = MetadataImage::default();
        assert!(
            completion(&image, &moving).is_none(),
            "4 is not in sync yet"
        );

        let in_sync = PartitionRegistration {
            isr: vec![1, 2, 3, 4],
            ..moving.clone()
        };
        let done = completion(&image, &in_sync).unwrap().partition;
        assert_eq!(done.replicas, vec![4, 2, 3]);
        assert_eq!(done.isr, vec![2, 3, 4]);
        assert!(done.reassignment.is_empty());
        // The leader left: the first in-sync target replica would lead if active (none is
        // registered in this image, so the first of the target).
        assert_eq!(done.leader, 4);

        // Cancelled before completion: back to 1, 2, 3 with the leader kept.
        let reverted = revert("t", 0, &moving).unwrap().unwrap().partition;
        assert_eq!(reverted.replicas, vec![2, 3, 1]);
        assert_eq!(reverted.isr, vec![1, 2, 3]);
        assert_eq!(reverted.leader, 1);
        assert!(matches!(
            revert("t", 0, &current),
            Err(Error::NoReassignmentInProgress)
        ));
        // The same replicas again: nothing to do.
        assert!(reassign(&current, &[1, 2, 3]).is_none());
    }

    #[test]
    fn shrinking_to_in_sync_replicas_completes_at_once() {
        let current = registration(&[1, 2, 3], &[1, 2, 3], 3);
        let moving = reassign(&current, &[1, 2]).unwrap().partition;
        let done = completion(&MetadataImage::default(), &moving)
            .unwrap()
            .partition;
        assert_eq!((done.replicas, done.isr), (vec![1, 2], vec![1, 2]));
        assert_eq!(done.leader, 1);
    }
}
