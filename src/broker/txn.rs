//! What the transaction coordinator needs of the broker, and the broker of it (Kafka's
//! `AddPartitionsToTxnManager` and the marker channel): markers written to the partitions this
//! broker leads (others go to their leaders through the API layer's sender), the KIP-890
//! verification the replica layer asks for, the producer-id blocks from the controller, and
//! the timers that abort timed-out transactions and forget expired transactional ids.

use super::Broker;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::group::OFFSETS_TOPIC;
use crate::replica::TxnPartitionCheck;
use crate::txn::coordinator::{BoxFuture as TxnFuture, MarkerRequest, MarkerWriter};
use crate::txn::state::EPOCH_BUMP_VERSION;
use crate::types::TopicPartition;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Kafka's `add.partitions.to.txn.retry.backoff.ms` and `…backoff.max.ms` defaults: how
/// often, and how long, a partition leader asks again to add a partition while the
/// producer's previous transaction completes.
const ADD_PARTITION_RETRY_BACKOFF: Duration = Duration::from_millis(20);
const ADD_PARTITION_RETRY_MAX: Duration = Duration::from_millis(100);

impl Broker {
    /// Installs what sends transaction markers to other brokers (the server does, once).
    pub fn set_remote_markers(&self, writer: Arc<dyn MarkerWriter>) {
        let _ = self.remote_markers.set(writer);
    }

    pub fn set_remote_verifier(&self, verifier: Arc<dyn crate::txn::coordinator::RemoteVerifier>) {
        let _ = self.remote_verifier.set(verifier);
    }

    /// Whether `tp` is in the ongoing transaction of `transactional_id`'s producer, or adds
    /// it (`check`), as its coordinator says (here, or on another broker). An add that finds
    /// the producer's previous transaction still completing is retried for a moment, as
    /// Kafka's `add.partitions.to.txn.retry.backoff.*` do, before the producer is told to
    /// retry.
    async fn verify_in_transaction(
        &self,
        tp: &TopicPartition,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        check: TxnPartitionCheck,
    ) -> Result<(), Error> {
        let deadline = tokio::time::Instant::now() + ADD_PARTITION_RETRY_MAX;
        loop {
            let outcome = self
                .ask_transaction_coordinator(
                    tp,
                    transactional_id,
                    producer_id,
                    producer_epoch,
                    check,
                )
                .await;
            match outcome {
                Err(Error::PreviousTransactionCompleting)
                    if tokio::time::Instant::now() + ADD_PARTITION_RETRY_BACKOFF < deadline =>
                {
                    tokio::time::sleep(ADD_PARTITION_RETRY_BACKOFF).await;
                }
                outcome => return outcome,
            }
        }
    }

    async fn ask_transaction_coordinator(
        &self,
        tp: &TopicPartition,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        check: TxnPartitionCheck,
    ) -> Result<(), Error> {
        use crate::error::CoordinatorError as C;
        use crate::error::TxnError as T;
        let coordinator = self.transaction_coordinator();
        let local = match check {
            TxnPartitionCheck::Verify => coordinator
                .verify_partitions(
                    transactional_id,
                    producer_id,
                    producer_epoch,
                    std::slice::from_ref(tp),
                )
                .await
                .map(|verified| verified.first() == Some(&true)),
            TxnPartitionCheck::Add => {
                let partitions =
                    BTreeMap::from([(tp.topic.to_string(), BTreeSet::from([tp.partition]))]);
                coordinator
                    .add_partitions(
                        transactional_id,
                        producer_id,
                        producer_epoch,
                        &partitions,
                        EPOCH_BUMP_VERSION,
                    )
                    .await
                    .map(|()| true)
            }
        };
        match local {
            Ok(true) => Ok(()),
            Ok(false) | Err(C::Txn(T::InvalidProducerIdMapping | T::InvalidTxnState(_))) => {
                Err(Error::NotInTransaction)
            }
            Err(C::Txn(T::ProducerFenced { .. })) => Err(Error::ProducerFencedByCoordinator),
            Err(C::Txn(T::ConcurrentTransactions)) => Err(Error::PreviousTransactionCompleting),
            Err(C::NotCoordinator) => {
                let state_partition = coordinator.partition_of(transactional_id);
                match (
                    self.partition_state(&state_partition).leader,
                    self.remote_verifier.get(),
                ) {
                    (Some(leader), Some(verifier)) if leader != self.config.node_id => {
                        verifier
                            .verify(
                                leader,
                                transactional_id,
                                producer_id,
                                producer_epoch,
                                tp,
                                check,
                            )
                            .await
                    }
                    _ => Err(Error::TransactionNotVerified(
                        "no transaction coordinator is available".into(),
                    )),
                }
            }
            Err(e) => Err(Error::TransactionNotVerified(e.to_string())),
        }
    }

