//! The transaction coordinator (Kafka's `TransactionCoordinator` + `TransactionStateManager`):
//! owns the transactional ids whose `__transaction_state` partition this broker leads, runs
//! the state machine of `state.rs` for their requests, writes each new state to the log with
//! acks=all before acting on it, and completes prepared transactions by having the markers
//! written ([`MarkerWriter`]) and then writing the completed state.
//!
//! Requests of one transactional id are serialized by its slot's lock. Completion runs in
//! its own task (the client has its answer once the prepared state is written); while it runs,
//! the id answers CONCURRENT_TRANSACTIONS. A coordinator that takes over a partition rebuilds
//! its ids from the log and completes what was prepared there (a crash between the prepared
//! state and the markers loses nothing: markers are idempotent for the partition).

use super::records;
use super::state::{self, EndDecision, InitDecision, TxnMetadata, TxnState, abort_if_timed_out};
use crate::error::CoordinatorError;
use crate::error::{Error, TxnError};
use crate::record::produced::CheckedBatch;
use crate::record::schema::partition_for;
use crate::record::{self, NewRecord};
use crate::replica::{ReplicaManager, TxnPartitionCheck};
use crate::storage::StorageError;
use crate::storage::manager::SharedLog;
use crate::types::{TopicPartition, now_ms};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The internal topic holding transaction state.
pub const TRANSACTION_STATE_TOPIC: &str = "__transaction_state";

/// Whether a partition's refusal of a marker means this coordinator is stale (Kafka's
/// `abortSending`): the producer's epoch or the coordinator's has moved past the marker's.
fn abandons_markers(error: &Error) -> bool {
    let code = error.code();
    code == crate::error::code::INVALID_PRODUCER_EPOCH
        || code == crate::error::code::TRANSACTION_COORDINATOR_FENCED
}

/// Pause between rounds of marker writing that left partitions to retry.
const MARKER_RETRY: Duration = Duration::from_millis(100);

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Writes transaction markers to partitions wherever their leaders are (the API layer
/// implements it: locally, or with WriteTxnMarkers to the leader's broker).
pub trait MarkerWriter: Send + Sync + std::fmt::Debug {
    /// One result per partition, in order. Errors are retried by the coordinator, except
    /// UNKNOWN_TOPIC_OR_PARTITION (the topic is gone: nothing to mark).
    fn write_markers<'a>(
        &'a self,
        marker: MarkerRequest,
        partitions: &'a [TopicPartition],
    ) -> BoxFuture<'a, Vec<Result<(), Error>>>;
}

/// Asks the transaction coordinator on another broker whether a partition is in a producer's
/// ongoing transaction, or to add it (AddPartitionsToTxn v5 with `verify_only` or not,
/// KIP-890): `NotInTransaction`, `ProducerFencedByCoordinator`,
/// `PreviousTransactionCompleting`, or `TransactionNotVerified` when it could not say.
pub trait RemoteVerifier: Send + Sync + std::fmt::Debug {
    fn verify<'a>(
        &'a self,
        coordinator: i32,
        transactional_id: &'a str,
        producer_id: i64,
        producer_epoch: i16,
        partition: &'a TopicPartition,
        check: TxnPartitionCheck,
    ) -> BoxFuture<'a, Result<(), Error>>;
}

/// What every partition of a completing transaction gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkerRequest {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub commit: bool,
    /// The leader epoch of the coordinator's `__transaction_state` partition.
    pub coordinator_epoch: i32,
    /// The transaction's version (WriteTxnMarkers v2): from 2 the marker's epoch must be
    /// newer than any the producer wrote with on the partition.
    pub transaction_version: i16,
}

#[derive(Debug, Clone)]
pub struct TxnCoordinatorConfig {
    /// `transaction.state.log.num.partitions`.
    pub partitions: i32,
    /// `transaction.max.timeout.ms`.
    pub max_timeout_ms: i32,
    /// How long a state write waits for the ISR.
    pub write_timeout: Duration,
    /// `transactional.id.expiration.ms`.
    pub id_expiration_ms: i64,
}

