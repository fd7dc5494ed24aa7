use super::*;
use crate::config::BrokerConfig;
use crate::record::test_support::{batch, checked};
use std::collections::BTreeMap;

fn cfg() -> LogConfig {
    let broker = BrokerConfig::with_overrides(&[]).unwrap();
    LogConfig::resolve(&broker.topic_defaults, &BTreeMap::new())
}

/// Defect 4 of the hardening issue: a CRC-valid batch whose records do not parse (a
/// client wrote it to `__consumer_offsets` before that was refused) is skipped by the
/// coordinators' replay; the records before and after it still load.
#[test]
fn replay_skips_a_batch_whose_records_do_not_parse() {
    let dir = tempfile::tempdir().unwrap();
    let (manager, _) =
        LogManager::open(&[dir.path().to_path_buf()], |_| Some(cfg()), 0, 1).unwrap();
    let log = manager
        .get_or_create(&TopicPartition::new("__consumer_offsets", 0), cfg(), 0)
        .unwrap();
    let mut garbage = batch(0, 1, 1, 10);
    // The record length varint overflows; the header and CRC stay valid.
    garbage[61..66].copy_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x7f]);
    let crc = crc32c::crc32c(&garbage[21..]);
    garbage[17..21].copy_from_slice(&crc.to_be_bytes());
    for records in [batch(0, 2, 1, 10), garbage, batch(0, 3, 1, 10)] {
        lock(&log)
            .append_as_leader(&checked(records.clone()), 0, 1)
            .unwrap();
    }
    let mut values = 0;
    let visited = replay_records(&log, |_| values += 1).unwrap();
    assert_eq!((visited, values), (5, 5));
}

#[test]
fn lock_marker_and_stray_logs() {
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("orders", 0);
    {
        let (manager, _) =
            LogManager::open(&[dir.path().to_path_buf()], |_| Some(cfg()), 0, 2).unwrap();
        assert!(!manager.clean_startup());
        assert!(matches!(
            LogManager::open(&[dir.path().to_path_buf()], |_| Some(cfg()), 0, 2),
            Err(StorageError::Locked(_))
        ));
        let log = manager.get_or_create(&tp, cfg(), 0).unwrap();
        lock(&log)
            .append_as_leader(&checked(batch(0, 5, 1, 10)), 0, 1)
            .unwrap();
        manager
            .get_or_create(&TopicPartition::new("gone", 0), cfg(), 0)
            .unwrap();
        manager.shutdown(0).unwrap();
    }
    let (manager, reports) = LogManager::open(
        &[dir.path().to_path_buf()],
        |t| (t == "orders").then(cfg),
        0,
        2,
    )
    .unwrap();
    assert!(manager.clean_startup());
    assert!(!dir.path().join(CLEAN_SHUTDOWN_FILE).exists());
    assert_eq!(reports.len(), 1);
    assert_eq!(lock(&manager.get(&tp).unwrap()).log_end_offset(), 5);
    assert!(!dir.path().join("gone-0").exists());
    manager.delete(&tp).unwrap();
    assert!(!dir.path().join("orders-0").exists());
}

