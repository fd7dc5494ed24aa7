//! The share group coordinator's records in `__consumer_offsets`, byte for byte Kafka 4.4's
//! (so `kafka-dump-log --offsets-decoder` reads them): `ShareGroupMetadata` (record type 11:
//! the group epoch and a metadata hash) and `ShareGroupStatePartitionMetadata` (type 15: the
//! share-partitions whose state the share coordinators hold — Kafka's initialized topics).
//! Keys are the i16 record type and the group id; values are version 0, flexible. A null value
//! deletes the group. Members and assignments are not written (Kafka's types 10, 12–14):
//! members join again after their coordinator moves.

use crate::record::schema::{
    SchemaError, get_compact_i32_array, get_compact_len, get_compact_nullable_string, get_i16,
    get_i32, get_i64, get_string, put_compact_i32_array, put_compact_nullable_string, put_string,
    put_uvarint, skip_tagged_fields,
};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

const METADATA: i16 = 11;
const STATE_PARTITIONS: i16 = 15;

/// Which of the two records a key names, and for which group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareGroupKey {
    Metadata(String),
    StatePartitions(String),
}

impl ShareGroupKey {
    pub fn encode(&self) -> Bytes {
        let (kind, group) = match self {
            Self::Metadata(g) => (METADATA, g),
            Self::StatePartitions(g) => (STATE_PARTITIONS, g),
        };
        let mut buf = BytesMut::with_capacity(4 + group.len());
        buf.put_i16(kind);
        put_string(&mut buf, group);
        buf.freeze()
    }

    /// `Ok(None)`: a record type the share group coordinator does not own.
    pub fn decode(mut buf: &[u8]) -> Result<Option<Self>, SchemaError> {
        let kind = get_i16(&mut buf)?;
        if kind != METADATA && kind != STATE_PARTITIONS {
            return Ok(None);
        }
        let group = get_string(&mut buf)?;
        Ok(Some(if kind == METADATA {
            Self::Metadata(group)
        } else {
            Self::StatePartitions(group)
        }))
    }

    pub fn group(&self) -> &str {
        match self {
            Self::Metadata(g) | Self::StatePartitions(g) => g,
        }
    }
}

/// ShareGroupMetadataValue v0: the group epoch (the metadata hash is written as 0: Sluice
/// recomputes assignments from the topics it sees).
pub fn encode_metadata(epoch: i32) -> Bytes {
    let mut buf = BytesMut::with_capacity(16);
    buf.put_i16(0);
    buf.put_i32(epoch);
    buf.put_i64(0);
    put_uvarint(&mut buf, 0);
    buf.freeze()
}

pub fn decode_metadata(mut buf: &[u8]) -> Result<i32, SchemaError> {
    if get_i16(&mut buf)? != 0 {
        return Err(SchemaError("unknown ShareGroupMetadataValue version"));
    }
    let epoch = get_i32(&mut buf)?;
    get_i64(&mut buf)?;
    if buf.is_empty() {
        return Err(SchemaError("truncated ShareGroupMetadataValue"));
    }
    skip_tagged_fields(&mut buf)?;
    Ok(epoch)
}

/// ShareGroupStatePartitionMetadataValue v0 with `initialized` as InitializedTopics (each
/// topic with its name as `names` gives it) and nothing initializing or being deleted.
pub fn encode_state_partitions(
    initialized: &BTreeSet<(Uuid, i32)>,
    names: impl Fn(Uuid) -> String,
) -> Bytes {
    let mut topics: BTreeMap<Uuid, Vec<i32>> = BTreeMap::new();
    for (topic_id, partition) in initialized {
        topics.entry(*topic_id).or_default().push(*partition);
    }
    let mut buf = BytesMut::with_capacity(16 + topics.len() * 40);
    buf.put_i16(0);
    put_uvarint(&mut buf, 1); // InitializingTopics: none
    put_uvarint(&mut buf, topics.len() as u64 + 1);
    for (topic_id, partitions) in &topics {
        buf.put_slice(topic_id.as_bytes());
        put_compact_nullable_string(&mut buf, Some(&names(*topic_id)));
        put_compact_i32_array(&mut buf, partitions);
        put_uvarint(&mut buf, 0);
    }
    put_uvarint(&mut buf, 1); // DeletingTopics: none
    put_uvarint(&mut buf, 0);
    buf.freeze()
}

/// The initialized and initializing share-partitions of a ShareGroupStatePartitionMetadataValue
/// (both may hold state).
pub fn decode_state_partitions(mut buf: &[u8]) -> Result<BTreeSet<(Uuid, i32)>, SchemaError> {
    if get_i16(&mut buf)? != 0 {
        return Err(SchemaError(
            "unknown ShareGroupStatePartitionMetadataValue version",
        ));
    }
    let mut partitions = BTreeSet::new();
    for _ in 0..2 {
        let count = get_compact_len(&mut buf)?.unwrap_or(0);
        // A topic takes 16 + 1 + 1 + 1 bytes at least.
        if count > buf.remaining() / 19 {
            return Err(SchemaError("more topics than the record holds"));
        }
        for _ in 0..count {
            let topic_id = get_uuid(&mut buf)?;
            get_compact_nullable_string(&mut buf)?;
            let ids = get_compact_i32_array(&mut buf)?.unwrap_or_default();
            skip_tagged_fields(&mut buf)?;
            partitions.extend(ids.into_iter().map(|p| (topic_id, p)));
        }
    }
    let deleting = get_compact_len(&mut buf)?.unwrap_or(0);
    if deleting > buf.remaining() / 18 {
        return Err(SchemaError("more topics than the record holds"));
    }
    for _ in 0..deleting {
        get_uuid(&mut buf)?;
        get_compact_nullable_string(&mut buf)?;
        skip_tagged_fields(&mut buf)?;
    }
    if buf.is_empty() {
        return Err(SchemaError(
            "truncated ShareGroupStatePartitionMetadataValue",
        ));
    }
    skip_tagged_fields(&mut buf)?;
    Ok(partitions)
}

fn get_uuid(buf: &mut &[u8]) -> Result<Uuid, SchemaError> {
    if buf.remaining() < 16 {
        return Err(SchemaError("truncated uuid"));
    }
    let mut id = [0u8; 16];
    buf.copy_to_slice(&mut id);
    Ok(Uuid::from_bytes(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_group_records_round_trip_and_garbage_is_refused() {
        for key in [
            ShareGroupKey::Metadata("g".into()),
            ShareGroupKey::StatePartitions("g".into()),
        ] {
            assert_eq!(ShareGroupKey::decode(&key.encode()), Ok(Some(key.clone())));
        }
        let metadata = encode_metadata(7);
        assert_eq!(decode_metadata(&metadata), Ok(7));
        for cut in 0..metadata.len() {
            assert!(decode_metadata(&metadata[..cut]).is_err(), "cut at {cut}");
        }
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let initialized: BTreeSet<(Uuid, i32)> = [(a, 0), (a, 2), (b, 1)].into_iter().collect();
        let bytes = encode_state_partitions(&initialized, |id| id.to_string());
        assert_eq!(decode_state_partitions(&bytes), Ok(initialized));
        for cut in 0..bytes.len() {
            assert!(
                decode_state_partitions(&bytes[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        // A consumer group's key is not the share coordinator's.
        let mut other = BytesMut::new();
        other.put_i16(3);
        put_string(&mut other, "g");
        assert_eq!(ShareGroupKey::decode(&other), Ok(None));
    }
}
