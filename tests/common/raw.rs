//! Raw Kafka frames on a real socket: the helpers the protocol and robustness tests share
//! (frames built with the protocol crate, batches built with its record encoder).
#![allow(dead_code, clippy::unwrap_used)]

use super::Broker;
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub fn connect(broker: &Broker) -> TcpStream {
    let stream = TcpStream::connect(&broker.bootstrap).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
}

pub fn frame<R: Encodable + HeaderVersion>(
    api: ApiKey,
    version: i16,
    correlation_id: i32,
    body: &R,
) -> Vec<u8> {
    let header = RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_static_str("raw-test")));
    let mut buf = BytesMut::new();
    header.encode(&mut buf, R::header_version(version)).unwrap();
    body.encode(&mut buf, version).unwrap();
    let mut out = (buf.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(&buf);
    out
}

/// Reads one response frame; `None` when the broker closed the connection.
pub fn read_frame(stream: &mut TcpStream) -> Option<Bytes> {
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).ok()?;
    let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
    stream.read_exact(&mut body).ok()?;
    Some(Bytes::from(body))
}

pub fn call<Req: Encodable + HeaderVersion, Resp: Decodable + HeaderVersion>(
    stream: &mut TcpStream,
    api: ApiKey,
    version: i16,
    body: &Req,
) -> Resp {
    stream.write_all(&frame(api, version, 7, body)).unwrap();
    let mut response = read_frame(stream).expect("response");
    let header = ResponseHeader::decode(&mut response, Resp::header_version(version)).unwrap();
    assert_eq!(header.correlation_id, 7);
    Resp::decode(&mut response, version).unwrap()
}

/// Writes a frame the broker is expected to refuse unread: the broker may close the
/// connection while the frame is still being written (it reads only the size), so a write
/// that fails because the peer is gone is that refusal, not an error. True when closed.
pub fn write_refused(stream: &mut TcpStream, bytes: &[u8]) -> bool {
    match stream.write_all(bytes) {
        Ok(()) => is_closed(stream),
        Err(e) => matches!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe
                | std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::ConnectionAborted
        ),
    }
}

/// True when the broker closed the connection (EOF or reset); a read timeout is not a close.
pub fn is_closed(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

pub fn api_versions_ok(broker: &Broker) {
    let mut stream = connect(broker);
    let response: ApiVersionsResponse = call(
        &mut stream,
        ApiKey::ApiVersions,
        3,
        &ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("t"))
            .with_client_software_version(StrBytes::from_static_str("1")),
    );
    assert_eq!(response.error_code, 0);
}

pub fn create_topic(stream: &mut TcpStream, name: &str, partitions: i32, configs: &[(&str, &str)]) {
    let (code, message) = create_topic_with(stream, name, partitions, configs);
    assert_eq!(code, 0, "{message:?}");
}

/// CreateTopics of one single-partition topic: its error code and message.
#[allow(dead_code)]
pub fn create_topic_result(
    stream: &mut TcpStream,
    name: &str,
    configs: &[(&str, &str)],
) -> (i16, Option<String>) {
    create_topic_with(stream, name, 1, configs)
}

fn create_topic_with(
    stream: &mut TcpStream,
    name: &str,
    partitions: i32,
    configs: &[(&str, &str)],
) -> (i16, Option<String>) {
    let topic = CreatableTopic::default()
        .with_name(TopicName(StrBytes::from_string(name.into())))
        .with_num_partitions(partitions)
        .with_replication_factor(1)
        .with_configs(
            configs
                .iter()
                .map(|(k, v)| {
                    CreatableTopicConfig::default()
                        .with_name(StrBytes::from_string(k.to_string()))
                        .with_value(Some(StrBytes::from_string(v.to_string())))
                })
                .collect(),
        );
    let response: CreateTopicsResponse = call(
        stream,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(vec![topic])
            .with_timeout_ms(10_000),
    );
    let result = &response.topics[0];
    (
        result.error_code,
        result.error_message.as_ref().map(|m| m.to_string()),
    )
}

/// A plain record (no producer id) for the protocol crate's batch encoder. Its sequence is
/// `offset - 1` because the encoder groups records into one batch while offset - sequence
/// stays constant; -1 for the first keeps the batch's base sequence at "none".
pub fn record(offset: i64, timestamp: i64, key: Option<Bytes>, value: Option<Bytes>) -> Record {
    Record {
        transactional: false,
        control: false,
        partition_leader_epoch: -1,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset,
        sequence: offset as i32 - 1,
        timestamp,
        key,
        value,
        headers: Default::default(),
        delete_horizon: false,
    }
}

pub fn encode_batch(records: &[Record], compression: Compression) -> BytesMut {
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        records,
        &RecordEncodeOptions {
            version: 2,
            compression,
        },
    )
    .unwrap();
    buf
}

