//! Unit tests of the partition log (after Kafka's `UnifiedLogTest` and `LogLoaderTest`).
use super::*;
use crate::config::BrokerConfig;
use crate::record::test_support::{batch, checked};
use crate::record::{self, BatchView};
use crate::storage::cleaner::CleanStats;

fn config(pairs: &[(&str, &str)]) -> LogConfig {
    let broker = BrokerConfig::with_overrides(&[]).unwrap();
    let overrides = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    LogConfig::resolve(&broker.topic_defaults, &overrides)
}

fn append(log: &mut Log, count: i32, ts: i64) -> AppendInfo {
    log.append_as_leader(&checked(batch(0, count, ts, 100)), 0, ts)
        .unwrap()
}

#[test]
fn small_and_large_batches_are_stored_as_stamped_with_valid_crcs() {
    let dir = tempfile::tempdir().unwrap();
    for append_time in ["CreateTime", "LogAppendTime"] {
        let mut log = Log::create(
            &dir.path().join(append_time),
            TopicPartition::new("t", 0),
            config(&[("message.timestamp.type", append_time)]),
            0,
        )
        .unwrap();
        // Both take one pwritev of header and records; the large one's records (500 of 100
        // bytes) are well past a page.
        let small = batch(0, 3, 5, 100);
        let large = batch(0, 500, 5, 100);
        assert!(large.len() - crate::record::HEADER_LEN > 16 * 1024);
        log.append_as_leader(&checked(small.clone()), 4, 77)
            .unwrap();
        log.append_as_leader(&checked(large.clone()), 4, 77)
            .unwrap();
        let read = log
            .read(0, usize::MAX, log.log_end_offset(), true)
            .unwrap()
            .unwrap();
        let bytes = read.records.read().unwrap();
        let stored: Vec<_> = crate::record::BatchIter::new(&bytes)
            .map(|b| b.unwrap())
            .collect();
        assert_eq!(stored.len(), 2);
        for (view, (original, base)) in stored.iter().zip([(&small, 0), (&large, 3)]) {
            view.validate().unwrap();
            assert_eq!(view.base_offset(), base);
            let mut expected = original.clone();
            let log_append_time = (append_time == "LogAppendTime").then_some(77);
            crate::record::assign_offsets(&mut expected, base, 4, log_append_time);
            assert_eq!(view.bytes(), &expected[..], "{append_time}");
        }
    }
}

#[test]
fn offsets_are_assigned_and_reads_span_segments() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(
        dir.path(),
        TopicPartition::new("t", 0),
        config(&[("segment.bytes", "1000")]),
        0,
    )
    .unwrap();
    for i in 0..20 {
        let info = append(&mut log, 3, 1000 + i);
        assert_eq!(info.base_offset, i * 3);
    }
    assert!(log.segment_count() > 3, "rolled by size");
    assert_eq!(log.log_end_offset(), 60);
    let mut offset = 0;
    while offset < 60 {
        let read = log.read(offset, 10, 60, true).unwrap().unwrap();
        let bytes = read.records.read().unwrap();
        let view = BatchView::new(&bytes).unwrap();
        assert!(view.base_offset() <= offset && offset <= view.last_offset());
        offset = read.next_offset;
    }
    assert!(log.read(60, 1000, 60, true).unwrap().is_none());
    assert!(matches!(
        log.read(61, 1000, 60, true),
        Err(StorageError::OffsetOutOfRange { .. })
    ));
}

