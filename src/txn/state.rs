//! One transactional id's state (Kafka's `TransactionMetadata`) and the coordinator's
//! decisions on it, as pure functions of the current state and a request: each fails with a
//! Kafka error, needs nothing written, or yields the next state, which the coordinator writes
//! to `__transaction_state` before it acts on it or answers.
//!
//! Two protocols, chosen per request by the client's transaction version (KIP-890 part 2):
//! with version 0/1 the producer epoch changes at InitProducerId, and when the coordinator
//! aborts a transaction itself (timeout, or a new producer instance), which fences the old
//! one. With version 2 every EndTxn also bumps the epoch (the markers carry the new one, so a
//! late write of the ended transaction is refused by the partition), a producer whose epochs
//! are exhausted moves to a new producer id as its transaction ends, and an abort needs no
//! open transaction. Kafka's `TransactionCoordinator.endTransaction` table for version 2:
//!
//! ```text
//!                   Abort              Commit
//!                   retry   current    retry   current      retry: the epoch before the bump
//!   Empty           FENCED  bump       FENCED  INVALID      bump: PrepareAbort, epoch + 1
//!   CompleteAbort   done    bump       INVALID INVALID      done: answered, nothing written
//!   CompleteCommit  INVALID bump       done    INVALID
//! ```

use crate::error::TxnError;
use std::collections::{BTreeMap, BTreeSet};

/// Kafka's `TransactionState`, with its codes in `__transaction_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxnState {
    Empty,
    Ongoing,
    PrepareCommit,
    PrepareAbort,
    CompleteCommit,
    CompleteAbort,
    Dead,
    PrepareEpochFence,
}

impl TxnState {
    pub fn code(self) -> i8 {
        match self {
            TxnState::Empty => 0,
            TxnState::Ongoing => 1,
            TxnState::PrepareCommit => 2,
            TxnState::PrepareAbort => 3,
            TxnState::CompleteCommit => 4,
            TxnState::CompleteAbort => 5,
            TxnState::Dead => 6,
            TxnState::PrepareEpochFence => 7,
        }
    }

    pub fn from_code(code: i8) -> Option<Self> {
        Some(match code {
            0 => TxnState::Empty,
            1 => TxnState::Ongoing,
            2 => TxnState::PrepareCommit,
            3 => TxnState::PrepareAbort,
            4 => TxnState::CompleteCommit,
            5 => TxnState::CompleteAbort,
            6 => TxnState::Dead,
            7 => TxnState::PrepareEpochFence,
            _ => return None,
        })
    }

    /// The name ListTransactions and DescribeTransactions report.
    pub fn name(self) -> &'static str {
        match self {
            TxnState::Empty => "Empty",
            TxnState::Ongoing => "Ongoing",
            TxnState::PrepareCommit => "PrepareCommit",
            TxnState::PrepareAbort => "PrepareAbort",
            TxnState::CompleteCommit => "CompleteCommit",
            TxnState::CompleteAbort => "CompleteAbort",
            TxnState::Dead => "Dead",
            TxnState::PrepareEpochFence => "PrepareEpochFence",
        }
    }

    fn is_complete_or_empty(self) -> bool {
        matches!(
            self,
            TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort
        )
    }
}

/// A transactional id's state, as written to `__transaction_state`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnMetadata {
    pub transactional_id: String,
    pub producer_id: i64,
    pub previous_producer_id: i64,
    pub producer_epoch: i16,
    pub timeout_ms: i32,
    pub state: TxnState,
    /// The partitions of the ongoing (or completing) transaction.
    pub partitions: BTreeMap<String, BTreeSet<i32>>,
    pub start_ms: i64,
    pub last_update_ms: i64,
    /// With transaction version 2, the producer id the transaction moves to as it completes
    /// (its epochs are exhausted); -1 otherwise.
    pub next_producer_id: i64,
    /// The transaction version of the client's last request that changed this state (0–2).
    pub transaction_version: i16,
}

/// The transaction version from which EndTxn bumps the producer epoch (KIP-890 part 2).
pub const EPOCH_BUMP_VERSION: i16 = 2;

