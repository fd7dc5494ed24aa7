//! Share groups (KIP-932) over raw frames on a real broker: records delivered to one member at
//! a time, acknowledgements (accept, release, reject), redelivery with a growing delivery
//! count up to the limit, record locks that time out, share sessions and their epochs, the
//! offsets admin APIs, group configs, group-type clashes, the state surviving a restart, and
//! the share coordinator's state RPCs.
//! (franz-go's own share-group tests run in `compat/franz-go-integration`.)

#![allow(clippy::unwrap_used)]

mod common;

use common::raw::{self, call, connect};
use common::{Broker, wait_until};
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::share_fetch_request::{
    AcknowledgementBatch, FetchPartition, FetchTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeSet;
use std::net::TcpStream;
use std::time::{Duration, Instant};
use uuid::Uuid;

const ACCEPT: i8 = 1;
const RELEASE: i8 = 2;
const REJECT: i8 = 3;

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// One share consumer speaking the protocol by hand.
struct Member {
    stream: TcpStream,
    group: String,
    id: String,
    session_epoch: i32,
    topic_id: Uuid,
}

/// What one ShareFetch gave: acquired (first, last, delivery count) ranges and the error codes.
#[derive(Debug, Default)]
struct Fetched {
    acquired: Vec<(i64, i64, i16)>,
    error_code: i16,
    partition_error: i16,
    ack_error: i16,
}

impl Fetched {
    fn offsets(&self) -> BTreeSet<i64> {
        self.acquired.iter().flat_map(|(f, l, _)| *f..=*l).collect()
    }
}

impl Member {
    fn join(broker: &Broker, group: &str, id: &str, topic: &str, topic_id: Uuid) -> Self {
        let mut stream = connect(broker);
        let request = ShareGroupHeartbeatRequest::default()
            .with_group_id(GroupId(s(group)))
            .with_member_id(s(id))
            .with_member_epoch(0)
            .with_subscribed_topic_names(Some(vec![TopicName(s(topic))]));
        let mut response = ShareGroupHeartbeatResponse::default();
        // The first use creates and loads the coordinator's topics: clients retry meanwhile.
        assert!(wait_until(Duration::from_secs(10), || {
            response = call(&mut stream, ApiKey::ShareGroupHeartbeat, 1, &request);
            !matches!(response.error_code, 14 | 15)
        }));
        assert_eq!(response.error_code, 0, "{:?}", response.error_message);
        assert!(response.member_epoch > 0);
        Self {
            stream,
            group: group.into(),
            id: id.into(),
            session_epoch: 0,
            topic_id,
        }
    }

    fn fetch(&mut self, acks: &[(i64, i64, Vec<i8>)], max_records: i32, wait_ms: i32) -> Fetched {
        let partition = FetchPartition::default()
            .with_partition_index(0)
            .with_acknowledgement_batches(
                acks.iter()
                    .map(|(f, l, t)| {
                        AcknowledgementBatch::default()
                            .with_first_offset(*f)
                            .with_last_offset(*l)
                            .with_acknowledge_types(t.clone())
                    })
                    .collect(),
            );
        let request = ShareFetchRequest::default()
            .with_group_id(Some(GroupId(s(&self.group))))
            .with_member_id(Some(s(&self.id)))
            .with_share_session_epoch(self.session_epoch)
            .with_max_wait_ms(wait_ms)
            .with_max_records(max_records)
            .with_max_bytes(1 << 20)
            .with_topics(vec![
                FetchTopic::default()
                    .with_topic_id(self.topic_id)
                    .with_partitions(vec![partition]),
            ]);
        let response: ShareFetchResponse = call(&mut self.stream, ApiKey::ShareFetch, 2, &request);
        let mut fetched = Fetched {
            error_code: response.error_code,
            ..Default::default()
        };
        if response.error_code == 0 {
            self.session_epoch += 1;
        }
        for topic in response.responses {
            for p in topic.partitions {
                fetched.partition_error = p.error_code;
                fetched.ack_error = p.acknowledge_error_code;
                if !p.acquired_records.is_empty() {
                    assert!(
                        p.records.as_ref().is_some_and(|r| !r.is_empty()),
                        "records with the ranges"
                    );
                }
                fetched.acquired.extend(
                    p.acquired_records
                        .iter()
                        .map(|r| (r.first_offset, r.last_offset, r.delivery_count)),
                );
            }
        }
        fetched
    }

    /// ShareAcknowledge: acknowledgements alone, no records acquired; the partition's code.
    fn acknowledge(&mut self, acks: &[(i64, i64, Vec<i8>)]) -> i16 {
        let request = ShareAcknowledgeRequest::default()
            .with_group_id(Some(GroupId(s(&self.group))))
            .with_member_id(Some(s(&self.id)))
            .with_share_session_epoch(self.session_epoch)
            .with_topics(vec![
                share_acknowledge_request::AcknowledgeTopic::default()
                    .with_topic_id(self.topic_id)
                    .with_partitions(vec![
                        share_acknowledge_request::AcknowledgePartition::default()
                            .with_partition_index(0)
                            .with_acknowledgement_batches(
                                acks.iter()
                                    .map(|(f, l, t)| {
                                        share_acknowledge_request::AcknowledgementBatch::default()
                                            .with_first_offset(*f)
                                            .with_last_offset(*l)
                                            .with_acknowledge_types(t.clone())
                                    })
                                    .collect(),
                            ),
                    ]),
            ]);
        let response: ShareAcknowledgeResponse =
            call(&mut self.stream, ApiKey::ShareAcknowledge, 2, &request);
        assert_eq!(response.error_code, 0, "{:?}", response.error_message);
        self.session_epoch += 1;
        response.responses[0].partitions[0].error_code
    }

    /// Fetches until `count` records are acquired (or `patience` runs out).
    fn acquire(&mut self, count: usize, patience: Duration) -> Fetched {
        let deadline = Instant::now() + patience;
        let mut all = Fetched::default();
        while all.offsets().len() < count && Instant::now() < deadline {
            let got = self.fetch(&[], 500, 200);
            assert_eq!(got.error_code, 0);
            all.acquired.extend(got.acquired);
        }
        all
    }
}

fn produce_records(stream: &mut TcpStream, topic: &str, count: usize) {
    let produced = raw::produce(stream, topic, -1, raw::batch(count, 10).freeze()).unwrap();
    assert_eq!(produced.error_code, 0);
}

fn topic_id(stream: &mut TcpStream, topic: &str) -> Uuid {
    let response: MetadataResponse = call(
        stream,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(Some(vec![
            metadata_request::MetadataRequestTopic::default().with_name(Some(TopicName(s(topic)))),
        ])),
    );
    response.topics[0].topic_id
}

fn set_group_config(stream: &mut TcpStream, group: &str, name: &str, value: &str) -> i16 {
    let response: IncrementalAlterConfigsResponse = call(
        stream,
        ApiKey::IncrementalAlterConfigs,
        1,
        &IncrementalAlterConfigsRequest::default().with_resources(vec![
            AlterConfigsResource::default()
                .with_resource_type(32)
                .with_resource_name(s(group))
                .with_configs(vec![
                    AlterableConfig::default()
                        .with_name(s(name))
                        .with_config_operation(0)
                        .with_value(Some(s(value))),
                ]),
        ]),
    );
    response.responses[0].error_code
}

fn start_offset(broker: &Broker, group: &str, topic: &str) -> i64 {
    let mut stream = connect(broker);
    let response: DescribeShareGroupOffsetsResponse = call(
        &mut stream,
        ApiKey::DescribeShareGroupOffsets,
        0,
        &DescribeShareGroupOffsetsRequest::default().with_groups(vec![
            describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup::default()
                .with_group_id(GroupId(s(group)))
                .with_topics(Some(vec![
                    describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestTopic::default()
                        .with_topic_name(TopicName(s(topic)))
                        .with_partitions(vec![0]),
                ])),
        ]),
    );
    let group = &response.groups[0];
    assert_eq!(group.error_code, 0, "{:?}", group.error_message);
    group.topics[0].partitions[0].start_offset
}

/// A broker with short share locks allowed, a topic of `count` records, and its id.
fn setup(overrides: &[(&str, &str)], topic: &str, count: usize) -> (Broker, Uuid) {
    let mut all = vec![("group.share.min.record.lock.duration.ms", "1000")];
    all.extend_from_slice(overrides);
    let broker = Broker::start(&all);
    let mut stream = connect(&broker);
    raw::create_topic(&mut stream, topic, 1, &[]);
    produce_records(&mut stream, topic, count);
    let id = topic_id(&mut stream, topic);
    (broker, id)
}

#[test]
fn records_go_to_one_member_at_a_time_and_come_back_when_released() {
    let (broker, id) = setup(&[("http.listener", "127.0.0.1:0")], "shared", 10);
    let mut admin = connect(&broker);
    assert_eq!(
        set_group_config(&mut admin, "g", "share.auto.offset.reset", "earliest"),
        0
    );
    let mut a = Member::join(&broker, "g", "a", "shared", id);
    let mut b = Member::join(&broker, "g", "b", "shared", id);

    let first = a.acquire(10, Duration::from_secs(10));
    assert_eq!(first.offsets(), (0..10).collect(), "{first:?}");
    assert!(first.acquired.iter().all(|r| r.2 == 1), "first delivery");
    // Everything is locked to a: b waits and gets nothing.
    let none = b.fetch(&[], 500, 300);
    assert!(none.acquired.is_empty(), "{none:?}");

    // a accepts 0..=4, releases 5..=7 and rejects 8..=9 (ShareAcknowledge: a ShareFetch
    // carrying them would acquire the released records for a again at once).
    let acked = a.acknowledge(&[
        (0, 4, vec![ACCEPT]),
        (5, 7, vec![RELEASE]),
        (8, 9, vec![REJECT]),
    ]);
    assert_eq!(acked, 0);
    let again = b.acquire(3, Duration::from_secs(10));
    assert_eq!(
        again.offsets(),
        (5..8).collect(),
        "only the released come back: {again:?}"
    );
    assert!(
        again.acquired.iter().all(|r| r.2 == 2),
        "second delivery: {again:?}"
    );

    // Acknowledging what another member holds, or twice, is INVALID_RECORD_STATE.
    assert_eq!(a.acknowledge(&[(5, 5, vec![ACCEPT])]), 121);
    let done = b.fetch(&[(5, 7, vec![ACCEPT])], 500, 0);
    assert_eq!(done.ack_error, 0);
    assert_eq!(start_offset(&broker, "g", "shared"), 10);

    // The JSON API (and the console over it) shows the group as ShareGroupDescribe and
    // DescribeShareGroupOffsets do.
    let get = |path: &str| -> serde_json::Value {
        let url = format!("http://{}/api/v1{path}", broker.http_address());
        let text = ureq::get(&url)
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let list = get("/share-groups");
    assert_eq!(list[0]["group_id"], "g", "{list}");
    assert_eq!(
        (list[0]["members"].as_i64(), list[0]["lag"].as_i64()),
        (Some(2), Some(0)),
        "{list}"
    );
    let group = get("/share-groups/g");
    assert_eq!(group["members"].as_array().unwrap().len(), 2, "{group}");
    assert_eq!(
        group["members"][0]["subscribed_topics"][0], "shared",
        "{group}"
    );
    assert_eq!(group["offsets"][0]["topic"], "shared", "{group}");
    assert_eq!(group["offsets"][0]["start_offset"], 10, "{group}");
    let status = match ureq::delete(format!(
        "http://{}/api/v1/share-groups/g",
        broker.http_address()
    ))
    .call()
    {
        Ok(r) => r.status().as_u16(),
        Err(ureq::Error::StatusCode(code)) => code,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(status, 409, "a group with members is not deleted");
}

#[test]
fn a_lock_that_times_out_and_the_delivery_limit() {
    let (broker, id) = setup(&[("group.share.delivery.count.limit", "2")], "locks", 3);
    let mut admin = connect(&broker);
    assert_eq!(
        set_group_config(&mut admin, "g", "share.auto.offset.reset", "earliest"),
        0
    );
    assert_eq!(
        set_group_config(&mut admin, "g", "share.record.lock.duration.ms", "1000"),
        0
    );
    let mut a = Member::join(&broker, "g", "a", "locks", id);
    let mut b = Member::join(&broker, "g", "b", "locks", id);
    assert_eq!(a.acquire(3, Duration::from_secs(10)).offsets().len(), 3);
    // a never acknowledges: after the lock's second, b is given them (its fetch waits).
    let started = Instant::now();
    let again = b.acquire(3, Duration::from_secs(10));
    assert_eq!(again.offsets(), (0..3).collect());
    assert!(again.acquired.iter().all(|r| r.2 == 2));
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    // The second delivery was the last: released, they are archived, not delivered again.
    assert_eq!(b.acknowledge(&[(0, 2, vec![RELEASE])]), 0);
    let nothing = a.fetch(&[], 500, 1500);
    assert!(nothing.acquired.is_empty(), "{nothing:?}");
    assert_eq!(start_offset(&broker, "g", "locks"), 3);
}

#[test]
fn share_sessions_refuse_wrong_epochs_and_early_acknowledgements() {
    let (broker, id) = setup(&[], "sessions", 2);
    let mut a = Member::join(&broker, "g", "a", "sessions", id);
    a.session_epoch = 0;
    let with_acks = a.fetch(&[(0, 0, vec![ACCEPT])], 500, 0);
    assert_eq!(
        with_acks.error_code, 42,
        "acknowledgements cannot open a session"
    );
    a.session_epoch = 5;
    assert_eq!(a.fetch(&[], 500, 0).error_code, 122, "no session yet");
    a.session_epoch = 0;
    assert_eq!(a.fetch(&[], 500, 0).error_code, 0);
    a.session_epoch = 7;
    assert_eq!(
        a.fetch(&[], 500, 0).error_code,
        123,
        "not the session's epoch"
    );
    // ShareAcknowledge with epoch 0 is refused too.
    let response: ShareAcknowledgeResponse = call(
        &mut a.stream,
        ApiKey::ShareAcknowledge,
        2,
        &ShareAcknowledgeRequest::default()
            .with_group_id(Some(GroupId(s("g"))))
            .with_member_id(Some(s("a")))
            .with_share_session_epoch(0),
    );
    assert_eq!(response.error_code, 123);
    // A malformed acknowledgement batch is INVALID_REQUEST on its partition.
    a.session_epoch = 1;
    let bad = a.fetch(&[(3, 1, vec![ACCEPT])], 500, 0);
    assert_eq!((bad.error_code, bad.ack_error), (0, 42));
}

#[test]
fn state_and_configs_survive_a_restart_and_unacknowledged_records_come_back() {
    let (mut broker, id) = setup(&[], "durable", 6);
    let mut admin = connect(&broker);
    assert_eq!(
        set_group_config(&mut admin, "g", "share.auto.offset.reset", "earliest"),
        0
    );
    let mut a = Member::join(&broker, "g", "a", "durable", id);
    assert_eq!(a.acquire(6, Duration::from_secs(10)).offsets().len(), 6);
    assert_eq!(a.fetch(&[(0, 3, vec![ACCEPT])], 500, 0).ack_error, 0);
    drop(a);
    broker.kill9();
    let dir = broker.dir().to_path_buf();
    let broker = Broker::start_in(&dir, &[("group.share.min.record.lock.duration.ms", "1000")]);
    assert_eq!(start_offset(&broker, "g", "durable"), 4);
    // The group itself was kept (in `__consumer_offsets`): listed, with its share-partition.
    let mut admin = connect(&broker);
    let listed: ListGroupsResponse = call(
        &mut admin,
        ApiKey::ListGroups,
        5,
        &ListGroupsRequest::default().with_types_filter(vec![s("share")]),
    );
    assert!(
        listed.groups.iter().any(|g| g.group_id.as_str() == "g"),
        "{listed:?}"
    );
    let all: DescribeShareGroupOffsetsResponse = call(
        &mut admin,
        ApiKey::DescribeShareGroupOffsets,
        0,
        &DescribeShareGroupOffsetsRequest::default().with_groups(vec![
            describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup::default()
                .with_group_id(GroupId(s("g")))
                .with_topics(None),
        ]),
    );
    assert_eq!(all.groups[0].error_code, 0);
    assert_eq!(all.groups[0].topics[0].partitions[0].start_offset, 4);
    let mut b = Member::join(&broker, "g", "b", "durable", id);
    let again = b.acquire(2, Duration::from_secs(10));
    assert_eq!(
        again.offsets(),
        (4..6).collect(),
        "acknowledged records are not redelivered"
    );
    // The group config was kept in the cluster metadata.
    let mut stream = connect(&broker);
    let response: DescribeConfigsResponse = call(
        &mut stream,
        ApiKey::DescribeConfigs,
        4,
        &DescribeConfigsRequest::default().with_resources(vec![
            describe_configs_request::DescribeConfigsResource::default()
                .with_resource_type(32)
                .with_resource_name(s("g"))
                .with_configuration_keys(Some(vec![s("share.auto.offset.reset")])),
        ]),
    );
    let config = &response.results[0].configs[0];
    assert_eq!(config.value.as_deref(), Some("earliest"));
    assert_eq!(config.config_source, 8, "DYNAMIC_GROUP_CONFIG");
}

#[test]
fn offsets_admin_and_group_configs_are_checked_as_kafka_does() {
    let (broker, id) = setup(&[], "admin", 20);
    let mut stream = connect(&broker);
    assert_eq!(
        set_group_config(&mut stream, "g", "share.auto.offset.reset", "sometime"),
        40
    );
    assert_eq!(
        set_group_config(&mut stream, "g", "share.record.lock.duration.ms", "999999"),
        40
    );
    assert_eq!(set_group_config(&mut stream, "g", "retention.ms", "1"), 40);

    let alter = |stream: &mut TcpStream, offset: i64| -> AlterShareGroupOffsetsResponse {
        call(
            stream,
            ApiKey::AlterShareGroupOffsets,
            0,
            &AlterShareGroupOffsetsRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_topics(vec![
                    alter_share_group_offsets_request::AlterShareGroupOffsetsRequestTopic::default()
                        .with_topic_name(TopicName(s("admin")))
                        .with_partitions(vec![
                            alter_share_group_offsets_request::AlterShareGroupOffsetsRequestPartition::default()
                                .with_partition_index(0)
                                .with_start_offset(offset),
                        ]),
                ]),
        )
    };
    let mut altered = alter(&mut stream, 15);
    // The first use creates and loads the coordinator's topics: clients retry meanwhile.
    assert!(wait_until(Duration::from_secs(10), || {
        altered = alter(&mut stream, 15);
        !matches!(altered.error_code, 14 | 15)
    }));
    assert_eq!(altered.error_code, 0);
    assert_eq!(altered.responses[0].partitions[0].error_code, 0);
    assert_eq!(start_offset(&broker, "g", "admin"), 15);
    let mut a = Member::join(&broker, "g", "a", "admin", id);
    assert_eq!(
        a.acquire(5, Duration::from_secs(10)).offsets(),
        (15..20).collect()
    );
    // With a member in the group, its offsets cannot be altered.
    assert_eq!(alter(&mut stream, 0).error_code, 68, "NON_EMPTY_GROUP");

    // The group id is a share group's now: a classic member cannot join it, and a share
    // member cannot join a classic group.
    let joined: JoinGroupResponse = call(
        &mut stream,
        ApiKey::JoinGroup,
        9,
        &JoinGroupRequest::default()
            .with_group_id(GroupId(s("g")))
            .with_member_id(s("m"))
            .with_session_timeout_ms(10_000)
            .with_rebalance_timeout_ms(10_000)
            .with_protocol_type(s("consumer"))
            .with_protocols(vec![
                join_group_request::JoinGroupRequestProtocol::default().with_name(s("range")),
            ]),
    );
    assert_eq!(joined.error_code, 23, "INCONSISTENT_GROUP_PROTOCOL");

    // ListGroups shows it as a share group; DeleteGroups refuses it while it has a member.
    let listed: ListGroupsResponse = call(
        &mut stream,
        ApiKey::ListGroups,
        5,
        &ListGroupsRequest::default().with_types_filter(vec![s("share")]),
    );
    assert_eq!(listed.groups.len(), 1);
    assert_eq!(listed.groups[0].group_type.as_str(), "share");
    let leave: ShareGroupHeartbeatResponse = call(
        &mut a.stream,
        ApiKey::ShareGroupHeartbeat,
        1,
        &ShareGroupHeartbeatRequest::default()
            .with_group_id(GroupId(s("g")))
            .with_member_id(s("a"))
            .with_member_epoch(-1),
    );
    assert_eq!((leave.error_code, leave.member_epoch), (0, -1));
    let deleted: DeleteGroupsResponse = call(
        &mut stream,
        ApiKey::DeleteGroups,
        2,
        &DeleteGroupsRequest::default().with_groups_names(vec![GroupId(s("g"))]),
    );
    assert_eq!(deleted.results[0].error_code, 0);
    assert!(wait_until(Duration::from_secs(5), || {
        let listed: ListGroupsResponse = call(
            &mut stream,
            ApiKey::ListGroups,
            5,
            &ListGroupsRequest::default().with_types_filter(vec![s("share")]),
        );
        listed.groups.is_empty()
    }));
}

/// A full disk: an acknowledgement whose state cannot be written is answered
/// KAFKA_STORAGE_ERROR and changes nothing (the records stay acquired by the member), and the
/// same acknowledgement succeeds once space is freed — without a restart.
#[test]
fn an_acknowledgement_on_a_full_disk_is_refused_and_changes_nothing() {
    use kafka_protocol::records::Compression;
    const KAFKA_STORAGE_ERROR: i16 = 56;
    let disk = common::Tmpfs::mount(64);
    let data = disk.path().join("data");
    let broker = Broker::start_in(&data, &[("log.segment.bytes", "8388608")]);
    let mut stream = connect(&broker);
    raw::create_topic(&mut stream, "work", 1, &[]);
    raw::create_topic(&mut stream, "filler", 1, &[]);
    produce_records(&mut stream, "work", 5);
    let id = topic_id(&mut stream, "work");
    assert_eq!(
        set_group_config(&mut stream, "g", "share.auto.offset.reset", "earliest"),
        0
    );
    let mut a = Member::join(&broker, "g", "a", "work", id);
    assert_eq!(a.acquire(5, Duration::from_secs(10)).offsets().len(), 5);
    let big = raw::encode_batch(
        &[raw::record(
            0,
            1_000,
            None,
            Some(bytes::Bytes::from(vec![7u8; 512 * 1024])),
        )],
        Compression::None,
    )
    .freeze();
    let mut full = false;
    for _ in 0..300 {
        let response = raw::produce(&mut stream, "filler", 1, big.clone()).unwrap();
        if response.error_code == KAFKA_STORAGE_ERROR {
            full = true;
            break;
        }
        assert_eq!(response.error_code, 0);
    }
    assert!(full, "64 MiB never filled up");
    assert_eq!(a.acknowledge(&[(0, 4, vec![ACCEPT])]), KAFKA_STORAGE_ERROR);
    assert_eq!(
        start_offset(&broker, "g", "work"),
        0,
        "nothing acknowledged"
    );
    let response: DeleteTopicsResponse = call(
        &mut stream,
        ApiKey::DeleteTopics,
        4,
        &DeleteTopicsRequest::default()
            .with_topic_names(vec![TopicName(s("filler"))])
            .with_timeout_ms(30_000),
    );
    assert_eq!(response.responses[0].error_code, 0);
    let mut code = -1;
    assert!(
        wait_until(Duration::from_secs(20), || {
            code = a.acknowledge(&[(0, 4, vec![ACCEPT])]);
            code != KAFKA_STORAGE_ERROR
        }),
        "acknowledgements did not resume once the space was freed"
    );
    assert_eq!(code, 0, "the records were still the member's");
    assert_eq!(start_offset(&broker, "g", "work"), 5);
}

/// `share.isolation.level`: a read_committed share group is never given records of an aborted
/// transaction (they and the markers are archived), a read_uncommitted one is.
#[test]
fn read_committed_share_groups_skip_aborted_transactions() {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    raw::create_topic(&mut stream, "txn", 1, &[]);
    let id = topic_id(&mut stream, "txn");
    let producer: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("transactional.id", "share-txn")
        .create()
        .unwrap();
    let timeout = Duration::from_secs(30);
    producer.init_transactions(timeout).unwrap();
    let send = |values: &[&str]| {
        for value in values {
            producer
                .send(BaseRecord::<(), _>::to("txn").payload(*value).partition(0))
                .unwrap();
        }
        producer.flush(timeout).unwrap();
    };
    producer.begin_transaction().unwrap();
    send(&["a0", "a1", "a2"]);
    producer.abort_transaction(timeout).unwrap();
    producer.begin_transaction().unwrap();
    send(&["c0", "c1"]);
    producer.commit_transaction(timeout).unwrap();
    // Offsets: 0..=2 aborted, 3 the abort marker, 4..=5 committed, 6 the commit marker.
    for (group, level) in [
        ("committed", "read_committed"),
        ("uncommitted", "read_uncommitted"),
    ] {
        assert_eq!(
            set_group_config(&mut stream, group, "share.auto.offset.reset", "earliest"),
            0
        );
        assert_eq!(
            set_group_config(&mut stream, group, "share.isolation.level", level),
            0
        );
    }
    let mut committed = Member::join(&broker, "committed", "a", "txn", id);
    let got = committed.acquire(2, Duration::from_secs(10));
    assert_eq!(got.offsets(), BTreeSet::from([4, 5]), "{got:?}");
    assert!(committed.fetch(&[], 500, 300).acquired.is_empty());
    assert_eq!(committed.acknowledge(&[(4, 5, vec![ACCEPT])]), 0);
    assert_eq!(
        start_offset(&broker, "committed", "txn"),
        7,
        "aborted records and markers archived"
    );
    let mut uncommitted = Member::join(&broker, "uncommitted", "b", "txn", id);
    let got = uncommitted.acquire(5, Duration::from_secs(10));
    assert_eq!(got.offsets(), BTreeSet::from([0, 1, 2, 4, 5]), "{got:?}");
}

/// The share coordinator's state RPCs (83–87), as another broker would send them: a write or
/// read of an older leader epoch is fenced, a write of an older state epoch after an
/// Initialize is fenced, a summary reads what was written, a deleted state reads as none.
#[test]
fn the_state_rpcs_fence_older_epochs() {
    const FENCED_LEADER_EPOCH: i16 = 74;
    const FENCED_STATE_EPOCH: i16 = 124;
    let (broker, id) = setup(&[], "fenced", 3);
    // The first share-group request creates `__share_group_state`.
    let _member = Member::join(&broker, "g", "a", "fenced", id);
    let mut stream = connect(&broker);
    let write = |stream: &mut TcpStream, state_epoch: i32, leader_epoch: i32, start: i64| -> i16 {
        let response: WriteShareGroupStateResponse = call(
            stream,
            ApiKey::WriteShareGroupState,
            0,
            &WriteShareGroupStateRequest::default()
                .with_group_id(s("g"))
                .with_topics(vec![
                    write_share_group_state_request::WriteStateData::default()
                        .with_topic_id(id)
                        .with_partitions(vec![
                            write_share_group_state_request::PartitionData::default()
                                .with_partition(0)
                                .with_state_epoch(state_epoch)
                                .with_leader_epoch(leader_epoch)
                                .with_start_offset(start)
                                .with_state_batches(vec![
                                    write_share_group_state_request::StateBatch::default()
                                        .with_first_offset(start)
                                        .with_last_offset(start)
                                        .with_delivery_state(2)
                                        .with_delivery_count(1),
                                ]),
                        ]),
                ]),
        );
        response.results[0].partitions[0].error_code
    };
    let read = |stream: &mut TcpStream, leader_epoch: i32| -> (i16, i64, usize) {
        let response: ReadShareGroupStateResponse = call(
            stream,
            ApiKey::ReadShareGroupState,
            0,
            &ReadShareGroupStateRequest::default()
                .with_group_id(s("g"))
                .with_topics(vec![
                    read_share_group_state_request::ReadStateData::default()
                        .with_topic_id(id)
                        .with_partitions(vec![
                            read_share_group_state_request::PartitionData::default()
                                .with_partition(0)
                                .with_leader_epoch(leader_epoch),
                        ]),
                ]),
        );
        let p = &response.results[0].partitions[0];
        (p.error_code, p.start_offset, p.state_batches.len())
    };
    let summary = |stream: &mut TcpStream| -> (i16, i64, i32) {
        let response: ReadShareGroupStateSummaryResponse = call(
            stream,
            ApiKey::ReadShareGroupStateSummary,
            0,
            &ReadShareGroupStateSummaryRequest::default()
                .with_group_id(s("g"))
                .with_topics(vec![
                    read_share_group_state_summary_request::ReadStateSummaryData::default()
                        .with_topic_id(id)
                        .with_partitions(vec![
                            read_share_group_state_summary_request::PartitionData::default()
                                .with_partition(0)
                                .with_leader_epoch(-1),
                        ]),
                ]),
        );
        let p = &response.results[0].partitions[0];
        (p.error_code, p.start_offset, p.state_epoch)
    };
    // The coordinator's partition of `__share_group_state` may still be loading
    // (COORDINATOR_LOAD_IN_PROGRESS, retriable: a share-partition leader retries it too).
    const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
    let mut first_write = COORDINATOR_LOAD_IN_PROGRESS;
    assert!(wait_until(Duration::from_secs(10), || {
        first_write = write(&mut stream, 0, 5, 1);
        first_write != COORDINATOR_LOAD_IN_PROGRESS
    }));
    assert_eq!(first_write, 0);
    assert_eq!(read(&mut stream, 5), (0, 1, 1));
    assert_eq!(
        write(&mut stream, 0, 4, 2),
        FENCED_LEADER_EPOCH,
        "an older leader"
    );
    assert_eq!(read(&mut stream, 4).0, FENCED_LEADER_EPOCH);
    // A newer leader's read fences the one before it.
    assert_eq!(read(&mut stream, 6).0, 0);
    assert_eq!(write(&mut stream, 0, 5, 2), FENCED_LEADER_EPOCH);
    let initialized: InitializeShareGroupStateResponse = call(
        &mut stream,
        ApiKey::InitializeShareGroupState,
        0,
        &InitializeShareGroupStateRequest::default()
            .with_group_id(s("g"))
            .with_topics(vec![
                initialize_share_group_state_request::InitializeStateData::default()
                    .with_topic_id(id)
                    .with_partitions(vec![
                        initialize_share_group_state_request::PartitionData::default()
                            .with_partition(0)
                            .with_state_epoch(1)
                            .with_start_offset(2),
                    ]),
            ]),
    );
    assert_eq!(initialized.results[0].partitions[0].error_code, 0);
    assert_eq!(summary(&mut stream), (0, 2, 1));
    assert_eq!(
        write(&mut stream, 0, 6, 3),
        FENCED_STATE_EPOCH,
        "state before the reset"
    );
    assert_eq!(write(&mut stream, 1, 6, 3), 0);
    assert_eq!(summary(&mut stream), (0, 3, 1));
    let deleted: DeleteShareGroupStateResponse = call(
        &mut stream,
        ApiKey::DeleteShareGroupState,
        0,
        &DeleteShareGroupStateRequest::default()
            .with_group_id(s("g"))
            .with_topics(vec![
                delete_share_group_state_request::DeleteStateData::default()
                    .with_topic_id(id)
                    .with_partitions(vec![
                        delete_share_group_state_request::PartitionData::default()
                            .with_partition(0),
                    ]),
            ]),
    );
    assert_eq!(deleted.results[0].partitions[0].error_code, 0);
    assert_eq!(summary(&mut stream), (0, -1, 0));
}