#[test]
fn timestamps_and_delete_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(
        dir.path(),
        TopicPartition::new("t", 0),
        config(&[("segment.bytes", "2000")]),
        0,
    )
    .unwrap();
    for i in 0..10 {
        append(&mut log, 4, 10_000 + i * 100); // record j of batch i at 10_000 + i*100 + j
    }
    assert_eq!(
        log.offset_for_timestamp(10_502).unwrap(),
        Some((22, 10_502))
    );
    assert_eq!(
        log.offset_for_timestamp(10_450).unwrap(),
        Some((20, 10_500))
    );
    assert_eq!(log.offset_for_timestamp(0).unwrap(), Some((0, 10_000)));
    assert_eq!(log.offset_for_timestamp(99_999).unwrap(), None);
    assert_eq!(log.max_timestamp_record().unwrap(), Some((39, 10_903)));
    let segments_before = log.segment_count();
    assert_eq!(log.delete_records_before(30).unwrap(), 30);
    assert!(log.segment_count() < segments_before);
    assert!(matches!(
        log.read(29, 1000, 40, true),
        Err(StorageError::OffsetOutOfRange { .. })
    ));
    assert_eq!(log.offset_for_timestamp(0).unwrap(), Some((30, 10_702)));
    assert!(log.delete_records_before(41).is_err());
}

#[test]
fn retention_by_size_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(
        dir.path(),
        TopicPartition::new("t", 0),
        config(&[("segment.bytes", "500"), ("retention.bytes", "1500")]),
        0,
    )
    .unwrap();
    for i in 0..30 {
        append(&mut log, 1, 1_000 + i);
    }
    log.apply_retention(2_000).unwrap();
    // Kafka deletes while the rest still exceeds the limit by a whole segment or more.
    assert!(log.size_bytes() < 1500 + 500, "size {}", log.size_bytes());
    assert!(log.log_start_offset() > 0);
    assert_eq!(log.log_end_offset(), 30);

    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(
        dir.path(),
        TopicPartition::new("t", 0),
        config(&[("segment.bytes", "500"), ("retention.ms", "1000")]),
        0,
    )
    .unwrap();
    for i in 0..10 {
        append(&mut log, 1, 1_000 + i);
    }
    log.apply_retention(5_000).unwrap();
    assert_eq!(
        log.log_start_offset(),
        10,
        "everything expired, active rolled"
    );
    assert_eq!(log.log_end_offset(), 10);
    assert_eq!(append(&mut log, 1, 6_000).base_offset, 10);
}

#[test]
fn clean_and_unclean_reload() {
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("t", 0);
    let cfg = config(&[("segment.bytes", "1000")]);
    let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
    for i in 0..20 {
        append(&mut log, 2, i);
    }
    log.close(0).unwrap();
    drop(log);
    let (log, report) = Log::load(dir.path(), tp.clone(), cfg.clone(), 40, 0, true, 0).unwrap();
    assert_eq!(report.recovered_segments, 0);
    assert_eq!(log.log_end_offset(), 40);
    drop(log);
    // Unclean: torn tail in the active segment.
    let last = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .max()
        .unwrap();
    let mut bytes = std::fs::read(&last).unwrap();
    bytes.extend_from_slice(&[0xAB; 37]);
    std::fs::write(&last, bytes).unwrap();
    let (mut log, report) = Log::load(dir.path(), tp, cfg, 0, 0, false, 0).unwrap();
    assert_eq!(report.truncated_bytes, 37);
    assert_eq!(log.log_end_offset(), 40);
    assert_eq!(append(&mut log, 1, 99).base_offset, 40);
}