/// The largest epoch a producer id is used with; the next InitProducerId rotates to a new
/// producer id (Kafka keeps `Short.MaxValue` itself for fencing).
const MAX_EPOCH: i16 = i16::MAX - 1;

/// What InitProducerId leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitDecision {
    /// Write this state (Empty), then answer with its producer id and epoch.
    Ready(TxnMetadata),
    /// A transaction is open: write this (PrepareAbort with the epoch bumped, fencing the
    /// old producer), abort it, and answer CONCURRENT_TRANSACTIONS so the client retries.
    AbortFirst(TxnMetadata),
}

/// What an InitProducerId with a transactional id asks.
#[derive(Debug, Clone, Copy)]
pub struct InitRequest<'a> {
    pub transactional_id: &'a str,
    pub timeout_ms: i32,
    /// The producer id and epoch a v3+ client already has (KIP-360), which must be the
    /// current ones.
    pub expected: Option<(i64, i16)>,
}

/// InitProducerId with a transactional id.
pub fn init_producer_id(
    current: Option<&TxnMetadata>,
    request: InitRequest<'_>,
    max_timeout_ms: i32,
    new_producer_id: impl FnOnce() -> Option<i64>,
    server_transaction_version: i16,
    now_ms: i64,
) -> Result<InitDecision, TxnError> {
    let InitRequest {
        transactional_id,
        timeout_ms,
        expected,
    } = request;
    if timeout_ms <= 0 || timeout_ms > max_timeout_ms {
        return Err(TxnError::InvalidTransactionTimeout {
            got: timeout_ms,
            max: max_timeout_ms,
        });
    }
    let Some(current) = current else {
        let producer_id = new_producer_id().ok_or(TxnError::ProducerIdUnavailable)?;
        return Ok(InitDecision::Ready(TxnMetadata {
            transactional_id: transactional_id.to_string(),
            producer_id,
            previous_producer_id: -1,
            producer_epoch: 0,
            timeout_ms,
            state: TxnState::Empty,
            partitions: BTreeMap::new(),
            start_ms: -1,
            last_update_ms: now_ms,
            next_producer_id: -1,
            transaction_version: 0,
        }));
    };
    if let Some((producer_id, epoch)) = expected
        && (producer_id != current.producer_id || epoch != current.producer_epoch)
    {
        return Err(TxnError::ProducerFenced {
            got: epoch,
            current: current.producer_epoch,
        });
    }
    match current.state {
        TxnState::PrepareCommit | TxnState::PrepareAbort | TxnState::PrepareEpochFence => {
            Err(TxnError::ConcurrentTransactions)
        }
        TxnState::Ongoing => Ok(InitDecision::AbortFirst(fence_and_abort(
            current,
            server_transaction_version,
            now_ms,
        ))),
        TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort | TxnState::Dead => {
            let (producer_id, previous_producer_id, producer_epoch) =
                if current.producer_epoch >= MAX_EPOCH {
                    let fresh = new_producer_id().ok_or(TxnError::ProducerIdUnavailable)?;
                    (fresh, current.producer_id, 0)
                } else {
                    (
                        current.producer_id,
                        current.previous_producer_id,
                        current.producer_epoch + 1,
                    )
                };
            Ok(InitDecision::Ready(TxnMetadata {
                transactional_id: transactional_id.to_string(),
                producer_id,
                previous_producer_id,
                producer_epoch,
                timeout_ms,
                state: TxnState::Empty,
                partitions: BTreeMap::new(),
                start_ms: -1,
                last_update_ms: now_ms,
                next_producer_id: -1,
                transaction_version: current.transaction_version,
            }))
        }
    }
}

/// The request's producer must be the transactional id's current one.
fn check_producer(current: &TxnMetadata, producer_id: i64, epoch: i16) -> Result<(), TxnError> {
    if producer_id != current.producer_id {
        return Err(TxnError::InvalidProducerIdMapping);
    }
    if epoch != current.producer_epoch {
        return Err(TxnError::ProducerFenced {
            got: epoch,
            current: current.producer_epoch,
        });
    }
    Ok(())
}

