//! One transactional id's state (Kafka's `TransactionMetadata`) and the coordinator's
//! decisions on it, as pure functions of the current state and a request: each fails with a
//! Kafka error, needs nothing written, or yields the next state, which the coordinator writes
//! to `__transaction_state` before it acts on it or answers. Transactions version 1 (no
//! KIP-890 epoch bump per transaction): the producer epoch changes at InitProducerId, and when
//! the coordinator aborts a transaction itself (timeout, or a new producer instance), which
//! fences the old one.

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
}

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

/// InitProducerId with a transactional id. `expected` is the producer id and epoch a v3+
/// client already has (KIP-360), which must be the current ones.
pub fn init_producer_id(
    current: Option<&TxnMetadata>,
    transactional_id: &str,
    timeout_ms: i32,
    max_timeout_ms: i32,
    expected: Option<(i64, i16)>,
    new_producer_id: impl FnOnce() -> Option<i64>,
    now_ms: i64,
) -> Result<InitDecision, TxnError> {
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
        TxnState::Ongoing => Ok(InitDecision::AbortFirst(fence_and_abort(current, now_ms))),
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
    Ok(Some(next))
}

/// What EndTxn leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndDecision {
    /// Write this (PrepareCommit or PrepareAbort), answer, then write the markers.
    Prepare(TxnMetadata),
    /// A retry of an end already completed the same way: answer at once.
    AlreadyDone,
}

