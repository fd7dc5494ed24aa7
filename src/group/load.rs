//! A coordinator taking over `__consumer_offsets` partitions (Kafka's
//! `GroupMetadataManager` loading and `OffsetMetadataManager.replay`): elected for a partition,
//! its groups are marked loading (requests for them answer COORDINATOR_LOAD_IN_PROGRESS), the
//! partition's records are replayed into classic groups, KIP-848 groups and committed offsets
//! (transactional offsets decided by their markers, open ones kept pending), then the members
//! are watched; resigning drops the partition's groups.

use super::classic::{ClassicGroup, CommittedOffset, GroupState};
use super::consumer::{Assignment, ConsumerGroup, ConsumerMember, TopicsView};
use super::offsets::{PendingOffset, committed_from};
use super::records::{GroupValue, OffsetValue, RecordKey};
use super::{
    GroupCoordinator, OFFSETS_TOPIC, SharedConsumerGroup, SharedGroup, classic, lock_consumer,
    lock_group, records, streams,
};
use crate::storage::StorageError;
use crate::types::now_ms;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::time::{Duration, Instant};

impl GroupCoordinator {
    /// This broker now leads `partition` of `__consumer_offsets`: the groups stored there are
    /// rebuilt from its log and served from here (Kafka's coordinator election).
    pub fn elect(
        self: &Arc<Self>,
        partition: i32,
        log: &crate::storage::manager::SharedLog,
    ) -> Result<usize, StorageError> {
        // Anything left from an earlier term here is stale.
        self.resign(partition);
        self.begin_loading(partition);
        let loaded = self.load_shared(partition, log);
        self.loading_partitions().remove(&partition);
        let records = loaded?;
        let of_partition = |id: &str| {
            records::partition_for(id, self.config.offsets_topic_partitions) == partition
        };
        self.finish_loading_where(of_partition);
        if self.started.load(std::sync::atomic::Ordering::SeqCst) {
            self.watch_loaded(of_partition);
        }
        tracing::debug!(
            partition,
            records,
            "coordinating the groups of {OFFSETS_TOPIC} partition"
        );
        Ok(records)
    }

    fn loading_partitions(&self) -> MutexGuard<'_, std::collections::HashSet<i32>> {
        self.loading.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks `partition` as loading: its groups answer COORDINATOR_LOAD_IN_PROGRESS until
    /// [`GroupCoordinator::elect`] has rebuilt them.
    pub fn begin_loading(&self, partition: i32) {
        self.loading_partitions().insert(partition);
    }

    /// Whether any partition's groups are being loaded.
    pub fn loading_anything(&self) -> bool {
        !self.loading_partitions().is_empty()
    }

    /// Whether `group_id`'s partition is being loaded.
    pub fn is_loading(&self, group_id: &str) -> bool {
        let partition = records::partition_for(group_id, self.config.offsets_topic_partitions);
        self.loading_partitions().contains(&partition)
    }

    /// This broker no longer leads `partition`: its groups are dropped here (their new
    /// coordinator rebuilds them from the log; members find it through NOT_COORDINATOR).
    pub fn resign(&self, partition: i32) {
        let of_partition = |id: &String| {
            records::partition_for(id, self.config.offsets_topic_partitions) == partition
        };
        self.groups().retain(|id, _| !of_partition(id));
        self.consumer_groups().retain(|id, _| !of_partition(id));
        self.streams_groups().retain(|id, _| !of_partition(id));
        for entries in self.pending_txn().values_mut() {
            entries.retain(|p| !of_partition(&p.group));
        }
        self.pending_txn().retain(|_, entries| !entries.is_empty());
    }

