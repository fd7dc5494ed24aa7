//! A dynamic controller quorum (KIP-853): a controller that starts alone, two more formatted
//! with `--no-initial-controllers` and added live with `kafka-metadata-quorum add-controller`,
//! then the first one, the leader, removed with `remove-controller`. Brokers serve a producer
//! with `acks=all` throughout, and every record acknowledged is read back at the end.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Cluster, wait_until};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, CreateTopicsRequest, CreateTopicsResponse,
    TopicName,
};
use kafka_protocol::protocol::StrBytes;
use rdkafka::Message;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const CLUSTER_ID: &str = "ZHluYW1pYy1xdW9ydW0tMQ";

/// Runs the binary under Kafka's script name; (exit code, stdout, stderr).
fn metadata_quorum(args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("kafka-metadata-quorum");
    std::os::unix::fs::symlink(common::broker_binary(), &script).unwrap();
    let output = std::process::Command::new(&script)
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `describe --status` through a controller: (leader id, voter ids).
fn status(controller: &str) -> Option<(i32, Vec<i32>)> {
    let (code, out, _) =
        metadata_quorum(&["--bootstrap-controller", controller, "describe", "--status"]);
    if code != 0 {
        return None;
    }
    let field = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .map(|l| l[name.len()..].trim().to_string())
    };
    let leader = field("LeaderId:")?.parse().ok()?;
    let voters = field("CurrentVoters:")?
        .split("\"id\": ")
        .skip(1)
        .filter_map(|s| s.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .collect();
    Some((leader, voters))
}

/// CreateTopics of `name` with 2 partitions on both brokers; its error code.
fn create_topic(bootstrap: &str, name: &str) -> i16 {
    let request = CreateTopicsRequest::default()
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_string(name.to_string())))
                .with_num_partitions(2)
                .with_replication_factor(2),
        ])
        .with_timeout_ms(30_000);
    let first = bootstrap.split(',').next().unwrap_or_default();
    let response: CreateTopicsResponse = common::raw_call(first, ApiKey::CreateTopics, 7, &request);
    response.topics[0].error_code
}

/// The finalized `kraft.version` a broker's ApiVersions v3 reports.
fn kraft_version(bootstrap: &str) -> Option<i16> {
    let request = ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("sluice-test"))
        .with_client_software_version(StrBytes::from_static_str("1"));
    let first = bootstrap.split(',').next().unwrap_or_default();
    let response: ApiVersionsResponse = common::raw_call(first, ApiKey::ApiVersions, 3, &request);
    let supported = response
        .supported_features
        .iter()
        .find(|f| f.name.as_str() == "kraft.version")
        .map(|f| (f.min_version, f.max_version));
    assert_eq!(supported, Some((0, 1)));
    response
        .finalized_features
        .iter()
        .find(|f| f.name.as_str() == "kraft.version")
        .map(|f| f.max_version_level)
}

fn directory_id(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("meta.properties"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("directory.id=").map(str::to_string))
        .unwrap()
}

