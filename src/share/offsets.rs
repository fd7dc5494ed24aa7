//! A share group's start offsets as the admin APIs see them: DescribeShareGroupOffsets (with
//! lag, KIP-1226), AlterShareGroupOffsets on an empty group, DeleteShareGroupOffsets of whole
//! topics.

use super::group::ShareGroup;
use super::state::{Snapshot, StateKey};
use super::store::StateOp;
use super::{ShareCoordinator, locked};
use crate::error::{GroupError, ShareError};
use crate::types::TopicPartition;
use uuid::Uuid;

impl ShareCoordinator {
    /// The start offset and lag (KIP-1226; -1 when unknown) of each share-partition of the
    /// group (-1, -1 for none), for the partitions asked or, with `None`, every one it has
    /// state for. The lag is known where this broker hosts the partition (its high watermark).
    pub async fn start_offsets(
        &self,
        group_id: &str,
        wanted: Option<Vec<(Uuid, i32)>>,
    ) -> Result<Vec<(Uuid, i32, i64, i64)>, ShareError> {
        let known = locked(&self.groups)
            .get(group_id)
            .map(|g| g.initialized.clone());
        let image = self.metadata.image();
        let listing_all = wanted.is_none();
        let asked: Vec<(Uuid, i32)> = match wanted {
            Some(list) => list,
            None => known
                .ok_or(ShareError::Group(GroupError::GroupIdNotFound))?
                .into_iter()
                // The state of a topic deleted since is not listed.
                .filter(|(topic_id, _)| image.topic_by_id(*topic_id).is_some())
                .collect(),
        };
        let mut out = Vec::with_capacity(asked.len());
        for (topic_id, partition) in asked {
            let key = StateKey {
                group: group_id.to_string(),
                topic_id,
                partition,
            };
            let state: Option<Snapshot> = self
                .persister
                .call(&key, StateOp::Summary)
                .await?
                .filter(|s| s.start_offset >= 0);
            let Some(state) = state else {
                if !listing_all {
                    out.push((topic_id, partition, -1, -1));
                }
                continue;
            };
            let high_watermark = image
                .topic_by_id(topic_id)
                .and_then(|t| {
                    self.replicas
                        .get(&TopicPartition::new(&t.name, partition))
                        .ok()
                })
                .map(|r| r.offsets().high_watermark);
            let lag = high_watermark.map_or(-1, |hw| {
                (hw - state.start_offset - state.delivery_complete_count()).max(0)
            });
            out.push((topic_id, partition, state.start_offset, lag));
        }
        out.sort();
        Ok(out)
    }

    /// AlterShareGroupOffsets: the group (created if new) must have no members; each
    /// share-partition starts over at the offset given, with a new state epoch (which fences
    /// the copy its leader caches).
    pub async fn alter_start_offset(
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
        let current = self.persister.call(&key, StateOp::Summary).await?;
        let state_epoch = current.map_or(0, |s| s.state_epoch + 1);
        self.persister
            .call(
                &key,
                StateOp::Initialize {
                    state_epoch,
                    start_offset: offset,
                },
            )
            .await?;
        locked(&self.partitions).remove(&key);
        if let Some(group) = locked(&self.groups).get_mut(group_id) {
            group.initialized.insert((topic_id, partition));
        }
        self.write_group(group_id).await;
        self.released.notify_waiters();
        Ok(())
    }

    /// DeleteShareGroupOffsets: forgets the group's state on every partition of `topic_id`.
    pub async fn delete_topic_state(
        &self,
        group_id: &str,
        topic_id: Uuid,
    ) -> Result<(), ShareError> {
        self.delete_states(group_id, |(t, _)| *t == topic_id).await
    }

    /// Deletes the state of an existing, empty group's share-partitions that `which` picks.
    pub(super) async fn delete_states(
        &self,
        group_id: &str,
        which: impl Fn(&(Uuid, i32)) -> bool,
    ) -> Result<(), ShareError> {
        let picked: Vec<(Uuid, i32)> = {
            let groups = locked(&self.groups);
            let group = groups
                .get(group_id)
                .ok_or(ShareError::Group(GroupError::GroupIdNotFound))?;
            if !group.members.is_empty() {
                return Err(ShareError::Group(GroupError::NonEmptyGroup));
            }
            group
                .initialized
                .iter()
                .filter(|p| which(p))
                .copied()
                .collect()
        };
        for (topic_id, partition) in picked {
            let key = StateKey {
                group: group_id.to_string(),
                topic_id,
                partition,
            };
            self.persister.call(&key, StateOp::Delete).await?;
            locked(&self.partitions).remove(&key);
            if let Some(group) = locked(&self.groups).get_mut(group_id) {
                group.initialized.remove(&(topic_id, partition));
            }
        }
        self.write_group(group_id).await;
        Ok(())
    }
}