#[test]
fn transactions_bound_the_last_stable_offset_and_aborts_are_indexed_across_reloads() {
    use crate::record::control::{Marker, MarkerKind};
    use crate::record::test_support::transactional;
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("t", 0);
    let cfg = config(&[("segment.bytes", "400")]);
    let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
    let marker = |kind| Marker {
        kind,
        coordinator_epoch: 3,
    };
    log.append_as_leader(&checked(transactional(2, 1, 0)), 0, 1_000)
        .unwrap(); // 0-1, producer 1
    append(&mut log, 1, 5); // 2, not transactional
    log.append_as_leader(&checked(transactional(2, 2, 0)), 0, 1_000)
        .unwrap(); // 3-4, producer 2
    log.append_as_leader(&checked(transactional(1, 1, 2)), 0, 1_000)
        .unwrap(); // 5, producer 1 again
    assert_eq!(log.high_watermark(), 6);
    assert_eq!(
        log.last_stable_offset(),
        0,
        "producer 1's transaction is open"
    );

    log.append_marker(1, 0, marker(MarkerKind::Commit), 0, 0, 1_000)
        .unwrap(); // 6
    assert_eq!(
        log.last_stable_offset(),
        3,
        "now producer 2's is the first open one"
    );
    log.append_marker(2, 0, marker(MarkerKind::Abort), 0, 0, 1_000)
        .unwrap(); // 7
    assert_eq!(log.last_stable_offset(), 8);
    let aborted = log.aborted_transactions(0, 8);
    assert_eq!(aborted.len(), 1);
    assert_eq!(
        (
            aborted[0].producer_id,
            aborted[0].first_offset,
            aborted[0].last_offset
        ),
        (2, 3, 7)
    );
    assert!(log.aborted_transactions(8, 20).is_empty());
    let stale_coordinator = Marker {
        kind: MarkerKind::Abort,
        coordinator_epoch: 2,
    };
    assert!(matches!(
        log.append_marker(2, 0, stale_coordinator, 0, 0, 1_000),
        Err(StorageError::Producer(
            crate::storage::producer_state::ProducerError::CoordinatorFenced { got: 2, current: 3 }
        ))
    ));

    // A replicated log: a marker is stable only once the high watermark passes it.
    log.set_replicated(true);
    log.set_high_watermark(8);
    log.append_as_leader(&checked(transactional(1, 3, 0)), 0, 1_000)
        .unwrap(); // 8
    log.append_marker(3, 0, marker(MarkerKind::Abort), 0, 0, 1_000)
        .unwrap(); // 9
    assert_eq!(log.last_stable_offset(), 8);
    log.set_high_watermark(10);
    assert_eq!(log.last_stable_offset(), 10);
    assert_eq!(log.aborted_transactions(0, 10).len(), 2);

    // An unclean reload replays the producers and rebuilds the index (no duplicates).
    drop(log);
    let (mut log, _) = Log::load(dir.path(), tp.clone(), cfg.clone(), 0, 0, false, 0).unwrap();
    assert_eq!(log.aborted_transactions(0, 10).len(), 2);
    log.append_as_leader(&checked(transactional(1, 4, 0)), 0, 1_000)
        .unwrap(); // 10, open
    assert_eq!(log.last_stable_offset(), 10);
    // Truncating away producer 3's abort marker reopens its transaction.
    log.truncate_to(9).unwrap();
    assert_eq!(log.last_stable_offset(), 8);
    assert_eq!(log.aborted_transactions(0, 10).len(), 1);
}

#[test]
fn producer_state_is_snapshotted_at_each_roll_and_survives_an_unclean_stop() {
    use crate::record::test_support::set_producer_fields;
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("p", 0);
    let cfg = config(&[("segment.bytes", "300")]);
    let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
    let idempotent = |seq: i32| {
        let mut b = batch(0, 2, 1_000, 20);
        set_producer_fields(&mut b, 42, 0, seq);
        b
    };
    for i in 0..12 {
        log.append_as_leader(&checked(idempotent(i * 2)), 0, 1_000)
            .unwrap();
    }
    let snapshots = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".snapshot")
        })
        .count();
    assert!(log.segment_count() > 2);
    assert_eq!(snapshots, log.segment_count() - 1, "one per roll");
    // No close: the next start replays only the active segment after its snapshot, and
    // still knows the producer's last batch.
    drop(log);
    let (mut log, _) = Log::load(dir.path(), tp, cfg, 0, 0, false, 0).unwrap();
    let end = log.log_end_offset();
    let retry = log
        .append_as_leader(&checked(idempotent(22)), 0, 1_000)
        .unwrap();
    assert_eq!(
        retry.base_offset,
        end - 2,
        "the retried last batch is a duplicate"
    );
    assert_eq!(log.log_end_offset(), end);
}