fn append(log: &SharedLog, count: i32) {
    lock(log)
        .append_as_leader(&checked(batch(0, count, 1, 10)), 0, 1)
        .unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// JBOD: new logs go to the directory holding fewest; a log moves to another directory
/// while it is written to, keeping every record and its shared handle; everything reloads
/// from both directories, and the leftovers of a move a stop cut short are cleared.
#[test]
fn logs_spread_over_directories_move_between_them_and_reload() {
    let root = tempfile::tempdir().unwrap();
    let dirs = vec![root.path().join("a"), root.path().join("b")];
    let (manager, _) = LogManager::open(&dirs, |_| Some(cfg()), 0, 2).unwrap();
    let tps: Vec<TopicPartition> = (0..4).map(|p| TopicPartition::new("orders", p)).collect();
    for tp in &tps {
        manager.get_or_create(tp, cfg(), 0).unwrap();
    }
    let placed: Vec<PathBuf> = tps.iter().map(|tp| manager.dir_of(tp).unwrap()).collect();
    assert_eq!(placed, [0, 1, 0, 1].map(|i| dirs[i].clone()));

    let moving = &tps[0];
    let log = manager.get(moving).unwrap();
    append(&log, 5);
    append(&log, 3);
    assert_eq!(
        manager.move_replica(moving, 1).unwrap(),
        MoveStatus::Started
    );
    assert_eq!(
        manager.move_replica(moving, 1).unwrap(),
        MoveStatus::InProgress
    );
    let usage = manager.describe().unwrap();
    let future = usage[1]
        .logs
        .iter()
        .find(|l| &l.topic_partition == moving && l.is_future)
        .unwrap();
    assert_eq!(future.offset_lag, 8);
    // The log is written to while it is copied; the copy takes that too.
    assert_ne!(manager.copy_step(moving).unwrap(), MoveStep::Over);
    append(&log, 2);
    let mut steps = 0;
    while manager.copy_step(moving).unwrap() != MoveStep::Over {
        steps += 1;
        assert!(steps < 100, "the move did not finish");
    }
    assert!(!manager.is_moving(moving));
    assert_eq!(manager.dir_of(moving).unwrap(), dirs[1]);
    assert_eq!(lock(&log).log_end_offset(), 10);
    let read = lock(&log).read(0, 1 << 20, 10, true).unwrap().unwrap();
    assert_eq!(
        crate::record::BatchIter::new(&read.records.read().unwrap()).count(),
        3
    );
    assert!(!dirs[0].join("orders-0").exists());
    append(&log, 1);
    assert_eq!(
        manager.move_replica(moving, 1).unwrap(),
        MoveStatus::AlreadyThere
    );
    assert!(
        manager.describe().unwrap()[1]
            .logs
            .iter()
            .all(|l| !l.is_future)
    );
    manager.shutdown(0).unwrap();
    drop(manager);

    // A stop cut three moves short: a copy of orders-1 still being made in `a` (its source
    // in `b`), a copy of orders-2 in `b` that holds more than its source (orders-0's 11
    // records; its source lost them, say), and a finished move's superseded source left in
    // `a` beside its copy in `b`.
    let resumable = dirs[0].join("orders-1.0123456789abcdef-future");
    std::fs::create_dir_all(&resumable).unwrap();
    let past_its_source = dirs[1].join("orders-2.00000000000000000000000000000002-future");
    copy_dir(&dirs[1].join("orders-0"), &past_its_source);
    copy_dir(&dirs[1].join("orders-0"), &dirs[0].join("orders-0"));
    std::fs::write(dirs[0].join("orders-0").join(".superseded-by-move"), b"").unwrap();
    let (manager, reports) = LogManager::open(&dirs, |_| Some(cfg()), 0, 2).unwrap();
    assert!(manager.clean_startup());
    assert_eq!(reports.len(), 4);
    assert_eq!(manager.dir_of(moving).unwrap(), dirs[1]);
    assert_eq!(lock(&manager.get(moving).unwrap()).log_end_offset(), 11);
    assert!(!dirs[0].join("orders-0").exists());
    assert!(!past_its_source.exists());
    // The copy that loads goes on (as Kafka resumes it); the other starts over.
    assert_eq!(
        manager.take_interrupted_moves(),
        [
            InterruptedMove::Resumed(tps[1].clone()),
            InterruptedMove::Restart(tps[2].clone(), 1)
        ]
    );
    assert!(manager.take_interrupted_moves().is_empty());
    assert!(manager.is_moving(&tps[1]));
    append(&manager.get(&tps[1]).unwrap(), 4);
    let mut steps = 0;
    while manager.copy_step(&tps[1]).unwrap() != MoveStep::Over {
        steps += 1;
        assert!(steps < 100, "the resumed move did not finish");
    }
    assert_eq!(manager.dir_of(&tps[1]).unwrap(), dirs[0]);
    assert_eq!(lock(&manager.get(&tps[1]).unwrap()).log_end_offset(), 4);
    assert!(!resumable.exists());
    manager.shutdown(0).unwrap();
    drop(manager);
    // The moved log stays in `a` after a restart.
    let (manager, _) = LogManager::open(&dirs, |_| Some(cfg()), 0, 2).unwrap();
    assert_eq!(manager.dir_of(&tps[1]).unwrap(), dirs[0]);
    drop(manager);

    // The same partition in two directories otherwise is refused, as Kafka refuses it.
    copy_dir(&dirs[1].join("orders-0"), &dirs[0].join("orders-0"));
    assert!(matches!(
        LogManager::open(&dirs, |_| Some(cfg()), 0, 2),
        Err(StorageError::Corrupt(_))
    ));
}

/// The offset checkpoints are written when a directory's logs or offsets changed, and not
/// again while nothing did (an idle broker writes nothing).
#[test]
fn checkpoints_are_written_only_when_something_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (manager, _) =
        LogManager::open(&[dir.path().to_path_buf()], |_| Some(cfg()), 0, 1).unwrap();
    let log = manager
        .get_or_create(&TopicPartition::new("orders", 0), cfg(), 0)
        .unwrap();
    append(&log, 5);
    let file = dir.path().join(HIGH_WATERMARK_FILE);
    let written = || checkpoint::read_offsets(&file).unwrap();
    manager.checkpoint().unwrap();
    assert!(file.exists());
    std::fs::remove_file(&file).unwrap();
    manager.checkpoint().unwrap();
    assert!(!file.exists(), "nothing changed: nothing written");
    lock(&log).set_replicated(true);
    lock(&log).set_high_watermark(3);
    manager.checkpoint().unwrap();
    assert_eq!(written().get(&TopicPartition::new("orders", 0)), Some(&3));
    manager
        .get_or_create(&TopicPartition::new("orders", 1), cfg(), 0)
        .unwrap();
    std::fs::remove_file(&file).unwrap();
    manager.checkpoint().unwrap();
    assert_eq!(written().len(), 2, "a new log is a change");
}

