//! The append path (Kafka's `ReplicaManager.appendRecords` with `DelayedProduce`, and
//! `Partition.appendRecordsToLeader`). A client's batches enter through ONE entry,
//! [`ReplicaManager::append_records`]: for each partition the leader's checks against the
//! topic (the header and every record: [`ProducedBatch::check`]; compressed or large batches
//! are walked on the blocking pool, [`crate::offload`], so decompression never stalls an async
//! worker), the KIP-890 verification of a batch that would begin its producer's transaction on
//! the partition, the append; then, for every partition of the request at once, the fsync
//! `flush.messages` asks for and, with acks=all, the wait for the ISR. The coordinators write
//! their own internal batches with [`Partition::append`]; the transaction coordinator's markers
//! go through [`Partition::append_marker`].

use super::{Partition, ReplicaManager};
use crate::error::{Error, code};
use crate::record::Compression;
use crate::record::control::Marker;
use crate::record::produced::{CheckedBatch, ProducedBatch};
use crate::record::validate::ValidationPolicy;
use crate::stats::topics::{TopicCounter, TopicStats};
use crate::storage::log::{AppendInfo, Log};
use crate::storage::manager::lock;
use crate::types::{TopicPartition, now_ms};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Uncompressed batches up to this size are walked on the async worker: a walk reads a few
/// bytes per record, well under a millisecond for this much.
const WALK_IN_PLACE_BYTES: usize = 256 * 1024;
/// So are larger ones of few records, up to this size: their check is mostly the CRC, which
/// runs at memory speed (2 MiB in a fraction of a millisecond), and sending it to the blocking
/// pool would cost more in thread wake-ups than it keeps off the worker (large messages: a
/// 1 MiB batch of one or sixty records).
const CRC_IN_PLACE_BYTES: usize = 2 << 20;
/// The most records such a batch may claim (a walk goes no further than its claim).
const WALK_IN_PLACE_RECORDS: usize = 1024;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a partition leader asks of the coordinator of a batch that would begin its
/// producer's transaction on the partition (Kafka's `TransactionSupportedOperation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnPartitionCheck {
    /// That the producer added the partition itself (KIP-890 part 1).
    Verify,
    /// To add it: a producer of transaction version 2 sends no AddPartitionsToTxn, its
    /// Produce (v12+) or TxnOffsetCommit (v5+) stands for it (KIP-890 part 2).
    Add,
}

/// Asks the coordinator of `transactional_id` whether `tp` was added to the producer's
/// ongoing transaction, or to add it (KIP-890, Kafka's `AddPartitionsToTxnManager`): the
/// broker implements it, with its own coordinator or another broker's. `NotInTransaction`,
/// `ProducerFencedByCoordinator`, or `TransactionNotVerified` when it could not say.
pub trait TransactionVerifier: Send + Sync + std::fmt::Debug {
    fn verify<'a>(
        &'a self,
        tp: &'a TopicPartition,
        transactional_id: &'a str,
        producer_id: i64,
        producer_epoch: i16,
        check: TxnPartitionCheck,
    ) -> BoxFuture<'a, Result<(), Error>>;
}

/// What a produce request asks of all its partitions.
#[derive(Debug, Clone, Copy)]
pub struct ProduceSettings<'a> {
    /// 0, 1 or -1 (all).
    pub acks: i16,
    /// How long acks=all waits for the ISR.
    pub timeout: Duration,
    /// The request's transactional id, for the verification of transactional batches.
    pub transactional_id: Option<&'a str>,
    /// What the transaction coordinator is asked for a batch that begins a transaction.
    pub transaction_check: TxnPartitionCheck,
}

