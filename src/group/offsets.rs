//! Committed offsets (Kafka's `OffsetMetadataManager`): OffsetCommit validated against the
//! group's generation and member, TxnOffsetCommit held pending until the transaction's marker
//! reaches the group's partition (dropped on abort), OffsetFetch (UNSTABLE_OFFSET_COMMIT while
//! a transaction holds one), OffsetDelete, and the expiry of offsets of empty groups after
//! `offsets.retention.minutes`. Every change is written to `__consumer_offsets` before it is
//! acknowledged.

use super::classic::{CommittedOffset, GroupState, Offsets};
use super::records::{OffsetValue, RecordKey};
use super::{
    GroupCoordinator, SharedConsumerGroup, SharedGroup, lock_consumer, lock_group, records,
    streams::lock_streams,
};
use crate::error::GroupError;
use crate::types::{TopicPartition, now_ms};
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::MutexGuard;

/// One partition's committed offset for OffsetCommit.
#[derive(Debug, Clone)]
pub struct OffsetCommit {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: String,
}

/// Who commits offsets: a group member (its id, static instance id and generation or member
/// epoch), or [`CommitBy::ADMIN`] from outside the group.
#[derive(Debug, Clone, Copy)]
pub struct CommitBy<'a> {
    pub member_id: &'a str,
    pub instance: Option<&'a str>,
    pub generation: i32,
    /// Whether the request can carry a member epoch (OffsetCommit v9+): a member of a
    /// consumer or streams group must commit with one.
    pub epoch_aware: bool,
}

impl CommitBy<'_> {
    /// An administrative commit (no member, no generation), allowed while the group is empty.
    pub const ADMIN: CommitBy<'static> = CommitBy {
        member_id: "",
        instance: None,
        generation: -1,
        epoch_aware: true,
    };
}

/// The (topic, partition) pairs a commit touches.
fn committed(offsets: &[OffsetCommit]) -> impl Iterator<Item = (String, i32)> + '_ {
    offsets.iter().map(|c| (c.topic.clone(), c.partition))
}

/// An offset committed in a transaction, not yet visible.
#[derive(Debug, Clone)]
pub(super) struct PendingOffset {
    pub(super) group: String,
    pub(super) topic: String,
    pub(super) partition: i32,
    pub(super) value: CommittedOffset,
}

impl GroupCoordinator {
    pub(super) fn pending_txn(&self) -> MutexGuard<'_, HashMap<i64, Vec<PendingOffset>>> {
        self.pending_txn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A transaction marker reached `partition` of `__consumer_offsets`: the offsets
    /// `producer_id` committed in it for that partition's groups become visible (commit) or
    /// are dropped (abort).
    pub fn complete_transaction(&self, partition: i32, producer_id: i64, commit: bool) {
        let partitions = self.config.offsets_topic_partitions;
        let decided: Vec<PendingOffset> = {
            let mut pending = self.pending_txn();
            let Some(entries) = pending.get_mut(&producer_id) else {
                return;
            };
            let (decided, kept): (Vec<_>, Vec<_>) = std::mem::take(entries)
                .into_iter()
                .partition(|p| records::partition_for(&p.group, partitions) == partition);
            *entries = kept;
            if entries.is_empty() {
                pending.remove(&producer_id);
            }
            decided
        };
        if !commit {
            return;
        }
        for offset in decided {
            let key = (offset.topic, offset.partition);
            if let Some(group) = self.consumer_group(&offset.group) {
                lock_consumer(&group).offsets.insert(key, offset.value);
            } else if let Some(group) = self.streams_group(&offset.group) {
                lock_streams(&group).offsets.insert(key, offset.value);
            } else {
                let group = self.group_or_create(&offset.group);
                lock_group(&group).offsets.insert(key, offset.value);
            }
        }
    }

    /// Whether a transaction still open holds an offset of `group` for the partition
    /// (OffsetFetch with `require_stable` then answers UNSTABLE_OFFSET_COMMIT).
    pub fn has_pending_offset(&self, group: &str, topic: &str, partition: i32) -> bool {
        self.pending_txn()
            .values()
            .flatten()
            .any(|p| p.group == group && p.topic == topic && p.partition == partition)
    }

