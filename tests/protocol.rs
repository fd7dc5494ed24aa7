//! Raw Kafka frames on a real socket: protocol edge cases and bad input. Every bad request
//! must get an error code or a closed connection, and the broker must keep serving others.

#![allow(clippy::unwrap_used)]

mod common;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use common::Broker;
use common::raw::*;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, StrBytes};
use kafka_protocol::records::{Compression, Record, TimestampType};
use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

#[test]
fn api_versions_every_version_and_unsupported_version() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    for version in 0..=5 {
        let response: ApiVersionsResponse = call(
            &mut stream,
            ApiKey::ApiVersions,
            version,
            &ApiVersionsRequest::default()
                .with_client_software_name(StrBytes::from_static_str("raw"))
                .with_client_software_version(StrBytes::from_static_str("1.0")),
        );
        assert_eq!(response.error_code, 0, "v{version}");
        let produce = response.api_keys.iter().find(|k| k.api_key == 0).unwrap();
        // From v0 as Kafka 4.4 lists it (KAFKA-18659), though v0-2 are refused.
        assert_eq!((produce.min_version, produce.max_version), (0, 13));
        let list_transactions = response
            .api_keys
            .iter()
            .find(|k| k.api_key == ApiKey::ListTransactions as i16)
            .unwrap();
        assert_eq!(
            (list_transactions.min_version, list_transactions.max_version),
            (0, 2)
        );
        // From v3 the feature levels: the Java Admin's describeFeatures and Kafka's
        // kafka-features tool read them (they were missing, found by compat/java).
        if version >= 3 {
            let finalized: Vec<_> = response
                .finalized_features
                .iter()
                .map(|f| (f.name.to_string(), f.max_version_level))
                .collect();
            assert!(
                finalized.contains(&("metadata.version".into(), 25))
                    && finalized.contains(&("group.version".into(), 1)),
                "{finalized:?}"
            );
            assert!(response.finalized_features_epoch >= 0);
            assert!(
                response
                    .supported_features
                    .iter()
                    .any(|f| f.name.as_str() == "metadata.version" && f.min_version == 7)
            );
        }
    }
    // A version newer than the broker knows: a v0 response with UNSUPPORTED_VERSION.
    // Header v2 by hand (the client library refuses to encode v99): key, version,
    // correlation id, null client id, no tagged fields; then a body the broker cannot know.
    let mut request = vec![0, 18, 0, 99, 0, 0, 0, 42, 0xff, 0xff, 0];
    request.extend_from_slice(b"future body");
    let mut framed = (request.len() as i32).to_be_bytes().to_vec();
    framed.extend(request);
    stream.write_all(&framed).unwrap();
    let mut response = read_frame(&mut stream).unwrap();
    assert_eq!(response.get_i32(), 42);
    let body = ApiVersionsResponse::decode(&mut response, 0).unwrap();
    assert_eq!(body.error_code, 35);
    assert!(body.api_keys.len() >= 10);
}

