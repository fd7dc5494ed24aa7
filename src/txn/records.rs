//! Kafka's record schemas for `__transaction_state`, so tools reading the topic understand it
//! (kafka-console-consumer's TransactionLogMessageFormatter):
//!
//! ```text
//! key   version 0  TransactionLogKey    transactional_id: string
//! value TransactionLogValue v0|1        producer_id: i64, producer_epoch: i16,
//!       transaction_timeout_ms: i32, transaction_status: i8,
//!       transaction_partitions: [topic: string, partition_ids: [i32]]?,
//!       transaction_last_update_timestamp_ms: i64, transaction_start_timestamp_ms: i64
//!       (v1 is flexible: compact strings/arrays, tagged previous_producer_id (0),
//!       next_producer_id (1), client_transaction_version (2))
//! ```
//!
//! This broker writes v0 (transactions version 1: no KIP-890 epoch bump per transaction) and
//! reads both. A null value (tombstone) deletes the transactional id.

use super::state::{TxnMetadata, TxnState};
use crate::record::schema::*;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use std::collections::{BTreeMap, BTreeSet};

pub fn encode_key(transactional_id: &str) -> Bytes {
    let mut buf = BytesMut::with_capacity(4 + transactional_id.len());
    buf.put_i16(0);
    put_string(&mut buf, transactional_id);
    buf.freeze()
}

/// The transactional id of a key; `None` for a key version this broker does not know.
pub fn decode_key(mut buf: &[u8]) -> Result<Option<String>, SchemaError> {
    if get_i16(&mut buf)? != 0 {
        return Ok(None);
    }
    get_string(&mut buf).map(Some)
}

pub fn encode_value(value: &TxnMetadata) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(0);
    buf.put_i64(value.producer_id);
    buf.put_i16(value.producer_epoch);
    buf.put_i32(value.timeout_ms);
    buf.put_i8(value.state.code());
    buf.put_i32(value.partitions.len() as i32);
    for (topic, partitions) in &value.partitions {
        put_string(&mut buf, topic);
        buf.put_i32(partitions.len() as i32);
        for partition in partitions {
            buf.put_i32(*partition);
        }
    }
    buf.put_i64(value.last_update_ms);
    buf.put_i64(value.start_ms);
    buf.freeze()
}

/// The state of `transactional_id` a value holds.
pub fn decode_value(transactional_id: &str, mut buf: &[u8]) -> Result<TxnMetadata, SchemaError> {
    let version = get_i16(&mut buf)?;
    let flexible = match version {
        0 => false,
        1 => true,
        _ => return Err(SchemaError("unknown TransactionLogValue version")),
    };
    let producer_id = get_i64(&mut buf)?;
    let producer_epoch = get_i16(&mut buf)?;
    let timeout_ms = get_i32(&mut buf)?;
    if buf.remaining() < 1 {
        return Err(SchemaError("truncated"));
    }
    let state =
        TxnState::from_code(buf.get_i8()).ok_or(SchemaError("unknown transaction state"))?;
    let count = if flexible {
        get_compact_len(&mut buf)?
    } else {
        let count = get_i32(&mut buf)?;
        (count >= 0).then_some(count as usize)
    };
    let mut partitions = BTreeMap::new();
    for _ in 0..count.unwrap_or(0) {
        let topic = if flexible {
            get_compact_nullable_string(&mut buf)?.ok_or(SchemaError("null topic"))?
        } else {
            get_string(&mut buf)?
        };
        let ids = if flexible {
            get_compact_len(&mut buf)?.unwrap_or(0)
        } else {
            get_i32(&mut buf)?.max(0) as usize
        };
        let mut set = BTreeSet::new();
        for _ in 0..ids {
            set.insert(get_i32(&mut buf)?);
        }
        if flexible {
            skip_tagged_fields(&mut buf)?;
        }
        partitions.insert(topic, set);
    }
    let last_update_ms = get_i64(&mut buf)?;
    let start_ms = get_i64(&mut buf)?;
    let mut previous_producer_id = -1;
    if flexible {
        previous_producer_id = read_tagged_previous_producer_id(&mut buf)?.unwrap_or(-1);
    }
    Ok(TxnMetadata {
        transactional_id: transactional_id.to_string(),
        producer_id,
        previous_producer_id,
        producer_epoch,
        timeout_ms,
        state,
        partitions,
        last_update_ms,
        start_ms,
    })
}

/// The top-level tagged fields of a v1 value: tag 0 is the previous producer id; the others
/// (next producer id, client transaction version) matter only to KIP-890 transactions.
fn read_tagged_previous_producer_id(buf: &mut &[u8]) -> Result<Option<i64>, SchemaError> {
    if buf.is_empty() {
        return Ok(None);
    }
    let mut previous = None;
    for _ in 0..get_uvarint(buf)? {
        let tag = get_uvarint(buf)?;
        let size = get_uvarint(buf)? as usize;
        if size > buf.remaining() {
            return Err(SchemaError("tagged field beyond the record"));
        }
        let (mut field, rest) = buf.split_at(size);
        if tag == 0 {
            previous = Some(get_i64(&mut field)?);
        }
        *buf = rest;
    }
    Ok(previous)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value() -> TxnMetadata {
        TxnMetadata {
            transactional_id: "tx-1".to_string(),
            producer_id: 4_000,
            previous_producer_id: -1,
            producer_epoch: 3,
            timeout_ms: 60_000,
            state: TxnState::Ongoing,
            partitions: BTreeMap::from([
                ("a".to_string(), BTreeSet::from([0, 2])),
                ("b".to_string(), BTreeSet::from([1])),
            ]),
            last_update_ms: 1_000,
            start_ms: 900,
        }
    }

    #[test]
    fn keys_and_values_round_trip_with_kafkas_layout() {
        let key = encode_key("tx-1");
        assert_eq!(&key[..], &[0, 0, 0, 4, b't', b'x', b'-', b'1']);
        assert_eq!(decode_key(&key).unwrap().as_deref(), Some("tx-1"));
        assert_eq!(decode_key(&[0, 1, 0, 1, b'g']).unwrap(), None);

        let bytes = encode_value(&value());
        assert_eq!(&bytes[..2], &[0, 0], "version 0");
        assert_eq!(&bytes[2..10], &4_000i64.to_be_bytes());
        assert_eq!(decode_value("tx-1", &bytes).unwrap(), value());
        for cut in 0..bytes.len() {
            assert!(decode_value("tx-1", &bytes[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn flexible_values_are_read() {
        // v1 as Kafka writes it for transactions version 2: compact fields, tagged ones.
        let mut buf = BytesMut::new();
        buf.put_i16(1);
        buf.put_i64(4_000);
        buf.put_i16(3);
        buf.put_i32(60_000);
        buf.put_i8(1);
        buf.put_u8(2); // one topic
        buf.put_u8(2); // "a"
        buf.put_slice(b"a");
        buf.put_u8(3); // two ids
        buf.put_i32(0);
        buf.put_i32(2);
        buf.put_u8(0); // no tagged fields in the topic
        buf.put_i64(1_000);
        buf.put_i64(900);
        buf.put_u8(2); // two tagged fields
        buf.put_u8(0);
        buf.put_u8(8);
        buf.put_i64(3_999);
        buf.put_u8(2);
        buf.put_u8(2);
        buf.put_i16(2);
        let decoded = decode_value("tx-1", &buf).unwrap();
        assert_eq!(decoded.previous_producer_id, 3_999);
        assert_eq!(decoded.partitions["a"], BTreeSet::from([0, 2]));
        assert_eq!(decoded.state, TxnState::Ongoing);
    }
}
