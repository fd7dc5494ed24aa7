//! What one request may cost the broker in memory. A request's frame is bounded by
//! `socket.request.max.bytes`, but an element can decode to dozens of times its encoding and
//! be answered with more: a Fetch naming 1,000,000 partitions (16 MB on the wire) took the
//! broker to ~900 MiB. Now a request's decoded arrays may take at most a quarter of
//! `socket.request.max.bytes` (beyond, the connection is closed with one log line), and
//! answering the largest requests that fit costs at most 4 × `socket.request.max.bytes`.
//! Each case runs on its own broker, so each peak is its own.

#![allow(clippy::unwrap_used)]

mod common;

use common::Broker;
use common::raw::*;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use std::io::Write;
use std::time::Duration;

/// `socket.request.max.bytes`'s default, which the brokers here keep.
const SOCKET_REQUEST_MAX_BYTES: u64 = 100 * 1024 * 1024;
/// What a request may cost in all, its frame included (the README's bad-input table).
const REQUEST_COST_BOUND: u64 = 4 * SOCKET_REQUEST_MAX_BYTES;
/// The partitions of the topic the requests name; mentions cycle over them.
const PARTITIONS: i32 = 4;

fn wide() -> TopicName {
    TopicName(StrBytes::from_static_str("wide"))
}

/// A request naming `n` partitions (or topics, for Metadata), as its frame.
fn request(api: ApiKey, n: i32) -> Vec<u8> {
    use kafka_protocol::messages::{
        delete_records_request as dr, fetch_request as f, list_offsets_request as lo,
        offset_commit_request as oc,
    };
    match api {
        ApiKey::Fetch => frame(
            ApiKey::Fetch,
            4,
            1,
            &FetchRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_max_wait_ms(100)
                .with_min_bytes(1)
                .with_max_bytes(1 << 20)
                .with_topics(vec![
                    f::FetchTopic::default().with_topic(wide()).with_partitions(
                        (0..n)
                            .map(|i| {
                                f::FetchPartition::default()
                                    .with_partition(i % PARTITIONS)
                                    .with_partition_max_bytes(1024)
                            })
                            .collect(),
                    ),
                ]),
        ),
        ApiKey::Metadata => frame(
            ApiKey::Metadata,
            1,
            1,
            &MetadataRequest::default().with_topics(Some(
                (0..n)
                    .map(|i| {
                        metadata_request::MetadataRequestTopic::default().with_name(Some(
                            TopicName(StrBytes::from_string(format!("absent-{i}"))),
                        ))
                    })
                    .collect(),
            )),
        ),
        ApiKey::ListOffsets => frame(
            ApiKey::ListOffsets,
            1,
            1,
            &ListOffsetsRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(vec![
                    lo::ListOffsetsTopic::default()
                        .with_name(wide())
                        .with_partitions(
                            (0..n)
                                .map(|i| {
                                    lo::ListOffsetsPartition::default()
                                        .with_partition_index(i % PARTITIONS)
                                        .with_timestamp(-1)
                                })
                                .collect(),
                        ),
                ]),
        ),
        ApiKey::OffsetCommit => frame(
            ApiKey::OffsetCommit,
            2,
            1,
            &OffsetCommitRequest::default()
                .with_group_id(GroupId(StrBytes::from_static_str("g")))
                .with_generation_id_or_member_epoch(-1)
                .with_retention_time_ms(-1)
                .with_topics(vec![
                    oc::OffsetCommitRequestTopic::default()
                        .with_name(wide())
                        .with_partitions(
                            (0..n)
                                .map(|i| {
                                    oc::OffsetCommitRequestPartition::default()
                                        .with_partition_index(i % PARTITIONS)
                                })
                                .collect(),
                        ),
                ]),
        ),
        ApiKey::DeleteRecords => frame(
            ApiKey::DeleteRecords,
            0,
            1,
            &DeleteRecordsRequest::default()
                .with_timeout_ms(5_000)
                .with_topics(vec![
                    dr::DeleteRecordsTopic::default()
                        .with_name(wide())
                        .with_partitions(
                            (0..n)
                                .map(|i| {
                                    dr::DeleteRecordsPartition::default()
                                        .with_partition_index(i % PARTITIONS)
                                })
                                .collect(),
                        ),
                ]),
        ),
        other => panic!("no request built for {other:?}"),
    }
}

/// The broker's peak resident memory so far (`VmHWM`), in bytes.
fn peak_rss(broker: &Broker) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", broker.pid())).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// Sends `frame` and reads the answer: `Some(size)`, or `None` when the broker closed the
/// connection instead.
fn send(broker: &Broker, frame: &[u8]) -> Option<usize> {
    let mut stream = connect(broker);
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    stream.write_all(frame).unwrap();
    read_frame(&mut stream).map(|body| body.len())
}