    /// OffsetCommit: validated against the group (classic: generation and member; consumer
    /// protocol: member and member epoch), written, then applied. One result per offset.
    pub fn commit_offsets(
        &self,
        group_id: &str,
        by: &CommitBy<'_>,
        expire_timestamp: Option<i64>,
        offsets: &[OffsetCommit],
    ) -> Result<Vec<Result<(), GroupError>>, GroupError> {
        let CommitBy {
            member_id,
            instance,
            generation,
            epoch_aware,
        } = *by;
        if let Some(group) = self.consumer_group(group_id) {
            let mut g = lock_consumer(&group);
            g.validate_offset_commit(member_id, generation, epoch_aware, committed(offsets))?;
            return Ok(self.store_offsets(group_id, &mut g.offsets, expire_timestamp, offsets));
        }
        if let Some(group) = self.streams_group(group_id) {
            let mut g = lock_streams(&group);
            g.validate_offset_commit(member_id, generation, epoch_aware, committed(offsets))?;
            return Ok(self.store_offsets(group_id, &mut g.offsets, expire_timestamp, offsets));
        }
        let group = match self.group(group_id) {
            Some(group) => group,
            // Commits from outside group management create a "simple" group.
            None if generation < 0 => self.group_or_create(group_id),
            None => return Err(GroupError::IllegalGeneration),
        };
        let mut g = lock_group(&group);
        g.validate_offset_commit(member_id, instance, generation, false)?;
        Ok(self.store_offsets(group_id, &mut g.offsets, expire_timestamp, offsets))
    }

    /// Writes the valid offsets of a commit and applies them to `store` once written.
    fn store_offsets(
        &self,
        group_id: &str,
        store: &mut Offsets,
        expire_timestamp: Option<i64>,
        offsets: &[OffsetCommit],
    ) -> Vec<Result<(), GroupError>> {
        let (results, entries, accepted) = self.offset_records(group_id, expire_timestamp, offsets);
        if let Err(error) = self.write(group_id, &entries) {
            return results.into_iter().map(|r| r.and(Err(error))).collect();
        }
        store.extend(accepted);
        results
    }

    /// TxnOffsetCommit: offsets committed in `producer_id`'s transaction, written as part of
    /// it and visible once its commit marker reaches the group's partition. Checked against
    /// the group like OffsetCommit when a generation is given (v3+).
    #[allow(clippy::too_many_arguments)]
    pub fn txn_commit_offsets(
        &self,
        group_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
        offsets: &[OffsetCommit],
    ) -> Result<Vec<Result<(), GroupError>>, GroupError> {
        if generation >= 0 {
            if let Some(group) = self.consumer_group(group_id) {
                lock_consumer(&group).validate_offset_commit(
                    member_id,
                    generation,
                    true,
                    committed(offsets),
                )?;
            } else if let Some(group) = self.streams_group(group_id) {
                lock_streams(&group).validate_offset_commit(
                    member_id,
                    generation,
                    true,
                    committed(offsets),
                )?;
            } else if let Some(group) = self.group(group_id) {
                lock_group(&group).validate_offset_commit(member_id, instance, generation, true)?;
            }
        }
        let (results, entries, accepted) = self.offset_records(group_id, None, offsets);
        if let Err(error) = self.write_as(group_id, &entries, Some((producer_id, producer_epoch))) {
            return Ok(results.into_iter().map(|r| r.and(Err(error))).collect());
        }
        let mut pending = self.pending_txn();
        let entries = pending.entry(producer_id).or_default();
        for ((topic, partition), value) in accepted {
            entries.push(PendingOffset {
                group: group_id.to_string(),
                topic,
                partition,
                value,
            });
        }
        Ok(results)
    }

