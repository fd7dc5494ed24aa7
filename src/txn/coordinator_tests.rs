//! Unit tests of the transaction coordinator (`coordinator.rs`), in a file of their own so
//! the coordinator stays readable.

use super::*;
use crate::config::{BrokerConfig, LogConfig};
use crate::record::control::{Marker, MarkerKind};
use crate::replica::Partition;
use crate::storage::log::Log;
use crate::storage::manager::lock;

/// Writes markers to partitions of the same replica manager (one broker), and can be
/// told to fail for a while.
#[derive(Debug)]
struct LocalMarkers {
    replicas: Arc<ReplicaManager>,
    failures_left: Mutex<usize>,
    written: Mutex<Vec<(TopicPartition, MarkerRequest)>>,
}

impl MarkerWriter for LocalMarkers {
    fn write_markers<'a>(
        &'a self,
        marker: MarkerRequest,
        partitions: &'a [TopicPartition],
    ) -> BoxFuture<'a, Vec<Result<(), Error>>> {
        Box::pin(async move {
            let mut out = Vec::new();
            for tp in partitions {
                {
                    let mut failures = self.failures_left.lock().unwrap();
                    if *failures > 0 {
                        *failures -= 1;
                        out.push(Err(Error::NotLeaderOrFollower));
                        continue;
                    }
                }
                let result = self.replicas.get(tp).and_then(|p| {
                    p.append_marker(
                        marker.producer_id,
                        marker.producer_epoch,
                        Marker {
                            kind: if marker.commit {
                                MarkerKind::Commit
                            } else {
                                MarkerKind::Abort
                            },
                            coordinator_epoch: marker.coordinator_epoch,
                        },
                        marker.transaction_version,
                    )
                    .map(|_| ())
                });
                if result.is_ok() {
                    self.written.lock().unwrap().push((tp.clone(), marker));
                }
                out.push(result);
            }
            out
        })
    }
}

struct Setup {
    replicas: Arc<ReplicaManager>,
    markers: Arc<LocalMarkers>,
    _dir: tempfile::TempDir,
}

fn setup(failures: usize) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let broker = BrokerConfig::with_overrides(&[]).unwrap();
    let config = LogConfig::resolve(&broker.topic_defaults, &Default::default());
    let replicas = Arc::new(ReplicaManager::new());
    for (topic, partitions) in [(TRANSACTION_STATE_TOPIC, 2), ("data", 2)] {
        for p in 0..partitions {
            let tp = TopicPartition::new(topic, p);
            let log = Log::create(
                &dir.path().join(tp.dir_name()),
                tp.clone(),
                config.clone(),
                0,
            )
            .unwrap();
            replicas.add(Partition::leader_for_test(
                tp,
                uuid::Uuid::new_v4(),
                Arc::new(Mutex::new(log)),
            ));
        }
    }
    let markers = Arc::new(LocalMarkers {
        replicas: replicas.clone(),
        failures_left: Mutex::new(failures),
        written: Mutex::new(Vec::new()),
    });
    Setup {
        replicas,
        markers,
        _dir: dir,
    }
}

fn coordinator(setup: &Setup) -> Arc<TransactionCoordinator> {
    coordinator_with(setup, setup.markers.clone())
}

/// A coordinator over `setup`'s partitions whose markers go through `markers`.
fn coordinator_with(setup: &Setup, markers: Arc<dyn MarkerWriter>) -> Arc<TransactionCoordinator> {
    let next_id = Arc::new(std::sync::atomic::AtomicI64::new(1_000));
    TransactionCoordinator::new(
        TxnCoordinatorConfig {
            partitions: 2,
            max_timeout_ms: 900_000,
            write_timeout: Duration::from_secs(5),
            id_expiration_ms: 604_800_000,
        },
        setup.replicas.clone(),
        markers,
        Arc::new(move || {
            let id = next_id.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async move { Some(id) })
        }),
        Arc::new(|| 1),
    )
}

fn data(partitions: &[i32]) -> BTreeMap<String, BTreeSet<i32>> {
    BTreeMap::from([("data".to_string(), partitions.iter().copied().collect())])
}

