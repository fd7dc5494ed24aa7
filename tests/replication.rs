//! Replication across three broker processes: acks=all to a replication-factor-3 topic with
//! min.insync.replicas=2 while the partition leader is killed, the killed broker catching up
//! when it returns, and acks=all refused when too few replicas are left.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Cluster, raw_call, wait_until};
use kafka_protocol::messages::{ApiKey, MetadataRequest, MetadataResponse};
use rdkafka::Message;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// (leader, isr) of partition 0 of `topic` as `bootstrap` reports it.
fn partition_state(bootstrap: &str, topic: &str) -> Option<(i32, Vec<i32>)> {
    let response: MetadataResponse = raw_call(
        bootstrap,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    );
    let topic = response
        .topics
        .into_iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == topic))?;
    let p = topic.partitions.into_iter().next()?;
    Some((
        p.leader_id.0,
        p.isr_nodes.into_iter().map(|b| b.0).collect(),
    ))
}

async fn create_replicated(bootstrap: &str, name: &str) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let topic = NewTopic::new(name, 1, TopicReplication::Fixed(3)).set("min.insync.replicas", "2");
    let results = admin
        .create_topics([&topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(results[0].is_ok(), "{:?}", results[0]);
}

fn read_all(bootstrap: &str, topic: &str, expected: usize) -> BTreeSet<String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("check-{topic}"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    // Assigned by hand: no group coordinator is involved (this test is about the data).
    let mut assignment = rdkafka::TopicPartitionList::new();
    assignment
        .add_partition_offset(topic, 0, rdkafka::Offset::Beginning)
        .unwrap();
    consumer.assign(&assignment).unwrap();
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < expected && Instant::now() < deadline {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(200)) {
            seen.insert(
                String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned(),
            );
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acks_all_loses_nothing_when_the_leader_is_killed() {
    let mut cluster = Cluster::start(3, &[]);
    let bootstrap = cluster.bootstrap();
    create_replicated(&bootstrap, "durable").await;
    assert!(wait_until(Duration::from_secs(30), || {
        partition_state(&cluster.nodes[0].bootstrap, "durable")
            .is_some_and(|(_, isr)| isr.len() == 3)
    }));

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("acks", "all")
        .set("enable.idempotence", "false")
        .set("linger.ms", "0")
        .set("message.timeout.ms", "60000")
        .set("retry.backoff.ms", "100")
        .create()
        .unwrap();
    let acked: Arc<Mutex<Vec<(usize, Instant)>>> = Arc::default();
    let total = 400;
    let mut killed_at = None;
    for i in 0..total {
        if i == total / 2 {
            let (leader, _) = partition_state(&cluster.nodes[0].bootstrap, "durable").unwrap();
            cluster.nodes[(leader - 1) as usize].kill9();
            killed_at = Some((Instant::now(), (leader - 1) as usize));
        }
        let payload = format!("m{i:05}");
        let delivery = producer
            .send(
                FutureRecord::<(), _>::to("durable").payload(&payload),
                Duration::from_secs(60),
            )
            .await;
        if delivery.is_ok() {
            acked.lock().unwrap().push((i, Instant::now()));
        }
    }
    let (killed_at, killed) = killed_at.unwrap();
    let acked = acked.lock().unwrap().clone();
    let first_after = acked
        .iter()
        .find(|(_, at)| *at > killed_at)
        .map(|(_, at)| *at - killed_at)
        .unwrap();
    eprintln!(
        "leader killed: first acknowledgement after it in {first_after:?}; {} of {total} acknowledged",
        acked.len()
    );
    let survivor = (killed + 1) % 3;
    let seen = read_all(&cluster.nodes[survivor].bootstrap, "durable", acked.len());
    let missing: Vec<usize> = acked
        .iter()
        .map(|(i, _)| *i)
        .filter(|i| !seen.contains(&format!("m{i:05}")))
        .collect();
    assert!(missing.is_empty(), "acknowledged but lost: {missing:?}");

    // The killed broker returns, catches up and is back in the ISR.
    cluster.restart(killed);
    assert!(
        wait_until(Duration::from_secs(60), || {
            partition_state(&cluster.nodes[survivor].bootstrap, "durable")
                .is_some_and(|(_, isr)| isr.len() == 3)
        }),
        "the restarted broker rejoined the ISR"
    );
}