    /// The records of a commit's valid offsets, and what they will store.
    #[allow(clippy::type_complexity)]
    fn offset_records(
        &self,
        group_id: &str,
        expire_timestamp: Option<i64>,
        offsets: &[OffsetCommit],
    ) -> (
        Vec<Result<(), GroupError>>,
        Vec<(RecordKey, Option<Bytes>)>,
        Vec<((String, i32), CommittedOffset)>,
    ) {
        let now = now_ms();
        let mut results = Vec::with_capacity(offsets.len());
        let mut entries = Vec::new();
        let mut accepted = Vec::new();
        for commit in offsets {
            if commit.metadata.len() > self.config.group.offset_metadata_max_bytes {
                results.push(Err(GroupError::OffsetMetadataTooLarge));
                continue;
            }
            if self
                .replicas
                .get(&TopicPartition::new(&commit.topic, commit.partition))
                .is_err()
            {
                results.push(Err(GroupError::UnknownTopicOrPartition));
                continue;
            }
            let value = CommittedOffset {
                offset: commit.offset,
                leader_epoch: commit.leader_epoch,
                metadata: commit.metadata.clone(),
                commit_timestamp: now,
                expire_timestamp,
            };
            let record = OffsetValue {
                offset: value.offset,
                leader_epoch: value.leader_epoch,
                metadata: value.metadata.clone(),
                commit_timestamp: now,
                expire_timestamp,
            };
            entries.push((
                RecordKey::Offset {
                    group: group_id.to_string(),
                    topic: commit.topic.clone(),
                    partition: commit.partition,
                },
                Some(record.encode()),
            ));
            accepted.push(((commit.topic.clone(), commit.partition), value));
            results.push(Ok(()));
        }
        (results, entries, accepted)
    }

    /// OffsetFetch: `None` topics means every committed offset of the group. A member id and
    /// epoch (OffsetFetch v9 from KIP-848 consumers) are checked against a consumer group.
    pub fn fetch_offsets(
        &self,
        group_id: &str,
        topics: Option<&[(String, Vec<i32>)]>,
        member: Option<(&str, i32)>,
    ) -> Result<Vec<(String, i32, Option<CommittedOffset>)>, GroupError> {
        let offsets = if let Some(group) = self.consumer_group(group_id) {
            let g = lock_consumer(&group);
            if let Some((member_id, epoch)) = member.filter(|(_, epoch)| *epoch >= 0) {
                g.validate_offset_fetch(member_id, epoch)?;
            }
            g.offsets.clone()
        } else if let Some(group) = self.streams_group(group_id) {
            let g = lock_streams(&group);
            if let Some((member_id, epoch)) = member.filter(|(_, epoch)| *epoch >= 0) {
                g.validate_offset_fetch(member_id, epoch)?;
            }
            g.offsets.clone()
        } else {
            self.group(group_id)
                .map(|g| lock_group(&g).offsets.clone())
                .unwrap_or_default()
        };
        Ok(match topics {
            None => offsets
                .into_iter()
                .map(|((t, p), o)| (t, p, Some(o)))
                .collect(),
            Some(topics) => topics
                .iter()
                .flat_map(|(topic, partitions)| partitions.iter().map(move |p| (topic.clone(), *p)))
                .map(|(topic, p)| {
                    let committed = offsets.get(&(topic.clone(), p)).cloned();
                    (topic, p, committed)
                })
                .collect(),
        })
    }

    /// OffsetDelete: removes committed offsets of partitions the group no longer consumes.
    pub fn delete_offsets(
        &self,
        group_id: &str,
        partitions: &[(String, i32)],
    ) -> Result<Vec<Result<(), GroupError>>, GroupError> {
        if let Some(group) = self.streams_group(group_id) {
            return self.delete_streams_offsets(&group, partitions);
        }
        let group = self.group(group_id).ok_or(GroupError::GroupIdNotFound)?;
        let mut g = lock_group(&group);
        if g.state == GroupState::Dead {
            return Err(GroupError::GroupIdNotFound);
        }
        let subscribed = if g.is_empty() {
            Vec::new()
        } else {
            match g.subscribed_topics() {
                Some(topics) => topics,
                None => return Err(GroupError::NonEmptyGroup),
            }
        };
        let mut results = Vec::with_capacity(partitions.len());
        let mut entries = Vec::new();
        for (topic, partition) in partitions {
            if subscribed.contains(topic) {
                results.push(Err(GroupError::GroupSubscribedToTopic));
            } else {
                if g.offsets.contains_key(&(topic.clone(), *partition)) {
                    entries.push((
                        RecordKey::Offset {
                            group: group_id.to_string(),
                            topic: topic.clone(),
                            partition: *partition,
                        },
                        None,
                    ));
                }
                results.push(Ok(()));
            }
        }
        self.write(group_id, &entries)?;
        for (key, _) in &entries {
            if let RecordKey::Offset {
                topic, partition, ..
            } = key
            {
                g.offsets.remove(&(topic.clone(), *partition));
            }
        }
        Ok(results)
    }

