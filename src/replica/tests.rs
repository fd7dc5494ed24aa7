//! Unit tests of the replica layer (after Kafka's `PartitionTest` and `ReplicaManagerTest`).
use super::*;
use crate::config::{BrokerConfig, LogConfig};
use crate::error::Error;
use crate::record::test_support::{batch, checked};
use crate::storage::log::Log;
use crate::storage::manager::lock;
use crate::types::{TopicPartition, now_ms};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use uuid::Uuid;

/// The leader of partition `t-0`, its log new in `dir`.
fn leader_of_new_log(dir: &std::path::Path) -> Partition {
    let broker = BrokerConfig::with_overrides(&[]).unwrap();
    let config = LogConfig::resolve(&broker.topic_defaults, &Default::default());
    let tp = TopicPartition::new("t", 0);
    let log = Log::create(dir, tp.clone(), config, 0).unwrap();
    Partition::leader_for_test(tp, Uuid::new_v4(), Arc::new(Mutex::new(log)))
}

#[test]
fn a_verified_batch_cannot_begin_a_transaction_ended_after_its_verification() {
    use crate::record::control::{Marker, MarkerKind};
    let dir = tempfile::tempdir().unwrap();
    let partition = leader_of_new_log(dir.path());
    let first = crate::record::test_support::transactional(2, 7, 0);
    let guard = partition.start_transaction_verification(7, 0).unwrap();
    partition
        .append_checked(&checked(first.clone()), -1, Some(with_guard(7, guard)))
        .unwrap();
    assert_eq!(
        partition.start_transaction_verification(7, 0),
        None,
        "open here: later batches need no verification"
    );

    let stale = partition.start_transaction_verification(8, 0).unwrap();
    let abort = Marker {
        kind: MarkerKind::Abort,
        coordinator_epoch: 0,
    };
    // The coordinator ends producer 8's transaction after verifying its batch.
    partition.append_marker(8, 0, abort, 0).unwrap();
    let late = crate::record::test_support::transactional(1, 8, 0);
    assert!(matches!(
        partition.append_checked(&checked(late.clone()), -1, Some(with_guard(8, stale))),
        Err(Error::NotInTransaction)
    ));
    let fresh = partition.start_transaction_verification(8, 0).unwrap();
    assert!(
        partition
            .append_checked(&checked(late.clone()), -1, Some(with_guard(8, fresh)))
            .is_ok()
    );
}

fn with_guard(producer_id: i64, guard: u64) -> produce::TxnAppend {
    produce::TxnAppend {
        producer_id,
        producer_epoch: 0,
        guard: Some(guard),
    }
}