/// AddPartitionsToTxn (and AddOffsetsToTxn, with the group's `__consumer_offsets`
/// partition): `None` when every partition is in the transaction already (nothing to write).
pub fn add_partitions(
    current: Option<&TxnMetadata>,
    producer_id: i64,
    epoch: i16,
    partitions: &BTreeMap<String, BTreeSet<i32>>,
    transaction_version: i16,
    now_ms: i64,
) -> Result<Option<TxnMetadata>, TxnError> {
    let current = current.ok_or(TxnError::InvalidProducerIdMapping)?;
    check_producer(current, producer_id, epoch)?;
    match current.state {
        TxnState::PrepareCommit | TxnState::PrepareAbort | TxnState::PrepareEpochFence => {
            return Err(TxnError::ConcurrentTransactions);
        }
        TxnState::Dead => return Err(TxnError::InvalidTxnState("the transactional id is gone")),
        _ => {}
    }
    let fresh = current.state.is_complete_or_empty();
    let already = !fresh
        && partitions.iter().all(|(topic, ids)| {
            current
                .partitions
                .get(topic)
                .is_some_and(|present| ids.is_subset(present))
        });
    if already {
        return Ok(None);
    }
    let mut next = current.clone();
    if fresh {
        next.partitions.clear();
        next.start_ms = now_ms;
    }
    for (topic, ids) in partitions {
        next.partitions
            .entry(topic.clone())
            .or_default()
            .extend(ids.iter().copied());
    }
    next.state = TxnState::Ongoing;
    next.last_update_ms = now_ms;
    next.transaction_version = transaction_version;
    Ok(Some(next))
}

/// What EndTxn leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndDecision {
    /// Write this (PrepareCommit or PrepareAbort), answer, then write the markers.
    Prepare(TxnMetadata),
    /// A retry of an end already completed the same way: answer at once with the producer
    /// id and epoch the client is to use.
    AlreadyDone {
        producer_id: i64,
        producer_epoch: i16,
    },
}

impl EndDecision {
    /// The producer id and epoch EndTxn v5+ answers with: those of the next transaction.
    pub fn producer(&self) -> (i64, i16) {
        match self {
            EndDecision::Prepare(meta) if meta.next_producer_id >= 0 => (meta.next_producer_id, 0),
            EndDecision::Prepare(meta) => (meta.producer_id, meta.producer_epoch),
            EndDecision::AlreadyDone {
                producer_id,
                producer_epoch,
            } => (*producer_id, *producer_epoch),
        }
    }
}

/// EndTxn from the producer, with the transaction version its request implies.
/// `new_producer_id` is asked only when a version-2 producer's epochs are exhausted.
pub fn end_transaction(
    current: Option<&TxnMetadata>,
    producer_id: i64,
    epoch: i16,
    commit: bool,
    transaction_version: i16,
    new_producer_id: impl FnOnce() -> Option<i64>,
    now_ms: i64,
) -> Result<EndDecision, TxnError> {
    let current = current.ok_or(TxnError::InvalidProducerIdMapping)?;
    if transaction_version >= EPOCH_BUMP_VERSION {
        return end_with_epoch_bump(current, producer_id, epoch, commit, new_producer_id, now_ms);
    }
    check_producer(current, producer_id, epoch)?;
    let done = EndDecision::AlreadyDone {
        producer_id: current.producer_id,
        producer_epoch: current.producer_epoch,
    };
    match (current.state, commit) {
        (TxnState::Ongoing, _) => Ok(EndDecision::Prepare(TxnMetadata {
            state: if commit {
                TxnState::PrepareCommit
            } else {
                TxnState::PrepareAbort
            },
            last_update_ms: now_ms,
            next_producer_id: -1,
            transaction_version,
            ..current.clone()
        })),
        (TxnState::CompleteCommit, true) | (TxnState::CompleteAbort, false) => Ok(done),
        (TxnState::PrepareCommit, true) | (TxnState::PrepareAbort, false) => {
            Err(TxnError::ConcurrentTransactions)
        }
        (TxnState::Empty, _) => Err(TxnError::InvalidTxnState(
            "no transaction is open for this producer",
        )),
        _ => Err(TxnError::InvalidTxnState(
            "the transaction already ended the other way",
        )),
    }
}