#[test]
fn controllers_are_added_and_the_leader_removed_while_the_cluster_serves() {
    let mut cluster = Cluster::start_dynamic(3, 2, CLUSTER_ID);
    let bootstrap = cluster.bootstrap();
    let controller = |i: usize| format!("127.0.0.1:{}", cluster.controller_ports()[i]);
    let (first, second) = (controller(0), controller(1));
    assert_eq!(status(&first), Some((1, vec![1])), "node 1 starts alone");
    assert_eq!(
        kraft_version(&bootstrap),
        Some(1),
        "a dynamic quorum runs kraft.version 1"
    );

    assert_eq!(create_topic(&bootstrap, "steady"), 0);
    // A producer with acks=all runs through every change.
    let acked: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let producing = {
        let (acked, stop, bootstrap) = (acked.clone(), stop.clone(), bootstrap.clone());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async move {
                let producer: FutureProducer = ClientConfig::new()
                    .set("bootstrap.servers", &bootstrap)
                    .set("acks", "all")
                    .set("enable.idempotence", "true")
                    .set("message.timeout.ms", "60000")
                    .create()
                    .unwrap();
                let mut next = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    let key = format!("k{next:06}");
                    next += 1;
                    let record = FutureRecord::to("steady").key(&key).payload("v");
                    if producer.send(record, Duration::from_secs(60)).await.is_ok() {
                        acked.lock().unwrap().insert(key);
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            });
        })
    };
    let config = cluster.properties_file(1);
    let (code, out, err) = metadata_quorum(&[
        "--bootstrap-controller",
        &first,
        "add-controller",
        "--command-config",
        config.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "add-controller 2: {out}{err}");
    assert!(
        out.starts_with("Added controller 2 with directory id ")
            && out
                .trim_end()
                .ends_with(&format!("and endpoints: CONTROLLER://{second}")),
        "{out}"
    );
    let config = cluster.properties_file(2);
    let (code, out, err) = metadata_quorum(&[
        "--bootstrap-server",
        &bootstrap,
        "add-controller",
        "--command-config",
        config.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "add-controller 3 through a broker: {out}{err}");
    assert_eq!(status(&first), Some((1, vec![1, 2, 3])));
    // Adding one that votes already is Kafka's DuplicateVoterException.
    let (code, _, err) = metadata_quorum(&[
        "--bootstrap-controller",
        &first,
        "add-controller",
        "--command-config",
        config.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("DuplicateVoterException"), "{err}");

    // The leader removes itself; one of the others takes over.
    let first_directory = directory_id(cluster.nodes[0].dir());
    let (code, out, err) = metadata_quorum(&[
        "--bootstrap-controller",
        &second,
        "remove-controller",
        "--controller-id",
        "1",
        "--controller-directory-id",
        &first_directory,
    ]);
    assert_eq!(code, 0, "remove-controller 1: {out}{err}");
    assert_eq!(
        out.trim(),
        format!("Removed KRaft controller 1 with directory id {first_directory}")
    );
    assert!(
        wait_until(Duration::from_secs(30), || {
            status(&second)
                .is_some_and(|(leader, voters)| [2, 3].contains(&leader) && voters == vec![2, 3])
        }),
        "a new leader among the remaining voters: {:?}",
        status(&second)
    );
    cluster.nodes[0].stop();
    // The quorum without node 1 still takes changes: a topic is created and used.
    assert_eq!(create_topic(&bootstrap, "after-removal"), 0);
    let acked_before = acked.lock().unwrap().len();
    assert!(
        wait_until(Duration::from_secs(30), || acked.lock().unwrap().len()
            > acked_before + 20),
        "the producer goes on after the removal"
    );
    stop.store(true, Ordering::SeqCst);
    producing.join().unwrap();
    let acked = acked.lock().unwrap().clone();

    // Everything produced is there, once (idempotent producer, acks=all).
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", "dynamic-quorum-check")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    // Assigned, not subscribed: two brokers cannot hold `__consumer_offsets` (RF 3).
    let mut partitions = rdkafka::TopicPartitionList::new();
    for partition in 0..2 {
        partitions
            .add_partition_offset("steady", partition, rdkafka::Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&partitions).unwrap();
    let mut seen = BTreeSet::new();
    let mut duplicates = 0;
    wait_until(Duration::from_secs(60), || {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(200)) {
            let key = String::from_utf8_lossy(message.key().unwrap_or_default()).into_owned();
            if !seen.insert(key) {
                duplicates += 1;
            }
        }
        acked.is_subset(&seen)
    });
    let lost: Vec<&String> = acked.difference(&seen).collect();
    assert!(lost.is_empty(), "acknowledged records lost: {lost:?}");
    assert_eq!(duplicates, 0);
}

/// `add-controller` of node `i` (0-based) through the controller at `through`.
fn add_controller(cluster: &Cluster, i: usize, through: &str) {
    let config = cluster.properties_file(i);
    let (code, out, err) = metadata_quorum(&[
        "--bootstrap-controller",
        through,
        "add-controller",
        "--command-config",
        config.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "add-controller {}: {out}{err}", i + 1);
}

/// A voter restarted with another controller listener has the quorum record it
/// (UpdateRaftVoter): DescribeQuorum names the new endpoint, and the quorum, which needs that
/// voter once another is down, goes on taking changes.
#[test]
fn a_controller_restarted_on_another_port_is_recorded_there() {
    let mut cluster = Cluster::start_dynamic(3, 2, CLUSTER_ID);
    let bootstrap = cluster.bootstrap();
    let first = format!("127.0.0.1:{}", cluster.controller_ports()[0]);
    add_controller(&cluster, 1, &first);
    add_controller(&cluster, 2, &first);
    assert_eq!(status(&first), Some((1, vec![1, 2, 3])));

    cluster.nodes[2].stop();
    let moved = cluster.move_controller_listener(2);
    cluster.restart(2);
    let describe =
        || metadata_quorum(&["--bootstrap-controller", &first, "describe", "--status"]).1;
    let new_endpoint = format!("CONTROLLER://127.0.0.1:{moved}");
    assert!(
        wait_until(Duration::from_secs(30), || describe()
            .contains(&new_endpoint)),
        "voter 3 recorded at {new_endpoint}: {}",
        describe()
    );
    assert!(
        cluster.nodes[2]
            .log_text()
            .contains("the controller quorum records this controller's new listener")
    );

    // With node 2 down, the quorum needs node 3 at its new address.
    cluster.nodes[1].stop();
    assert_eq!(create_topic(&bootstrap, "after-the-move"), 0);
}