#[test]
fn bad_frames_close_only_their_connection() {
    let broker = Broker::start(&[("socket.request.max.bytes", "1048576")]);
    let metadata_v9 = frame(
        ApiKey::Metadata,
        9,
        1,
        &MetadataRequest::default().with_topics(Some(vec![])),
    );
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("negative size", (-5i32).to_be_bytes().to_vec()),
        (
            "oversized size",
            (2 * 1024 * 1024i32).to_be_bytes().to_vec(),
        ),
        (
            "too short for a header",
            [3i32.to_be_bytes().to_vec(), vec![0, 3, 0]].concat(),
        ),
        (
            "garbage",
            [
                16i32.to_be_bytes().to_vec(),
                b"\xde\xad\xbe\xef garbage!!!!".to_vec(),
            ]
            .concat(),
        ),
        (
            "unknown api key",
            frame(ApiKey::Metadata, 9, 1, &MetadataRequest::default())
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    if i == 4 {
                        0x03
                    } else if i == 5 {
                        0xE7
                    } else {
                        *b
                    }
                })
                .collect(),
        ),
        (
            "unsupported produce version",
            frame(ApiKey::Produce, 9, 1, &ProduceRequest::default())
                .iter()
                .enumerate()
                .map(|(i, b)| if i == 7 { 2 } else { *b })
                .collect(),
        ),
        (
            "unsupported metadata version",
            frame(ApiKey::Metadata, 9, 1, &MetadataRequest::default())
                .iter()
                .enumerate()
                .map(|(i, b)| if i == 7 { 99 } else { *b })
                .collect(),
        ),
        ("truncated body", {
            let mut f = metadata_v9.clone();
            let n = f.len() - 3;
            f.truncate(n);
            let size = (n - 4) as i32;
            f[..4].copy_from_slice(&size.to_be_bytes());
            f
        }),
        ("huge array length", {
            let mut f = frame(
                ApiKey::Metadata,
                4,
                1,
                &MetadataRequest::default().with_topics(Some(vec![])),
            );
            let n = f.len();
            f[n - 5..n - 1].copy_from_slice(&0x7fff_fff0i32.to_be_bytes());
            f
        }),
    ];
    for (name, bytes) in cases {
        let mut stream = connect(&broker);
        stream.write_all(&bytes).unwrap();
        assert!(
            is_closed(&mut stream),
            "{name}: connection should be closed"
        );
        api_versions_ok(&broker);
    }
    // A frame cut off mid-way by the client.
    let mut stream = connect(&broker);
    stream.write_all(&100i32.to_be_bytes()).unwrap();
    stream.write_all(&[1u8; 50]).unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(is_closed(&mut stream));
    api_versions_ok(&broker);
    let mut broker = broker;
    assert!(broker.is_running());
    let log = broker.log_text();
    assert!(
        log.contains("socket.request.max.bytes"),
        "the oversized frame is logged"
    );
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn rejected_batches_get_error_codes_and_leave_the_log_untouched() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    create_topic(&mut stream, "bad", 1, &[("max.message.bytes", "2000")]);
    let good = batch(5, 10);

    let mut crc = good.clone();
    let last = crc.len() - 1;
    crc[last] ^= 0x55;
    assert_eq!(
        produce(&mut stream, "bad", 1, crc.freeze())
            .unwrap()
            .error_code,
        2,
        "CRC mismatch is CORRUPT_MESSAGE"
    );

    let truncated = good.clone().freeze().slice(..good.len() - 4);
    assert_eq!(
        produce(&mut stream, "bad", 1, truncated)
            .unwrap()
            .error_code,
        87,
        "truncated is INVALID_RECORD: no whole batch (Kafka 4.4.0 answers the same)"
    );

    let mut magic = good.clone();
    magic[16] = 1;
    assert_eq!(
        produce(&mut stream, "bad", 1, magic.freeze())
            .unwrap()
            .error_code,
        87,
        "magic 1 is INVALID_RECORD (Kafka's ProduceRequest.validateRecords)"
    );

    let mut two = good.clone();
    two.extend_from_slice(&good);
    let response = produce(&mut stream, "bad", 1, two.freeze()).unwrap();
    assert_eq!(response.error_code, 87, "two batches is INVALID_RECORD");
    // A batch-level refusal names no record (Kafka's record_errors are for records).
    assert!(response.record_errors.is_empty());

    assert_eq!(
        produce(&mut stream, "bad", 1, batch(5, 1000).freeze())
            .unwrap()
            .error_code,
        10,
        "over max.message.bytes"
    );
    assert_eq!(
        produce(&mut stream, "nope", 1, good.clone().freeze())
            .unwrap()
            .error_code,
        3,
        "unknown topic"
    );
    assert_eq!(
        produce(&mut stream, "bad", 2, good.clone().freeze())
            .unwrap()
            .error_code,
        21,
        "acks=2"
    );
    let mut garbage = BytesMut::new();
    garbage.put_slice(&[0xAB; 80]);
    assert_eq!(
        produce(&mut stream, "bad", 1, garbage.freeze())
            .unwrap()
            .error_code,
        2,
        "garbage"
    );

    assert_eq!(
        latest_offset(&mut stream, "bad"),
        0,
        "nothing rejected reached the log"
    );
    let ok = produce(&mut stream, "bad", 1, good.clone().freeze()).unwrap();
    assert_eq!((ok.error_code, ok.base_offset), (0, 0));
    assert_eq!(latest_offset(&mut stream, "bad"), 5);
}