    /// Before a TxnOffsetCommit writes in a producer's transaction: its group's offsets
    /// partition is added to the transaction (`Add`, a producer of transaction version 2,
    /// which sends no AddOffsetsToTxn) or verified to be in it (`Verify`, while
    /// `transaction.partition.verification.enable` is on), as Kafka's group coordinator does.
    pub async fn check_offsets_in_transaction(
        &self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        group_id: &str,
        check: TxnPartitionCheck,
    ) -> Result<(), Error> {
        if check == TxnPartitionCheck::Verify && !self.replicas.transaction_verification() {
            return Ok(());
        }
        let tp = self.groups.partition_of(group_id);
        self.verify_in_transaction(&tp, transactional_id, producer_id, producer_epoch, check)
            .await
    }

    /// Writes a transaction marker to a partition this broker leads and waits until the ISR
    /// has it (markers are written with acks=all).
    pub async fn write_marker(
        &self,
        tp: &TopicPartition,
        marker: MarkerRequest,
    ) -> Result<(), Error> {
        let partition = self.replicas.get(tp)?;
        let info = partition.append_marker(
            marker.producer_id,
            marker.producer_epoch,
            crate::record::control::Marker {
                kind: if marker.commit {
                    crate::record::control::MarkerKind::Commit
                } else {
                    crate::record::control::MarkerKind::Abort
                },
                coordinator_epoch: marker.coordinator_epoch,
            },
            marker.transaction_version,
        )?;
        crate::txn::crash_point("txn-marker-appended");
        let timeout = Duration::from_millis(self.config.cluster.replica_socket_timeout_ms);
        partition.complete(&info, -1, timeout).await?;
        // Offsets committed in the transaction become visible (or are dropped) with it.
        if &*tp.topic == OFFSETS_TOPIC {
            self.groups
                .complete_transaction(tp.partition, marker.producer_id, marker.commit);
        }
        Ok(())
    }

    /// Aborts transactions past their timeout every
    /// `transaction.abort.timed.out.transaction.cleanup.interval.ms`, and forgets expired
    /// transactional ids every `transaction.remove.expired.transaction.cleanup.interval.ms`.
    pub(super) async fn run_transaction_timeouts(self: Arc<Self>) {
        let mut aborts = tokio::time::interval(Duration::from_millis(
            self.config.transaction_abort_interval_ms,
        ));
        let mut expirations = tokio::time::interval(Duration::from_millis(
            self.config.transaction_remove_expired_interval_ms,
        ));
        // Both fire at once first; neither needs to run at startup.
        aborts.tick().await;
        expirations.tick().await;
        loop {
            tokio::select! {
                _ = aborts.tick() => {
                    self.transaction_coordinator().abort_timed_out().await;
                }
                _ = expirations.tick() => {
                    self.transaction_coordinator().remove_expired().await;
                }
                _ = self.tasks.cancelled() => return,
            }
        }
    }