    /// Starts the session timers of loaded members: classic ones queued by loading, and the
    /// KIP-848 members of the groups `which` selects.
    pub(super) fn watch_loaded(self: &Arc<Self>, which: impl Fn(&str) -> bool) {
        let loaded = std::mem::take(
            &mut *self
                .loaded_members
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        for (group_id, member_id) in loaded {
            self.watch_member(group_id, member_id);
        }
        let consumer_groups: Vec<SharedConsumerGroup> = self
            .consumer_groups()
            .iter()
            .filter(|(id, _)| which(id))
            .map(|(_, g)| g.clone())
            .collect();
        for group in consumer_groups {
            let mut g = lock_consumer(&group);
            let (group_id, members): (String, Vec<String>) =
                (g.id.clone(), g.members.keys().cloned().collect());
            for member_id in members {
                if g.watched.insert(member_id.clone()) {
                    self.watch_consumer_member(group_id.clone(), member_id);
                }
            }
        }
        let streams_groups: Vec<streams::SharedStreamsGroup> = self
            .streams_groups()
            .iter()
            .filter(|(id, _)| which(id))
            .map(|(_, g)| g.clone())
            .collect();
        for group in streams_groups {
            let mut g = streams::lock_streams(&group);
            let group_id = g.id.clone();
            let members: Vec<String> = g.members.keys().cloned().collect();
            for member_id in members {
                if g.watched.insert(member_id.clone()) {
                    self.watch_session(Self::streams_group, group_id.clone(), member_id);
                }
            }
        }
    }

    /// Rebuilds the groups and offsets stored in `partition` of `__consumer_offsets`, with
    /// the offsets of transactions its markers decided (and those still open as pending).
    pub fn load_shared(
        &self,
        partition: i32,
        log: &crate::storage::manager::SharedLog,
    ) -> Result<usize, StorageError> {
        use crate::storage::manager::Replayed;
        let mut records = 0;
        crate::storage::manager::replay_records(log, |replayed| {
            let (producer_id, transactional, key, value) = match replayed {
                Replayed::Marker {
                    producer_id,
                    commit,
                } => {
                    self.complete_transaction(partition, producer_id, commit);
                    return;
                }
                Replayed::Record {
                    producer_id,
                    transactional,
                    key: Some(key),
                    value,
                } => (producer_id, transactional, key, value),
                Replayed::Record { key: None, .. } => return,
            };
            match RecordKey::decode(key) {
                Ok(Some(RecordKey::Offset {
                    group,
                    topic,
                    partition,
                })) if transactional => match value.map(OffsetValue::decode) {
                    Some(Ok(v)) => {
                        self.pending_txn()
                            .entry(producer_id)
                            .or_default()
                            .push(PendingOffset {
                                group,
                                topic,
                                partition,
                                value: committed_from(v),
                            });
                        records += 1;
                    }
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "skipping unreadable transactional offset record")
                    }
                    None => {}
                },
                Ok(Some(key)) => {
                    self.replay(key, value);
                    records += 1;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "skipping unreadable {OFFSETS_TOPIC} record"),
            }
        })?;
        Ok(records)
    }

    fn replay(&self, key: RecordKey, value: Option<&[u8]>) {
        if let RecordKey::Streams {
            kind,
            group,
            member,
        } = &key
        {
            let mut replaying = self
                .streams_replay
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let replayed = replaying
                .entry(group.clone())
                .or_insert_with(|| streams::Replayed::new(group));
            if let Err(e) = replayed.apply(*kind, member.as_deref(), value) {
                tracing::warn!(group, error = %e, "skipping unreadable streams group record");
            }
            return;
        }
        if self.replay_consumer(&key, value) {
            return;
        }
        match key {
            RecordKey::Offset {
                group,
                topic,
                partition,
            } => match value.map(OffsetValue::decode) {
                None => {
                    if let Some(g) = self.group(&group) {
                        lock_group(&g).offsets.remove(&(topic, partition));
                    }
                }
                Some(Ok(v)) => {
                    let g = self.group_or_create(&group);
                    lock_group(&g)
                        .offsets
                        .insert((topic, partition), committed_from(v));
                }
                Some(Err(e)) => {
                    tracing::warn!(group, error = %e, "skipping unreadable offset record")
                }
            },
            RecordKey::Group { group } => match value.map(GroupValue::decode) {
                None => {
                    self.groups().remove(&group);
                }
                Some(Ok(v)) => {
                    let g = self.group_or_create(&group);
                    let mut g = lock_group(&g);
                    load_group_value(&mut g, v);
                }
                Some(Err(e)) => {
                    tracing::warn!(group, error = %e, "skipping unreadable group record")
                }
            },
            // KIP-848 records: handled by replay_consumer.
            _ => {}
        }
    }

    /// Replays KIP-848 records, and offsets of groups that are consumer groups. Returns false
    /// for records this does not own.
    fn replay_consumer(&self, key: &RecordKey, value: Option<&[u8]>) -> bool {
        let group_of = |group: &str| -> SharedConsumerGroup {
            let existing = self.consumer_group(group);
            existing.unwrap_or_else(|| {
                // A consumer group supersedes a classic one of the same id (its offsets move over).
                let offsets = self
                    .groups()
                    .remove(group)
                    .map(|g| std::mem::take(&mut lock_group(&g).offsets))
                    .unwrap_or_default();
                self.consumer_groups()
                    .entry(group.to_string())
                    .or_insert_with(|| {
                        Arc::new(Mutex::new(ConsumerGroup::new(group, offsets, now_ms())))
                    })
                    .clone()
            })
        };
        let assignment = |partitions: records::TopicIdPartitions| -> Assignment {
            partitions
                .into_iter()
                .filter_map(|(id, ps)| {
                    self.topics
                        .topic_name(id)
                        .map(|t| (t, ps.into_iter().collect()))
                })
                .collect()
        };
        let warn = |e: records::SchemaError| tracing::warn!(error = %e, "skipping unreadable {OFFSETS_TOPIC} record");
        match key {
            RecordKey::Offset {
                group,
                topic,
                partition,
            } => {
                let Some(g) = self.consumer_group(group) else {
                    return false;
                };
                let mut g = lock_consumer(&g);
                match value.map(OffsetValue::decode) {
                    None => {
                        g.offsets.remove(&(topic.clone(), *partition));
                    }
                    Some(Ok(v)) => {
                        g.offsets.insert(
                            (topic.clone(), *partition),
                            CommittedOffset {
                                offset: v.offset,
                                leader_epoch: v.leader_epoch,
                                metadata: v.metadata,
                                commit_timestamp: v.commit_timestamp,
                                expire_timestamp: v.expire_timestamp,
                            },
                        );
                    }
                    Some(Err(e)) => warn(e),
                }
            }
            RecordKey::Group { .. } | RecordKey::Streams { .. } => return false,
            RecordKey::ConsumerGroup { group } => match value.map(records::decode_epoch_value) {
                None => {
                    self.consumer_groups().remove(group.as_str());
                }
                Some(Ok(epoch)) => lock_consumer(&group_of(group)).restore_group_epoch(epoch),
                Some(Err(e)) => warn(e),
            },
            RecordKey::TargetMetadata { group } => match value.map(records::decode_target_metadata)
            {
                None => {}
                Some(Ok((epoch, timestamp_ms))) => {
                    lock_consumer(&group_of(group)).restore_assignment(epoch, timestamp_ms)
                }
                Some(Err(e)) => warn(e),
            },
            RecordKey::ConsumerMember { group, member } => {
                let g = group_of(group);
                let mut g = lock_consumer(&g);
                match value.map(records::ConsumerMemberValue::decode) {
                    None => {
                        if let Some(m) = g.members.remove(member)
                            && let Some(instance) = m.instance_id
                        {
                            g.static_members.remove(&instance);
                        }
                    }
                    Some(Ok(v)) => {
                        let m = g
                            .members
                            .entry(member.clone())
                            .or_insert_with(|| ConsumerMember::restored(member, Instant::now()));
                        m.instance_id = v.instance_id.clone();
                        m.rack_id = v.rack_id;
                        m.client_id = v.client_id;
                        m.client_host = v.client_host;
                        m.subscribed_topic_names = v.subscribed_topic_names;
                        m.subscribed_topic_regex = v.subscribed_topic_regex;
                        m.rebalance_timeout_ms = v.rebalance_timeout_ms;
                        m.server_assignor = v.server_assignor;
                        if let Some(instance) = v.instance_id {
                            g.static_members.insert(instance, member.clone());
                        }
                    }
                    Some(Err(e)) => warn(e),
                }
            }
            RecordKey::TargetMember { group, member } => {
                let g = group_of(group);
                let mut g = lock_consumer(&g);
                match value.map(records::decode_target_member) {
                    None => {
                        g.target.remove(member);
                    }
                    Some(Ok(partitions)) => {
                        g.target.insert(member.clone(), assignment(partitions));
                    }
                    Some(Err(e)) => warn(e),
                }
            }
            RecordKey::CurrentAssignment { group, member } => {
                let g = group_of(group);
                let mut g = lock_consumer(&g);
                match value.map(records::CurrentAssignmentValue::decode) {
                    None => {}
                    Some(Ok(v)) => {
                        let m = g
                            .members
                            .entry(member.clone())
                            .or_insert_with(|| ConsumerMember::restored(member, Instant::now()));
                        m.member_epoch = v.member_epoch;
                        m.previous_member_epoch = v.previous_member_epoch;
                        m.set_state_code(v.state);
                        m.assigned = assignment(v.assigned);
                        m.pending_revocation = assignment(v.pending_revocation);
                        m.assignment_epochs = v
                            .epochs
                            .into_iter()
                            .filter_map(|((id, p), epoch)| {
                                self.topics.topic_name(id).map(|t| ((t, p), epoch))
                            })
                            .collect();
                    }
                    Some(Err(e)) => warn(e),
                }
            }
        }
        true
    }

    /// After replay: members of loaded groups get fresh session deadlines (they must heartbeat
    /// to stay), to be watched once the coordinator starts.
    pub fn finish_loading(&self) {
        self.finish_loading_where(|_| true);
    }

    /// Builds the streams groups whose records were replayed (those `which` selects): each
    /// takes the offsets replayed for its id, its members' sessions starting now.
    fn finish_streams_loading(&self, which: &impl Fn(&str) -> bool) {
        let replayed: Vec<streams::Replayed> = {
            let mut replaying = self
                .streams_replay
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let ids: Vec<String> = replaying.keys().filter(|id| which(id)).cloned().collect();
            ids.iter().filter_map(|id| replaying.remove(id)).collect()
        };
        for group in replayed {
            if group.is_deleted() {
                continue;
            }
            let id = group.group_id().to_string();
            let offsets = self
                .groups()
                .remove(&id)
                .map(|g| std::mem::take(&mut lock_group(&g).offsets))
                .unwrap_or_default();
            let config = self.streams_config(&id);
            let session = Duration::from_millis(config.session_timeout_ms.max(0) as u64);
            if let Some(restored) = streams::StreamsGroup::restore(
                group,
                offsets,
                config.assignment_configs(),
                session,
                self.topics.as_ref(),
                Instant::now(),
                now_ms(),
            ) {
                self.streams_groups()
                    .insert(id, Arc::new(Mutex::new(restored)));
            }
        }
    }

    /// [`GroupCoordinator::finish_loading`] for the groups whose id passes `which`.
    fn finish_loading_where(&self, which: impl Fn(&str) -> bool) {
        self.finish_streams_loading(&which);
        let groups: Vec<SharedGroup> = self
            .groups()
            .iter()
            .filter(|(id, _)| which(id))
            .map(|(_, g)| g.clone())
            .collect();
        let mut watch = Vec::new();
        for group in groups {
            let mut g = lock_group(&group);
            let now = Instant::now();
            let group_id = g.id.clone();
            for member in g.members.values_mut() {
                member.session_deadline =
                    now + Duration::from_millis(member.session_timeout_ms.max(0) as u64);
                watch.push((group_id.clone(), member.member_id.clone()));
            }
        }
        self.loaded_members
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(watch);
        let consumer_groups: Vec<SharedConsumerGroup> = self
            .consumer_groups()
            .iter()
            .filter(|(id, _)| which(id))
            .map(|(_, g)| g.clone())
            .collect();
        for group in consumer_groups {
            let mut g = lock_consumer(&group);
            let timeout = self.consumer_config(&g.id).session_timeout_ms;
            let session = Duration::from_millis(timeout.max(0) as u64);
            let now = Instant::now();
            for member in g.members.values_mut() {
                member.session_deadline = now + session;
            }
            g.refresh_metadata_snapshot(self.topics.as_ref());
            g.changes.clear();
        }
    }
}