#[test]
fn compaction_ignores_aborted_records_and_stops_at_the_last_stable_offset() {
    use crate::record::control::{Marker, MarkerKind};
    use crate::record::test_support::make_transactional;
    use crate::record::{NewRecord, build_batch};
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(&[
        ("cleanup.policy", "compact"),
        ("segment.bytes", "250"),
        ("min.compaction.lag.ms", "0"),
    ]);
    let mut log = Log::create(dir.path(), TopicPartition::new("c", 0), cfg, 0).unwrap();
    let keyed = |key: &str, value: &str| {
        build_batch(&[NewRecord {
            key: Some(key.as_bytes()),
            value: Some(value.as_bytes()),
            timestamp: 1_000,
        }])
    };
    let abort = Marker {
        kind: MarkerKind::Abort,
        coordinator_epoch: 0,
    };
    log.append_as_leader(&checked(keyed("k1", "committed")), 0, 1_000)
        .unwrap();
    let mut aborted = keyed("k1", "aborted");
    make_transactional(&mut aborted, 5, 0);
    log.append_as_leader(&checked(aborted.clone()), 0, 1_000)
        .unwrap();
    log.append_marker(5, 0, abort, 0, 0, 1_000).unwrap();
    for i in 0..6 {
        log.append_as_leader(&checked(keyed("k3", &format!("early-{i}"))), 0, 1_000)
            .unwrap();
    }
    let mut open = keyed("k2", "open");
    make_transactional(&mut open, 6, 0);
    let open_at = log
        .append_as_leader(&checked(open.clone()), 0, 1_000)
        .unwrap()
        .base_offset;
    for i in 0..6 {
        log.append_as_leader(&checked(keyed("k3", &format!("late-{i}"))), 0, 1_000)
            .unwrap();
    }
    assert_eq!(log.last_stable_offset(), open_at);
    let values = |log: &Log| -> Vec<String> {
        let mut out = Vec::new();
        for segment in log.segments.values() {
            for batch in crate::record::BatchIter::new(&segment.read_all().unwrap()) {
                let batch = batch.unwrap();
                if batch.is_control() {
                    continue;
                }
                for r in crate::record::records::parse_records(
                    batch.records_payload(),
                    batch.records_count(),
                )
                .unwrap()
                {
                    out.push(String::from_utf8_lossy(r.value.unwrap()).into_owned());
                }
            }
        }
        out
    };

    log.compact(2_000).unwrap();
    let after = values(&log);
    assert!(after.contains(&"committed".to_string()), "{after:?}");
    assert!(!after.contains(&"aborted".to_string()), "{after:?}");
    // Nothing at or after the open transaction was cleaned: every late value is there.
    for i in 0..6 {
        assert!(after.contains(&format!("late-{i}")), "{after:?}");
    }

    // Once the transaction ends, the rest can be cleaned.
    let commit = Marker {
        kind: MarkerKind::Commit,
        coordinator_epoch: 0,
    };
    log.append_marker(6, 0, commit, 0, 0, 1_000).unwrap();
    for i in 0..6 {
        log.append_as_leader(&checked(keyed("k4", &format!("fill-{i}"))), 0, 1_000)
            .unwrap();
    }
    log.compact(3_000).unwrap();
    let after = values(&log);
    assert!(
        after.contains(&"open".to_string()),
        "committed now: {after:?}"
    );
    assert!(
        after.iter().filter(|v| v.starts_with("late-")).count() < 6,
        "{after:?}"
    );
}