#[test]
fn fetch_inside_a_batch_returns_the_whole_batch() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    create_topic(&mut stream, "whole", 1, &[]);
    produce(&mut stream, "whole", 1, batch(10, 100).freeze()).unwrap();
    produce(&mut stream, "whole", -1, batch(10, 100).freeze()).unwrap();

    let data = fetch(&mut stream, "whole", 5, 1 << 20);
    let mut records = data.records.unwrap();
    assert_eq!(data.high_watermark, 20);
    assert_eq!(data.last_stable_offset, 20);
    assert_eq!(data.log_start_offset, 0);
    assert_eq!(
        &records[..8],
        &0i64.to_be_bytes(),
        "starts at the batch holding offset 5"
    );
    let sets = kafka_protocol::records::RecordBatchDecoder::decode_all(&mut records).unwrap();
    let offsets: Vec<i64> = sets
        .iter()
        .flat_map(|s| s.records.iter().map(|r| r.offset))
        .collect();
    assert_eq!(
        offsets,
        (0..20).collect::<Vec<_>>(),
        "both whole batches, every record"
    );

    // max_bytes smaller than one batch still returns that batch.
    let data = fetch(&mut stream, "whole", 12, 10);
    let records = data.records.unwrap();
    assert_eq!(&records[..8], &10i64.to_be_bytes());
    assert_eq!(records.len(), batch(10, 100).len());

    assert_eq!(
        fetch(&mut stream, "whole", 20, 1 << 20)
            .records
            .unwrap()
            .len(),
        0,
        "at the end: empty"
    );
    assert_eq!(
        fetch(&mut stream, "whole", 21, 1 << 20).error_code,
        1,
        "past the end: OFFSET_OUT_OF_RANGE"
    );
}

#[test]
fn pipelined_requests_are_answered_in_order_and_acks_zero_gets_no_response() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    create_topic(&mut stream, "pipe", 1, &[]);
    let mut burst = Vec::new();
    for correlation in 0..50 {
        if correlation % 10 == 5 {
            let request = ProduceRequest::default()
                .with_acks(0)
                .with_timeout_ms(1000)
                .with_topic_data(vec![
                    TopicProduceData::default()
                        .with_name(TopicName(StrBytes::from_static_str("pipe")))
                        .with_partition_data(vec![
                            PartitionProduceData::default()
                                .with_index(0)
                                .with_records(Some(batch(1, 10).freeze())),
                        ]),
                ]);
            burst.extend(frame(ApiKey::Produce, 9, 1000 + correlation, &request));
        } else {
            burst.extend(frame(
                ApiKey::Metadata,
                12,
                correlation,
                &MetadataRequest::default().with_topics(None),
            ));
        }
    }
    stream.write_all(&burst).unwrap();
    for correlation in (0..50).filter(|c| c % 10 != 5) {
        let mut response = read_frame(&mut stream).unwrap();
        assert_eq!(response.get_i32(), correlation);
    }
    assert_eq!(
        latest_offset(&mut stream, "pipe"),
        5,
        "the five acks=0 batches were written"
    );
}

#[test]
fn sigterm_answers_a_parked_fetch_and_exits_cleanly() {
    let mut broker = Broker::start_logging(&[], "info,sluice::replica=debug");
    let mut stream = connect(&broker);
    create_topic(&mut stream, "parked", 1, &[]);
    let request = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(60_000)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_session_epoch(-1)
        .with_topics(vec![
            FetchTopic::default()
                .with_topic(TopicName(StrBytes::from_static_str("parked")))
                .with_partitions(vec![
                    FetchPartition::default()
                        .with_partition(0)
                        .with_fetch_offset(0)
                        .with_partition_max_bytes(1 << 20),
                ]),
        ]);
    stream
        .write_all(&frame(ApiKey::Fetch, 12, 99, &request))
        .unwrap();
    // Once the fetch is parked, SIGTERM must end it at once rather than after 60 s.
    assert!(common::wait_until(Duration::from_secs(10), || broker
        .log_text()
        .contains("fetch parked")));
    let started = std::time::Instant::now();
    assert_eq!(broker.stop(), Some(0), "clean exit");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "shutdown took {:?}",
        started.elapsed()
    );
    let mut response = read_frame(&mut stream).expect("the in-flight fetch is answered");
    assert_eq!(response.get_i32(), 99);
    assert!(broker.dir().join(".kafka_cleanshutdown").exists());
}