fn load_group_value(g: &mut ClassicGroup, v: GroupValue) {
    g.protocol_type = (!v.protocol_type.is_empty()).then_some(v.protocol_type);
    g.generation = v.generation;
    g.protocol_name = v.protocol;
    g.leader = v.leader;
    g.state_timestamp = v.current_state_timestamp;
    g.members.clear();
    g.static_members.clear();
    let protocol = g.protocol_name.clone().unwrap_or_default();
    for m in v.members {
        if let Some(instance) = &m.group_instance_id {
            g.static_members
                .insert(instance.clone(), m.member_id.clone());
        }
        g.members.insert(
            m.member_id.clone(),
            classic::Member {
                member_id: m.member_id,
                group_instance_id: m.group_instance_id,
                client_id: m.client_id,
                client_host: m.client_host,
                session_timeout_ms: m.session_timeout,
                rebalance_timeout_ms: if m.rebalance_timeout > 0 {
                    m.rebalance_timeout
                } else {
                    m.session_timeout
                },
                protocol_type: g.protocol_type.clone().unwrap_or_default(),
                protocols: vec![(protocol.clone(), m.subscription)],
                assignment: m.assignment,
                awaiting_join: None,
                awaiting_sync: None,
                session_deadline: Instant::now(),
            },
        );
    }
    g.state = if g.members.is_empty() {
        GroupState::Empty
    } else {
        GroupState::Stable
    };
}
