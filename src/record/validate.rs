//! Record-level validation of a produced batch on the leader (Kafka's `LogValidator`): every
//! record is walked ([`super::walk`]; compressed batches are decompressed as they are read,
//! within a hard bound), so the batch holds exactly the records its header declares, each
//! framed correctly, with offset deltas 0, 1, 2, …; on a compacted topic each has a key; with
//! CreateTime each timestamp lies within `message.timestamp.before.max.ms` /
//! `message.timestamp.after.max.ms` of the broker's clock. The result is the batch's true
//! maximum timestamp, which the log writes into the header as Kafka does.
//!
//! Errors as Kafka answers them: broken framing is INVALID_RECORD; records that are well
//! framed but not acceptable are listed by index (the response's `record_errors`), as
//! INVALID_TIMESTAMP when any timestamp is out of range and INVALID_RECORD otherwise.
//!
//! Departure: Kafka accepts out-of-order offset deltas in a compressed batch and rewrites the
//! batch; we store batches as produced, so such a batch is refused (INVALID_RECORD) instead.

use super::walk::{WalkError, walk_records};
use super::{BatchView, RecordError, RecordIssue};
use std::ops::ControlFlow;

use super::codec::MAX_DECOMPRESSED_BYTES;

/// At most this many bad records are named in `record_errors`; the message gives the total.
const MAX_REPORTED_ISSUES: usize = 100;

/// What the topic's configuration asks of its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidationPolicy {
    /// `cleanup.policy` includes `compact`: every record needs a key.
    pub compacted: bool,
    /// `message.timestamp.type=LogAppendTime`: the broker's time replaces the producer's.
    pub log_append_time: bool,
    pub timestamp_before_max_ms: i64,
    pub timestamp_after_max_ms: i64,
    /// The codec the topic stores records in (`compression.type`), and its level; `None`:
    /// the producer's.
    pub compression: Option<(super::Compression, i32)>,
}

/// Walks every record of a batch that passed the header checks
/// ([`super::validate_produced`]) and returns its maximum record timestamp (-1 when no record
/// has one).
pub fn validate_records(
    batch: &BatchView<'_>,
    policy: &ValidationPolicy,
    now_ms: i64,
) -> Result<i64, RecordError> {
    // Producer fields as Kafka checks them for client batches (the coordinators' own
    // transactional writes carry no sequence).
    if batch.producer_id() >= 0 && batch.base_sequence() < 0 {
        return Err(RecordError::Invalid(format!(
            "Invalid sequence number {} in record batch with producerId {}",
            batch.base_sequence(),
            batch.producer_id()
        )));
    }
    if batch.is_transactional() && batch.producer_id() < 0 {
        return Err(RecordError::Invalid(
            "a transactional batch must carry a producer id".into(),
        ));
    }
    let base_timestamp = batch.base_timestamp();
    let producer_log_append_time = batch.is_log_append_time();
    let mut max_timestamp = -1i64;
    let mut issues = Vec::new();
    let mut total = 0usize;
    let mut bad_timestamps = 0usize;
    let walked = walk_records(batch, MAX_DECOMPRESSED_BYTES, |record| {
        let timestamp = base_timestamp.checked_add(record.timestamp_delta);
        if let Some(t) = timestamp {
            max_timestamp = max_timestamp.max(t);
        }
        // One issue per record, the first that applies (as Kafka's validateRecord).
        let issue = if record.offset_delta != record.index {
            Some(format!(
                "record {} has offset delta {}; offset deltas must count up from 0",
                record.index, record.offset_delta
            ))
        } else if policy.compacted && !record.has_key {
            Some("Compacted topic cannot accept message without key".to_string())
        } else if let Some(message) =
            timestamp_issue(policy, producer_log_append_time, timestamp, now_ms)
        {
            bad_timestamps += 1;
            Some(message)
        } else {
            None
        };
        if let Some(message) = issue {
            total += 1;
            if issues.len() < MAX_REPORTED_ISSUES {
                issues.push(RecordIssue {
                    index: record.index,
                    message,
                });
            }
        }
        ControlFlow::Continue(())
    });
    match walked {
        Ok(()) => {}
        Err(WalkError::Structure { index, reason })
            if (0..batch.records_count()).contains(&index) =>
        {
            return Err(RecordError::InvalidRecords {
                total: 1,
                issues: vec![RecordIssue {
                    index,
                    message: format!("Found invalid record structure: {reason}"),
                }],
            });
        }
        Err(WalkError::Structure { reason, .. }) => {
            return Err(RecordError::Invalid(format!(
                "Incorrect declared batch size: {reason}"
            )));
        }
        Err(WalkError::TooLarge { limit }) => {
            return Err(RecordError::Invalid(format!(
                "the decompressed records exceed the limit of {limit} bytes"
            )));
        }
        Err(WalkError::Compression(e)) => return Err(RecordError::Compression(e)),
    }
    if !issues.is_empty() {
        return Err(if bad_timestamps > 0 {
            RecordError::InvalidTimestamps { total, issues }
        } else {
            RecordError::InvalidRecords { total, issues }
        });
    }
    Ok(max_timestamp)
}