fn describe_topic_config(stream: &mut TcpStream, topic: &str, name: &str) -> Option<String> {
    let request = DescribeConfigsRequest::default().with_resources(vec![
        describe_configs_request::DescribeConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(StrBytes::from_string(topic.into()))
            .with_configuration_keys(Some(vec![StrBytes::from_string(name.into())])),
    ]);
    let response: DescribeConfigsResponse = call(stream, ApiKey::DescribeConfigs, 4, &request);
    assert_eq!(response.results[0].error_code, 0);
    response.results[0]
        .configs
        .iter()
        .find(|c| c.name.as_str() == name)
        .and_then(|c| c.value.as_ref().map(|v| v.to_string()))
}

#[test]
fn admin_apis_by_raw_frames() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);

    // validate_only creates nothing.
    let topic = CreatableTopic::default()
        .with_name(TopicName(StrBytes::from_static_str("dry")))
        .with_num_partitions(-1)
        .with_replication_factor(-1);
    let response: CreateTopicsResponse = call(
        &mut stream,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(vec![topic])
            .with_validate_only(true),
    );
    assert_eq!(
        (
            response.topics[0].error_code,
            response.topics[0].num_partitions
        ),
        (0, 1)
    );
    let metadata: MetadataResponse = call(
        &mut stream,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    );
    assert!(
        metadata.topics.is_empty(),
        "validate_only must not create the topic"
    );

    // IncrementalAlterConfigs, then DescribeConfigs sees it.
    create_topic(&mut stream, "inc", 1, &[]);
    let config = incremental_alter_configs_request::AlterableConfig::default()
        .with_name(StrBytes::from_static_str("cleanup.policy"))
        .with_config_operation(2)
        .with_value(Some(StrBytes::from_static_str("compact")));
    let request = IncrementalAlterConfigsRequest::default().with_resources(vec![
        incremental_alter_configs_request::AlterConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(StrBytes::from_static_str("inc"))
            .with_configs(vec![config]),
    ]);
    let response: IncrementalAlterConfigsResponse =
        call(&mut stream, ApiKey::IncrementalAlterConfigs, 1, &request);
    assert_eq!(response.responses[0].error_code, 0);
    assert_eq!(
        describe_topic_config(&mut stream, "inc", "cleanup.policy").as_deref(),
        Some("delete,compact")
    );

    // Max timestamp (-3) finds the record with the largest timestamp, not the last one. The
    // topic is compacted now: every record needs a key.
    let records: Vec<Record> = [5_000i64, 9_000, 7_000]
        .iter()
        .enumerate()
        .map(|(i, ts)| {
            let key = Some(Bytes::from(format!("k{i}")));
            record(i as i64, *ts, key, Some(Bytes::from_static(b"v")))
        })
        .collect();
    let buf = encode_batch(&records, Compression::Gzip);
    assert_eq!(
        produce(&mut stream, "inc", 1, buf.freeze())
            .unwrap()
            .error_code,
        0
    );
    let request = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![
            ListOffsetsTopic::default()
                .with_name(TopicName(StrBytes::from_static_str("inc")))
                .with_partitions(vec![
                    ListOffsetsPartition::default()
                        .with_partition_index(0)
                        .with_timestamp(-3),
                    ListOffsetsPartition::default()
                        .with_partition_index(0)
                        .with_timestamp(6_000),
                ]),
        ]);
    let response: ListOffsetsResponse = call(&mut stream, ApiKey::ListOffsets, 8, &request);
    let answers: Vec<(i64, i64)> = response.topics[0]
        .partitions
        .iter()
        .map(|p| (p.offset, p.timestamp))
        .collect();
    assert_eq!(answers, vec![(1, 9_000), (1, 9_000)], "inside a gzip batch");

    // LogAppendTime: the broker stamps the batch and says so.
    create_topic(
        &mut stream,
        "lat",
        1,
        &[("message.timestamp.type", "LogAppendTime")],
    );
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let ok = produce(&mut stream, "lat", 1, batch(3, 5).freeze()).unwrap();
    assert!(ok.log_append_time_ms >= before, "{}", ok.log_append_time_ms);
    let data = fetch(&mut stream, "lat", 0, 1 << 20);
    let fetched = data.records.unwrap();
    let max_timestamp = i64::from_be_bytes(fetched[35..43].try_into().unwrap());
    assert_eq!(
        max_timestamp, ok.log_append_time_ms,
        "consumers read a LogAppendTime batch's max timestamp"
    );
    let sets =
        kafka_protocol::records::RecordBatchDecoder::decode_all(&mut fetched.clone()).unwrap();
    assert!(
        sets[0]
            .records
            .iter()
            .all(|r| r.timestamp_type == TimestampType::LogAppend),
        "CRC still valid after the patch"
    );

    // DeleteTopics by topic id (v6).
    let metadata: MetadataResponse = call(
        &mut stream,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    );
    let lat_id = metadata
        .topics
        .iter()
        .find(|t| t.name.as_ref().map(|n| n.as_str()) == Some("lat"))
        .unwrap()
        .topic_id;
    let request = DeleteTopicsRequest::default().with_topics(vec![
        delete_topics_request::DeleteTopicState::default().with_topic_id(lat_id),
    ]);
    let response: DeleteTopicsResponse = call(&mut stream, ApiKey::DeleteTopics, 6, &request);
    assert_eq!(response.responses[0].error_code, 0);
    assert_eq!(
        response.responses[0]
            .name
            .as_ref()
            .map(|n| n.to_string())
            .as_deref(),
        Some("lat")
    );
    assert!(!broker.dir().join("lat-0").exists());
    let response: DeleteTopicsResponse = call(&mut stream, ApiKey::DeleteTopics, 6, &request);
    assert_eq!(
        response.responses[0].error_code, 100,
        "UNKNOWN_TOPIC_ID the second time"
    );

    // DescribeCluster.
    let response: DescribeClusterResponse = call(
        &mut stream,
        ApiKey::DescribeCluster,
        1,
        &DescribeClusterRequest::default(),
    );
    assert_eq!(response.error_code, 0);
    assert_eq!(response.brokers.len(), 1);
    assert_eq!(response.cluster_id.len(), 22);
    assert_eq!(
        format!("{}:{}", response.brokers[0].host, response.brokers[0].port),
        broker.bootstrap
    );
}

