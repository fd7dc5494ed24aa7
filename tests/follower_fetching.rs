//! Fetching from the closest replica (KIP-392): three nodes in three racks with Kafka's
//! `RackAwareReplicaSelector`. The leader sends a consumer whose `client.rack` is a
//! follower's rack to that follower (`preferred_read_replica` in Fetch v11+), and librdkafka
//! then reads everything, once, from the follower: its bytes out count there, not on the
//! leader.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Cluster, raw_call, wait_until};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{
    ApiKey, BrokerId, CreateTopicsRequest, CreateTopicsResponse, FetchRequest, FetchResponse,
    MetadataRequest, MetadataResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use rdkafka::Message;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const TOPIC: &str = "racked";

fn partition_state(bootstrap: &str) -> (i32, Vec<i32>) {
    let metadata: MetadataResponse = raw_call(
        bootstrap,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    );
    let topic = metadata
        .topics
        .into_iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == TOPIC))
        .unwrap();
    let partition = &topic.partitions[0];
    (
        partition.leader_id.0,
        partition.isr_nodes.iter().map(|b| b.0).collect(),
    )
}

fn fetch_v11(bootstrap: &str, rack: &str) -> FetchResponse {
    let request = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_session_epoch(-1)
        .with_rack_id(StrBytes::from_string(rack.to_string()))
        .with_topics(vec![
            FetchTopic::default()
                .with_topic(TopicName(StrBytes::from_static_str(TOPIC)))
                .with_partitions(vec![
                    FetchPartition::default()
                        .with_partition(0)
                        .with_current_leader_epoch(-1)
                        .with_fetch_offset(0)
                        .with_log_start_offset(-1)
                        .with_partition_max_bytes(1 << 20),
                ]),
        ]);
    raw_call(bootstrap, ApiKey::Fetch, 11, &request)
}

fn bytes_out(cluster: &Cluster, node: usize) -> f64 {
    cluster.nodes[node]
        .scrape_metrics()
        .find(&format!(
            r#"kafka_server_brokertopicmetrics_bytesout_total{{topic="{TOPIC}"}}"#
        ))
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_with_client_rack_reads_everything_once_from_the_follower_in_its_rack() {
    let cluster = Cluster::start_racked(
        3,
        &[
            (
                "replica.selector.class",
                "org.apache.kafka.common.replica.RackAwareReplicaSelector",
            ),
            ("http.listener", "127.0.0.1:0"),
        ],
    );
    let create = CreateTopicsRequest::default()
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_static_str(TOPIC)))
                .with_num_partitions(1)
                .with_replication_factor(3),
        ])
        .with_timeout_ms(30_000);
    let created: CreateTopicsResponse = raw_call(
        &cluster.nodes[0].bootstrap,
        ApiKey::CreateTopics,
        7,
        &create,
    );
    assert_eq!(created.topics[0].error_code, 0);

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("acks", "all")
        .set("linger.ms", "5")
        .create()
        .unwrap();
    let count = 500;
    for i in 0..count {
        let payload = format!("record-{i}");
        producer
            .send(
                FutureRecord::<(), _>::to(TOPIC).payload(&payload),
                Duration::from_secs(30),
            )
            .await
            .unwrap();
    }
    // Every follower in sync (and holding all 500) before the leader may send anyone there.
    let mut state = (0, Vec::new());
    assert!(wait_until(Duration::from_secs(30), || {
        state = partition_state(&cluster.nodes[0].bootstrap);
        state.1.len() == 3
    }));
    let leader = state.0;
    let follower = (1..=3).find(|id| *id != leader).unwrap();
    let follower_rack = format!("rack-{follower}");
    let (leader_node, follower_node) = ((leader - 1) as usize, (follower - 1) as usize);

    // The leader answers a consumer from the follower's rack with where to read.
    let mut preferred = -1;
    assert!(wait_until(Duration::from_secs(20), || {
        let answer = fetch_v11(&cluster.nodes[leader_node].bootstrap, &follower_rack);
        let partition = &answer.responses[0].partitions[0];
        preferred = partition.preferred_read_replica.0;
        partition.error_code == 0 && preferred == follower
    }));
    assert!(
        fetch_v11(&cluster.nodes[leader_node].bootstrap, "rack-elsewhere").responses[0].partitions
            [0]
        .preferred_read_replica
        .0 == -1,
        "no replica in that rack: the leader serves"
    );
    let leader_bytes_before = bytes_out(&cluster, leader_node);

    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("group.id", "rack-readers")
        .set("client.rack", &follower_rack)
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&[TOPIC]).unwrap();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < count && Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.unwrap();
            let payload = String::from_utf8_lossy(message.payload().unwrap()).into_owned();
            *seen.entry(payload).or_default() += 1;
        }
    }
    assert_eq!(seen.len(), count, "every record read");
    assert!(seen.values().all(|n| *n == 1), "each record once");
    // Read from the follower: its consumer bytes out are the records; the leader's did not
    // grow by them.
    let from_follower = bytes_out(&cluster, follower_node);
    assert!(from_follower > 0.0, "the follower served the consumer");
    let from_leader = bytes_out(&cluster, leader_node) - leader_bytes_before;
    assert!(
        from_leader < from_follower / 10.0,
        "leader {from_leader} bytes, follower {from_follower}"
    );
}