/// Transaction version 2: EndTxn bumps the epoch and the producer begins its next
/// transaction at once, so its first batch can reach a partition before the marker that
/// ends the previous transaction (still open there at the older epoch). That batch must be
/// verified like any batch beginning a transaction, not join the open one: the marker
/// would commit it with the previous transaction.
#[test]
fn a_batch_of_a_newer_epoch_does_not_join_the_transaction_open_at_the_older_one() {
    use crate::record::control::{Marker, MarkerKind};
    let dir = tempfile::tempdir().unwrap();
    let partition = leader_of_new_log(dir.path());
    let first = crate::record::test_support::transactional(2, 9, 0);
    let guard = partition.start_transaction_verification(9, 0).unwrap();
    partition
        .append_checked(&checked(first), -1, Some(with_guard(9, guard)))
        .unwrap();
    assert_eq!(partition.start_transaction_verification(9, 0), None);
    assert!(
        partition.start_transaction_verification(9, 1).is_some(),
        "epoch 1 begins a new transaction: its coordinator must be asked"
    );

    // A batch of epoch 0 found the transaction open (no guard), and the marker (epoch 1,
    // transaction version 2) ended it before the batch was appended: refused.
    let commit = Marker {
        kind: MarkerKind::Commit,
        coordinator_epoch: 0,
    };
    partition.append_marker(9, 1, commit, 2).unwrap();
    let late = crate::record::test_support::transactional(1, 9, 2);
    let unverified = produce::TxnAppend {
        producer_id: 9,
        producer_epoch: 0,
        guard: None,
    };
    assert!(matches!(
        partition.append_checked(&checked(late), -1, Some(unverified)),
        Err(Error::NotInTransaction)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_appenders_share_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let broker = BrokerConfig::with_overrides(&[]).unwrap();
    let overrides = [("flush.messages".to_string(), "1".to_string())]
        .into_iter()
        .collect();
    let config = LogConfig::resolve(&broker.topic_defaults, &overrides);
    let tp = TopicPartition::new("t", 0);
    let log = Log::create(dir.path(), tp.clone(), config, 0).unwrap();
    let partition = Arc::new(Partition::leader_for_test(
        tp,
        Uuid::new_v4(),
        Arc::new(Mutex::new(log)),
    ));
    let (writers, per_writer) = (8, 50);
    let mut tasks = Vec::new();
    for _ in 0..writers {
        let partition = partition.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..per_writer {
                let info = partition.append(&checked(batch(0, 1, 1, 100)), 1).unwrap();
                assert!(
                    info.flush_due,
                    "flush.messages=1: every append must be made durable"
                );
                partition.flush_to(info.last_offset + 1).await.unwrap();
                assert!(
                    lock(partition.log()).recovery_point() > info.last_offset,
                    "acknowledged only once durable"
                );
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let log = lock(partition.log());
    let appends = (writers * per_writer) as u64;
    assert_eq!(log.recovery_point(), appends as i64);
    eprintln!(
        "{appends} durable appends took {} fsyncs",
        log.flush_count()
    );
    assert!(
        log.flush_count() < appends,
        "group commit: {} fsyncs for {appends} appends",
        log.flush_count()
    );
}

/// Node 1 leading a partition on nodes 1, 2 and 3 with `isr` in sync.
fn leading(leader_epoch: i32, partition_epoch: i32, isr: &[i32]) -> Leadership {
    Leadership {
        leader: 1,
        leader_epoch,
        partition_epoch,
        replicas: vec![1, 2, 3],
        isr: isr.to_vec(),
    }
}

fn replicated(dir: &std::path::Path) -> Arc<Partition> {
    let broker = BrokerConfig::with_overrides(&[]).unwrap();
    let overrides = [("min.insync.replicas".to_string(), "2".to_string())]
        .into_iter()
        .collect();
    let config = LogConfig::resolve(&broker.topic_defaults, &overrides);
    let tp = TopicPartition::new("r", 0);
    let log = Log::create(dir, tp.clone(), config, 0).unwrap();
    let partition = Arc::new(Partition::new(
        tp,
        Uuid::new_v4(),
        1,
        Arc::new(Mutex::new(log)),
    ));
    partition.set_leadership(leading(4, 0, &[1, 2, 3]));
    partition
}

#[test]
fn offset_for_leader_epoch_answers_from_the_epoch_cache_after_the_epoch_check() {
    let dir = tempfile::tempdir().unwrap();
    let partition = replicated(dir.path());
    partition.append(&checked(batch(0, 5, 1, 10)), 1).unwrap();
    // The partition was led in epoch 4; a new term begins at offset 5.
    partition.set_leadership(leading(6, 1, &[1, 2, 3]));
    partition.append(&checked(batch(0, 3, 1, 10)), 1).unwrap();
    assert_eq!(partition.end_offset_for_epoch(-1, 4).unwrap(), (4, 5));
    assert_eq!(partition.end_offset_for_epoch(6, 5).unwrap(), (4, 5));
    assert_eq!(partition.end_offset_for_epoch(6, 6).unwrap(), (6, 8));
    assert_eq!(partition.end_offset_for_epoch(-1, 9).unwrap(), (-1, -1));
    assert!(matches!(
        partition.end_offset_for_epoch(5, 4),
        Err(Error::FencedLeaderEpoch { .. })
    ));
    assert!(matches!(
        partition.end_offset_for_epoch(7, 4),
        Err(Error::UnknownLeaderEpoch(7))
    ));
    partition.set_leadership(Leadership {
        leader: 2,
        leader_epoch: 7,
        partition_epoch: 2,
        replicas: vec![1, 2, 3],
        isr: vec![1, 2, 3],
    });
    assert!(matches!(
        partition.end_offset_for_epoch(-1, 4),
        Err(Error::NotLeaderOrFollower)
    ));
}

#[tokio::test]
async fn the_high_watermark_is_the_smallest_log_end_in_the_isr() {
    let dir = tempfile::tempdir().unwrap();
    let partition = replicated(dir.path());
    let info = partition.append(&checked(batch(0, 10, 1, 10)), -1).unwrap();
    let hw = || lock(partition.log()).high_watermark();
    assert_eq!(hw(), 0, "nothing is committed before the followers have it");
    assert!(matches!(
        partition
            .wait_for_replication(info.last_offset + 1, Duration::from_millis(20))
            .await,
        Err(Error::RequestTimedOut)
    ));
    assert!(!partition.record_follower_fetch(2, 10).unwrap());
    assert_eq!(hw(), 0, "follower 3 has not fetched yet");
    partition.record_follower_fetch(3, 4).unwrap();
    assert_eq!(hw(), 4);
    partition.record_follower_fetch(3, 10).unwrap();
    assert_eq!(hw(), 10);
    partition
        .wait_for_replication(info.last_offset + 1, Duration::from_secs(1))
        .await
        .unwrap();
    assert!(
        partition.record_follower_fetch(9, 0).is_err(),
        "not a replica"
    );
}

#[tokio::test]
async fn laggards_leave_the_isr_and_caught_up_followers_join_it() {
    let dir = tempfile::tempdir().unwrap();
    let partition = replicated(dir.path());
    partition.append(&checked(batch(0, 10, 1, 10)), 1).unwrap();
    partition.record_follower_fetch(3, 3).unwrap();
    // Follower 2 catches up a little later than follower 3 was last caught up.
    std::thread::sleep(Duration::from_millis(5));
    partition.record_follower_fetch(2, 10).unwrap();
    let progress = partition.follower_progress();
    assert!(progress[&2].last_caught_up_ms > progress[&3].last_caught_up_ms);
    let lag = 30_000;
    let now = now_ms();
    assert!(partition.wanted_isr(now, lag).is_none(), "within the lag");
    let (_, isr) = partition
        .wanted_isr(progress[&3].last_caught_up_ms + lag + 1, lag)
        .unwrap();
    assert_eq!(
        isr,
        vec![1, 2],
        "follower 3 did not catch up within the lag"
    );
    // The controller's answer comes back as new metadata.
    partition.set_leadership(leading(4, 1, &[1, 2]));
    assert!(partition.wanted_isr(now_ms(), 30_000).is_none());
    assert!(
        partition.record_follower_fetch(3, 10).unwrap(),
        "caught up: a candidate to join"
    );
    let (_, isr) = partition.wanted_isr(now_ms(), 30_000).unwrap();
    assert_eq!(isr, vec![1, 2, 3]);
    // With the ISR below min.insync.replicas, acks=all is refused before writing.
    partition.set_leadership(leading(4, 2, &[1]));
    assert!(matches!(
        partition.append(&checked(batch(0, 1, 1, 10)), -1),
        Err(Error::NotEnoughReplicas {
            isr: 1,
            required: 2
        })
    ));
}

/// Kafka's maximal ISR: while an ISR expansion is asked for, the high watermark waits for the
/// joining follower too. Without it, a record acknowledged with the old ISR could be missing
/// from the joining replica when the controller, having committed the expansion, makes that
/// replica the leader (a reassignment completing): an acknowledged record lost.
#[tokio::test]
async fn an_isr_expansion_asked_for_holds_the_high_watermark_for_its_new_member() {
    let dir = tempfile::tempdir().unwrap();
    let partition = replicated(dir.path());
    partition.set_leadership(leading(4, 1, &[1, 2]));
    partition.append(&checked(batch(0, 10, 1, 10)), 1).unwrap();
    partition.record_follower_fetch(2, 10).unwrap();
    partition.record_follower_fetch(3, 10).unwrap();
    let hw = || lock(partition.log()).high_watermark();
    assert_eq!(hw(), 10);
    partition.propose_isr(1, &[1, 2, 3]);
    partition.append(&checked(batch(0, 5, 1, 10)), 1).unwrap();
    partition.record_follower_fetch(2, 15).unwrap();
    assert_eq!(
        hw(),
        10,
        "follower 3, joining, does not have offsets 10-14 yet"
    );
    partition.record_follower_fetch(3, 15).unwrap();
    assert_eq!(hw(), 15);
    // Refused: the ISR alone counts again.
    partition.propose_isr(1, &[1, 2, 3]);
    partition.append(&checked(batch(0, 5, 1, 10)), 1).unwrap();
    partition.record_follower_fetch(2, 20).unwrap();
    assert_eq!(hw(), 15);
    partition.isr_refused(1);
    assert_eq!(hw(), 20);
    // Committed: the next epoch's ISR holds the new member, the asked-for change is done.
    partition.propose_isr(1, &[1, 2, 3]);
    partition.set_leadership(leading(4, 2, &[1, 2]));
    partition.append(&checked(batch(0, 5, 1, 10)), 1).unwrap();
    partition.record_follower_fetch(2, 25).unwrap();
    assert_eq!(hw(), 25, "an answer from an older epoch no longer counts");
}

#[tokio::test]
async fn a_follower_with_a_divergent_tail_is_told_where_to_truncate() {
    let dir = tempfile::tempdir().unwrap();
    let partition = replicated(dir.path());
    partition.append(&checked(batch(0, 5, 1, 10)), 1).unwrap();
    let replicas = ReplicaManager::new();
    let partition = replicas.add(Arc::into_inner(partition).unwrap());
    let limits = FetchLimits {
        min_bytes: 0,
        max_bytes: 1 << 20,
        max_wait: Duration::ZERO,
    };
    let fetch = |offset, epoch| FetchRequestPartition {
        tp: partition.topic_partition().clone(),
        current_leader_epoch: 4,
        replica_id: 2,
        last_fetched_epoch: epoch,
        fetch_offset: offset,
        partition_max_bytes: 1 << 20,
        read_committed: false,
        from_any_replica: false,
        client_rack: Arc::from(""),
    };
    // Epoch 3 ended here where epoch 4 began (offset 0): the follower's epoch-3 tail
    // past it must go.
    let answer = replicas.fetch(&[fetch(7, 3)], limits).await;
    assert_eq!(answer[0].diverging_epoch, Some((3, 0)));
    // In step with the leader's epoch 4: records up to the log end, past the HW.
    let answer = replicas.fetch(&[fetch(0, -1)], limits).await;
    assert!(answer[0].diverging_epoch.is_none());
    let records = answer[0].result.as_ref().unwrap().as_ref().unwrap();
    assert!(!records.is_empty());
    assert_eq!(answer[0].offsets.unwrap().high_watermark, 0);
    let answer = replicas.fetch(&[fetch(9, 4)], limits).await;
    assert_eq!(
        answer[0].diverging_epoch,
        Some((4, 5)),
        "ahead of the leader's end"
    );
}

/// Up to five produce requests of a producer are in flight: batches that would begin its
/// transaction on a partition are verified at the same time and share one guard (Kafka's
/// `VerificationStateEntry`), so the first appended does not leave the others refused.
#[test]
fn batches_verified_together_share_their_guard() {
    let dir = tempfile::tempdir().unwrap();
    let partition = leader_of_new_log(dir.path());
    let first = partition.start_transaction_verification(5, 0).unwrap();
    let second = partition.start_transaction_verification(5, 0).unwrap();
    assert_eq!(first, second);
    partition
        .append_checked(
            &checked(crate::record::test_support::transactional(1, 5, 0)),
            -1,
            Some(with_guard(5, first)),
        )
        .unwrap();
    partition
        .append_checked(
            &checked(crate::record::test_support::transactional(1, 5, 1)),
            -1,
            Some(with_guard(5, second)),
        )
        .unwrap();
}

/// Transaction version 2: the markers ending a transaction carry the epoch its EndTxn bumped
/// to — the epoch of the producer's next transaction. A batch of that next transaction may
/// be verified while those markers are written; the marker must not take its guard.
#[test]
fn a_version_2_marker_leaves_the_guard_of_the_next_transaction() {
    use crate::record::control::{Marker, MarkerKind};
    let dir = tempfile::tempdir().unwrap();
    let partition = leader_of_new_log(dir.path());
    // Producer 4's transaction at epoch 0 is open here.
    let guard = partition.start_transaction_verification(4, 0).unwrap();
    partition
        .append_checked(
            &checked(crate::record::test_support::transactional(1, 4, 0)),
            -1,
            Some(with_guard(4, guard)),
        )
        .unwrap();
    // Its next transaction (epoch 1) begins verifying here; then the abort marker of the
    // first (epoch 1, version 2) is written; then the coordinator confirms the batch.
    let next = partition.start_transaction_verification(4, 1).unwrap();
    let abort = Marker {
        kind: MarkerKind::Abort,
        coordinator_epoch: 0,
    };
    partition.append_marker(4, 1, abort, 2).unwrap();
    let mut batch = crate::record::test_support::transactional(1, 4, 0);
    crate::record::test_support::set_producer_fields(&mut batch, 4, 1, 0);
    let txn = produce::TxnAppend {
        producer_id: 4,
        producer_epoch: 1,
        guard: Some(next),
    };
    partition
        .append_checked(&checked(batch), -1, Some(txn))
        .unwrap();
}

#[tokio::test]
async fn a_consumer_of_another_rack_is_sent_to_its_racks_in_sync_replica_which_serves_it() {
    let dir = tempfile::tempdir().unwrap();
    let partition = replicated(dir.path());
    partition.append(&checked(batch(0, 5, 1, 10)), 1).unwrap();
    // Follower 2 holds everything, follower 3 only the first three records.
    partition.record_follower_fetch(2, 5).unwrap();
    partition.record_follower_fetch(3, 3).unwrap();
    let racks: std::collections::HashMap<i32, String> = [(1, "a"), (2, "b"), (3, "b")]
        .map(|(id, r)| (id, r.to_string()))
        .into();
    let now = now_ms();
    assert_eq!(
        partition.preferred_read_replica("b", 0, &racks, now),
        Some(2),
        "longest log"
    );
    assert_eq!(
        partition.preferred_read_replica("b", 5, &racks, now),
        Some(2)
    );
    // In the leader's rack, or a rack with no replica: the leader serves.
    assert_eq!(partition.preferred_read_replica("a", 0, &racks, now), None);
    assert_eq!(partition.preferred_read_replica("c", 0, &racks, now), None);
    // A replica out of the ISR is nobody's preferred replica.
    partition.set_leadership(leading(4, 1, &[1, 3]));
    assert_eq!(
        partition.preferred_read_replica("b", 0, &racks, now),
        Some(3)
    );
    assert_eq!(partition.preferred_read_replica("b", 4, &racks, now), None);

    let replicas = ReplicaManager::new();
    let partition = replicas.add(Arc::into_inner(partition).unwrap());
    replicas.set_replica_racks(Some(racks));
    let limits = FetchLimits {
        min_bytes: 1,
        max_bytes: 1 << 20,
        max_wait: Duration::from_secs(10),
    };
    let consumer = |rack: &str, any: bool| FetchRequestPartition {
        tp: partition.topic_partition().clone(),
        current_leader_epoch: -1,
        replica_id: -1,
        last_fetched_epoch: -1,
        fetch_offset: 0,
        partition_max_bytes: 1 << 20,
        read_committed: false,
        from_any_replica: any,
        client_rack: Arc::from(rack),
    };
    // Answered at once (not held for min_bytes) with where to read, and no data.
    let answer = replicas.fetch(&[consumer("b", true)], limits).await;
    assert_eq!(answer[0].preferred_read_replica, Some(3));
    assert!(matches!(answer[0].result, Ok(None)));

    // The same partition on a follower (broker 1 following 2): a consumer that may read
    // from followers gets what is below the high watermark the leader told it; an older
    // consumer is sent to the leader.
    partition.set_leadership(Leadership {
        leader: 2,
        leader_epoch: 5,
        partition_epoch: 2,
        replicas: vec![1, 2, 3],
        isr: vec![1, 2, 3],
    });
    lock(&partition.log).set_high_watermark(0);
    let limits = FetchLimits {
        max_wait: Duration::ZERO,
        ..limits
    };
    let answer = replicas.fetch(&[consumer("", true)], limits).await;
    assert!(
        matches!(answer[0].result, Ok(None)),
        "nothing committed yet"
    );
    lock(&partition.log).set_high_watermark(5);
    let answer = replicas.fetch(&[consumer("", true)], limits).await;
    let records = answer[0].result.as_ref().unwrap().as_ref().unwrap();
    assert!(!records.is_empty());
    assert_eq!(answer[0].offsets.unwrap().high_watermark, 5);
    let answer = replicas.fetch(&[consumer("", false)], limits).await;
    assert!(matches!(answer[0].result, Err(Error::NotLeaderOrFollower)));
}