async fn settled(c: &TransactionCoordinator, id: &str) -> TxnMetadata {
    for _ in 0..500 {
        let meta = c.describe(id).await.unwrap().unwrap();
        if !matches!(meta.state, TxnState::PrepareCommit | TxnState::PrepareAbort) {
            return meta;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the transaction never completed");
}

fn last_stable(setup: &Setup, partition: i32) -> i64 {
    let p = setup
        .replicas
        .get(&TopicPartition::new("data", partition))
        .unwrap();
    lock(p.log()).last_stable_offset()
}

#[tokio::test]
async fn idle_ids_with_completed_transactions_expire_and_open_ones_do_not() {
    let setup = setup(0);
    // One producer id allocator for both coordinators, as the controller's blocks are.
    let base = coordinator(&setup);
    let expiring = || -> Arc<TransactionCoordinator> {
        let c = &base;
        // Every id counts as idle.
        Arc::new(TransactionCoordinator {
            config: TxnCoordinatorConfig {
                id_expiration_ms: -1,
                ..c.config.clone()
            },
            replicas: c.replicas.clone(),
            slots: Mutex::new(HashMap::new()),
            loading: Mutex::new(HashSet::new()),
            markers: c.markers.clone(),
            producer_ids: c.producer_ids.clone(),
            transaction_version: c.transaction_version.clone(),
        })
    };
    let c = expiring();
    let (done, epoch) = c.init_producer_id("done", 60_000, None).await.unwrap();
    c.add_partitions("done", done, epoch, &data(&[0]), 1)
        .await
        .unwrap();
    c.end_transaction("done", done, epoch, true, 1)
        .await
        .unwrap();
    assert_eq!(settled(&c, "done").await.state, TxnState::CompleteCommit);
    let (open, epoch) = c.init_producer_id("open", 60_000, None).await.unwrap();
    c.add_partitions("open", open, epoch, &data(&[1]), 1)
        .await
        .unwrap();

    assert_eq!(c.remove_expired().await, 1);
    assert_eq!(c.describe("done").await.unwrap(), None);
    assert_eq!(
        c.describe("open").await.unwrap().map(|m| m.state),
        Some(TxnState::Ongoing)
    );
    // A coordinator rebuilding from the log forgets it too; the id starts afresh.
    let next = expiring();
    for partition in 0..2 {
        let tp = TopicPartition::new(TRANSACTION_STATE_TOPIC, partition);
        next.elect(partition, setup.replicas.get(&tp).unwrap().log())
            .unwrap();
    }
    assert_eq!(next.describe("done").await.unwrap(), None);
    let (again, _) = next.init_producer_id("done", 60_000, None).await.unwrap();
    assert_ne!(again, done, "a new producer id");
}

#[tokio::test]
async fn a_committed_transaction_gets_its_markers_and_completes() {
    let setup = setup(2);
    let c = coordinator(&setup);
    let (pid, epoch) = c.init_producer_id("tx", 60_000, None).await.unwrap();
    assert_eq!((pid, epoch), (1_000, 0));
    c.add_partitions("tx", pid, epoch, &data(&[0, 1]), 1)
        .await
        .unwrap();
    // The producer's transactional data.
    let batch = crate::record::test_support::transactional(1, pid, 0);
    setup
        .replicas
        .get(&TopicPartition::new("data", 0))
        .unwrap()
        .append(&crate::record::test_support::checked(batch), -1)
        .unwrap();
    assert_eq!(last_stable(&setup, 0), 0, "open");

    c.end_transaction("tx", pid, epoch, true, 1).await.unwrap();
    // Two marker writes fail first (a leader moving); they are retried.
    let done = settled(&c, "tx").await;
    assert_eq!(done.state, TxnState::CompleteCommit);
    assert_eq!(last_stable(&setup, 0), 2, "data and marker are stable");
    assert_eq!(setup.markers.written.lock().unwrap().len(), 2);
    assert_eq!(
        c.end_transaction("tx", pid, epoch, true, 1).await,
        Ok((pid, epoch)),
        "a retried commit"
    );
}

#[tokio::test]
async fn a_new_instance_fences_the_old_and_a_new_coordinator_finds_the_state() {
    let setup = setup(0);
    let c = coordinator(&setup);
    let (pid, epoch) = c.init_producer_id("tx", 60_000, None).await.unwrap();
    c.add_partitions("tx", pid, epoch, &data(&[1]), 1)
        .await
        .unwrap();
    // A second instance of the producer: the open transaction is aborted first.
    assert_eq!(
        c.init_producer_id("tx", 60_000, None).await,
        Err(CoordinatorError::Txn(TxnError::ConcurrentTransactions))
    );
    assert_eq!(settled(&c, "tx").await.state, TxnState::CompleteAbort);
    let (pid2, epoch2) = c.init_producer_id("tx", 60_000, None).await.unwrap();
    assert_eq!(
        (pid2, epoch2),
        (pid, 2),
        "bumped by the fence, then by the init"
    );
    assert_eq!(
        c.add_partitions("tx", pid, epoch, &data(&[0]), 1).await,
        Err(CoordinatorError::Txn(TxnError::ProducerFenced {
            got: 0,
            current: 2
        })),
        "the zombie is fenced"
    );
    let written = setup.markers.written.lock().unwrap().clone();
    assert_eq!(written.len(), 1);
    assert!(!written[0].1.commit);
    assert_eq!(written[0].1.producer_epoch, 1);

    // Another coordinator taking over the partition rebuilds the id from the log.
    let tp = c.partition_of("tx");
    let log = setup.replicas.get(&tp).unwrap().log().clone();
    let next = coordinator(&setup);
    assert!(next.elect(tp.partition, &log).unwrap() >= 4);
    let meta = next.describe("tx").await.unwrap().unwrap();
    assert_eq!(
        (meta.producer_id, meta.producer_epoch, meta.state),
        (pid, 2, TxnState::Empty)
    );
    assert_eq!(next.list().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_prepared_transaction_is_completed_by_the_next_coordinator() {
    let setup = setup(0);
    let c = coordinator(&setup);
    let (pid, epoch) = c.init_producer_id("tx", 60_000, None).await.unwrap();
    c.add_partitions("tx", pid, epoch, &data(&[0]), 1)
        .await
        .unwrap();
    // The coordinator dies right after writing PrepareCommit: only the state is in the log.
    let prepared = TxnMetadata {
        state: TxnState::PrepareCommit,
        ..c.describe("tx").await.unwrap().unwrap()
    };
    c.write(&prepared).await.unwrap();
    let tp = c.partition_of("tx");
    let log = setup.replicas.get(&tp).unwrap().log().clone();
    let next = coordinator(&setup);
    next.elect(tp.partition, &log).unwrap();
    assert_eq!(settled(&next, "tx").await.state, TxnState::CompleteCommit);
    assert_eq!(setup.markers.written.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn transactions_past_their_timeout_are_aborted_and_their_producer_fenced() {
    let setup = setup(0);
    let c = coordinator(&setup);
    let (pid, epoch) = c.init_producer_id("tx", 1, None).await.unwrap();
    c.add_partitions("tx", pid, epoch, &data(&[0]), 1)
        .await
        .unwrap();
    // Poll until the 1 ms timeout has passed.
    let mut aborted = 0;
    for _ in 0..100 {
        aborted = c.abort_timed_out().await;
        if aborted > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(aborted, 1);
    assert_eq!(settled(&c, "tx").await.state, TxnState::CompleteAbort);
    assert!(matches!(
        c.end_transaction("tx", pid, epoch, true, 1).await,
        Err(CoordinatorError::Txn(TxnError::ProducerFenced { .. }))
    ));
    assert_eq!(
        c.init_producer_id("other", 60_000, None).await.map(|r| r.0),
        Ok(1_001)
    );
}

/// Refuses every marker as a partition that has seen a newer producer epoch does.
#[derive(Debug, Default)]
struct FencedMarkers {
    calls: std::sync::atomic::AtomicUsize,
}

impl MarkerWriter for FencedMarkers {
    fn write_markers<'a>(
        &'a self,
        _marker: MarkerRequest,
        partitions: &'a [TopicPartition],
    ) -> BoxFuture<'a, Vec<Result<(), Error>>> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move {
            partitions
                .iter()
                .map(|_| {
                    Err(Error::Remote {
                        code: crate::error::code::INVALID_PRODUCER_EPOCH,
                        message: String::new(),
                    })
                })
                .collect()
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_marker_refused_for_a_newer_producer_epoch_is_not_sent_again() {
    let setup = setup(0);
    let fenced = Arc::new(FencedMarkers::default());
    let c = coordinator_with(&setup, fenced.clone());
    let (pid, epoch) = c.init_producer_id("tx", 60_000, None).await.unwrap();
    c.add_partitions("tx", pid, epoch, &data(&[0, 1]), 1)
        .await
        .unwrap();
    c.end_transaction("tx", pid, epoch, true, 1).await.unwrap();
    let calls = || fenced.calls.load(std::sync::atomic::Ordering::SeqCst);
    for _ in 0..100 {
        if calls() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Many retry periods later (paused time): no second round, the transaction stays prepared
    // for the next coordinator, and the client is told to wait.
    tokio::time::sleep(MARKER_RETRY * 50).await;
    assert_eq!(calls(), 1);
    let meta = c.describe("tx").await.unwrap().unwrap();
    assert_eq!(meta.state, TxnState::PrepareCommit);
    assert!(matches!(
        c.end_transaction("tx", pid, epoch, true, 1).await,
        Err(CoordinatorError::Txn(TxnError::ConcurrentTransactions))
    ));
}
