//! Unit tests of the group coordinator: offsets expiring, groups and offsets replayed.
use super::*;
use crate::config::{BrokerConfig, LogConfig};
use crate::replica::Partition;
use crate::storage::log::Log;

/// A coordinator over real `__consumer_offsets` logs (2 partitions) and one topic "t".
fn coordinator(dir: &std::path::Path, retention_ms: i64) -> Arc<GroupCoordinator> {
    let broker = BrokerConfig::with_overrides(&[]).unwrap();
    let log_config = LogConfig::resolve(&broker.topic_defaults, &Default::default());
    let replicas = Arc::new(ReplicaManager::new());
    let topics = Arc::new(MetadataCache::default());
    for (topic, partitions) in [(OFFSETS_TOPIC, 2), ("t", 1)] {
        for p in 0..partitions {
            let tp = TopicPartition::new(topic, p);
            let log =
                Log::create(&dir.join(tp.dir_name()), tp.clone(), log_config.clone(), 0).unwrap();
            replicas.add(Partition::leader_for_test(
                tp,
                uuid::Uuid::new_v4(),
                Arc::new(Mutex::new(log)),
            ));
        }
    }
    let config = CoordinatorConfig {
        group: GroupConfig::default(),
        consumer: ConsumerGroupConfig::default(),
        streams: super::streams::StreamsGroupConfig::default(),
        offsets_topic_partitions: 2,
        offsets_retention_ms: retention_ms,
        offsets_retention_check_interval_ms: 1000,
    };
    GroupCoordinator::new(config, replicas, topics)
}

fn commit(c: &GroupCoordinator, group: &str, offset: i64, expire: Option<i64>) {
    let offsets = [OffsetCommit {
        topic: "t".into(),
        partition: 0,
        offset,
        leader_epoch: -1,
        metadata: String::new(),
    }];
    let results = c
        .commit_offsets(group, &CommitBy::ADMIN, expire, &offsets)
        .unwrap();
    assert_eq!(results, vec![Ok(())]);
}

fn committed(c: &GroupCoordinator, group: &str) -> Option<i64> {
    c.fetch_offsets(group, None, None)
        .unwrap()
        .first()
        .and_then(|(_, _, o)| o.as_ref().map(|o| o.offset))
}

#[test]
fn offsets_of_empty_groups_expire_after_the_retention() {
    let dir = tempfile::tempdir().unwrap();
    let c = coordinator(dir.path(), 60_000);
    let now = now_ms();
    commit(&c, "simple", 5, None);
    commit(&c, "explicit", 7, Some(now + 1_000));
    assert_eq!(c.expire_offsets(now), 0, "nothing is old enough yet");
    assert_eq!(c.expire_offsets(now + 2_000), 1, "an explicit expiry wins");
    assert_eq!(committed(&c, "explicit"), None);
    assert_eq!(committed(&c, "simple"), Some(5));
    assert_eq!(
        c.expire_offsets(now + 61_000),
        1,
        "counted from the commit for a group without group management"
    );
    assert_eq!(committed(&c, "simple"), None);
    assert!(
        c.list_groups().is_empty(),
        "empty groups without offsets are removed"
    );
}

#[test]
fn offsets_and_groups_are_replayed_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let c = coordinator(dir.path(), 60_000);
    commit(&c, "g1", 11, None);
    commit(&c, "g1", 12, None);
    commit(&c, "g2", 3, None);
    c.delete_group("g2").unwrap();
    // A second coordinator over the same partitions sees the same state.
    let replay = GroupCoordinator::new(c.config.clone(), c.replicas.clone(), c.topics.clone());
    for p in 0..2 {
        let partition = c
            .replicas
            .get(&TopicPartition::new(OFFSETS_TOPIC, p))
            .unwrap();
        replay.load_shared(p, partition.log()).unwrap();
    }
    replay.finish_loading();
    assert_eq!(committed(&replay, "g1"), Some(12));
    assert_eq!(
        committed(&replay, "g2"),
        None,
        "deletion tombstones are replayed too"
    );
}

/// Groups are loaded, and their members watched, by the metadata publisher's own thread too
/// (a coordinator elected after startup): the timers go to the coordinator's runtime, not to
/// a runtime of the calling thread (it has none; `tokio::spawn` panicked there and took the
/// publisher down).
#[test]
fn members_are_watched_from_threads_outside_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let c = coordinator(dir.path(), 60_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    runtime.block_on(async { c.start(shutdown.clone()) });
    let from_thread = c.clone();
    std::thread::spawn(move || {
        from_thread.watch_member("g".into(), "m".into());
        from_thread.watch_consumer_member("g".into(), "m".into());
        from_thread.arm_join_timer("g".into(), 1, Instant::now());
    })
    .join()
    .expect("no panic outside the runtime");
    shutdown.cancel();
}

/// `group.consumer.assignment.interval.ms` is a dynamic broker config: the coordinator takes
/// a new value for every group, and a group's own `consumer.assignment.interval.ms` comes
/// first (Kafka's `consumerGroupAssignmentIntervalMs`).
#[test]
fn the_assignment_interval_is_the_broker_s_in_effect_unless_the_group_sets_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let c = coordinator(dir.path(), 60_000);
    assert_eq!(c.consumer_config("g").assignment_interval_ms, 1_000);
    c.set_consumer_assignment_interval(250);
    assert_eq!(c.consumer_config("g").assignment_interval_ms, 250);
    let mut image = crate::metadata::image::MetadataImage::default();
    image.group_configs.insert(
        "g".into(),
        [(
            "consumer.assignment.interval.ms".to_string(),
            "0".to_string(),
        )]
        .into(),
    );
    c.topics.publish(Arc::new(image));
    assert_eq!(c.consumer_config("g").assignment_interval_ms, 0);
    assert_eq!(c.consumer_config("other").assignment_interval_ms, 250);
}