#[derive(Debug, Default)]
struct Slot {
    meta: Option<TxnMetadata>,
    /// A prepared transaction's markers are being written.
    completing: bool,
}

type SharedSlot = Arc<tokio::sync::Mutex<Slot>>;

pub struct TransactionCoordinator {
    config: TxnCoordinatorConfig,
    replicas: Arc<ReplicaManager>,
    slots: Mutex<HashMap<String, SharedSlot>>,
    loading: Mutex<HashSet<i32>>,
    markers: Arc<dyn MarkerWriter>,
    /// Allocates producer ids (from the controller's blocks).
    producer_ids: Arc<dyn Fn() -> BoxFuture<'static, Option<i64>> + Send + Sync>,
    /// The cluster's finalized `transaction.version`: what the coordinator's own aborts
    /// (timeouts, fencing) follow.
    transaction_version: Arc<dyn Fn() -> i16 + Send + Sync>,
}

impl std::fmt::Debug for TransactionCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransactionCoordinator")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl TransactionCoordinator {
    pub fn new(
        config: TxnCoordinatorConfig,
        replicas: Arc<ReplicaManager>,
        markers: Arc<dyn MarkerWriter>,
        producer_ids: Arc<dyn Fn() -> BoxFuture<'static, Option<i64>> + Send + Sync>,
        transaction_version: Arc<dyn Fn() -> i16 + Send + Sync>,
    ) -> Arc<Self> {
        Arc::new(Self {
            config,
            replicas,
            slots: Mutex::new(HashMap::new()),
            loading: Mutex::new(HashSet::new()),
            markers,
            producer_ids,
            transaction_version,
        })
    }

    /// The `__transaction_state` partition of `transactional_id`.
    pub fn partition_of(&self, transactional_id: &str) -> TopicPartition {
        TopicPartition::new(
            TRANSACTION_STATE_TOPIC,
            partition_for(transactional_id, self.config.partitions),
        )
    }

    fn slots(&self) -> MutexGuard<'_, HashMap<String, SharedSlot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn loading(&self) -> MutexGuard<'_, HashSet<i32>> {
        self.loading.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The coordinator epoch if this broker coordinates `transactional_id` now.
    fn check_coordinates(&self, transactional_id: &str) -> Result<i32, CoordinatorError> {
        let tp = self.partition_of(transactional_id);
        if self.loading().contains(&tp.partition) {
            return Err(CoordinatorError::LoadInProgress);
        }
        self.replicas
            .get(&tp)
            .ok()
            .and_then(|p| p.leader_epoch_if_leader())
            .ok_or(CoordinatorError::NotCoordinator)
    }

    /// The id's slot if this broker coordinates it now, with the coordinator epoch.
    fn slot(&self, transactional_id: &str) -> Result<(SharedSlot, i32), CoordinatorError> {
        let epoch = self.check_coordinates(transactional_id)?;
        let slot = self
            .slots()
            .entry(transactional_id.to_string())
            .or_default()
            .clone();
        Ok((slot, epoch))
    }

    /// Writes `meta` to the id's partition and waits for the ISR.
    async fn write(&self, meta: &TxnMetadata) -> Result<(), CoordinatorError> {
        let value = records::encode_value(meta);
        self.write_record(&meta.transactional_id, Some(&value))
            .await
    }

    /// Writes the id's record (`None`: a tombstone) and waits for the ISR.
    async fn write_record(
        &self,
        transactional_id: &str,
        value: Option<&[u8]>,
    ) -> Result<(), CoordinatorError> {
        let tp = self.partition_of(transactional_id);
        let partition = self
            .replicas
            .get(&tp)
            .map_err(|_| CoordinatorError::NotCoordinator)?;
        let key = records::encode_key(transactional_id);
        let batch = record::build_batch(&[NewRecord {
            key: Some(&key),
            value,
            timestamp: now_ms(),
        }]);
        let fail = |e: Error| {
            tracing::warn!(transactional_id = %transactional_id, error = %e, "writing transaction state failed");
            match e {
                Error::NotLeaderOrFollower => CoordinatorError::NotCoordinator,
                _ => CoordinatorError::NotAvailable,
            }
        };
        let batch = CheckedBatch::built(batch).map_err(|e| fail(e.into()))?;
        let info = partition.append(&batch, -1).map_err(fail)?;
        partition
            .complete(&info, -1, self.config.write_timeout)
            .await
            .map_err(fail)
    }

    /// InitProducerId with a transactional id: the producer id and epoch to use.
    pub async fn init_producer_id(
        self: &Arc<Self>,
        transactional_id: &str,
        timeout_ms: i32,
        expected: Option<(i64, i16)>,
    ) -> Result<(i64, i16), CoordinatorError> {
        let (slot, coordinator_epoch) = self.slot(transactional_id)?;
        let mut guard = slot.lock().await;
        if guard.completing {
            return Err(TxnError::ConcurrentTransactions.into());
        }
        // Allocated up front only when the state machine will want one.
        let needs_id = guard
            .meta
            .as_ref()
            .is_none_or(|m| m.producer_epoch >= i16::MAX - 1);
        let fresh = if needs_id {
            (self.producer_ids)().await
        } else {
            None
        };
        let decision = state::init_producer_id(
            guard.meta.as_ref(),
            state::InitRequest {
                transactional_id,
                timeout_ms,
                expected,
            },
            self.config.max_timeout_ms,
            || fresh,
            (self.transaction_version)(),
            now_ms(),
        )?;
        match decision {
            InitDecision::Ready(meta) => {
                self.write(&meta).await?;
                let answer = (meta.producer_id, meta.producer_epoch);
                guard.meta = Some(meta);
                Ok(answer)
            }
            InitDecision::AbortFirst(meta) => {
                self.write(&meta).await?;
                guard.meta = Some(meta.clone());
                guard.completing = true;
                drop(guard);
                self.spawn_completion(slot, meta, coordinator_epoch);
                Err(TxnError::ConcurrentTransactions.into())
            }
        }
    }

    /// AddPartitionsToTxn / AddOffsetsToTxn, and the partitions a transaction-version-2
    /// producer's Produce or TxnOffsetCommit adds (`transaction_version` 2).
    pub async fn add_partitions(
        &self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        partitions: &BTreeMap<String, BTreeSet<i32>>,
        transaction_version: i16,
    ) -> Result<(), CoordinatorError> {
        let (slot, _) = self.slot(transactional_id)?;
        let mut guard = slot.lock().await;
        if guard.completing {
            return Err(TxnError::ConcurrentTransactions.into());
        }
        if let Some(next) = state::add_partitions(
            guard.meta.as_ref(),
            producer_id,
            epoch,
            partitions,
            transaction_version,
            now_ms(),
        )? {
            self.write(&next).await?;
            guard.meta = Some(next);
        }
        Ok(())
    }

    /// AddPartitionsToTxn v4+ with `verify_only` (KIP-890): whether each partition is in the
    /// producer's ongoing transaction.
    pub async fn verify_partitions(
        &self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        partitions: &[TopicPartition],
    ) -> Result<Vec<bool>, CoordinatorError> {
        let (slot, _) = self.slot(transactional_id)?;
        let guard = slot.lock().await;
        let meta = guard
            .meta
            .as_ref()
            .ok_or(TxnError::InvalidProducerIdMapping)?;
        if meta.producer_id != producer_id {
            return Err(TxnError::InvalidProducerIdMapping.into());
        }
        if meta.producer_epoch != epoch {
            return Err(TxnError::ProducerFenced {
                got: epoch,
                current: meta.producer_epoch,
            }
            .into());
        }
        Ok(partitions
            .iter()
            .map(|tp| {
                meta.state == TxnState::Ongoing
                    && meta
                        .partitions
                        .get(&*tp.topic)
                        .is_some_and(|ids| ids.contains(&tp.partition))
            })
            .collect())
    }

    /// EndTxn: answered once the prepared state is written; the markers follow. Returns the
    /// producer id and epoch the client goes on with (new ones from transaction version 2).
    pub async fn end_transaction(
        self: &Arc<Self>,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        commit: bool,
        transaction_version: i16,
    ) -> Result<(i64, i16), CoordinatorError> {
        let (slot, coordinator_epoch) = self.slot(transactional_id)?;
        let mut guard = slot.lock().await;
        // While markers are written the state is prepared: the state machine answers
        // CONCURRENT_TRANSACTIONS to a retry, PRODUCER_FENCED to a fenced producer.
        let exhausted = transaction_version >= state::EPOCH_BUMP_VERSION
            && guard
                .meta
                .as_ref()
                .is_some_and(|m| m.producer_epoch >= i16::MAX - 1);
        let fresh = if exhausted {
            (self.producer_ids)().await
        } else {
            None
        };
        let decision = state::end_transaction(
            guard.meta.as_ref(),
            producer_id,
            epoch,
            commit,
            transaction_version,
            || fresh,
            now_ms(),
        )?;
        let answer = decision.producer();
        if let EndDecision::Prepare(meta) = decision {
            self.write(&meta).await?;
            super::crash_point("txn-after-prepare");
            guard.meta = Some(meta.clone());
            guard.completing = true;
            drop(guard);
            self.spawn_completion(slot, meta, coordinator_epoch);
        }
        Ok(answer)
    }

    /// Aborts the transactions open longer than their timeout (fencing their producers).
    /// Returns how many it began aborting.
    pub async fn abort_timed_out(self: &Arc<Self>) -> usize {
        let slots: Vec<(String, SharedSlot)> = self
            .slots()
            .iter()
            .map(|(id, slot)| (id.clone(), slot.clone()))
            .collect();
        let mut aborted = 0;
        for (id, slot) in slots {
            let Ok((_, coordinator_epoch)) = self.slot(&id) else {
                continue;
            };
            let mut guard = slot.lock().await;
            if guard.completing {
                continue;
            }
            let Some(meta) = guard
                .meta
                .as_ref()
                .and_then(|m| abort_if_timed_out(m, (self.transaction_version)(), now_ms()))
            else {
                continue;
            };
            if self.write(&meta).await.is_err() {
                continue;
            }
            tracing::info!(transactional_id = %id, producer_id = meta.producer_id, "aborting a transaction past its timeout");
            guard.meta = Some(meta.clone());
            guard.completing = true;
            drop(guard);
            self.spawn_completion(slot, meta, coordinator_epoch);
            aborted += 1;
        }
        aborted
    }

    /// Forgets the transactional ids idle longer than `transactional.id.expiration.ms` whose
    /// last transaction is complete (Kafka's `removeExpiredTransactionalIds`): a tombstone in
    /// `__transaction_state` first, so a coordinator rebuilding from the log forgets them too
    /// (and compaction drops their records), then their state here. Their next InitProducerId
    /// starts afresh, with a new producer id. Returns how many were removed.
    pub async fn remove_expired(&self) -> usize {
        let now = now_ms();
        let slots: Vec<(String, SharedSlot)> = self
            .slots()
            .iter()
            .map(|(id, slot)| (id.clone(), slot.clone()))
            .collect();
        let mut removed = 0;
        for (id, slot) in slots {
            if self.check_coordinates(&id).is_err() {
                continue;
            }
            let mut guard = slot.lock().await;
            let expired = !guard.completing
                && guard.meta.as_ref().is_some_and(|m| {
                    matches!(
                        m.state,
                        TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort
                    ) && now - m.last_update_ms > self.config.id_expiration_ms
                });
            if !expired || self.write_record(&id, None).await.is_err() {
                continue;
            }
            tracing::info!(transactional_id = %id, "transactional id expired");
            guard.meta = None;
            drop(guard);
            // The slot goes too unless a request holds it (it then finds no state: a new id).
            // Slots are only handed out under the map's lock, so the count cannot grow here.
            let mut map = self.slots();
            if map
                .get(&id)
                .is_some_and(|s| Arc::ptr_eq(s, &slot) && Arc::strong_count(&slot) == 2)
            {
                map.remove(&id);
            }
            removed += 1;
        }
        removed
    }

    /// Completes `prepared` in a task of the runtime the caller runs in or has entered.
    fn spawn_completion(self: &Arc<Self>, slot: SharedSlot, prepared: TxnMetadata, epoch: i32) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // A caller outside any runtime is a bug; the transaction stays prepared (and its
            // partitions' last stable offsets stuck) until this broker coordinates it again.
            tracing::error!(transactional_id = %prepared.transactional_id, "no runtime to complete a prepared transaction on");
            return;
        };
        let this = self.clone();
        runtime.spawn(async move { this.complete(slot, prepared, epoch).await });
    }

    /// Writes the markers of a prepared transaction until every partition has one, then the
    /// completed state. Stops if this broker stops coordinating the id (the next coordinator
    /// resumes from the log), and — as Kafka's `TransactionMarkerRequestCompletionHandler`
    /// does — once a partition refuses a marker with INVALID_PRODUCER_EPOCH or
    /// TRANSACTION_COORDINATOR_FENCED: the partition has seen a newer producer epoch or
    /// coordinator, so this coordinator is stale and the transaction is left, prepared, to the
    /// coordinator that loads it next (retrying would be refused forever).
    async fn complete(&self, slot: SharedSlot, prepared: TxnMetadata, coordinator_epoch: i32) {
        let marker = MarkerRequest {
            producer_id: prepared.producer_id,
            producer_epoch: prepared.producer_epoch,
            commit: prepared.state == TxnState::PrepareCommit,
            coordinator_epoch,
            transaction_version: prepared.transaction_version,
        };
        let mut pending: Vec<TopicPartition> = prepared
            .partitions
            .iter()
            .flat_map(|(topic, ids)| ids.iter().map(move |p| TopicPartition::new(topic, *p)))
            .collect();
        while !pending.is_empty() {
            if self.slot(&prepared.transactional_id).is_err() {
                return;
            }
            let results = self.markers.write_markers(marker, &pending).await;
            let mut retry = Vec::new();
            for (tp, result) in pending.into_iter().zip(results) {
                match result {
                    Ok(()) | Err(Error::UnknownTopicOrPartition) => {}
                    Err(e) if abandons_markers(&e) => {
                        tracing::info!(transactional_id = %prepared.transactional_id, partition = %tp, error = %e, coordinator_epoch, "sending the transaction's marker has permanently failed; no more of its markers are sent");
                        return;
                    }
                    Err(e) => {
                        tracing::debug!(partition = %tp, error = %e, "transaction marker not written yet; retrying");
                        retry.push(tp);
                    }
                }
            }
            pending = retry;
            if !pending.is_empty() {
                tokio::time::sleep(MARKER_RETRY).await;
            }
        }
        super::crash_point("txn-before-complete");
        let completed = state::complete(&prepared, now_ms());
        let mut guard = slot.lock().await;
        loop {
            match self.write(&completed).await {
                Ok(()) => break,
                Err(CoordinatorError::NotCoordinator) => {
                    guard.completing = false;
                    return;
                }
                Err(_) => tokio::time::sleep(MARKER_RETRY).await,
            }
        }
        guard.meta = Some(completed);
        guard.completing = false;
    }

    /// Marks `partition` as loading before this broker starts leading it: its ids answer
    /// COORDINATOR_LOAD_IN_PROGRESS until [`TransactionCoordinator::elect`] has rebuilt them
    /// (a request served in between would be lost to the rebuild).
    pub fn begin_loading(&self, partition: i32) {
        self.loading().insert(partition);
    }

    /// This broker now leads `partition` of `__transaction_state`: its transactional ids are
    /// rebuilt from the log, and transactions found prepared are completed.
    pub fn elect(self: &Arc<Self>, partition: i32, log: &SharedLog) -> Result<usize, StorageError> {
        self.loading().insert(partition);
        self.resign(partition);
        let mut states: HashMap<String, Option<TxnMetadata>> = HashMap::new();
        let replayed = crate::storage::manager::replay_records(log, |replayed| {
            let crate::storage::manager::Replayed::Record { key, value, .. } = replayed else {
                return;
            };
            let Some(Ok(Some(id))) = key.map(records::decode_key) else {
                return;
            };
            let meta = match value.map(|v| records::decode_value(&id, v)) {
                None => None,
                Some(Ok(meta)) => Some(meta),
                Some(Err(e)) => {
                    tracing::warn!(transactional_id = %id, error = %e, "skipping unreadable {TRANSACTION_STATE_TOPIC} record");
                    return;
                }
            };
            states.insert(id, meta);
        });
        let coordinator_epoch = self
            .replicas
            .get(&TopicPartition::new(TRANSACTION_STATE_TOPIC, partition))
            .ok()
            .and_then(|p| p.leader_epoch_if_leader())
            .unwrap_or(0);
        let mut to_complete = Vec::new();
        {
            let mut slots = self.slots();
            for (id, meta) in states {
                let Some(meta) = meta else { continue };
                let completing =
                    matches!(meta.state, TxnState::PrepareCommit | TxnState::PrepareAbort);
                let slot = Arc::new(tokio::sync::Mutex::new(Slot {
                    meta: Some(meta.clone()),
                    completing,
                }));
                if completing {
                    to_complete.push((slot.clone(), meta));
                }
                slots.insert(id, slot);
            }
        }
        self.loading().remove(&partition);
        let replayed = replayed?;
        for (slot, meta) in to_complete {
            self.spawn_completion(slot, meta, coordinator_epoch);
        }
        Ok(replayed)
    }

    /// This broker no longer leads `partition`: its transactional ids are dropped here.
    pub fn resign(&self, partition: i32) {
        let partitions = self.config.partitions;
        self.slots()
            .retain(|id, _| partition_for(id, partitions) != partition);
    }

    /// The state of `transactional_id` as this coordinator holds it (DescribeTransactions);
    /// `None` for an id it coordinates but has never seen.
    pub async fn describe(
        &self,
        transactional_id: &str,
    ) -> Result<Option<TxnMetadata>, CoordinatorError> {
        self.check_coordinates(transactional_id)?;
        let Some(slot) = self.slots().get(transactional_id).cloned() else {
            return Ok(None);
        };
        Ok(slot.lock().await.meta.clone())
    }

    /// Every transactional id this coordinator holds (ListTransactions), by id; none while a
    /// partition of `__transaction_state` is still being loaded (its ids would be missing).
    pub async fn list(&self) -> Result<Vec<TxnMetadata>, CoordinatorError> {
        if !self.loading().is_empty() {
            return Err(CoordinatorError::LoadInProgress);
        }
        let slots: Vec<SharedSlot> = self.slots().values().cloned().collect();
        let mut out = Vec::new();
        for slot in slots {
            if let Some(meta) = slot.lock().await.meta.clone() {
                out.push(meta);
            }
        }
        out.sort_by(|a, b| a.transactional_id.cmp(&b.transactional_id));
        Ok(out)
    }
}

#[cfg(test)]
#[path = "coordinator_tests.rs"]
mod tests;
