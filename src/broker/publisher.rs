//! Applying the cluster's metadata to this broker (Kafka's `BrokerMetadataPublisher`), on its
//! own thread: each committed image creates, leads, follows or deletes this broker's
//! partitions, changes their configs, elects or resigns the group, transaction and share
//! coordinators of the internal partitions it leads, and then becomes the image the API layer
//! answers from. The first image also removes stray logs. An image that fails to apply (no
//! descriptor for a new log, a full disk) is applied again until it succeeds or a newer one
//! arrives.

use super::{APPLY_WAIT, Broker};
use crate::error::Error;
use crate::group::OFFSETS_TOPIC;
use crate::metadata;
use crate::metadata::cache::Taken;
use crate::metadata::image::{LocalChange, MetadataImage, local_changes};
use crate::replica::{Leadership, Partition};
use crate::share::SHARE_STATE_TOPIC;
use crate::storage::manager::lock;
use crate::txn::coordinator::TRANSACTION_STATE_TOPIC;
use crate::types::{TopicPartition, now_ms};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl Broker {
    pub(super) fn run_publisher(self: &Arc<Self>) {
        let mut first = true;
        // An image that failed to apply (no descriptor for a new log, a full disk) is applied
        // again every half second until it succeeds or a newer one arrives.
        let mut failed: Option<Arc<MetadataImage>> = None;
        loop {
            let (image, retry) = match self.images.take(Duration::from_millis(500)) {
                Taken::Closed => return,
                Taken::Nothing => match failed.take() {
                    Some(image) => (image, true),
                    None => continue,
                },
                Taken::Image(image) => (image, false),
            };
            let epoch = self.broker_epoch.load(Ordering::SeqCst);
            // Only images from this broker's registration on: an older one may name this
            // broker leader of partitions it no longer leads. A controller-only node hosts
            // nothing and applies every image (its metadata answers what it forwards).
            if self.config.cluster.broker_role && (epoch < 0 || (image.offset as i64) < epoch) {
                continue;
            }
            if let Err(e) = self.apply_image(image.clone(), first) {
                if !retry {
                    tracing::error!(error = %e, "applying metadata failed; retrying");
                }
                failed = Some(image);
                continue;
            }
            self.sync_fetchers();
            first = false;
        }
    }

    /// Applies one committed image: this broker's partitions as it says, then makes it
    /// current. The first one also removes logs of partitions not assigned here.
    fn apply_image(&self, image: Arc<MetadataImage>, first: bool) -> Result<(), Error> {
        if let Some(cluster_id) = &image.cluster_id {
            let mut current = self.cluster_id.lock().unwrap_or_else(|p| p.into_inner());
            // Every log directory belongs to the quorum's cluster; those not marked yet are
            // now, each with a directory id of its own.
            metadata::mark_log_dirs(&self.config.log_dirs, self.config.node_id, cluster_id)?;
            *current = cluster_id.clone();
        }
        let node = self.config.node_id;
        let old = if first {
            Arc::new(MetadataImage::default())
        } else {
            self.metadata.image()
        };
        let mut changes = local_changes(&old, &image, node);
        // Offsets partitions whose leadership here starts (true) or ends (false).
        let mut coordination: Vec<(i32, bool)> = Vec::new();
        // `__transaction_state` partitions whose leadership here starts or ends.
        let mut txn_coordination: Vec<(i32, bool)> = Vec::new();
        // `__share_group_state` partitions whose leadership here starts or ends.
        let mut share_coordination: Vec<(i32, bool)> = Vec::new();
        for change in &changes {
            let (topic, partition, leads_now) = match change {
                LocalChange::Lead {
                    topic, partition, ..
                } => (topic, *partition, true),
                LocalChange::Follow {
                    topic, partition, ..
                }
                | LocalChange::Remove { topic, partition } => (topic, *partition, false),
            };
            let led_before = old
                .partition(topic, partition)
                .is_some_and(|p| p.leader == node);
            if &**topic == TRANSACTION_STATE_TOPIC && leads_now != led_before {
                txn_coordination.push((partition, leads_now));
                if leads_now {
                    self.transaction_coordinator().begin_loading(partition);
                }
                continue;
            }
            if &**topic == SHARE_STATE_TOPIC && leads_now != led_before {
                share_coordination.push((partition, leads_now));
                if leads_now {
                    self.shares.store().begin_loading(partition);
                }
                continue;
            }
            if &**topic != OFFSETS_TOPIC {
                continue;
            }
            if leads_now != led_before {
                coordination.push((partition, leads_now));
                if leads_now {
                    // Requests for its groups wait until they are rebuilt below.
                    self.groups.begin_loading(partition);
                }
            }
        }
        // Removals first: a topic deleted and created again under its name reuses the path.
        changes.sort_by_key(|c| !matches!(c, LocalChange::Remove { .. }));
        for change in changes {
            match change {
                LocalChange::Remove { topic, partition } => {
                    let tp = TopicPartition::new(&topic, partition);
                    self.replicas.remove(&tp);
                    self.logs.delete(&tp)?;
                    tracing::info!(partition = %tp, "no longer a replica; log deleted");
                }
                LocalChange::Lead {
                    topic,
                    topic_id,
                    partition,
                    registration,
                }
                | LocalChange::Follow {
                    topic,
                    topic_id,
                    partition,
                    registration,
                } => {
                    let tp = TopicPartition::new(&topic, partition);
                    let hosted = match self.replicas.get(&tp) {
                        Ok(p) if p.topic_id() == topic_id => p,
                        _ => {
                            let configs = image
                                .topic(&topic)
                                .map(|t| t.configs.clone())
                                .unwrap_or_default();
                            let log = self.logs.get_or_create(
                                &tp,
                                self.log_config(&configs),
                                now_ms(),
                            )?;
                            self.replicas
                                .add(Partition::new(tp.clone(), topic_id, node, log))
                        }
                    };
                    hosted.set_lag_time_ms(self.config.cluster.replica_lag_time_max_ms);
                    hosted.set_leadership(Leadership {
                        leader: registration.leader,
                        leader_epoch: registration.leader_epoch,
                        partition_epoch: registration.partition_epoch,
                        replicas: registration.replicas.clone(),
                        isr: registration.isr.clone(),
                    });
                }
            }
        }
        // Dynamic broker configs: the defaults every topic inherits may have changed.
        let defaults_changed = self.apply_dynamic_configs(&image);
        if first || old.client_quotas != image.client_quotas {
            self.client_quotas.update(&image.client_quotas);
        }
        if first || old.delegation_tokens != image.delegation_tokens {
            self.token_cache
                .update(&self.token_settings, &image.delegation_tokens);
        }
        // Config changes of topics hosted here.
        for (name, topic) in &image.topics {
            let before = old.topic(name).filter(|t| t.id == topic.id);
            let unchanged = first || before.is_none_or(|b| b.configs == topic.configs);
            if unchanged && !defaults_changed {
                continue;
            }
            let config = self.log_config(&topic.configs);
            for p in 0..topic.partitions.len() as i32 {
                if let Some(log) = self.logs.get(&TopicPartition::new(name, p)) {
                    self.logs.set_config(&log, config.clone());
                }
            }
        }
        if first {
            self.remove_strays(&image)?;
        }
        if self.config.cluster.rack_aware_reads {
            // Only brokers that can serve: a fenced one is nobody's preferred replica.
            let racks = image
                .brokers
                .values()
                .filter(|b| b.is_active())
                .filter_map(|b| b.rack.clone().map(|rack| (b.id, rack)))
                .collect();
            self.replicas.set_replica_racks(Some(racks));
        }
        self.metadata.publish(image);
        // Groups refer to topics by id: replayed once the topics are known here.
        let (started, mut elected, mut records) = (std::time::Instant::now(), 0, 0);
        for (partition, leads) in coordination {
            if !leads {
                self.groups.resign(partition);
                self.shares.resign_groups(partition);
                continue;
            }
            let tp = TopicPartition::new(OFFSETS_TOPIC, partition);
            if let Some(log) = self.logs.get(&tp) {
                records += self.groups.elect(partition, &log)?;
                self.shares.elect_groups(partition, &log);
                elected += 1;
            }
        }
        if elected > 0 {
            tracing::info!(partitions = elected, records, groups = self.groups.list_groups().len(), elapsed = ?started.elapsed(), "loaded consumer groups");
        }
        // Transactions found prepared are completed by tasks on the runtime, and this is the
        // metadata publisher's thread.
        let runtime = self
            .runtime
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let _in_runtime = runtime.as_ref().map(|r| r.enter());
        for (partition, leads) in txn_coordination {
            let transactions = self.transaction_coordinator();
            if !leads {
                transactions.resign(partition);
                continue;
            }
            let tp = TopicPartition::new(TRANSACTION_STATE_TOPIC, partition);
            if let Some(log) = self.logs.get(&tp) {
                let records = transactions.elect(partition, &log)?;
                tracing::debug!(
                    partition,
                    records,
                    "coordinating the transactional ids of {TRANSACTION_STATE_TOPIC} partition"
                );
            }
        }
        for (partition, leads) in share_coordination {
            let store = self.shares.store();
            if !leads {
                store.resign(partition);
                continue;
            }
            let tp = TopicPartition::new(SHARE_STATE_TOPIC, partition);
            match self.logs.get(&tp) {
                Some(log) => {
                    store.elect(partition, &log);
                }
                None => store.resign(partition),
            }
        }
        self.metadata.renotify();
        Ok(())
    }

    /// Deletes logs of partitions the metadata does not assign to this broker (a topic
    /// deleted while the broker was down, or a crash between creating logs and recording
    /// the topic).
    fn remove_strays(&self, image: &MetadataImage) -> Result<(), Error> {
        let node = self.config.node_id;
        for log in self.logs.all() {
            let tp = lock(&log).topic_partition().clone();
            let assigned = image
                .partition(&tp.topic, tp.partition)
                .is_some_and(|p| p.replicas.contains(&node));
            if !assigned {
                tracing::warn!(partition = %tp, "removing a stray log: the metadata does not assign it to this broker");
                self.replicas.remove(&tp);
                self.logs.delete(&tp)?;
            }
        }
        Ok(())
    }

    /// Waits until this broker has applied a change the controller answered for (it may
    /// have been committed elsewhere: the condition, not an offset, says when it is here).
    pub(super) async fn await_visible(&self, visible: impl Fn(&MetadataImage) -> bool) {
        if !self.metadata.wait_until(visible, APPLY_WAIT).await {
            tracing::warn!("a metadata change was not applied here in time");
        }
    }
}
