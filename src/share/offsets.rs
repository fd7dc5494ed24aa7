//! A share group's start offsets as the admin APIs see them: DescribeShareGroupOffsets (with
//! lag, KIP-1226), AlterShareGroupOffsets on an empty group, DeleteShareGroupOffsets of whole
//! topics.

use super::group::ShareGroup;
use super::partition::SharePartition;
use super::state::StateKey;
use super::{ShareCoordinator, locked};
use crate::error::{GroupError, ShareError};
use crate::types::{TopicPartition, now_ms};
use std::sync::{Arc, Mutex};
use uuid::Uuid;

impl ShareCoordinator {
    /// The start offset and lag (KIP-1226; -1 when unknown) of each share-partition of the
    /// group (-1, -1 for none), for the partitions asked or, with `None`, every one it has
    /// state for.
    pub fn start_offsets(
        &self,
        group_id: &str,
        wanted: Option<Vec<(Uuid, i32)>>,
    ) -> Result<Vec<(Uuid, i32, i64, i64)>, ShareError> {
        if !self.is_share_group(group_id) {
            return Err(ShareError::Group(GroupError::GroupIdNotFound));
        }
        let image = self.metadata.image();
        let partitions = locked(&self.partitions);
        let of = |key: &StateKey| -> (i64, i64) {
            let Some(shared) = partitions.get(key) else {
                return (-1, -1);
            };
            let state = locked(shared);
            let start = state.start_offset();
            let high_watermark = image
                .topic_by_id(key.topic_id)
                .and_then(|t| {
                    self.replicas
                        .get(&TopicPartition::new(&t.name, key.partition))
                        .ok()
                })
                .map(|r| r.offsets().high_watermark);
            let lag = high_watermark.map_or(-1, |hw| {
                (hw - start - state.delivery_complete_count()).max(0)
            });
            (start, lag)
        };
        let key = |topic_id: Uuid, partition: i32| StateKey {
            group: group_id.to_string(),
            topic_id,
            partition,
        };
        Ok(match wanted {
            Some(list) => list
                .into_iter()
                .map(|(t, p)| {
                    let (start, lag) = of(&key(t, p));
                    (t, p, start, lag)
                })
                .collect(),
            None => {
                // The state of a topic deleted since is not listed.
                let mut all: Vec<(Uuid, i32, i64, i64)> = partitions
                    .keys()
                    .filter(|k| k.group == group_id && image.topic_by_id(k.topic_id).is_some())
                    .map(|k| {
                        let (start, lag) = of(k);
                        (k.topic_id, k.partition, start, lag)
                    })
                    .collect();
                all.sort();
                all
            }
        })
    }

    /// AlterShareGroupOffsets: the group (created if new) must have no members; each
    /// share-partition starts over at the offset given, with a new state epoch.
    pub fn alter_start_offset(
        &self,
        group_id: &str,
        topic_id: Uuid,
        partition: i32,
        offset: i64,
    ) -> Result<(), ShareError> {
        {
            let mut groups = locked(&self.groups);
            let group = groups
                .entry(group_id.to_string())
                .or_insert_with(|| ShareGroup::new(group_id));
            if !group.members.is_empty() {
                return Err(ShareError::Group(GroupError::NonEmptyGroup));
            }
        }
        let key = StateKey {
            group: group_id.to_string(),
            topic_id,
            partition,
        };
        let existing = locked(&self.partitions).get(&key).cloned();
        let epoch = existing.as_ref().map_or(0, |p| locked(p).state_epoch + 1);
        let mut next = SharePartition::new(offset, epoch);
        next.created_ms = now_ms();
        self.persist(&key, &next)?;
        match existing {
            Some(shared) => *locked(&shared) = next,
            None => {
                locked(&self.partitions).insert(key, Arc::new(Mutex::new(next)));
            }
        }
        self.released.notify_waiters();
        Ok(())
    }

    /// DeleteShareGroupOffsets: forgets the group's state on every partition of `topic_id`.
    pub fn delete_topic_state(&self, group_id: &str, topic_id: Uuid) -> Result<(), ShareError> {
        self.delete_states(group_id, |key| key.topic_id == topic_id)
    }

    /// Deletes the state of an existing, empty group's share-partitions that `which` picks.
    pub(super) fn delete_states(
        &self,
        group_id: &str,
        which: impl Fn(&StateKey) -> bool,
    ) -> Result<(), ShareError> {
        {
            let groups = locked(&self.groups);
            let group = groups
                .get(group_id)
                .ok_or(ShareError::Group(GroupError::GroupIdNotFound))?;
            if !group.members.is_empty() {
                return Err(ShareError::Group(GroupError::NonEmptyGroup));
            }
        }
        let keys: Vec<StateKey> = locked(&self.partitions)
            .keys()
            .filter(|k| k.group == group_id && which(k))
            .cloned()
            .collect();
        for key in &keys {
            self.write(key, None)?;
            locked(&self.partitions).remove(key);
        }
        Ok(())
    }
}