/// EndTxn with transaction version 2 (see the table at the top).
fn end_with_epoch_bump(
    current: &TxnMetadata,
    producer_id: i64,
    epoch: i16,
    commit: bool,
    new_producer_id: impl FnOnce() -> Option<i64>,
    now_ms: i64,
) -> Result<EndDecision, TxnError> {
    // A retry of an end whose answer was lost: the epoch is the one before the bump (or the
    // last one of the previous producer id, when the bump moved to a new id).
    let retry_on_overflow = current.previous_producer_id == producer_id
        && epoch == MAX_EPOCH
        && current.producer_epoch == 0;
    let retry_on_bump = i32::from(current.producer_epoch) == i32::from(epoch) + 1;
    if current.producer_id != producer_id && !retry_on_overflow {
        return Err(TxnError::InvalidProducerIdMapping);
    }
    // Markers are being written (Kafka's pending CompleteX): the producer waits, whatever its
    // epoch. An abort of the next, still empty transaction can come this early, at the epoch
    // the end bumped to; the epoch check first would fence it (KAFKA-18464).
    if matches!(
        current.state,
        TxnState::PrepareCommit | TxnState::PrepareAbort
    ) {
        return Err(TxnError::ConcurrentTransactions);
    }
    let valid_epoch = match current.state {
        TxnState::PrepareCommit | TxnState::PrepareAbort => retry_on_bump,
        TxnState::CompleteCommit | TxnState::CompleteAbort => {
            retry_on_bump || retry_on_overflow || epoch == current.producer_epoch
        }
        _ => epoch == current.producer_epoch,
    };
    if !valid_epoch {
        return Err(TxnError::ProducerFenced {
            got: epoch,
            current: current.producer_epoch,
        });
    }
    let retry = retry_on_bump || retry_on_overflow;
    let done = EndDecision::AlreadyDone {
        producer_id: current.producer_id,
        producer_epoch: current.producer_epoch,
    };
    let prepare = |state: TxnState, nothing_added: bool| -> Result<EndDecision, TxnError> {
        let exhausted = current.producer_epoch >= MAX_EPOCH;
        let next_producer_id = if exhausted {
            new_producer_id().ok_or(TxnError::ProducerIdUnavailable)?
        } else {
            -1
        };
        Ok(EndDecision::Prepare(TxnMetadata {
            state,
            producer_epoch: bump_epoch(current.producer_epoch, state),
            next_producer_id,
            // An abort with nothing added starts (and ends) its transaction now.
            start_ms: if nothing_added {
                now_ms
            } else {
                current.start_ms
            },
            last_update_ms: now_ms,
            transaction_version: EPOCH_BUMP_VERSION,
            ..current.clone()
        }))
    };
    let other_way = || {
        Err(TxnError::InvalidTxnState(
            "the transaction already ended the other way",
        ))
    };
    match (current.state, commit) {
        (TxnState::Ongoing, true) => prepare(TxnState::PrepareCommit, false),
        (TxnState::Ongoing, false) => prepare(TxnState::PrepareAbort, false),
        (TxnState::CompleteCommit, true) if retry => Ok(done),
        (TxnState::CompleteAbort, false) if retry => Ok(done),
        (TxnState::CompleteCommit, false) if retry => other_way(),
        (TxnState::CompleteCommit | TxnState::CompleteAbort | TxnState::Empty, false) => {
            prepare(TxnState::PrepareAbort, true)
        }
        (TxnState::PrepareCommit, true) | (TxnState::PrepareAbort, false) => {
            Err(TxnError::ConcurrentTransactions)
        }
        (TxnState::Empty, true) => Err(TxnError::InvalidTxnState(
            "no transaction is open for this producer",
        )),
        _ => other_way(),
    }
}

/// The epoch a version-2 end moves to: one more, except an abort already at `i16::MAX`
/// (a fenced producer at the very end of its epochs), which Kafka lets through unbumped.
fn bump_epoch(epoch: i16, state: TxnState) -> i16 {
    if epoch == i16::MAX && state == TxnState::PrepareAbort {
        epoch
    } else {
        epoch.saturating_add(1)
    }
}

