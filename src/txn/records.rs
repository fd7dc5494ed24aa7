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
//! As Kafka does, this broker writes v0 for a state last changed by a client of transaction
//! version 0/1, and v1 (with the tagged fields that differ from their defaults) for one of
//! transaction version 2; it reads both. A null value (tombstone) deletes the transactional
//! id.

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
    let flexible = value.transaction_version >= super::state::EPOCH_BUMP_VERSION;
    let mut buf = BytesMut::new();
    buf.put_i16(i16::from(flexible));
    buf.put_i64(value.producer_id);
    buf.put_i16(value.producer_epoch);
    buf.put_i32(value.timeout_ms);
    buf.put_i8(value.state.code());
    let put_len = |buf: &mut BytesMut, len: usize| {
        if flexible {
            put_uvarint(buf, len as u64 + 1);
        } else {
            buf.put_i32(len as i32);
        }
    };
    put_len(&mut buf, value.partitions.len());
    for (topic, partitions) in &value.partitions {
        if flexible {
            put_uvarint(&mut buf, topic.len() as u64 + 1);
            buf.put_slice(topic.as_bytes());
        } else {
            put_string(&mut buf, topic);
        }
        put_len(&mut buf, partitions.len());
        for partition in partitions {
            buf.put_i32(*partition);
        }
        if flexible {
            buf.put_u8(0); // no tagged fields
        }
    }
    buf.put_i64(value.last_update_ms);
    buf.put_i64(value.start_ms);
    if flexible {
        // Kafka writes a tagged field only when it differs from its default.
        let mut tagged: Vec<(u64, Vec<u8>)> = Vec::new();
        if value.previous_producer_id != -1 {
            tagged.push((0, value.previous_producer_id.to_be_bytes().to_vec()));
        }
        if value.next_producer_id != -1 {
            tagged.push((1, value.next_producer_id.to_be_bytes().to_vec()));
        }
        if value.transaction_version != 0 {
            tagged.push((2, value.transaction_version.to_be_bytes().to_vec()));
        }
        put_uvarint(&mut buf, tagged.len() as u64);
        for (tag, field) in tagged {
            put_uvarint(&mut buf, tag);
            put_uvarint(&mut buf, field.len() as u64);
            buf.put_slice(&field);
        }
    }
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
    let tagged = if flexible {
        read_tagged_fields(&mut buf)?
    } else {
        Tagged::default()
    };
    Ok(TxnMetadata {
        transactional_id: transactional_id.to_string(),
        producer_id,
        producer_epoch,
        timeout_ms,
        state,
        partitions,
        last_update_ms,
        start_ms,
        previous_producer_id: tagged.previous_producer_id,
        next_producer_id: tagged.next_producer_id,
        transaction_version: tagged.transaction_version,
    })
}

/// The top-level tagged fields of a v1 value (Kafka's defaults when absent).
struct Tagged {
    previous_producer_id: i64,
    next_producer_id: i64,
    transaction_version: i16,
}

impl Default for Tagged {
    fn default() -> Self {
        Self {
            previous_producer_id: -1,
            next_producer_id: -1,
            transaction_version: 0,
        }
    }
}

fn read_tagged_fields(buf: &mut &[u8]) -> Result<Tagged, SchemaError> {
    let mut tagged = Tagged::default();
    for _ in 0..get_uvarint(buf)? {
        let tag = get_uvarint(buf)?;
        let size = get_uvarint(buf)? as usize;
        if size > buf.remaining() {
            return Err(SchemaError("tagged field beyond the record"));
        }
        let (mut field, rest) = buf.split_at(size);
        match tag {
            0 => tagged.previous_producer_id = get_i64(&mut field)?,
            1 => tagged.next_producer_id = get_i64(&mut field)?,
            2 => tagged.transaction_version = get_i16(&mut field)?,
            _ => {} // NextProducerEpoch (3) and later ones: not used here
        }
        *buf = rest;
    }
    Ok(tagged)
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
            next_producer_id: -1,
            transaction_version: 0,
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
        assert_eq!(decoded.transaction_version, 2);
        assert_eq!(decoded.next_producer_id, -1);
    }

    #[test]
    fn transaction_version_2_states_are_written_as_v1_and_read_back() {
        let v2 = TxnMetadata {
            previous_producer_id: 3_999,
            next_producer_id: 5_000,
            transaction_version: 2,
            ..value()
        };
        let bytes = encode_value(&v2);
        assert_eq!(&bytes[..2], &[0, 1], "version 1");
        assert_eq!(decode_value("tx-1", &bytes).unwrap(), v2);
        for cut in 0..bytes.len() {
            assert!(decode_value("tx-1", &bytes[..cut]).is_err(), "cut at {cut}");
        }
    }
}