/// For each API: a request naming 1,000,000 partitions (topics, for Metadata) is refused
/// before it is decoded into memory, one naming as many as fit in the decode budget is
/// answered, and neither takes the broker past `REQUEST_COST_BOUND` above where it started.
/// The broker serves others afterwards.
#[test]
fn a_request_naming_a_million_partitions_costs_a_bounded_memory() {
    // The most elements each request may name within the budget (25 MiB decoded), by the
    // decoded size of one (80, 72, 48, 72 and 40 bytes), with a margin for the rest.
    let cases = [
        (ApiKey::Fetch, 300_000),
        (ApiKey::Metadata, 330_000),
        (ApiKey::ListOffsets, 500_000),
        (ApiKey::OffsetCommit, 330_000),
        (ApiKey::DeleteRecords, 600_000),
    ];
    for (api, fitting) in cases {
        let mut broker = Broker::start(&[("auto.create.topics.enable", "false")]);
        let mut stream = connect(&broker);
        create_topic(&mut stream, "wide", PARTITIONS, &[]);
        let started = peak_rss(&broker);

        let refused = request(api, 1_000_000);
        assert!(refused.len() as u64 <= SOCKET_REQUEST_MAX_BYTES);
        assert_eq!(
            send(&broker, &refused),
            None,
            "{api:?} naming 1,000,000 was answered"
        );
        let after_refused = peak_rss(&broker) - started;
        assert!(
            after_refused < SOCKET_REQUEST_MAX_BYTES / 2,
            "{api:?} naming 1,000,000 took {} MiB before it was refused",
            after_refused >> 20
        );

        let answered = send(&broker, &request(api, fitting));
        assert!(answered.is_some(), "{api:?} naming {fitting} was refused");
        let cost = peak_rss(&broker) - started;
        eprintln!(
            "{api:?}: 1,000,000 refused at +{} MiB; {fitting} answered ({} bytes) at +{} MiB",
            after_refused >> 20,
            answered.unwrap_or(0),
            cost >> 20
        );
        assert!(
            cost <= REQUEST_COST_BOUND,
            "{api:?} naming {fitting} took the broker {} MiB above its start",
            cost >> 20
        );
        api_versions_ok(&broker);
        assert_eq!(broker.stop(), Some(0));
        assert!(
            broker
                .log_text()
                .contains("the decoded request would take more"),
            "the refusal was not logged"
        );
    }
}

/// A Fetch naming 1,000,000 partitions (the most an array may hold) took 42 s: a partition
/// named many times registered the fetch's waiter once per mention, each time scanning the
/// list (quadratic; 60 s in a release build of b1a30df for four partitions named 250,000
/// times each). Such a fetch is now refused by the decode budget; the most that fits, four
/// partitions named 75,000 times each, is answered, every mention, promptly, and the broker
/// serves others meanwhile.
#[test]
fn a_fetch_naming_a_partition_many_times_is_answered_promptly() {
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use std::time::{Duration, Instant};
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    create_topic(&mut stream, "wide", 4, &[]);
    let partitions: Vec<FetchPartition> = (0..300_000)
        .map(|i| {
            FetchPartition::default()
                .with_partition(i % 4)
                .with_fetch_offset(0)
                .with_partition_max_bytes(1024)
        })
        .collect();
    let request = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(100)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_session_epoch(-1)
        .with_topics(vec![
            FetchTopic::default()
                .with_topic(TopicName(StrBytes::from_static_str("wide")))
                .with_partitions(partitions),
        ]);
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let started = Instant::now();
    let response: FetchResponse = call(&mut stream, ApiKey::Fetch, 4, &request);
    let took = started.elapsed();
    eprintln!("300,000 partitions fetched in {took:?}");
    assert_eq!(response.responses[0].partitions.len(), 300_000);
    assert!(took < Duration::from_secs(30), "{took:?}");
    api_versions_ok(&broker);
}

/// Unknown tagged fields are kept as decoded (a B-tree entry each, ~16 times the 4 bytes one
/// takes on the wire), so they count against the decode budget too: a Metadata v12 carrying
/// 600,000 of them is refused, one carrying 1,000 is answered.
#[test]
fn unknown_tagged_fields_count_against_the_decode_budget() {
    use bytes::BufMut;
    fn put_varint(buf: &mut Vec<u8>, mut value: u32) {
        while value >= 0x80 {
            buf.put_u8((value as u8 & 0x7f) | 0x80);
            value >>= 7;
        }
        buf.put_u8(value as u8);
    }
    let broker = Broker::start(&[]);
    for (fields, refused) in [(600_000, true), (1_000, false)] {
        let mut body = Vec::new();
        // Request header v2: api key, version, correlation id, client id, no tagged fields.
        body.put_i16(ApiKey::Metadata as i16);
        body.put_i16(12);
        body.put_i32(7);
        body.put_i16(-1);
        body.put_u8(0);
        // Metadata v12: topics null, allow auto creation, no authorized operations.
        body.put_u8(0);
        body.put_u8(1);
        body.put_u8(0);
        put_varint(&mut body, fields);
        for tag in 0..fields {
            put_varint(&mut body, 1_000 + tag);
            put_varint(&mut body, 0);
        }
        let mut frame = (body.len() as i32).to_be_bytes().to_vec();
        frame.extend_from_slice(&body);
        assert_eq!(
            send(&broker, &frame).is_none(),
            refused,
            "{fields} unknown tagged fields"
        );
    }
    api_versions_ok(&broker);
}