/// The state once every marker of a prepared transaction is written.
/// A version-2 producer whose epochs ran out moves to its next producer id, at epoch 0.
pub fn complete(prepared: &TxnMetadata, now_ms: i64) -> TxnMetadata {
    let rotated =
        prepared.transaction_version >= EPOCH_BUMP_VERSION && prepared.next_producer_id >= 0;
    let (producer_id, previous_producer_id, producer_epoch) = if rotated {
        (prepared.next_producer_id, prepared.producer_id, 0)
    } else {
        (
            prepared.producer_id,
            prepared.previous_producer_id,
            prepared.producer_epoch,
        )
    };
    TxnMetadata {
        state: if prepared.state == TxnState::PrepareCommit {
            TxnState::CompleteCommit
        } else {
            TxnState::CompleteAbort
        },
        producer_id,
        previous_producer_id,
        producer_epoch,
        next_producer_id: -1,
        partitions: BTreeMap::new(),
        last_update_ms: now_ms,
        ..prepared.clone()
    }
}

/// A transaction open longer than its timeout is aborted by the coordinator, with the epoch
/// bumped so the producer that opened it is fenced (Kafka's `abortTimedOutTransactions`).
pub fn abort_if_timed_out(
    current: &TxnMetadata,
    server_transaction_version: i16,
    now_ms: i64,
) -> Option<TxnMetadata> {
    if current.state != TxnState::Ongoing
        || now_ms <= current.start_ms.saturating_add(current.timeout_ms as i64)
    {
        return None;
    }
    Some(fence_and_abort(current, server_transaction_version, now_ms))
}

