//! Encodes a Fetch response (v4–v18) whose record data may stay in segment files: the same
//! bytes `kafka-protocol` would encode, except that a partition's records can be a
//! `FileSlice`, written as its length followed by a file part of the frame. `kafka-protocol`
//! can only encode records it holds in memory, which would cost a copy of every fetched byte
//! into the process and another into the frame; hence this writer for the one response
//! that carries bulk data. The unit tests compare it byte for byte with `kafka-protocol`.

use crate::api::frame::{FrameBuilder, ResponseFrame};
use crate::storage::segment::FileSlice;
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::FetchResponse;
use kafka_protocol::messages::fetch_response::PartitionData;
use kafka_protocol::protocol::{Encodable, HeaderVersion, StrBytes};
use std::collections::BTreeMap;

/// A Fetch response whose records may be left in segment files.
#[derive(Debug, Default)]
pub struct FetchReply {
    pub response: FetchResponse,
    /// (topic index, partition index) in `response` with the records to send from a file;
    /// those partitions' `records` field is ignored. In wire order.
    pub file_records: Vec<((usize, usize), FileSlice)>,
}

/// Why a response could not be encoded (a field set that its version cannot carry).
pub type EncodeError = String;

pub fn write(
    reply: &FetchReply,
    version: i16,
    correlation_id: i32,
) -> Result<ResponseFrame, EncodeError> {
    if !(4..=18).contains(&version) {
        return Err(format!("Fetch v{version} is not supported"));
    }
    let response = &reply.response;
    let flexible = version >= 12;
    let mut files = reply.file_records.iter().peekable();
    let mut frame = FrameBuilder::with_capacity(estimate(response));

    frame.buf().put_i32(correlation_id);
    if FetchResponse::header_version(version) >= 1 {
        put_varint(frame.buf(), 0); // response header tagged fields
    }
    let buf = frame.buf();
    buf.put_i32(response.throttle_time_ms);
    if version >= 7 {
        buf.put_i16(response.error_code);
        buf.put_i32(response.session_id);
    } else if response.session_id != 0 {
        return Err("session_id needs Fetch v7".into());
    }
    put_array_len(buf, flexible, response.responses.len());
    for (t, topic) in response.responses.iter().enumerate() {
        let buf = frame.buf();
        if version <= 12 {
            put_string(buf, flexible, &topic.topic.0);
        }
        if version >= 13 {
            buf.put_slice(topic.topic_id.as_bytes());
        }
        put_array_len(buf, flexible, topic.partitions.len());
        for (p, partition) in topic.partitions.iter().enumerate() {
            let file = match files.peek() {
                Some((at, slice)) if *at == (t, p) => {
                    let slice = slice.clone();
                    files.next();
                    Some(slice)
                }
                _ => None,
            };
            write_partition(&mut frame, partition, file, version)?;
        }
        if flexible {
            put_tagged_fields(frame.buf(), &[], &topic.unknown_tagged_fields);
        }
    }
    if let Some(((t, p), _)) = files.next() {
        return Err(format!(
            "file records for topic {t} partition {p}, which the response does not hold"
        ));
    }
    if flexible {
        let mut known = Vec::new();
        if version >= 16 && !response.node_endpoints.is_empty() {
            let mut endpoints = BytesMut::new();
            put_array_len(&mut endpoints, true, response.node_endpoints.len());
            for endpoint in &response.node_endpoints {
                endpoint
                    .encode(&mut endpoints, version)
                    .map_err(|e| e.to_string())?;
            }
            known.push((0, endpoints.freeze()));
        }
        put_tagged_fields(frame.buf(), &known, &response.unknown_tagged_fields);
    }
    Ok(frame.finish())
}