/// EndTxn from the producer.
pub fn end_transaction(
    current: Option<&TxnMetadata>,
    producer_id: i64,
    epoch: i16,
    commit: bool,
    now_ms: i64,
) -> Result<EndDecision, TxnError> {
    let current = current.ok_or(TxnError::InvalidProducerIdMapping)?;
    check_producer(current, producer_id, epoch)?;
    match (current.state, commit) {
        (TxnState::Ongoing, _) => Ok(EndDecision::Prepare(TxnMetadata {
            state: if commit {
                TxnState::PrepareCommit
            } else {
                TxnState::PrepareAbort
            },
            last_update_ms: now_ms,
            ..current.clone()
        })),
        (TxnState::CompleteCommit, true) | (TxnState::CompleteAbort, false) => {
            Ok(EndDecision::AlreadyDone)
        }
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

/// The state once every marker of a prepared transaction is written.
pub fn complete(prepared: &TxnMetadata, now_ms: i64) -> TxnMetadata {
    TxnMetadata {
        state: if prepared.state == TxnState::PrepareCommit {
            TxnState::CompleteCommit
        } else {
            TxnState::CompleteAbort
        },
        partitions: BTreeMap::new(),
        last_update_ms: now_ms,
        ..prepared.clone()
    }
}

/// A transaction open longer than its timeout is aborted by the coordinator, with the epoch
/// bumped so the producer that opened it is fenced (Kafka's `abortTimedOutTransactions`).
pub fn abort_if_timed_out(current: &TxnMetadata, now_ms: i64) -> Option<TxnMetadata> {
    if current.state != TxnState::Ongoing
        || now_ms <= current.start_ms.saturating_add(current.timeout_ms as i64)
    {
        return None;
    }
    Some(fence_and_abort(current, now_ms))
}

/// The coordinator aborts an open transaction itself: the epoch is bumped first, so the
/// producer that opened it can no longer write or end it (Kafka's `prepareFenceProducerEpoch`
/// followed by the abort).
fn fence_and_abort(current: &TxnMetadata, now_ms: i64) -> TxnMetadata {
    TxnMetadata {
        producer_epoch: current.producer_epoch.saturating_add(1),
        state: TxnState::PrepareAbort,
        last_update_ms: now_ms,
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

    fn ready(decision: InitDecision) -> TxnMetadata {
        match decision {
            InitDecision::Ready(m) => m,
            other => panic!("expected Ready, got {other:?}"),
        }
    }

    #[test]
    fn a_transaction_commits_and_the_next_one_starts_fresh() {
        let first =
            ready(init_producer_id(None, "tx", 60_000, MAX, None, || Some(7), 1_000).unwrap());
        assert_eq!((first.producer_id, first.producer_epoch), (7, 0));
        assert_eq!(first.state, TxnState::Empty);

        let ongoing = add_partitions(Some(&first), 7, 0, &parts(&[("a", 0)]), 2_000)
            .unwrap()
            .unwrap();
        assert_eq!(
            (ongoing.state, ongoing.start_ms),
            (TxnState::Ongoing, 2_000)
        );
        assert_eq!(
            add_partitions(Some(&ongoing), 7, 0, &parts(&[("a", 0)]), 2_100),
            Ok(None),
            "already in the transaction"
        );
        let more = add_partitions(Some(&ongoing), 7, 0, &parts(&[("b", 1)]), 2_200)
            .unwrap()
            .unwrap();
        assert_eq!(more.partitions, parts(&[("a", 0), ("b", 1)]));
        assert_eq!(more.start_ms, 2_000);

        let EndDecision::Prepare(prepared) =
            end_transaction(Some(&more), 7, 0, true, 3_000).unwrap()
        else {
            panic!("prepare expected");
        };
        assert_eq!(prepared.state, TxnState::PrepareCommit);
        assert_eq!(
            add_partitions(Some(&prepared), 7, 0, &parts(&[("c", 0)]), 3_100),
            Err(TxnError::ConcurrentTransactions)
        );
        assert_eq!(
            end_transaction(Some(&prepared), 7, 0, true, 3_100),
            Err(TxnError::ConcurrentTransactions)
        );
        assert!(matches!(
            end_transaction(Some(&prepared), 7, 0, false, 3_100),
            Err(TxnError::InvalidTxnState(_))
        ));

        let done = complete(&prepared, 3_500);
        assert_eq!(done.state, TxnState::CompleteCommit);
        assert!(done.partitions.is_empty());
        assert_eq!(
            end_transaction(Some(&done), 7, 0, true, 3_600),
            Ok(EndDecision::AlreadyDone),
            "a retried commit"
        );
        let next = add_partitions(Some(&done), 7, 0, &parts(&[("c", 0)]), 4_000)
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
        let first = ready(init_producer_id(None, "tx", 60_000, MAX, None, || Some(7), 0).unwrap());
        let ongoing = add_partitions(Some(&first), 7, 0, &parts(&[("a", 0)]), 1)
            .unwrap()
            .unwrap();
        let InitDecision::AbortFirst(aborting) =
            init_producer_id(Some(&ongoing), "tx", 60_000, MAX, None, || None, 2).unwrap()
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
            end_transaction(Some(&aborting), 7, 0, true, 3),
            Err(TxnError::ProducerFenced { got: 0, current: 1 })
        );
        assert_eq!(
            init_producer_id(Some(&aborting), "tx", 60_000, MAX, None, || None, 3),
            Err(TxnError::ConcurrentTransactions),
            "the new one retries until the abort completes"
        );
        let aborted = complete(&aborting, 4);
        assert_eq!(aborted.state, TxnState::CompleteAbort);
        let second =
            ready(init_producer_id(Some(&aborted), "tx", 60_000, MAX, None, || None, 5).unwrap());
        assert_eq!((second.producer_id, second.producer_epoch), (7, 2));
        assert_eq!(
            add_partitions(Some(&second), 7, 1, &parts(&[("a", 0)]), 6),
            Err(TxnError::ProducerFenced { got: 1, current: 2 })
        );
        assert_eq!(
            add_partitions(Some(&second), 8, 2, &parts(&[("a", 0)]), 6),
            Err(TxnError::InvalidProducerIdMapping)
        );
    }

    #[test]
    fn timeouts_epochs_and_kip_360_checks() {
        let first = ready(init_producer_id(None, "tx", 1_000, MAX, None, || Some(7), 0).unwrap());
        let ongoing = add_partitions(Some(&first), 7, 0, &parts(&[("a", 0)]), 10)
            .unwrap()
            .unwrap();
        assert_eq!(abort_if_timed_out(&ongoing, 1_010), None);
        let aborting = abort_if_timed_out(&ongoing, 1_011).unwrap();
        assert_eq!(
            (aborting.state, aborting.producer_epoch),
            (TxnState::PrepareAbort, 1)
        );
        assert_eq!(abort_if_timed_out(&first, 1_000_000), None, "nothing open");

        assert!(matches!(
            init_producer_id(None, "tx", MAX + 1, MAX, None, || Some(1), 0),
            Err(TxnError::InvalidTransactionTimeout { .. })
        ));
        assert_eq!(
            init_producer_id(None, "tx", 10, MAX, None, || None, 0),
            Err(TxnError::ProducerIdUnavailable)
        );
        // KIP-360: the client's producer id and epoch must be the current ones.
        assert!(matches!(
            init_producer_id(Some(&first), "tx", 10, MAX, Some((7, 5)), || None, 0),
            Err(TxnError::ProducerFenced { .. })
        ));
        let bumped =
            ready(init_producer_id(Some(&first), "tx", 10, MAX, Some((7, 0)), || None, 0).unwrap());
        assert_eq!(bumped.producer_epoch, 1);
        // At the last epoch the producer id rotates.
        let worn = TxnMetadata {
            producer_epoch: MAX_EPOCH,
            ..first.clone()
        };
        let rotated =
            ready(init_producer_id(Some(&worn), "tx", 10, MAX, None, || Some(99), 0).unwrap());
        assert_eq!(
            (
                rotated.producer_id,
                rotated.producer_epoch,
                rotated.previous_producer_id
            ),
            (99, 0, 7)
        );
        assert!(matches!(
            end_transaction(Some(&first), 7, 0, true, 0),
            Err(TxnError::InvalidTxnState(_))
        ));
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