    /// InitProducerId for an idempotent (non-transactional) producer: a fresh id, epoch 0,
    /// from a block the controller handed this broker.
    pub async fn allocate_producer_id(&self) -> Result<i64, Error> {
        let mut block = self.producer_ids.lock().await;
        if block.0 >= block.1 {
            let op = ControllerOp::AllocateProducerIds {
                broker: self.config.node_id,
                broker_epoch: self.broker_epoch.load(Ordering::SeqCst),
            };
            match self.call_active_controller(op).await? {
                ControllerReply::ProducerIds { first, count } => *block = (first, first + count),
                other => {
                    return Err(Error::InvalidRequest(format!(
                        "unexpected controller reply {other:?}"
                    )));
                }
            }
        }
        let id = block.0;
        block.0 += 1;
        Ok(id)
    }
}

/// The transaction coordinator's way to the partitions of a transaction: markers for those
/// this broker leads are written here, the others go to their leaders through the API
/// layer's sender.
#[derive(Debug)]
pub(super) struct BrokerMarkers {
    pub(super) broker: std::sync::Weak<Broker>,
}

impl MarkerWriter for BrokerMarkers {
    fn write_markers<'a>(
        &'a self,
        marker: MarkerRequest,
        partitions: &'a [TopicPartition],
    ) -> TxnFuture<'a, Vec<Result<(), Error>>> {
        Box::pin(async move {
            let Some(broker) = self.broker.upgrade() else {
                return partitions
                    .iter()
                    .map(|_| Err(Error::NotLeaderOrFollower))
                    .collect();
            };
            let node = broker.config.node_id;
            let mut results: Vec<Option<Result<(), Error>>> =
                partitions.iter().map(|_| None).collect();
            let mut remote = Vec::new();
            for (i, tp) in partitions.iter().enumerate() {
                match broker.partition_state(tp).leader {
                    Some(leader) if leader == node => {
                        results[i] = Some(broker.write_marker(tp, marker).await);
                    }
                    Some(_) => remote.push(i),
                    None if broker
                        .metadata
                        .image()
                        .partition(&tp.topic, tp.partition)
                        .is_none() =>
                    {
                        results[i] = Some(Err(Error::UnknownTopicOrPartition));
                    }
                    None => results[i] = Some(Err(Error::NotLeaderOrFollower)),
                }
            }
            if !remote.is_empty() {
                let targets: Vec<TopicPartition> =
                    remote.iter().map(|i| partitions[*i].clone()).collect();
                let answers = match broker.remote_markers.get() {
                    Some(sender) => sender.write_markers(marker, &targets).await,
                    None => targets
                        .iter()
                        .map(|_| Err(Error::NotLeaderOrFollower))
                        .collect(),
                };
                for (i, answer) in remote.into_iter().zip(answers) {
                    results[i] = Some(answer);
                }
            }
            results
                .into_iter()
                .map(|r| r.unwrap_or(Err(Error::NotLeaderOrFollower)))
                .collect()
        })
    }
}

/// KIP-890 verification for the replica layer: this broker's transaction coordinator when it
/// coordinates the transactional id, else the coordinator's broker (AddPartitionsToTxn
/// `verify_only`, through the API layer's sender).
#[derive(Debug)]
pub(super) struct BrokerVerifier {
    pub(super) broker: std::sync::Weak<Broker>,
}

impl crate::replica::TransactionVerifier for BrokerVerifier {
    fn verify<'a>(
        &'a self,
        tp: &'a TopicPartition,
        transactional_id: &'a str,
        producer_id: i64,
        producer_epoch: i16,
        check: TxnPartitionCheck,
    ) -> TxnFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let Some(broker) = self.broker.upgrade() else {
                return Err(Error::TransactionNotVerified(
                    "the broker is stopping".into(),
                ));
            };
            broker
                .verify_in_transaction(tp, transactional_id, producer_id, producer_epoch, check)
                .await
        })
    }
}