#[test]
fn compaction_keeps_latest_per_key_across_segments_and_survives_reload() {
    use crate::record::{NewRecord, build_batch};
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("c", 0);
    let cfg = config(&[
        ("cleanup.policy", "compact"),
        ("segment.bytes", "300"),
        ("min.compaction.lag.ms", "0"),
    ]);
    let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
    for round in 0..10 {
        for key in ["k1", "k2", "k3"] {
            let value = format!("{key}-v{round}");
            let batch = build_batch(&[NewRecord {
                key: Some(key.as_bytes()),
                value: Some(value.as_bytes()),
                timestamp: 1_000,
            }]);
            log.append_as_leader(&checked(batch.clone()), 0, 1_000)
                .unwrap();
        }
    }
    assert!(log.segment_count() > 3);
    let end = log.log_end_offset();
    let stats = log.compact(2_000).unwrap();
    assert!(stats.records_removed > 0, "{stats:?}");
    assert_eq!(
        log.compact(2_000).unwrap(),
        CleanStats::default(),
        "nothing new sealed: no pass"
    );
    let read_all = |log: &Log| {
        let mut out = Vec::new();
        let mut offset = log.log_start_offset();
        while let Some(read) = log.read(offset, 1 << 20, end, true).unwrap() {
            for batch in crate::record::BatchIter::new(&read.records.read().unwrap()) {
                let batch = batch.unwrap();
                assert!(batch.crc_matches());
                for r in crate::record::records::parse_records(
                    batch.records_payload(),
                    batch.records_count(),
                )
                .unwrap()
                {
                    out.push((
                        batch.base_offset() + r.offset_delta as i64,
                        String::from_utf8_lossy(r.value.unwrap()).into_owned(),
                    ));
                }
            }
            offset = read.next_offset;
            if offset >= end {
                break;
            }
        }
        out
    };
    let records = read_all(&log);
    assert_eq!(log.log_end_offset(), end, "offsets never move");
    assert!(records.windows(2).all(|w| w[0].0 < w[1].0));
    // The active segment is never cleaned; every key's last value is still there.
    for key in ["k1", "k2", "k3"] {
        assert!(records.iter().any(|(_, v)| *v == format!("{key}-v9")));
    }
    assert!(
        records.len() < 30,
        "older values are gone: {} left",
        records.len()
    );
    drop(log);
    let (reloaded, report) = Log::load(dir.path(), tp, cfg, 0, 0, false, 3_000).unwrap();
    assert_eq!(report.truncated_bytes, 0, "compacted segments are valid");
    assert_eq!(read_all(&reloaded), records);
}

/// The raw batches of `log` from `offset` to its end, as a leader's fetch would send them.
fn raw_from(log: &Log, offset: i64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut next = offset;
    while next < log.log_end_offset() {
        let read = log
            .read(next, 1 << 20, i64::MAX, true)
            .unwrap()
            .expect("data below the log end");
        out.extend_from_slice(&read.records.read().unwrap());
        next = read.next_offset;
    }
    out
}

#[test]
fn a_follower_copies_the_leaders_batches_byte_for_byte_across_segments() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let tp = TopicPartition::new("r", 0);
    let cfg = config(&[("segment.bytes", "700")]);
    let mut leader = Log::create(dirs[0].path(), tp.clone(), cfg.clone(), 0).unwrap();
    let mut follower = Log::create(dirs[1].path(), tp.clone(), cfg.clone(), 0).unwrap();
    for (i, epoch) in [0, 0, 0, 2, 2, 5, 5, 5].iter().enumerate() {
        leader
            .append_as_leader(&checked(batch(0, 3, i as i64, 60)), *epoch, i as i64)
            .unwrap();
    }
    // In two fetches, the second ending in a partial batch that is left for later.
    let all = raw_from(&leader, 0);
    let cut = raw_from(&leader, 9).len();
    let first = &all[..all.len() - cut];
    assert_eq!(follower.append_as_follower(first, 0).unwrap(), Some(8));
    let rest = &all[all.len() - cut..];
    assert_eq!(
        follower
            .append_as_follower(&rest[..rest.len() - 10], 0)
            .unwrap(),
        Some(20)
    );
    assert_eq!(follower.append_as_follower(&[], 0).unwrap(), None);
    let last_batch = raw_from(&leader, 21);
    assert_eq!(
        follower.append_as_follower(&last_batch, 0).unwrap(),
        Some(23)
    );
    assert!(follower.segment_count() > 1, "rolled like the leader");
    assert_eq!(raw_from(&follower, 0), all);
    assert_eq!(follower.latest_epoch(), Some(5));
    assert_eq!(follower.end_offset_for_epoch(2), (2, 15));
    assert_eq!(follower.end_offset_for_epoch(5), (5, 24));

    // Not continuing the log, or corrupt: rejected, nothing written.
    assert!(matches!(
        follower.append_as_follower(&raw_from(&leader, 3), 0),
        Err(StorageError::UnexpectedAppendOffset {
            expected: 24,
            got: 3
        })
    ));
    // A gap compaction left on the leader (whole batches dropped) is skipped over.
    assert_eq!(
        follower
            .append_as_follower(&batch(30, 2, 5, 10), 0)
            .unwrap(),
        Some(31)
    );
    assert_eq!(follower.log_end_offset(), 32);
    let mut next = batch(32, 2, 0, 10).to_vec();
    let crc_covered = next.len() - 1;
    next[crc_covered] ^= 1;
    assert!(follower.append_as_follower(&next, 0).is_err());
    assert_eq!(follower.log_end_offset(), 32);
    assert!(!follower.is_failed());
}