impl ReplicaManager {
    /// Appends a produce request's batches, one per partition, and answers for each in order
    /// once it is acknowledged as `settings.acks` asks. Every partition is appended first, then
    /// each waits for durability and replication: the partitions of one request replicate at
    /// the same time.
    pub async fn append_records(
        &self,
        batches: Vec<(TopicPartition, ProducedBatch)>,
        settings: ProduceSettings<'_>,
    ) -> Vec<Result<AppendInfo, Error>> {
        let mut appended = Vec::with_capacity(batches.len());
        for (tp, batch) in batches {
            appended.push(self.append_one(&tp, batch, &settings).await);
        }
        let mut results = Vec::with_capacity(appended.len());
        for outcome in appended {
            results.push(match outcome {
                Ok((partition, info)) => partition
                    .complete(&info, settings.acks, settings.timeout)
                    .await
                    .map(|()| info),
                Err(e) => Err(e),
            });
        }
        results
    }

    /// One partition of a produce request, up to the append.
    async fn append_one(
        &self,
        tp: &TopicPartition,
        batch: ProducedBatch,
        settings: &ProduceSettings<'_>,
    ) -> Result<(Arc<Partition>, AppendInfo), Error> {
        // Only the coordinators write their topics (Kafka: "Cannot append to internal topic").
        if crate::metadata::INTERNAL_TOPICS.contains(&tp.topic.as_ref()) {
            return Err(Error::InvalidTopic(format!(
                "Cannot append to internal topic {}",
                tp.topic
            )));
        }
        let partition = match self.get(tp) {
            Ok(partition) => partition,
            Err(e) => {
                self.topic_stats
                    .all_topics()
                    .inc(TopicCounter::TotalProduceRequests);
                return Err(e);
            }
        };
        partition.stats.inc(TopicCounter::TotalProduceRequests);
        let batch_bytes = batch.len() as u64;
        // Adding the partition for a transaction-version-2 producer is the protocol, not a
        // check: it happens whether verification is on or not.
        let verifier = self
            .verifier
            .get()
            .filter(|_| {
                settings.transaction_check == TxnPartitionCheck::Add
                    || self.verification.load(std::sync::atomic::Ordering::Relaxed)
            })
            .map(|v| v.as_ref());
        let appended = partition.check_and_append(batch, settings, verifier).await;
        if let Err(e) = &appended {
            count_failed_append(&partition.stats, e, batch_bytes);
        }
        Ok((partition.clone(), appended?))
    }
}

/// Kafka's accounting of a failed append: the bytes of a batch refused as too large count as
/// rejected; a failure the client caused or the cluster's state explains (Kafka's list: an
/// unknown partition, not the leader, too large, corrupt, the storage failing) is not a
/// failed produce request — that meter is for failures the broker did not expect.
fn count_failed_append(stats: &TopicStats, error: &Error, batch_bytes: u64) {
    let code = error.code();
    if code == code::MESSAGE_TOO_LARGE || code == code::RECORD_LIST_TOO_LARGE {
        stats.add(TopicCounter::BytesRejected, batch_bytes);
    }
    let expected = [
        code::UNKNOWN_TOPIC_OR_PARTITION,
        code::NOT_LEADER_OR_FOLLOWER,
        code::MESSAGE_TOO_LARGE,
        code::RECORD_LIST_TOO_LARGE,
        code::CORRUPT_MESSAGE,
        code::KAFKA_STORAGE_ERROR,
        code::UNKNOWN_TOPIC_ID,
    ];
    if !expected.contains(&code) {
        stats.inc(TopicCounter::FailedProduceRequests);
    }
}

/// A verification guard: batches of one producer verified together to begin its transaction
/// on a partition share it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Verification {
    guard: u64,
    /// The producer epoch of the batches (of the transaction they would begin).
    epoch: i16,
    made: std::time::Instant,
}

/// Verification guards kept before old ones are swept, and how old a guard must be to go.
const MAX_VERIFICATIONS: usize = 1024;
const VERIFICATION_KEPT: Duration = Duration::from_secs(120);

/// A client's transactional batch on its way to the log: its producer, and the verification
/// guard its coordinator's answer gave (`None`: its transaction was open here already).
#[derive(Debug, Clone, Copy)]
pub(super) struct TxnAppend {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub guard: Option<u64>,
}