/// The coordinator aborts an open transaction itself: the epoch is bumped first, so the
/// producer that opened it can no longer write or end it (Kafka's `prepareFenceProducerEpoch`
/// followed by the abort). With the cluster at transaction version 2 the abort bumps the
/// epoch once more, as every version-2 end does; the fence never moves to a new producer id.
fn fence_and_abort(
    current: &TxnMetadata,
    server_transaction_version: i16,
    now_ms: i64,
) -> TxnMetadata {
    let fenced = current.producer_epoch.saturating_add(1);
    let producer_epoch = if server_transaction_version >= EPOCH_BUMP_VERSION {
        bump_epoch(fenced, TxnState::PrepareAbort)
    } else {
        fenced
    };
    TxnMetadata {
        producer_epoch,
        state: TxnState::PrepareAbort,
        last_update_ms: now_ms,
        next_producer_id: -1,
        transaction_version: server_transaction_version,
        ..current.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: i32 = 900_000;

    fn parts(list: &[(&str, i32)]) -> BTreeMap<String, BTreeSet<i32>> {
        let mut map: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
        for (topic, partition) in list {
            map.entry(topic.to_string()).or_default().insert(*partition);
        }
        map
    }

    fn req(timeout_ms: i32, expected: Option<(i64, i16)>) -> InitRequest<'static> {
        InitRequest {
            transactional_id: "tx",
            timeout_ms,
            expected,
        }
    }

    fn ready(decision: InitDecision) -> TxnMetadata {
        match decision {
            InitDecision::Ready(m) => m,
            other => panic!("expected Ready, got {other:?}"),
        }
    }

    #[test]
    fn a_transaction_commits_and_the_next_one_starts_fresh() {
        let first =
            ready(init_producer_id(None, req(60_000, None), MAX, || Some(7), 0, 1_000).unwrap());
        assert_eq!((first.producer_id, first.producer_epoch), (7, 0));
        assert_eq!(first.state, TxnState::Empty);

        let ongoing = add_partitions(Some(&first), 7, 0, &parts(&[("a", 0)]), 0, 2_000)
            .unwrap()
            .unwrap();
        assert_eq!(
            (ongoing.state, ongoing.start_ms),
            (TxnState::Ongoing, 2_000)
        );
        assert_eq!(
            add_partitions(Some(&ongoing), 7, 0, &parts(&[("a", 0)]), 0, 2_100),
            Ok(None),
            "already in the transaction"
        );
        let more = add_partitions(Some(&ongoing), 7, 0, &parts(&[("b", 1)]), 0, 2_200)
            .unwrap()
            .unwrap();
        assert_eq!(more.partitions, parts(&[("a", 0), ("b", 1)]));
        assert_eq!(more.start_ms, 2_000);

        let EndDecision::Prepare(prepared) =
            end_transaction(Some(&more), 7, 0, true, 0, || None, 3_000).unwrap()
        else {
            panic!("prepare expected");
        };
        assert_eq!(prepared.state, TxnState::PrepareCommit);
        assert_eq!(
            add_partitions(Some(&prepared), 7, 0, &parts(&[("c", 0)]), 0, 3_100),
            Err(TxnError::ConcurrentTransactions)
        );
        assert_eq!(
            end_transaction(Some(&prepared), 7, 0, true, 0, || None, 3_100),
            Err(TxnError::ConcurrentTransactions)
        );
        assert!(matches!(
            end_transaction(Some(&prepared), 7, 0, false, 0, || None, 3_100),
            Err(TxnError::InvalidTxnState(_))
        ));

        let done = complete(&prepared, 3_500);
        assert_eq!(done.state, TxnState::CompleteCommit);
        assert!(done.partitions.is_empty());
        assert_eq!(
            end_transaction(Some(&done), 7, 0, true, 0, || None, 3_600),
            Ok(EndDecision::AlreadyDone {
                producer_id: 7,
                producer_epoch: 0
            }),
            "a retried commit"
        );
        let next = add_partitions(Some(&done), 7, 0, &parts(&[("c", 0)]), 0, 4_000)
            .unwrap()
            .unwrap();
        assert_eq!(
            next.partitions,
            parts(&[("c", 0)]),
            "only the new transaction's"
        );
        assert_eq!(next.start_ms, 4_000);
    }

    #[test]
    fn a_new_producer_instance_fences_the_old_one_and_aborts_its_transaction() {
        let first =
            ready(init_producer_id(None, req(60_000, None), MAX, || Some(7), 0, 0).unwrap());
        let ongoing = add_partitions(Some(&first), 7, 0, &parts(&[("a", 0)]), 0, 1)
            .unwrap()
            .unwrap();
        let InitDecision::AbortFirst(aborting) =
            init_producer_id(Some(&ongoing), req(60_000, None), MAX, || None, 0, 2).unwrap()
        else {
            panic!("the open transaction is aborted first");
        };
        assert_eq!(
            (aborting.state, aborting.producer_epoch),
            (TxnState::PrepareAbort, 1)
        );
        assert_eq!(
            aborting.partitions,
            parts(&[("a", 0)]),
            "markers go where it wrote"
        );
        // The old instance is fenced.
        assert_eq!(
            end_transaction(Some(&aborting), 7, 0, true, 0, || None, 3),
            Err(TxnError::ProducerFenced { got: 0, current: 1 })
        );
        assert_eq!(
            init_producer_id(Some(&aborting), req(60_000, None), MAX, || None, 0, 3),
            Err(TxnError::ConcurrentTransactions),
            "the new one retries until the abort completes"
        );
        let aborted = complete(&aborting, 4);
        assert_eq!(aborted.state, TxnState::CompleteAbort);
        let second =
            ready(init_producer_id(Some(&aborted), req(60_000, None), MAX, || None, 0, 5).unwrap());
        assert_eq!((second.producer_id, second.producer_epoch), (7, 2));
        assert_eq!(
            add_partitions(Some(&second), 7, 1, &parts(&[("a", 0)]), 0, 6),
            Err(TxnError::ProducerFenced { got: 1, current: 2 })
        );
        assert_eq!(
            add_partitions(Some(&second), 8, 2, &parts(&[("a", 0)]), 0, 6),
            Err(TxnError::InvalidProducerIdMapping)
        );
    }

    #[test]
    fn timeouts_epochs_and_kip_360_checks() {
        let first = ready(init_producer_id(None, req(1_000, None), MAX, || Some(7), 0, 0).unwrap());
        let ongoing = add_partitions(Some(&first), 7, 0, &parts(&[("a", 0)]), 0, 10)
            .unwrap()
            .unwrap();
        assert_eq!(abort_if_timed_out(&ongoing, 0, 1_010), None);
        let aborting = abort_if_timed_out(&ongoing, 0, 1_011).unwrap();
        assert_eq!(
            (aborting.state, aborting.producer_epoch),
            (TxnState::PrepareAbort, 1)
        );
        assert_eq!(
            abort_if_timed_out(&first, 0, 1_000_000),
            None,
            "nothing open"
        );

        assert!(matches!(
            init_producer_id(None, req(MAX + 1, None), MAX, || Some(1), 0, 0),
            Err(TxnError::InvalidTransactionTimeout { .. })
        ));
        assert_eq!(
            init_producer_id(None, req(10, None), MAX, || None, 0, 0),
            Err(TxnError::ProducerIdUnavailable)
        );
        // KIP-360: the client's producer id and epoch must be the current ones.
        assert!(matches!(
            init_producer_id(Some(&first), req(10, Some((7, 5))), MAX, || None, 0, 0),
            Err(TxnError::ProducerFenced { .. })
        ));
        let bumped = ready(
            init_producer_id(Some(&first), req(10, Some((7, 0))), MAX, || None, 0, 0).unwrap(),
        );
        assert_eq!(bumped.producer_epoch, 1);
        // At the last epoch the producer id rotates.
        let worn = TxnMetadata {
            producer_epoch: MAX_EPOCH,
            ..first.clone()
        };
        let rotated =
            ready(init_producer_id(Some(&worn), req(10, None), MAX, || Some(99), 0, 0).unwrap());
        assert_eq!(
            (
                rotated.producer_id,
                rotated.producer_epoch,
                rotated.previous_producer_id
            ),
            (99, 0, 7)
        );
        assert!(matches!(
            end_transaction(Some(&first), 7, 0, true, 0, || None, 0),
            Err(TxnError::InvalidTxnState(_))
        ));
    }

    #[test]
    fn transaction_version_2_bumps_the_epoch_at_every_end() {
        const TV2: i16 = EPOCH_BUMP_VERSION;
        let first =
            ready(init_producer_id(None, req(60_000, None), MAX, || Some(7), TV2, 0).unwrap());
        // The producer's first Produce adds the partition (through its leader's broker).
        let ongoing = add_partitions(Some(&first), 7, 0, &parts(&[("a", 0)]), TV2, 10)
            .unwrap()
            .unwrap();
        assert_eq!(ongoing.transaction_version, TV2);
        let commit = end_transaction(Some(&ongoing), 7, 0, true, TV2, || None, 20).unwrap();
        assert_eq!(commit.producer(), (7, 1), "the next transaction's epoch");
        let EndDecision::Prepare(prepared) = commit else {
            panic!("prepare expected");
        };
        assert_eq!(
            (prepared.state, prepared.producer_epoch),
            (TxnState::PrepareCommit, 1),
            "the markers carry the new epoch"
        );
        // The answer was lost: the retry (old epoch) waits, then is told it is done.
        assert_eq!(
            end_transaction(Some(&prepared), 7, 0, true, TV2, || None, 21),
            Err(TxnError::ConcurrentTransactions)
        );
        // The producer ends its next transaction, still empty, at the new epoch before the
        // markers are written: it waits too, it is not fenced (KAFKA-18464).
        assert_eq!(
            end_transaction(Some(&prepared), 7, 1, false, TV2, || None, 22),
            Err(TxnError::ConcurrentTransactions)
        );
        let done = complete(&prepared, 30);
        assert_eq!(
            end_transaction(Some(&done), 7, 0, true, TV2, || None, 31),
            Ok(EndDecision::AlreadyDone {
                producer_id: 7,
                producer_epoch: 1
            })
        );
        // A late write of the ended transaction (old epoch) cannot open the next one.
        assert_eq!(
            add_partitions(Some(&done), 7, 0, &parts(&[("a", 0)]), TV2, 32),
            Err(TxnError::ProducerFenced { got: 0, current: 1 })
        );
        // An abort needs no open transaction: it still bumps the epoch.
        let EndDecision::Prepare(empty_abort) =
            end_transaction(Some(&done), 7, 1, false, TV2, || None, 40).unwrap()
        else {
            panic!("prepare expected");
        };
        assert_eq!(
            (empty_abort.state, empty_abort.producer_epoch),
            (TxnState::PrepareAbort, 2)
        );
        assert!(empty_abort.partitions.is_empty());
        assert_eq!(empty_abort.start_ms, 40);
        // Committing nothing is refused, and a retry the other way too.
        let aborted = complete(&empty_abort, 41);
        assert!(matches!(
            end_transaction(Some(&aborted), 7, 2, true, TV2, || None, 42),
            Err(TxnError::InvalidTxnState(_))
        ));
        assert!(matches!(
            end_transaction(Some(&done), 7, 0, false, TV2, || None, 42),
            Err(TxnError::InvalidTxnState(_))
        ));
        assert!(matches!(
            end_transaction(Some(&first), 7, 0, true, TV2, || None, 42),
            Err(TxnError::InvalidTxnState(_))
        ));
        assert_eq!(
            end_transaction(Some(&aborted), 7, 1, false, TV2, || None, 42),
            Ok(EndDecision::AlreadyDone {
                producer_id: 7,
                producer_epoch: 2
            }),
            "a retried abort"
        );
        assert!(matches!(
            end_transaction(Some(&aborted), 7, 5, false, TV2, || None, 42),
            Err(TxnError::ProducerFenced { .. })
        ));
    }

    #[test]
    fn transaction_version_2_moves_to_a_new_producer_id_when_epochs_run_out() {
        const TV2: i16 = EPOCH_BUMP_VERSION;
        let worn = TxnMetadata {
            producer_epoch: MAX_EPOCH,
            state: TxnState::Ongoing,
            partitions: parts(&[("a", 0)]),
            start_ms: 5,
            transaction_version: TV2,
            ..ready(init_producer_id(None, req(60_000, None), MAX, || Some(7), TV2, 0).unwrap())
        };
        let decision =
            end_transaction(Some(&worn), 7, MAX_EPOCH, true, TV2, || Some(99), 10).unwrap();
        assert_eq!(decision.producer(), (99, 0));
        let EndDecision::Prepare(prepared) = decision else {
            panic!("prepare expected");
        };
        assert_eq!(
            (prepared.producer_id, prepared.producer_epoch),
            (7, i16::MAX),
            "markers go out under the old id, at its last epoch"
        );
        assert_eq!(
            end_transaction(Some(&worn), 7, MAX_EPOCH, true, TV2, || None, 10),
            Err(TxnError::ProducerIdUnavailable)
        );
        let done = complete(&prepared, 20);
        assert_eq!(
            (
                done.producer_id,
                done.producer_epoch,
                done.previous_producer_id
            ),
            (99, 0, 7)
        );
        // The retry under the old id finds the commit done and learns the new id.
        assert_eq!(
            end_transaction(Some(&done), 7, MAX_EPOCH, true, TV2, || None, 21),
            Ok(EndDecision::AlreadyDone {
                producer_id: 99,
                producer_epoch: 0
            })
        );
        let record = crate::txn::records::encode_value(&done);
        assert_eq!(
            crate::txn::records::decode_value("tx", &record).unwrap(),
            done
        );
    }

    #[test]
    fn at_transaction_version_2_the_coordinators_aborts_bump_twice() {
        let first = ready(init_producer_id(None, req(1_000, None), MAX, || Some(7), 2, 0).unwrap());
        let ongoing = add_partitions(Some(&first), 7, 0, &parts(&[("a", 0)]), 2, 10)
            .unwrap()
            .unwrap();
        let aborting = abort_if_timed_out(&ongoing, 2, 2_000).unwrap();
        assert_eq!(
            (aborting.state, aborting.producer_epoch),
            (TxnState::PrepareAbort, 2),
            "fenced, then the abort's own bump"
        );
        assert_eq!(
            abort_if_timed_out(&ongoing, 1, 2_000)
                .unwrap()
                .producer_epoch,
            1
        );
    }

    #[test]
    fn states_keep_their_kafka_codes() {
        for code in 0..8 {
            let state = TxnState::from_code(code).unwrap();
            assert_eq!(state.code(), code);
        }
        assert_eq!(TxnState::from_code(8), None);
        assert_eq!(TxnState::PrepareEpochFence.name(), "PrepareEpochFence");
    }
}