#[test]
fn truncation_removes_whole_batches_and_the_epochs_after_them_and_survives_reload() {
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("t", 0);
    let cfg = config(&[("segment.bytes", "500")]);
    let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
    for (i, epoch) in [1, 1, 1, 1, 3, 3, 3, 4].iter().enumerate() {
        log.append_as_leader(&checked(batch(0, 2, i as i64, 80)), *epoch, i as i64)
            .unwrap();
    }
    let segments_before = log.segment_count();
    assert!(segments_before > 2);
    // Offset 11 is inside the batch 10..=11: that batch goes too.
    assert_eq!(log.truncate_to(11).unwrap(), 10);
    assert_eq!(log.log_end_offset(), 10);
    assert!(log.segment_count() < segments_before);
    assert_eq!(log.latest_epoch(), Some(3));
    assert_eq!(log.end_offset_for_epoch(1), (1, 8));
    assert_eq!(log.end_offset_for_epoch(4), (-1, -1));
    // Truncating past the end changes nothing.
    assert_eq!(log.truncate_to(50).unwrap(), 10);
    // The log goes on from there, in a new epoch.
    assert_eq!(
        log.append_as_leader(&checked(batch(0, 1, 9, 10)), 6, 9)
            .unwrap()
            .base_offset,
        10
    );
    log.close(9).unwrap();
    drop(log);
    let (log, _) = Log::load(dir.path(), tp.clone(), cfg.clone(), 0, 0, true, 10).unwrap();
    assert_eq!(log.log_end_offset(), 11);
    assert_eq!(log.end_offset_for_epoch(3), (3, 10));
    assert_eq!(log.end_offset_for_epoch(6), (6, 11));
    let offsets: Vec<i64> = {
        let raw = raw_from(&log, 0);
        record::BatchIter::new(&raw)
            .map(|b| b.unwrap().base_offset())
            .collect()
    };
    assert_eq!(offsets, vec![0, 2, 4, 6, 8, 10]);
}

#[test]
fn truncating_to_the_log_start_empties_the_log_there() {
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("t", 0);
    let mut log = Log::create(dir.path(), tp, config(&[]), 0).unwrap();
    for i in 0..4 {
        append(&mut log, 5, i);
    }
    log.delete_records_before(5).unwrap();
    assert_eq!(log.truncate_to(3).unwrap(), 3);
    assert_eq!(log.log_start_offset(), 3);
    assert_eq!(log.log_end_offset(), 3);
    assert_eq!(log.latest_epoch(), None);
    assert_eq!(append(&mut log, 1, 9).base_offset, 3);
}

#[test]
fn a_replicated_log_exposes_only_its_high_watermark() {
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("t", 0);
    let cfg = config(&[("segment.bytes", "300"), ("retention.bytes", "0")]);
    let mut log = Log::create(dir.path(), tp, cfg, 0).unwrap();
    log.set_replicated(true);
    for i in 0..6 {
        append(&mut log, 2, i);
    }
    assert_eq!(log.high_watermark(), 0);
    // Retention may not delete what is not committed.
    log.apply_retention(10).unwrap();
    assert_eq!(log.log_start_offset(), 0);
    log.set_high_watermark(6);
    assert_eq!(log.high_watermark(), 6);
    log.set_high_watermark(100);
    assert_eq!(log.high_watermark(), 12, "clamped to the log end");
    log.set_high_watermark(6);
    log.apply_retention(10).unwrap();
    assert!(log.log_start_offset() > 0 && log.log_start_offset() <= 6);
    log.set_replicated(false);
    assert_eq!(log.high_watermark(), 12);
}