/// Whether `producer_id` has a transaction open on this log at `producer_epoch`.
fn transaction_open_at(log: &Log, producer_id: i64, producer_epoch: i16) -> bool {
    log.producer_state()
        .entry(producer_id)
        .is_some_and(|e| e.txn_first_offset.is_some() && e.epoch == producer_epoch)
}

/// The level the topic compresses `codec` at (`compression.<codec>.level`).
fn level(codec: Compression, config: &crate::config::LogConfig) -> i32 {
    match codec {
        Compression::Gzip => config.gzip_level,
        Compression::Lz4 => config.lz4_level,
        Compression::Zstd => config.zstd_level,
        Compression::None | Compression::Snappy => 0,
    }
}

impl Partition {
    /// A client's batch, from the leader's checks to the append.
    async fn check_and_append(
        &self,
        batch: ProducedBatch,
        settings: &ProduceSettings<'_>,
        verifier: Option<&dyn TransactionVerifier>,
    ) -> Result<AppendInfo, Error> {
        let partition = self;
        let checked = partition.check(batch).await?;
        // Only requests of transactional producers are looked at.
        let verified = match (settings.transactional_id, verifier) {
            (Some(id), Some(verifier))
                if checked.view().is_transactional()
                    && partition.leader_epoch_if_leader().is_some() =>
            {
                let view = checked.view();
                let (producer_id, producer_epoch) = (view.producer_id(), view.producer_epoch());
                let guard = partition
                    .verify_transaction_start(
                        verifier,
                        id,
                        producer_id,
                        producer_epoch,
                        settings.transaction_check,
                    )
                    .await?;
                Some(TxnAppend {
                    producer_id,
                    producer_epoch,
                    guard,
                })
            }
            _ => None,
        };
        partition.append_checked(&checked, settings.acks, verified)
    }

    /// The leader's checks of a client's batch against this partition's topic
    /// configuration.
    async fn check(&self, batch: ProducedBatch) -> Result<CheckedBatch, Error> {
        let (max_message_bytes, policy) = {
            let log = lock(&self.log);
            let config = log.config();
            (
                config.max_message_bytes,
                ValidationPolicy {
                    compacted: config.cleanup_compact,
                    log_append_time: config.log_append_time,
                    timestamp_before_max_ms: config.timestamp_before_max_ms,
                    timestamp_after_max_ms: config.timestamp_after_max_ms,
                    compression: Compression::of_topic_config(&config.compression_type)
                        .map(|codec| (codec, level(codec, config))),
                },
            )
        };
        let recompress = batch.needs_recompression(policy.compression.map(|(codec, _)| codec));
        let cheap = batch.len() <= WALK_IN_PLACE_BYTES
            || (batch.len() <= CRC_IN_PLACE_BYTES
                && batch.records_claimed() <= WALK_IN_PLACE_RECORDS);
        let in_place = !batch.is_compressed() && !recompress && cheap;
        let check = move || -> Result<CheckedBatch, Error> {
            Ok(batch.check(max_message_bytes, &policy, now_ms())?)
        };
        if in_place {
            check()
        } else {
            crate::offload::run(check).await?
        }
    }

    /// KIP-890 (part 1), before a transactional batch of `producer_id` is appended here: when
    /// it would begin the producer's transaction on this partition, the transaction's
    /// coordinator must confirm the partition was added to it. Returns the verification guard
    /// for the append, `None` when the transaction is already open here. This keeps a late or
    /// stray write (a retried batch arriving after its transaction ended) from opening a
    /// transaction no coordinator knows, which would hold the last stable offset back until it
    /// timed out.
    async fn verify_transaction_start(
        &self,
        verifier: &dyn TransactionVerifier,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        check: TxnPartitionCheck,
    ) -> Result<Option<u64>, Error> {
        let Some(guard) = self.start_transaction_verification(producer_id, producer_epoch) else {
            return Ok(None);
        };
        let verified = verifier
            .verify(
                &self.tp,
                transactional_id,
                producer_id,
                producer_epoch,
                check,
            )
            .await;
        // A refused verification leaves the guard: batches of the producer verifying at the
        // same time share it, and one of them may still be confirmed.
        verified.map(|()| Some(guard))
    }