fn write_partition(
    frame: &mut FrameBuilder,
    partition: &PartitionData,
    file: Option<FileSlice>,
    version: i16,
) -> Result<(), EncodeError> {
    let flexible = version >= 12;
    let buf = frame.buf();
    buf.put_i32(partition.partition_index);
    buf.put_i16(partition.error_code);
    buf.put_i64(partition.high_watermark);
    buf.put_i64(partition.last_stable_offset);
    if version >= 5 {
        buf.put_i64(partition.log_start_offset);
    }
    match &partition.aborted_transactions {
        None => put_null_array(buf, flexible),
        Some(aborted) => {
            put_array_len(buf, flexible, aborted.len());
            for transaction in aborted {
                transaction
                    .encode(buf, version)
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    if version >= 11 {
        buf.put_i32(partition.preferred_read_replica.0);
    } else if partition.preferred_read_replica.0 != -1 {
        return Err("preferred_read_replica needs Fetch v11".into());
    }
    match file {
        Some(slice) => {
            put_bytes_len(buf, flexible, Some(slice.len()));
            if !slice.is_empty() {
                frame.put_file(slice);
            }
        }
        None => {
            put_bytes_len(buf, flexible, partition.records.as_ref().map(Bytes::len));
            if let Some(records) = &partition.records {
                buf.put_slice(records);
            }
        }
    }
    if flexible {
        let mut known = Vec::new();
        if partition.diverging_epoch != Default::default() {
            known.push((0, encoded(&partition.diverging_epoch, version)?));
        }
        if partition.current_leader != Default::default() {
            known.push((1, encoded(&partition.current_leader, version)?));
        }
        if partition.snapshot_id != Default::default() {
            known.push((2, encoded(&partition.snapshot_id, version)?));
        }
        put_tagged_fields(frame.buf(), &known, &partition.unknown_tagged_fields);
    }
    Ok(())
}

/// Encoded bytes of everything but the records, roughly: enough to avoid regrowing.
fn estimate(response: &FetchResponse) -> usize {
    64 + response
        .responses
        .iter()
        .map(|topic| {
            32 + topic.topic.0.len()
                + topic
                    .partitions
                    .iter()
                    .map(|p| 64 + p.records.as_ref().map_or(0, Bytes::len))
                    .sum::<usize>()
        })
        .sum::<usize>()
}

fn encoded<T: Encodable>(value: &T, version: i16) -> Result<Bytes, EncodeError> {
    let mut out = BytesMut::new();
    value.encode(&mut out, version).map_err(|e| e.to_string())?;
    Ok(out.freeze())
}

fn put_varint(buf: &mut BytesMut, mut value: u32) {
    while value >= 0x80 {
        buf.put_u8((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

fn put_array_len(buf: &mut BytesMut, flexible: bool, len: usize) {
    if flexible {
        put_varint(buf, len as u32 + 1);
    } else {
        buf.put_i32(len as i32);
    }
}

fn put_null_array(buf: &mut BytesMut, flexible: bool) {
    if flexible {
        put_varint(buf, 0);
    } else {
        buf.put_i32(-1);
    }
}

/// The length prefix of a nullable byte field.
fn put_bytes_len(buf: &mut BytesMut, flexible: bool, len: Option<usize>) {
    match (flexible, len) {
        (true, Some(len)) => put_varint(buf, len as u32 + 1),
        (true, None) => put_varint(buf, 0),
        (false, Some(len)) => buf.put_i32(len as i32),
        (false, None) => buf.put_i32(-1),
    }
}

fn put_string(buf: &mut BytesMut, flexible: bool, text: &StrBytes) {
    if flexible {
        put_varint(buf, text.len() as u32 + 1);
    } else {
        buf.put_i16(text.len() as i16);
    }
    buf.put_slice(text.as_bytes());
}

/// A tagged-field section: the known fields (tag order) then the unknown ones.
fn put_tagged_fields(buf: &mut BytesMut, known: &[(u32, Bytes)], unknown: &BTreeMap<i32, Bytes>) {
    put_varint(buf, (known.len() + unknown.len()) as u32);
    let unknown = unknown.iter().map(|(tag, value)| (*tag as u32, value));
    for (tag, value) in known
        .iter()
        .map(|(tag, value)| (*tag, value))
        .chain(unknown)
    {
        put_varint(buf, tag);
        put_varint(buf, value.len() as u32);
        buf.put_slice(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::frame::FramePart;
    use kafka_protocol::messages::fetch_response::{
        AbortedTransaction, EpochEndOffset, FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint,
        SnapshotId,
    };
    use kafka_protocol::messages::{BrokerId, ProducerId, ResponseHeader, TopicName};
    use std::io::Write;
    use std::sync::Arc;

    fn reference(response: &FetchResponse, version: i16, correlation_id: i32) -> Vec<u8> {
        let header_version = FetchResponse::header_version(version);
        let header = ResponseHeader::default().with_correlation_id(correlation_id);
        let mut body = BytesMut::new();
        header.encode(&mut body, header_version).unwrap();
        response.encode(&mut body, version).unwrap();
        let mut frame = (body.len() as i32).to_be_bytes().to_vec();
        frame.extend_from_slice(&body);
        frame
    }

    fn partition(index: i32, records: Option<&[u8]>) -> PartitionData {
        PartitionData::default()
            .with_partition_index(index)
            .with_high_watermark(1000 + index as i64)
            .with_last_stable_offset(900)
            .with_log_start_offset(7)
            .with_records(records.map(Bytes::copy_from_slice))
    }

    /// Every field the response can carry, set where the version has it.
    fn full_response(version: i16, records: &[&[u8]]) -> FetchResponse {
        let mut errored = partition(2, Some(b""))
            .with_error_code(6)
            .with_aborted_transactions(Some(vec![
                AbortedTransaction::default()
                    .with_producer_id(ProducerId(42))
                    .with_first_offset(17),
            ]));
        if version >= 11 {
            errored = errored.with_preferred_read_replica(BrokerId(3));
        }
        if version >= 12 {
            errored = errored
                .with_diverging_epoch(EpochEndOffset::default().with_epoch(4).with_end_offset(99))
                .with_current_leader(
                    LeaderIdAndEpoch::default()
                        .with_leader_id(BrokerId(2))
                        .with_leader_epoch(5),
                )
                .with_snapshot_id(SnapshotId::default().with_end_offset(8).with_epoch(1))
                .with_unknown_tagged_fields(BTreeMap::from([(9, Bytes::from_static(b"x"))]));
        }
        let topic = |name: &str, partitions| {
            FetchableTopicResponse::default()
                .with_topic(if version <= 12 {
                    TopicName(StrBytes::from_string(name.to_string()))
                } else {
                    TopicName::default()
                })
                .with_topic_id(if version >= 13 {
                    uuid::Uuid::from_u128(0x1234_5678_9abc_def0_1122_3344_5566_7788)
                } else {
                    uuid::Uuid::nil()
                })
                .with_partitions(partitions)
        };
        let mut response = FetchResponse::default()
            .with_throttle_time_ms(11)
            .with_responses(vec![
                topic(
                    "first",
                    vec![partition(0, Some(records[0])), errored, partition(1, None)],
                ),
                topic("second", vec![partition(5, Some(records[1]))]),
            ]);
        if version >= 7 {
            response = response.with_error_code(0).with_session_id(77);
        }
        if version >= 16 {
            response = response.with_node_endpoints(vec![
                NodeEndpoint::default()
                    .with_node_id(BrokerId(1))
                    .with_host(StrBytes::from_static_str("localhost"))
                    .with_port(9092)
                    .with_rack(Some(StrBytes::from_static_str("r1"))),
            ]);
        }
        response
    }

    fn slice_of(file: &Arc<std::fs::File>, position: u64, len: usize) -> FileSlice {
        FileSlice::for_test(file.clone(), position, len)
    }

    #[test]
    fn in_memory_records_encode_exactly_as_kafka_protocol_does() {
        let records: [&[u8]; 2] = [b"batch bytes of partition zero", b"second topic's batch"];
        for version in 4..=18 {
            let response = full_response(version, &records);
            let reply = FetchReply {
                response: response.clone(),
                file_records: Vec::new(),
            };
            let frame = write(&reply, version, 0x0102_0304).unwrap();
            assert_eq!(
                frame.into_bytes().unwrap().as_ref(),
                reference(&response, version, 0x0102_0304).as_slice(),
                "Fetch v{version}"
            );
        }
    }

    #[test]
    fn file_records_are_sent_from_the_file_with_the_same_bytes_around_them() {
        let records: [&[u8]; 2] = [b"batch bytes of partition zero", b"second topic's batch"];
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"....").unwrap();
        file.write_all(records[0]).unwrap();
        file.write_all(records[1]).unwrap();
        let file = Arc::new(file);
        for version in 4..=18 {
            let response = full_response(version, &records);
            let mut without = response.clone();
            without.responses[0].partitions[0].records = None;
            without.responses[1].partitions[0].records = None;
            let reply = FetchReply {
                response: without,
                file_records: vec![
                    ((0, 0), slice_of(&file, 4, records[0].len())),
                    (
                        (1, 0),
                        slice_of(&file, 4 + records[0].len() as u64, records[1].len()),
                    ),
                ],
            };
            let frame = write(&reply, version, 9).unwrap();
            let files = frame
                .parts()
                .iter()
                .filter(|part| matches!(part, FramePart::File(_)))
                .count();
            assert_eq!(files, 2, "both partitions' records stay in the file");
            let expected = reference(&response, version, 9);
            assert_eq!(frame.len(), expected.len());
            assert_eq!(
                frame.into_bytes().unwrap().as_ref(),
                expected.as_slice(),
                "Fetch v{version}"
            );
        }
    }

    #[test]
    fn a_file_slice_for_a_partition_the_response_lacks_is_an_error() {
        let file = Arc::new(tempfile::tempfile().unwrap());
        let reply = FetchReply {
            response: FetchResponse::default(),
            file_records: vec![((0, 0), slice_of(&file, 0, 0))],
        };
        assert!(write(&reply, 12, 1).is_err());
        assert!(write(&FetchReply::default(), 3, 1).is_err());
    }
}