#[test]
fn a_log_without_an_epoch_file_rebuilds_it_from_batch_headers_once() {
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("t", 0);
    let cfg = config(&[("segment.bytes", "400")]);
    let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
    for (i, epoch) in [0, 0, 2, 2, 7].iter().enumerate() {
        log.append_as_leader(&checked(batch(0, 3, i as i64, 50)), *epoch, i as i64)
            .unwrap();
    }
    log.close(5).unwrap();
    drop(log);
    let file = dir
        .path()
        .join(crate::storage::epoch::LEADER_EPOCH_CHECKPOINT);
    std::fs::remove_file(&file).unwrap();
    let (log, _) = Log::load(dir.path(), tp, cfg, 0, 0, true, 5).unwrap();
    assert_eq!(log.end_offset_for_epoch(0), (0, 6));
    assert_eq!(log.end_offset_for_epoch(2), (2, 12));
    assert_eq!(log.end_offset_for_epoch(7), (7, 15));
    assert!(file.exists());
}

/// The topic's `preallocate`: every segment the log starts (at creation and at each roll) has
/// its blocks reserved up to `segment.bytes`, and a rolled one gives back what it did not use.
#[test]
fn preallocate_reserves_each_new_segment_and_a_roll_gives_back_the_rest() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let allocated = |base: i64| {
        let path = dir
            .path()
            .join(crate::storage::segment::file_name(base, "log"));
        std::fs::metadata(path).unwrap().blocks() * 512
    };
    let mut log = Log::create(
        dir.path(),
        TopicPartition::new("t", 0),
        config(&[("preallocate", "true"), ("segment.bytes", "4194304")]),
        0,
    )
    .unwrap();
    assert!(allocated(0) >= 4 << 20, "{}", allocated(0));
    append(&mut log, 10, 1);
    log.roll(2).unwrap();
    assert!(
        allocated(0) < 64 << 10,
        "the sealed segment: {}",
        allocated(0)
    );
    assert!(allocated(10) >= 4 << 20, "the new one: {}", allocated(10));
    append(&mut log, 10, 3);
    assert_eq!(log.log_end_offset(), 20);
    let without = Log::create(
        &dir.path().join("without"),
        TopicPartition::new("t", 1),
        config(&[("segment.bytes", "4194304")]),
        0,
    )
    .unwrap();
    drop(without);
    let path = dir
        .path()
        .join("without")
        .join(crate::storage::segment::file_name(0, "log"));
    assert_eq!(std::fs::metadata(path).unwrap().blocks(), 0);
}

/// A clean close writes a producer snapshot only where the next start would otherwise replay
/// something: not for a log never written (100,000 of those took two fsyncs each), and not
/// again at an end that has one.
#[test]
fn close_snapshots_producers_only_where_a_start_would_replay_something() {
    let dir = tempfile::tempdir().unwrap();
    let snapshots = |path: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".snapshot"))
            .collect();
        names.sort();
        names
    };
    let empty_dir = dir.path().join("empty");
    let mut empty = Log::create(&empty_dir, TopicPartition::new("t", 0), config(&[]), 0).unwrap();
    empty.close(1).unwrap();
    assert!(snapshots(&empty_dir).is_empty());

    let written_dir = dir.path().join("written");
    let mut written =
        Log::create(&written_dir, TopicPartition::new("t", 1), config(&[]), 0).unwrap();
    append(&mut written, 5, 1);
    written.close(2).unwrap();
    assert_eq!(snapshots(&written_dir), [format!("{:020}.snapshot", 5)]);
    let (mut reloaded, _) = Log::load(
        &written_dir,
        TopicPartition::new("t", 1),
        config(&[]),
        5,
        0,
        true,
        3,
    )
    .unwrap();
    assert_eq!(reloaded.log_end_offset(), 5);
    reloaded.close(4).unwrap();
    assert_eq!(snapshots(&written_dir), [format!("{:020}.snapshot", 5)]);
}