#[test]
fn every_listener_serves_and_advertises_its_own_address() {
    let broker = Broker::start(&[(
        "listeners",
        "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
    )]);
    let listening = || -> Vec<String> {
        broker
            .log_text()
            .lines()
            .filter(|l| !l.contains("controller quorum"))
            .filter_map(|l| {
                l.split("listening on ")
                    .nth(1)
                    .and_then(|rest| rest.split_whitespace().next())
                    .map(str::to_string)
            })
            .collect()
    };
    // The harness returns at the first listener's line; the other follows.
    assert!(common::wait_until(Duration::from_secs(10), || listening()
        .len()
        >= 2));
    let addresses = listening();
    assert_eq!(
        addresses.len(),
        2,
        "PLAINTEXT and INTERNAL serve clients, CONTROLLER does not: {addresses:?}"
    );
    assert!(
        broker.log_text().contains("controller quorum listening on"),
        "the CONTROLLER listener is bound for the quorum"
    );
    for address in addresses {
        let response: MetadataResponse = common::raw_call(
            &address,
            ApiKey::Metadata,
            12,
            &MetadataRequest::default().with_topics(None),
        );
        let advertised = format!("{}:{}", response.brokers[0].host, response.brokers[0].port);
        assert_eq!(advertised, address, "each listener advertises itself");
    }
}

/// An idempotent batch: `count` records from producer `pid` at `epoch`, first sequence `seq`.
fn idempotent_batch(count: usize, pid: i64, epoch: i16, seq: i32) -> Bytes {
    let records: Vec<Record> = (0..count)
        .map(|i| Record {
            producer_id: pid,
            producer_epoch: epoch,
            sequence: seq + i as i32,
            ..record(
                i as i64,
                1_000,
                None,
                Some(Bytes::from(format!("v{}", seq + i as i32))),
            )
        })
        .collect();
    encode_batch(&records, Compression::None).freeze()
}