    /// A verification guard if a transactional batch of `producer_id` at `producer_epoch`
    /// would begin a transaction here (its coordinator must confirm the partition is in it),
    /// `None` if the producer's transaction of that epoch is already open on this partition.
    /// The epoch counts (Kafka's `UnifiedLog.hasOngoingTransaction`): with transaction version
    /// 2 the next transaction has the epoch its EndTxn bumped to, and its first batch may
    /// arrive before the marker ending the previous one, still open here at the older epoch;
    /// joining it would let that marker commit the new transaction's records.
    pub(super) fn start_transaction_verification(
        &self,
        producer_id: i64,
        producer_epoch: i16,
    ) -> Option<u64> {
        let log = lock(&self.log);
        if transaction_open_at(&log, producer_id, producer_epoch) {
            return None;
        }
        // Batches of the producer verifying at the same time (up to five requests in
        // flight) share one guard, as they share Kafka's `VerificationStateEntry`: a new one
        // for each would leave all but the last refused once the first is appended.
        let mut verifications = self.verifications.lock().unwrap_or_else(|p| p.into_inner());
        if verifications.len() >= MAX_VERIFICATIONS {
            // Guards of verifications that were refused and never followed up (producers that
            // went away): a verification is long over after this.
            verifications.retain(|_, v| v.made.elapsed() < VERIFICATION_KEPT);
        }
        let verification = verifications
            .entry(producer_id)
            .or_insert_with(|| Verification {
                guard: self.next_guard.fetch_add(1, Ordering::Relaxed),
                epoch: producer_epoch,
                made: std::time::Instant::now(),
            });
        // Batches of a newer epoch begin a newer transaction: the guard becomes theirs. A
        // batch of an older epoch gets one that no append can match (it is fenced anyway).
        if producer_epoch > verification.epoch {
            *verification = Verification {
                guard: self.next_guard.fetch_add(1, Ordering::Relaxed),
                epoch: producer_epoch,
                made: std::time::Instant::now(),
            };
        } else if producer_epoch < verification.epoch {
            return Some(self.next_guard.fetch_add(1, Ordering::Relaxed));
        }
        Some(verification.guard)
    }