pub fn batch(records: usize, value_len: usize) -> BytesMut {
    let records: Vec<Record> = (0..records)
        .map(|i| {
            record(
                i as i64,
                1_000 + i as i64,
                Some(Bytes::from(format!("k{i}"))),
                Some(Bytes::from(vec![b'v'; value_len])),
            )
        })
        .collect();
    encode_batch(&records, Compression::None)
}

pub fn produce(
    stream: &mut TcpStream,
    topic: &str,
    acks: i16,
    records: Bytes,
) -> Option<produce_response::PartitionProduceResponse> {
    produce_version(stream, topic, acks, records, 9)
}

/// [`produce`] at Produce `version`.
pub fn produce_version(
    stream: &mut TcpStream,
    topic: &str,
    acks: i16,
    records: Bytes,
    version: i16,
) -> Option<produce_response::PartitionProduceResponse> {
    let request = ProduceRequest::default()
        .with_acks(acks)
        .with_timeout_ms(10_000)
        .with_topic_data(vec![
            TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))
                .with_partition_data(vec![
                    PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(records)),
                ]),
        ]);
    if acks == 0 {
        stream
            .write_all(&frame(ApiKey::Produce, version, 7, &request))
            .unwrap();
        return None;
    }
    let response: ProduceResponse = call(stream, ApiKey::Produce, version, &request);
    Some(response.responses[0].partition_responses[0].clone())
}

pub fn latest_offset(stream: &mut TcpStream, topic: &str) -> i64 {
    list_offset(stream, topic, -1)
}

/// ListOffsets of partition 0 for a timestamp (or a special one: -1 latest, -3 max timestamp).
pub fn list_offset(stream: &mut TcpStream, topic: &str, timestamp: i64) -> i64 {
    let request = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![
            ListOffsetsTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))
                .with_partitions(vec![
                    ListOffsetsPartition::default()
                        .with_partition_index(0)
                        .with_timestamp(timestamp),
                ]),
        ]);
    let response: ListOffsetsResponse = call(stream, ApiKey::ListOffsets, 7, &request);
    let partition = &response.topics[0].partitions[0];
    assert_eq!(partition.error_code, 0, "ListOffsets {timestamp}");
    partition.offset
}

/// OffsetCommit v7 of `offset` for partition 0 of topic `t`; the partition's error code.
pub fn offset_commit(
    stream: &mut TcpStream,
    group: &str,
    generation: i32,
    member: &str,
    offset: i64,
) -> i16 {
    use kafka_protocol::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    let response: OffsetCommitResponse = call(
        stream,
        ApiKey::OffsetCommit,
        7,
        &OffsetCommitRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.into())))
            .with_generation_id_or_member_epoch(generation)
            .with_member_id(StrBytes::from_string(member.into()))
            .with_topics(vec![
                OffsetCommitRequestTopic::default()
                    .with_name(TopicName(StrBytes::from_static_str("t")))
                    .with_partitions(vec![
                        OffsetCommitRequestPartition::default()
                            .with_partition_index(0)
                            .with_committed_offset(offset),
                    ]),
            ]),
    );
    response.topics[0].partitions[0].error_code
}

pub fn fetch(
    stream: &mut TcpStream,
    topic: &str,
    offset: i64,
    max_bytes: i32,
) -> fetch_response::PartitionData {
    let request = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(0)
        .with_max_bytes(max_bytes)
        .with_session_epoch(-1)
        .with_topics(vec![
            FetchTopic::default()
                .with_topic(TopicName(StrBytes::from_string(topic.into())))
                .with_partitions(vec![
                    FetchPartition::default()
                        .with_partition(0)
                        .with_fetch_offset(offset)
                        .with_partition_max_bytes(max_bytes),
                ]),
        ]);
    let response: FetchResponse = call(stream, ApiKey::Fetch, 12, &request);
    assert_eq!(response.error_code, 0);
    response.responses[0].partitions[0].clone()
}

/// One v2 batch of `values` from `producer_id` at `epoch`, sequences from `sequence`, in a
/// transaction when `transactional` (uncompressed, timestamps 1000).
pub fn producer_batch(
    values: &[&str],
    producer_id: i64,
    epoch: i16,
    sequence: i32,
    transactional: bool,
) -> Bytes {
    let records: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, value)| Record {
            transactional,
            control: false,
            partition_leader_epoch: -1,
            producer_id,
            producer_epoch: epoch,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: sequence + i as i32,
            timestamp: 1_000,
            key: None,
            value: Some(Bytes::from(value.to_string())),
            headers: Default::default(),
            delete_horizon: false,
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &records,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    buf.freeze()
}