#[test]
fn idempotent_producer_duplicates_gaps_epochs_and_restarts() {
    let mut broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    create_topic(&mut stream, "idem", 1, &[]);
    let init: InitProducerIdResponse = call(
        &mut stream,
        ApiKey::InitProducerId,
        4,
        &InitProducerIdRequest::default()
            .with_transactional_id(None)
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1),
    );
    assert_eq!(init.error_code, 0);
    let pid = init.producer_id.0;
    let second: InitProducerIdResponse = call(
        &mut stream,
        ApiKey::InitProducerId,
        4,
        &InitProducerIdRequest::default()
            .with_transactional_id(None)
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1),
    );
    assert_ne!(
        second.producer_id.0, pid,
        "every InitProducerId gets a new id"
    );

    let first = produce(&mut stream, "idem", -1, idempotent_batch(3, pid, 0, 0)).unwrap();
    assert_eq!((first.error_code, first.base_offset), (0, 0));
    // The same request again (a retry after a lost response): acknowledged, not written twice.
    let retry = produce(&mut stream, "idem", -1, idempotent_batch(3, pid, 0, 0)).unwrap();
    assert_eq!((retry.error_code, retry.base_offset), (0, 0));
    assert_eq!(latest_offset(&mut stream, "idem"), 3);
    let gap = produce(&mut stream, "idem", -1, idempotent_batch(1, pid, 0, 5)).unwrap();
    assert_eq!(gap.error_code, 45, "OUT_OF_ORDER_SEQUENCE_NUMBER");
    let next = produce(&mut stream, "idem", -1, idempotent_batch(2, pid, 0, 3)).unwrap();
    assert_eq!((next.error_code, next.base_offset), (0, 3));
    let bumped = produce(&mut stream, "idem", -1, idempotent_batch(1, pid, 1, 0)).unwrap();
    assert_eq!(bumped.error_code, 0, "a new epoch starts at sequence 0");
    let zombie = produce(&mut stream, "idem", -1, idempotent_batch(1, pid, 0, 5)).unwrap();
    assert_eq!(
        zombie.error_code, 47,
        "INVALID_PRODUCER_EPOCH for the old epoch"
    );
    assert_eq!(latest_offset(&mut stream, "idem"), 6);

    // Duplicate detection survives a clean restart (snapshot) and a kill -9 (replay).
    let dir = broker.dir().to_path_buf();
    assert_eq!(broker.stop(), Some(0));
    let mut restarted = Broker::start_in(&dir, &[]);
    let mut stream = connect(&restarted);
    let after_clean = produce(&mut stream, "idem", -1, idempotent_batch(1, pid, 1, 0)).unwrap();
    assert_eq!(
        (after_clean.error_code, after_clean.base_offset),
        (0, 5),
        "recognised as a duplicate after a clean restart"
    );
    produce(&mut stream, "idem", -1, idempotent_batch(2, pid, 1, 1)).unwrap();
    restarted.kill9();
    let crashed = Broker::start_in(&dir, &[]);
    let mut stream = connect(&crashed);
    let after_crash = produce(&mut stream, "idem", -1, idempotent_batch(2, pid, 1, 1)).unwrap();
    assert_eq!(
        (after_crash.error_code, after_crash.base_offset),
        (0, 6),
        "and after kill -9"
    );
    assert_eq!(latest_offset(&mut stream, "idem"), 8);
    drop(broker);
}

#[test]
fn metadata_by_topic_id_ignores_the_empty_name_java_clients_send() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    create_topic(&mut stream, "by-id", 2, &[]);
    let by_name: MetadataResponse = call(
        &mut stream,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(Some(vec![
            metadata_request::MetadataRequestTopic::default()
                .with_name(Some(TopicName(StrBytes::from_static_str("by-id")))),
        ])),
    );
    let id = by_name.topics[0].topic_id;
    let unknown = uuid::Uuid::from_u128(7);
    // The Java client's topic-id lookup (Admin.describeTopics by id): the name left at its
    // default, the empty string.
    let empty = || Some(TopicName(StrBytes::from_static_str("")));
    let response: MetadataResponse = call(
        &mut stream,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(Some(vec![
            metadata_request::MetadataRequestTopic::default()
                .with_topic_id(id)
                .with_name(empty()),
            metadata_request::MetadataRequestTopic::default()
                .with_topic_id(unknown)
                .with_name(empty()),
        ])),
    );
    let found = &response.topics[0];
    assert_eq!(
        (
            found.error_code,
            found.name.as_ref().map(|n| n.as_str()),
            found.topic_id
        ),
        (0, Some("by-id"), id)
    );
    assert_eq!(found.partitions.len(), 2);
    let missing = &response.topics[1];
    assert_eq!(
        (
            missing.error_code,
            missing.name.as_ref().map(|n| n.as_str()),
            missing.topic_id
        ),
        (100, None, unknown), // UNKNOWN_TOPIC_ID
    );
}