    /// Drops `producer_id`'s verification guard (used, or ended by a marker); returns it.
    fn take_verification(&self, producer_id: i64) -> Option<u64> {
        self.verifications
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&producer_id)
            .map(|v| v.guard)
    }

    /// Drops `producer_id`'s verification guard if the marker being written ends the
    /// transaction its batches would begin. With transaction version 2 a marker carries the
    /// epoch its EndTxn bumped to, which is the epoch of the producer's next transaction: a
    /// guard of that epoch belongs to the next transaction (its first batch may be verified
    /// while the markers of the previous one are written) and stays.
    fn end_verification(&self, producer_id: i64, marker_epoch: i16, transaction_version: i16) {
        let mut verifications = self.verifications.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = verifications.get(&producer_id)
            && (transaction_version < 2 || v.epoch < marker_epoch)
        {
            verifications.remove(&producer_id);
        }
    }

    /// Appends a batch a coordinator built (its internal topic's records) as leader.
    pub fn append(&self, batch: &CheckedBatch, acks: i16) -> Result<AppendInfo, Error> {
        self.stats.inc(TopicCounter::TotalProduceRequests);
        self.append_checked(batch, acks, None)
    }

    /// Appends a checked batch as leader; `txn` for a client's transactional batch: unless
    /// the producer's transaction of the batch's epoch is open here, the verification guard
    /// must still be the producer's (no marker ended the transaction meanwhile). A batch that
    /// found its transaction open, and finds it ended now, is refused as Kafka refuses a batch
    /// missing its verification.
    pub(super) fn append_checked(
        &self,
        batch: &CheckedBatch,
        acks: i16,
        txn: Option<TxnAppend>,
    ) -> Result<AppendInfo, Error> {
        let leadership = match self.leadership() {
            Some(l) if l.leader == self.node_id => l,
            _ => return Err(Error::NotLeaderOrFollower),
        };
        let leader_epoch = leadership.leader_epoch;
        let isr_size = if acks == -1 {
            self.live_isr_size(&leadership)
        } else {
            leadership.isr.len() as i32
        };
        let info = {
            let mut log = lock(&self.log);
            let required = log.config().min_insync_replicas;
            if acks == -1 && required > isr_size {
                return Err(Error::NotEnoughReplicas {
                    isr: isr_size,
                    required,
                });
            }
            if let Some(txn) = txn {
                let open = transaction_open_at(&log, txn.producer_id, txn.producer_epoch);
                // Used once: after this append the open transaction is what counts.
                let current = txn
                    .guard
                    .and_then(|_| self.take_verification(txn.producer_id));
                if !open && (txn.guard.is_none() || current != txn.guard) {
                    return Err(Error::NotInTransaction);
                }
            }
            log.append_as_leader(batch, leader_epoch, now_ms())?
        };
        self.stats.add(
            TopicCounter::MessagesIn,
            batch.view().records_count().max(0) as u64,
        );
        self.stats
            .add(TopicCounter::BytesIn, batch.bytes().len() as u64);
        // With only this replica in sync, the write is committed at once.
        self.maybe_increment_high_watermark();
        self.wake_waiters();
        Ok(info)
    }

    /// Writes a transaction marker as leader (WriteTxnMarkers). Like acks=all data, the
    /// caller then waits for replication before answering.
    pub fn append_marker(
        &self,
        producer_id: i64,
        producer_epoch: i16,
        marker: Marker,
        transaction_version: i16,
    ) -> Result<AppendInfo, Error> {
        let leader_epoch = self
            .leader_epoch_if_leader()
            .ok_or(Error::NotLeaderOrFollower)?;
        self.stats.inc(TopicCounter::TotalProduceRequests);
        let info = {
            let mut log = lock(&self.log);
            let size_before = log.size_bytes();
            let info = log.append_marker(
                producer_id,
                producer_epoch,
                marker,
                transaction_version,
                leader_epoch,
                now_ms(),
            )?;
            // Under the log lock: a verified append either precedes the marker or sees this.
            self.end_verification(producer_id, producer_epoch, transaction_version);
            // A marker is one control record, counted in as Kafka counts it.
            self.stats.inc(TopicCounter::MessagesIn);
            self.stats.add(
                TopicCounter::BytesIn,
                log.size_bytes().saturating_sub(size_before),
            );
            info
        };
        self.maybe_increment_high_watermark();
        self.wake_waiters();
        Ok(info)
    }

    /// What an append must wait for before it is acknowledged: the fsync `flush.messages`
    /// asks for, and with acks=all the ISR.
    pub async fn complete(
        &self,
        info: &AppendInfo,
        acks: i16,
        timeout: Duration,
    ) -> Result<(), Error> {
        if info.flush_due {
            self.flush_to(info.last_offset + 1).await?;
        }
        if acks == -1 {
            crate::stats::requests::remote(
                self.wait_for_replication(info.last_offset + 1, timeout),
            )
            .await?;
        }
        Ok(())
    }

    /// Waits until everything below `offset` is fsynced. Whoever holds the turn syncs all
    /// that was appended so far; those queued behind usually find their data already covered.
    pub async fn flush_to(&self, offset: i64) -> Result<(), Error> {
        let _turn = self.flush_turn.lock().await;
        let job = {
            let mut log = lock(&self.log);
            if log.recovery_point() >= offset {
                return Ok(());
            }
            log.prepare_flush(now_ms())?
        };
        let Some(job) = job else {
            return Ok(());
        };
        let (job, synced) = tokio::task::spawn_blocking(move || {
            let synced = job.sync();
            (job, synced)
        })
        .await
        .map_err(|e| {
            Error::Storage(crate::storage::StorageError::Io(std::io::Error::other(
                e.to_string(),
            )))
        })?;
        lock(&self.log).complete_flush(&job, synced)?;
        Ok(())
    }
}