/// Kafka's `validateTimestamp`: with CreateTime a record's timestamp (unless -1, none) must
/// lie within the allowed distance of the broker's clock; a producer may not claim
/// LogAppendTime.
fn timestamp_issue(
    policy: &ValidationPolicy,
    producer_log_append_time: bool,
    timestamp: Option<i64>,
    now_ms: i64,
) -> Option<String> {
    if !policy.log_append_time && timestamp != Some(-1) {
        let in_range = timestamp.is_some_and(|t| {
            let behind = now_ms.saturating_sub(t);
            behind <= policy.timestamp_before_max_ms
                && behind.saturating_neg() <= policy.timestamp_after_max_ms
        });
        (!in_range).then(|| {
            format!(
                "Timestamp {} is out of range. The timestamp should be within [{}, {}]",
                timestamp.map_or_else(|| "(overflow)".to_string(), |t| t.to_string()),
                now_ms.saturating_sub(policy.timestamp_before_max_ms),
                now_ms.saturating_add(policy.timestamp_after_max_ms),
            )
        })
    } else if producer_log_append_time {
        Some(
            "Invalid timestamp type in message. Producer should not set timestamp type to \
             LogAppendTime."
                .to_string(),
        )
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::records::{put_varint, put_varlong};
    use crate::record::{NewRecord, build_batch};
    use bytes::{BufMut, BytesMut};
    use std::io::Write;

    const NOW: i64 = 1_700_000_000_000;

    fn policy() -> ValidationPolicy {
        ValidationPolicy {
            compacted: false,
            log_append_time: false,
            timestamp_before_max_ms: i64::MAX,
            timestamp_after_max_ms: 3_600_000,
            compression: None,
        }
    }

    /// A batch of `keys.len()` records (value "v"), timestamps NOW + i.
    fn batch(keys: &[Option<&[u8]>]) -> BytesMut {
        let records: Vec<NewRecord<'_>> = keys
            .iter()
            .enumerate()
            .map(|(i, key)| NewRecord {
                key: *key,
                value: Some(b"v"),
                timestamp: NOW + i as i64,
            })
            .collect();
        build_batch(&records)
    }

    /// `batch` with its records section replaced by `payload` compressed with `codec`
    /// (attribute id), its record count set to `count`, lengths and CRC fixed.
    fn rebuilt(batch: &[u8], codec: i16, payload: &[u8], count: i32) -> BytesMut {
        let compressed = match codec {
            0 => payload.to_vec(),
            1 => {
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                gz.write_all(payload).unwrap();
                gz.finish().unwrap()
            }
            2 => snap::raw::Encoder::new().compress_vec(payload).unwrap(),
            3 => {
                let mut lz = lz4_flex::frame::FrameEncoder::new(Vec::new());
                lz.write_all(payload).unwrap();
                lz.finish().unwrap()
            }
            _ => zstd::encode_all(payload, 1).unwrap(),
        };
        let mut out = BytesMut::from(&batch[..HEADER_LEN]);
        out.put_slice(&compressed);
        let length = (out.len() - 12) as i32;
        out[8..12].copy_from_slice(&length.to_be_bytes());
        let attributes = (i16::from_be_bytes([out[21], out[22]]) & !7) | codec;
        out[21..23].copy_from_slice(&attributes.to_be_bytes());
        out[23..27].copy_from_slice(&(count - 1).to_be_bytes());
        out[57..61].copy_from_slice(&count.to_be_bytes());
        let crc = crc32c::crc32c(&out[21..]);
        out[17..21].copy_from_slice(&crc.to_be_bytes());
        out
    }
    use crate::record::HEADER_LEN;

    fn check(bytes: &[u8], policy: &ValidationPolicy) -> Result<i64, RecordError> {
        crate::record::validate_produced(bytes, 1 << 30)?;
        validate_records(&BatchView::new(bytes).unwrap(), policy, NOW)
    }

    fn indexes(e: &RecordError) -> Vec<i32> {
        e.record_issues().iter().map(|i| i.index).collect()
    }

    #[test]
    fn valid_batches_pass_with_every_codec_and_report_the_max_timestamp() {
        let plain = batch(&[Some(b"a"), None, Some(b"c")]);
        let payload = plain[HEADER_LEN..].to_vec();
        for codec in 0..=4 {
            let b = rebuilt(&plain, codec, &payload, 3);
            assert_eq!(check(&b, &policy()), Ok(NOW + 2), "codec {codec}");
        }
    }

    #[test]
    fn a_count_that_disagrees_with_the_records_is_refused() {
        let plain = batch(&[Some(b"a"), Some(b"b"), Some(b"c")]);
        let payload = plain[HEADER_LEN..].to_vec();
        for codec in [0, 4] {
            // Claims 2^31 - 1 records and holds 3 (one request moved the log end by 2^31).
            let e = check(&rebuilt(&plain, codec, &payload, i32::MAX), &policy()).unwrap_err();
            assert_eq!(indexes(&e), vec![3], "codec {codec}: {e}");
            // Claims fewer than it holds.
            let e = check(&rebuilt(&plain, codec, &payload, 2), &policy()).unwrap_err();
            assert!(matches!(e, RecordError::Invalid(_)), "codec {codec}: {e}");
        }
    }

    /// Hand-made records: (length override, body bytes).
    fn section(records: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for body in records {
            put_varint(&mut out, body.len() as i32);
            out.extend_from_slice(body);
        }
        out
    }

    fn body(offset_delta: i32, key_len: i32, key: &[u8], headers: i32) -> Vec<u8> {
        let mut b = vec![0u8];
        put_varlong(&mut b, 0);
        put_varint(&mut b, offset_delta);
        put_varint(&mut b, key_len);
        b.extend_from_slice(key);
        put_varint(&mut b, -1);
        put_varint(&mut b, headers);
        b
    }

    #[test]
    fn broken_record_framing_is_invalid_record_naming_the_record() {
        let template = batch(&[Some(b"a")]);
        let good = body(0, 1, b"k", 0);
        let cases: Vec<(&str, Vec<u8>)> = vec![
            (
                "key length past the record",
                section(&[good.clone(), body(1, 100, b"k", 0)]),
            ),
            (
                "negative header count",
                section(&[good.clone(), body(1, 1, b"k", -5)]),
            ),
            (
                "negative key length below -1",
                section(&[good.clone(), body(1, -7, b"", 0)]),
            ),
            ("length varint overflows", {
                let mut s = section(std::slice::from_ref(&good));
                s.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
                s
            }),
            ("length past the end", {
                let mut s = section(std::slice::from_ref(&good));
                put_varint(&mut s, 1_000_000);
                s.extend_from_slice(&good);
                s
            }),
            ("length longer than the fields", {
                let mut s = section(std::slice::from_ref(&good));
                put_varint(&mut s, good.len() as i32 + 2);
                s.extend_from_slice(&body(1, 1, b"k", 0));
                s.extend_from_slice(&[0, 0]);
                s
            }),
        ];
        for (name, payload) in cases {
            for codec in [0, 1, 2, 3, 4] {
                let b = rebuilt(&template, codec, &payload, 2);
                let e = check(&b, &policy()).unwrap_err();
                assert!(
                    matches!(e, RecordError::InvalidRecords { .. }),
                    "{name}, codec {codec}: {e:?}"
                );
                assert_eq!(indexes(&e), vec![1], "{name}, codec {codec}");
            }
        }
    }

    #[test]
    fn offset_deltas_must_count_up_from_zero() {
        let template = batch(&[Some(b"a")]);
        let payload = section(&[
            body(0, 1, b"k", 0),
            body(5, 1, b"k", 0),
            body(1, 1, b"k", 0),
        ]);
        let e = check(&rebuilt(&template, 0, &payload, 3), &policy()).unwrap_err();
        assert_eq!(indexes(&e), vec![1, 2]);
    }

    /// librdkafka's `0011 produce_batch` (`test_message_single_partition_record_fail`): on a
    /// compacted topic each keyless record is named by its index.
    #[test]
    fn a_compacted_topic_names_each_record_without_a_key() {
        let b = batch(&[Some(b"a"), None, Some(b"c"), None]);
        let compacted = ValidationPolicy {
            compacted: true,
            ..policy()
        };
        let e = check(&b, &compacted).unwrap_err();
        assert_eq!(indexes(&e), vec![1, 3]);
        assert_eq!(
            crate::error::Error::from(e).code(),
            crate::error::code::INVALID_RECORD
        );
        assert!(check(&batch(&[Some(b"a")]), &compacted).is_ok());
    }

    #[test]
    fn timestamps_out_of_range_are_invalid_timestamp() {
        let strict = ValidationPolicy {
            timestamp_before_max_ms: 1,
            timestamp_after_max_ms: 0,
            ..policy()
        };
        // NOW + 0 is in range; NOW + 1 and NOW + 2 are in the future.
        let e = check(&batch(&[None, None, None]), &strict).unwrap_err();
        assert!(matches!(e, RecordError::InvalidTimestamps { .. }), "{e}");
        assert_eq!(indexes(&e), vec![1, 2]);
        assert_eq!(
            crate::error::Error::from(e).code(),
            crate::error::code::INVALID_TIMESTAMP
        );
        // LogAppendTime topics take any producer timestamp.
        let append_time = ValidationPolicy {
            log_append_time: true,
            ..strict
        };
        assert!(check(&batch(&[None, None, None]), &append_time).is_ok());
    }

    /// Compression bombs: a record claiming more than the budget is refused before anything
    /// is decompressed, and decompression stops at the budget.
    #[test]
    fn compression_bombs_stop_at_the_budget() {
        let template = batch(&[Some(b"a")]);
        let mut claim = Vec::new();
        put_varint(&mut claim, i32::MAX);
        claim.extend_from_slice(&[0u8; 64]);
        for codec in 1..=4 {
            let b = rebuilt(&template, codec, &claim, 1);
            let e = check(&b, &policy()).unwrap_err();
            assert!(matches!(e, RecordError::Invalid(_)), "codec {codec}: {e}");
        }
        // One record of 1 MiB of zeros, against a 64 KiB budget.
        let zeros = vec![0u8; 1 << 20];
        let mut big = vec![0u8];
        put_varlong(&mut big, 0);
        put_varint(&mut big, 0);
        put_varint(&mut big, -1);
        put_varint(&mut big, zeros.len() as i32);
        big.extend_from_slice(&zeros);
        put_varint(&mut big, 0);
        let payload = section(&[big]);
        for codec in 1..=4 {
            let b = rebuilt(&template, codec, &payload, 1);
            let view = BatchView::new(&b).unwrap();
            assert_eq!(
                crate::record::walk::walk_records(&view, 64 * 1024, |_| ControlFlow::Continue(())),
                Err(WalkError::TooLarge { limit: 64 * 1024 }),
                "codec {codec}"
            );
            assert!(
                crate::record::walk::walk_records(&view, 2 << 20, |_| ControlFlow::Continue(()))
                    .is_ok()
            );
        }
    }

    /// Kafka's client-batch checks of the producer fields: an idempotent batch needs a
    /// sequence, a transactional one a producer id.
    #[test]
    fn producer_fields_must_be_consistent() {
        use crate::record::test_support::set_producer_fields;
        let mut no_sequence = batch(&[None]);
        set_producer_fields(&mut no_sequence, 7, 0, -1);
        assert!(matches!(
            check(&no_sequence, &policy()),
            Err(RecordError::Invalid(_))
        ));
        let mut anonymous = batch(&[None]);
        crate::record::make_transactional(&mut anonymous, -1, 0);
        assert!(matches!(
            check(&anonymous, &policy()),
            Err(RecordError::Invalid(_))
        ));
        let mut idempotent = batch(&[None]);
        set_producer_fields(&mut idempotent, 7, 0, 0);
        assert!(check(&idempotent, &policy()).is_ok());
    }

    #[test]
    fn undecodable_payloads_are_corrupt_not_a_panic() {
        let template = batch(&[Some(b"a")]);
        for codec in 1..=4 {
            let mut b = rebuilt(&template, codec, b"whatever", 1);
            let len = b.len();
            for byte in &mut b[HEADER_LEN..len] {
                *byte ^= 0x5a;
            }
            let crc = crc32c::crc32c(&b[21..]);
            b[17..21].copy_from_slice(&crc.to_be_bytes());
            assert!(check(&b, &policy()).is_err(), "codec {codec}");
        }
    }
}