/// A checkpoint while nothing changed does not visit the logs (the logs count their own
/// changes), so every kind of change must be counted: each below is followed by a checkpoint
/// that must write what it changed.
#[test]
fn every_change_to_checkpointed_offsets_reaches_the_next_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let (manager, _) =
        LogManager::open(&[dir.path().to_path_buf()], |_| Some(cfg()), 0, 1).unwrap();
    let tp = TopicPartition::new("orders", 0);
    let mut config = cfg();
    config.segment_bytes = 200;
    config.retention_bytes = 1;
    let log = manager.get_or_create(&tp, config, 0).unwrap();
    let path = |name: &str| dir.path().join(name);
    let offsets = |name: &str| -> Option<i64> {
        let written = checkpoint::read_offsets(&path(name)).ok()?;
        written.get(&tp).copied()
    };
    // Each step: the change, then the file it must show in and the value it must show.
    let checkpoint_after = |what: &str, change: &dyn Fn(&mut Log), file: &str, want: i64| {
        for name in [RECOVERY_POINT_FILE, LOG_START_FILE, HIGH_WATERMARK_FILE] {
            let _ = std::fs::remove_file(path(name));
        }
        change(&mut lock(&log));
        manager.checkpoint().unwrap();
        assert_eq!(offsets(file), Some(want), "{what}");
        manager.checkpoint().unwrap();
        std::fs::remove_file(path(file)).unwrap();
        manager.checkpoint().unwrap();
        assert!(!path(file).exists(), "{what}: then nothing changed");
    };
    let append = |log: &mut Log| {
        log.append_as_leader(&checked(batch(0, 5, 1, 10)), 0, 1)
            .unwrap();
    };
    checkpoint_after("an append", &append, HIGH_WATERMARK_FILE, 5);
    checkpoint_after(
        "a flush",
        &|log| log.flush(1).unwrap(),
        RECOVERY_POINT_FILE,
        5,
    );
    for _ in 0..3 {
        append(&mut lock(&log));
    }
    manager.checkpoint().unwrap();
    let deleted = |log: &mut Log| {
        log.delete_records_before(7).unwrap();
    };
    checkpoint_after("DeleteRecords", &deleted, LOG_START_FILE, 7);
    let retention = |log: &mut Log| {
        assert!(log.apply_retention(2).unwrap() > 0);
    };
    let before_retention = lock(&log).log_start_offset();
    checkpoint_after(
        "retention",
        &retention,
        LOG_START_FILE,
        before_retention.max(15),
    );
    let replicated = |log: &mut Log| {
        log.set_replicated(true);
        log.set_high_watermark(18);
    };
    checkpoint_after(
        "a replicated high watermark",
        &replicated,
        HIGH_WATERMARK_FILE,
        18,
    );
    let truncated = |log: &mut Log| {
        log.truncate_to(17).unwrap();
    };
    checkpoint_after("a truncation", &truncated, HIGH_WATERMARK_FILE, 15);
    let reset = |log: &mut Log| log.truncate_fully_and_start_at(40).unwrap();
    checkpoint_after("a reset", &reset, LOG_START_FILE, 40);

    // A failed log leaves the checkpoints; a new log joins them.
    lock(&log).fail_for_test();
    manager.checkpoint().unwrap();
    assert!(path(LOG_START_FILE).exists());
    assert_eq!(offsets(LOG_START_FILE), None);
    let other = TopicPartition::new("orders", 1);
    manager.get_or_create(&other, cfg(), 0).unwrap();
    manager.checkpoint().unwrap();
    let written = checkpoint::read_offsets(&path(LOG_START_FILE)).unwrap();
    assert_eq!(written.get(&other), Some(&0), "a new log is a change");
}