    /// Offset retention (Kafka 2.1+ semantics): offsets of a group that has been empty for
    /// `offsets.retention.minutes` expire (counted from when it became empty; for groups that
    /// never used group management, from the commit); an explicit expiry time wins. An empty
    /// group with no offsets left is deleted.
    pub fn expire_offsets(&self, now: i64) -> usize {
        let groups: Vec<SharedGroup> = self.groups().values().cloned().collect();
        let mut expired_total = 0;
        for group in groups {
            let mut g = lock_group(&group);
            if g.state != GroupState::Empty {
                continue;
            }
            let uses_group_management = g.protocol_type.is_some();
            let retention = self.config.offsets_retention_ms;
            let state_timestamp = g.state_timestamp;
            let expired: Vec<(String, i32)> = g
                .offsets
                .iter()
                .filter(|(_, o)| match o.expire_timestamp {
                    Some(expire) => now >= expire,
                    None => {
                        now - if uses_group_management {
                            state_timestamp
                        } else {
                            o.commit_timestamp
                        } >= retention
                    }
                })
                .map(|(k, _)| k.clone())
                .collect();
            let mut entries: Vec<(RecordKey, Option<Bytes>)> =
                offset_tombstones(&g.id, expired.iter());
            let remove_group = expired.len() == g.offsets.len();
            if remove_group {
                entries.push((
                    RecordKey::Group {
                        group: g.id.clone(),
                    },
                    None,
                ));
            }
            if entries.is_empty() {
                continue;
            }
            if let Err(e) = self.write(&g.id.clone(), &entries) {
                tracing::warn!(group = %g.id, error = %e, "could not expire offsets");
                continue;
            }
            expired_total += expired.len();
            for key in &expired {
                g.offsets.remove(key);
            }
            if remove_group {
                g.state = GroupState::Dead;
                let id = g.id.clone();
                drop(g);
                self.groups().remove(&id);
                tracing::info!(group = %id, "removed empty group after its offsets expired");
            }
        }
        let consumer_groups: Vec<SharedConsumerGroup> =
            self.consumer_groups().values().cloned().collect();
        for group in consumer_groups {
            let mut g = lock_consumer(&group);
            if !g.is_empty() {
                continue;
            }
            let (id, since_empty) = (g.id.clone(), g.state_timestamp);
            let expired = self.expire_empty_group_offsets(&id, &mut g.offsets, since_empty, now);
            expired_total += expired;
            if expired > 0 && g.offsets.is_empty() {
                drop(g);
                self.consumer_groups().remove(&id);
            }
        }
        expired_total + self.expire_streams_offsets(now)
    }
}

impl GroupCoordinator {
    /// Expires the offsets of empty group `id` (empty since `since_empty`) by Kafka's rule: an
    /// explicit expiry time, else `offsets.retention.minutes` after the group emptied. Returns
    /// how many went (none when their tombstones could not be written).
    pub(super) fn expire_empty_group_offsets(
        &self,
        id: &str,
        offsets: &mut Offsets,
        since_empty: i64,
        now: i64,
    ) -> usize {
        let expired: Vec<(String, i32)> = offsets
            .iter()
            .filter(|(_, o)| {
                o.expire_timestamp.map_or(
                    now - since_empty >= self.config.offsets_retention_ms,
                    |expire| now >= expire,
                )
            })
            .map(|(k, _)| k.clone())
            .collect();
        let entries = offset_tombstones(id, expired.iter());
        if entries.is_empty() || self.write(id, &entries).is_err() {
            return 0;
        }
        for key in &expired {
            offsets.remove(key);
        }
        expired.len()
    }
}

/// Tombstones deleting the committed offsets `keys` of `group`.
pub(super) fn offset_tombstones<'a>(
    group: &str,
    keys: impl Iterator<Item = &'a (String, i32)>,
) -> Vec<(RecordKey, Option<Bytes>)> {
    keys.map(|(topic, partition)| {
        (
            RecordKey::Offset {
                group: group.to_string(),
                topic: topic.clone(),
                partition: *partition,
            },
            None,
        )
    })
    .collect()
}

/// Installs a replayed GroupMetadataValue into a group.
pub(super) fn committed_from(v: OffsetValue) -> CommittedOffset {
    CommittedOffset {
        offset: v.offset,
        leader_epoch: v.leader_epoch,
        metadata: v.metadata,
        commit_timestamp: v.commit_timestamp,
        expire_timestamp: v.expire_timestamp,
    }
}
