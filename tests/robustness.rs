//! Bad input and exhausted resources against a real broker process: each test sends what a
//! broken or hostile client sends and checks that the broker answers with Kafka's error code
//! (or closes only that connection), stays up, keeps what it acknowledged and goes on serving
//! everyone else.

#![allow(clippy::unwrap_used)]

mod common;

use bytes::{BufMut, BytesMut};
use common::Broker;
use common::raw::*;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use std::io::Write;

const POLICY_VIOLATION: i16 = 44;

fn topic_named(name: &str, partitions: i32) -> CreatableTopic {
    CreatableTopic::default()
        .with_name(TopicName(StrBytes::from_string(name.into())))
        .with_num_partitions(partitions)
        .with_replication_factor(1)
}

fn create_topics(
    stream: &mut std::net::TcpStream,
    topics: Vec<CreatableTopic>,
    validate_only: bool,
) -> CreateTopicsResponse {
    call(
        stream,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(topics)
            .with_timeout_ms(10_000)
            .with_validate_only(validate_only),
    )
}

/// Defect 1: `num_partitions = 2^31 - 1` aborted the process (an allocation of 51 GB for the
/// placement). Kafka's controller refuses more than 10,000 partitions per request with
/// POLICY_VIOLATION — per topic and summed over the request — and so do we.
#[test]
fn create_topics_beyond_the_partition_cap_is_a_policy_violation() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    for validate_only in [false, true] {
        let response = create_topics(
            &mut stream,
            vec![topic_named("huge", i32::MAX)],
            validate_only,
        );
        assert_eq!(response.topics[0].error_code, POLICY_VIOLATION);
        assert_eq!(
            response.topics[0].error_message.as_deref(),
            Some("Excessively large number of partitions per request.")
        );
    }
    // 5,000 + 5,001: each alone is allowed, together they are over; the whole request fails.
    let response = create_topics(
        &mut stream,
        vec![topic_named("a", 5_000), topic_named("b", 5_001)],
        true,
    );
    assert!(
        response
            .topics
            .iter()
            .all(|t| t.error_code == POLICY_VIOLATION)
    );
    // CreatePartitions to 2^31 - 1 is refused the same way.
    let response = create_topics(&mut stream, vec![topic_named("small", 1)], false);
    assert_eq!(response.topics[0].error_code, 0);
    let response: CreatePartitionsResponse = call(
        &mut stream,
        ApiKey::CreatePartitions,
        3,
        &CreatePartitionsRequest::default()
            .with_topics(vec![
                create_partitions_request::CreatePartitionsTopic::default()
                    .with_name(TopicName(StrBytes::from_static_str("small")))
                    .with_count(i32::MAX),
            ])
            .with_timeout_ms(10_000),
    );
    assert_eq!(response.results[0].error_code, POLICY_VIOLATION);
    api_versions_ok(&broker);
}

/// Defect 1: nothing a client sends sizes an allocation unchecked. An array of more than
/// 1,000,000 elements (here 1,000,001 empty topic names in a 2 MB Metadata v1 request) is
/// refused at decoding: the connection is closed, the broker goes on.
#[test]
fn huge_arrays_are_refused_not_allocated() {
    let broker = Broker::start(&[("auto.create.topics.enable", "false")]);
    for (elements, refused) in [(1_000_001, true), (1_000, false)] {
        let mut body = BytesMut::new();
        // Request header v1: api key, version, correlation id, client id.
        body.put_i16(ApiKey::Metadata as i16);
        body.put_i16(1);
        body.put_i32(7);
        body.put_i16(-1);
        body.put_i32(elements);
        for _ in 0..elements {
            body.put_i16(0);
        }
        let mut stream = connect(&broker);
        stream
            .write_all(&(body.len() as i32).to_be_bytes())
            .unwrap();
        stream.write_all(&body).unwrap();
        if refused {
            assert!(is_closed(&mut stream), "{elements} elements were decoded");
        } else {
            assert!(read_frame(&mut stream).is_some());
        }
    }
    api_versions_ok(&broker);
}
