//! Every partition this broker hosts (Kafka's `ReplicaManager`): found by topic and
//! partition, added and removed as the metadata says, woken at shutdown; the ISR task's wake-up
//! when a follower catches up. The produce and fetch paths over them are `produce.rs` and
//! `fetch.rs`.

use super::{Partition, TransactionVerifier};
use crate::error::Error;
use crate::stats::IsrStats;
use crate::stats::topics::BrokerTopicStats;
use crate::types::TopicPartition;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use tokio::sync::Notify;

#[derive(Debug, Default)]
pub struct ReplicaManager {
    partitions: RwLock<HashMap<TopicPartition, Arc<Partition>>>,
    /// Woken when a follower out of the ISR catches up: the ISR task adds it back.
    pub(super) isr_candidates: Notify,
    /// Set at shutdown: waiting fetches answer with what they have instead of waiting on.
    pub(super) closing: AtomicBool,
    /// Asks transactions' coordinators about partitions before a transactional batch may
    /// begin its transaction on one (KIP-890), while `verification` is on.
    pub(super) verifier: OnceLock<Arc<dyn TransactionVerifier>>,
    /// Whether the verifier is used (`transaction.partition.verification.enable`).
    pub(super) verification: AtomicBool,
    /// Messages and bytes in and out, produce and fetch requests, per topic.
    pub topic_stats: BrokerTopicStats,
    /// ISR shrinks and expands of the partitions this broker leads.
    pub isr_stats: IsrStats,
    /// With a rack-aware replica selector (KIP-392): each live broker's rack.
    racks: RwLock<Option<Arc<HashMap<i32, String>>>>,
    /// What this broker sends, as leader, to throttled replicas out of the ISR.
    pub leader_throttle: super::throttle::ReplicationQuota,
    /// What this broker fetches, as follower, for throttled replicas out of the ISR.
    pub follower_throttle: super::throttle::ReplicationQuota,
    /// What moves between this broker's log directories copy (Kafka's
    /// `ReplicaAlterLogDirs` quota).
    pub alter_log_dirs_throttle: Arc<super::throttle::ReplicationQuota>,
}

impl ReplicaManager {
    pub fn new() -> Self {
        Self::default()
    }

    /// Installs what verifies transactional batches with their coordinators (the broker
    /// does, once) and turns verification on.
    pub fn set_transaction_verifier(&self, verifier: Arc<dyn TransactionVerifier>) {
        let _ = self.verifier.set(verifier);
        self.set_transaction_verification(true);
    }

    /// Whether transactional batches are verified (KIP-890 part 1).
    pub fn transaction_verification(&self) -> bool {
        self.verification.load(Ordering::Relaxed)
    }

    /// Turns verification of transactional batches on or off
    /// (`transaction.partition.verification.enable`, a dynamic config).
    pub fn set_transaction_verification(&self, enabled: bool) {
        self.verification.store(enabled, Ordering::Relaxed);
    }

    /// Turns rack-aware reads on with each broker's rack, or off (`None`).
    pub fn set_replica_racks(&self, racks: Option<HashMap<i32, String>>) {
        *self.racks.write().unwrap_or_else(|p| p.into_inner()) = racks.map(Arc::new);
    }

    pub(super) fn replica_racks(&self) -> Option<Arc<HashMap<i32, String>>> {
        self.racks.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn add(&self, mut partition: Partition) -> Arc<Partition> {
        partition.stats = self.topic_stats.for_topic(&partition.tp.topic);
        let partition = Arc::new(partition);
        self.partitions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(partition.tp.clone(), partition.clone());
        partition
    }

    /// Ends every long-poll now (graceful shutdown: in-flight fetches answer at once).
    pub fn begin_shutdown(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let partitions: Vec<Arc<Partition>> = self
            .partitions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for partition in partitions {
            partition.wake_waiters();
        }
    }

    pub fn remove(&self, tp: &TopicPartition) -> Option<Arc<Partition>> {
        let removed = self
            .partitions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(tp);
        if let Some(partition) = &removed {
            // Waiting fetches re-check and find the partition gone.
            partition.wake_waiters();
        }
        removed
    }

    /// Waits until a follower out of the ISR has caught up (or the caller's timer fires).
    pub async fn isr_candidate(&self) {
        self.isr_candidates.notified().await;
    }

    /// Wakes the leader's ISR loop (a refused change's backoff ran out).
    pub fn wake_isr_updates(&self) {
        self.isr_candidates.notify_one();
    }

    /// The partitions this broker hosts.
    pub fn all(&self) -> Vec<Arc<Partition>> {
        self.partitions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    pub fn get(&self, tp: &TopicPartition) -> Result<Arc<Partition>, Error> {
        self.partitions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(tp)
            .cloned()
            .ok_or(Error::UnknownTopicOrPartition)
    }
}
