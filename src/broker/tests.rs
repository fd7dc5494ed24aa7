//! Unit tests of the node: startup, imports, topics and strays across restarts.
use super::*;
use crate::metadata::TopicStore;
use crate::storage::log::Log;
use crate::storage::manager::lock;
use crate::types::TopicPartition;

fn config(dir: &std::path::Path) -> BrokerConfig {
    BrokerConfig::with_overrides(&[("log.dirs", &dir.display().to_string())]).unwrap()
}

fn endpoint() -> Vec<Endpoint> {
    vec![Endpoint {
        name: "PLAINTEXT".into(),
        host: "127.0.0.1".into(),
        port: 9092,
        security_protocol: 0,
    }]
}

fn end_offset(broker: &Broker, topic: &str, p: i32) -> i64 {
    let partition = broker
        .replicas()
        .get(&TopicPartition::new(topic, p))
        .unwrap();
    lock(partition.log()).log_end_offset()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_nodes_earlier_topics_are_imported_with_their_data() {
    let dir = tempfile::tempdir().unwrap();
    // The layout an earlier version left: topic files, logs, the producer id block.
    let store = TopicStore::open(dir.path()).unwrap();
    let id = Uuid::new_v4();
    let mut configs = BTreeMap::new();
    configs.insert("retention.ms".to_string(), "3600000".to_string());
    store
        .put(TopicInfo {
            name: Arc::from("old"),
            id,
            partitions: 2,
            configs,
        })
        .unwrap();
    let defaults = config(dir.path());
    let tp = TopicPartition::new("old", 1);
    let mut log = Log::create(
        &dir.path().join(tp.dir_name()),
        tp,
        LogConfig::resolve(&defaults.topic_defaults, &BTreeMap::new()),
        0,
    )
    .unwrap();
    log.append_as_leader(
        &crate::record::test_support::checked(crate::record::test_support::batch(0, 5, 1, 10)),
        0,
        1,
    )
    .unwrap();
    log.close(1).unwrap();
    drop(log);
    std::fs::write(
        dir.path().join(".sluice-metadata").join("producer-ids"),
        "next.block.start=7000\n",
    )
    .unwrap();

    let broker = Broker::open(config(dir.path())).unwrap();
    broker.start(endpoint()).unwrap();
    let topic = broker.topic("old").expect("imported");
    assert_eq!((topic.id, topic.partitions), (id, 2));
    assert_eq!(topic.configs["retention.ms"], "3600000");
    assert_eq!(end_offset(&broker, "old", 1), 5, "its data is served");
    assert_eq!(
        broker
            .partition_state(&TopicPartition::new("old", 1))
            .leader,
        Some(1)
    );
    assert!(broker.allocate_producer_id().await.unwrap() >= 7000);
    assert!(
        dir.path()
            .join(".sluice-metadata")
            .join("topics.imported")
            .is_dir()
    );
    broker.shutdown().unwrap();
    drop(broker);

    // Restarted: the topic comes from the metadata log, not from the files again.
    let broker = Broker::open(config(dir.path())).unwrap();
    broker.start(endpoint()).unwrap();
    assert_eq!(broker.topic("old").unwrap().id, id);
    assert_eq!(end_offset(&broker, "old", 1), 5);
    let state = broker.partition_state(&TopicPartition::new("old", 0));
    assert_eq!(state.leader, Some(1));
    assert!(
        state.leader_epoch > 0,
        "a new leader epoch after the restart"
    );
    broker.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_id_zero_is_a_node_like_any_other() {
    // Kafka's usual broker.id=0 (raft-rs reserves Raft id 0 for "nobody").
    let dir = tempfile::tempdir().unwrap();
    let config = BrokerConfig::with_overrides(&[
        ("log.dirs", &dir.path().display().to_string()),
        ("node.id", "0"),
    ])
    .unwrap();
    let broker = Broker::open(config).unwrap();
    broker.start(endpoint()).unwrap();
    let topic = NewTopic {
        name: "zero".into(),
        partitions: 1,
        replication_factor: 1,
        assignments: Vec::new(),
        configs: BTreeMap::new(),
    };
    broker.create_topic(topic, false).await.unwrap();
    let state = broker.partition_state(&TopicPartition::new("zero", 0));
    assert_eq!(state.leader, Some(0));
    assert_eq!(broker.controller_id(), 0);
    broker.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topics_created_deleted_and_stray_logs_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::open(config(dir.path())).unwrap();
    broker.start(endpoint()).unwrap();
    let new_topic = |name: &str| NewTopic {
        name: name.into(),
        partitions: 3,
        replication_factor: -1,
        assignments: Vec::new(),
        configs: BTreeMap::new(),
    };
    broker.create_topic(new_topic("kept"), false).await.unwrap();
    broker.create_topic(new_topic("gone"), false).await.unwrap();
    assert!(
        broker
            .replicas()
            .get(&TopicPartition::new("gone", 2))
            .is_ok()
    );
    broker.delete_topic("gone").await.unwrap();
    assert!(
        broker
            .replicas()
            .get(&TopicPartition::new("gone", 2))
            .is_err()
    );
    assert!(!dir.path().join("gone-2").exists());
    let partition = broker
        .replicas()
        .get(&TopicPartition::new("kept", 0))
        .unwrap();
    partition
        .append(
            &crate::record::test_support::checked(crate::record::test_support::batch(0, 3, 1, 10)),
            1,
        )
        .unwrap();
    broker.shutdown().unwrap();
    drop(broker);
    // A log the metadata knows nothing of (a crash between files and metadata).
    std::fs::create_dir_all(dir.path().join("stray-0")).unwrap();

    let broker = Broker::open(config(dir.path())).unwrap();
    broker.start(endpoint()).unwrap();
    assert_eq!(end_offset(&broker, "kept", 0), 3);
    assert!(broker.topic("gone").is_none());
    assert!(!dir.path().join("stray-0").exists(), "stray log removed");
    assert!(matches!(
        broker.create_topic(new_topic("kept"), false).await,
        Err(Error::TopicAlreadyExists(_))
    ));
    broker.shutdown().unwrap();
}
