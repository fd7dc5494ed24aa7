//! The records of `__share_group_state` (Kafka's share coordinator): one snapshot of a
//! share-partition's state per key, byte for byte Kafka 4.4's `ShareSnapshotKey` (record type
//! 0: group id, topic id, partition) and `ShareSnapshotValue` v0 (flexible: snapshot epoch,
//! state epoch, leader epoch, start offset, create and write timestamps, state batches; the
//! tagged DeliveryCompleteCount is read past), so `kafka-dump-log --share-group-state-decoder`
//! reads them. A null value (tombstone) deletes the state. Kafka's `ShareUpdate` deltas are not
//! written: every change writes a snapshot, which compaction keeps to one per key.

use super::partition::{RecordState, StateBatch};
use crate::record::schema::{
    SchemaError, get_compact_len, get_i16, get_i32, get_i64, get_string, put_string, put_uvarint,
    skip_tagged_fields,
};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use uuid::Uuid;

const SNAPSHOT_KEY: i16 = 0;
const SNAPSHOT_VALUE_VERSION: i16 = 0;

/// Which share-partition a record is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StateKey {
    pub group: String,
    pub topic_id: Uuid,
    pub partition: i32,
}

impl StateKey {
    pub fn encode(&self) -> Bytes {
        let mut buf = BytesMut::with_capacity(2 + 2 + self.group.len() + 16 + 4);
        buf.put_i16(SNAPSHOT_KEY);
        put_string(&mut buf, &self.group);
        buf.put_slice(self.topic_id.as_bytes());
        buf.put_i32(self.partition);
        buf.freeze()
    }

    /// `Ok(None)`: a record type this broker does not read (Kafka's `ShareUpdate`).
    pub fn decode(mut buf: &[u8]) -> Result<Option<Self>, SchemaError> {
        if get_i16(&mut buf)? != SNAPSHOT_KEY {
            return Ok(None);
        }
        let group = get_string(&mut buf)?;
        if buf.remaining() < 16 {
            return Err(SchemaError("truncated topic id"));
        }
        let mut id = [0u8; 16];
        buf.copy_to_slice(&mut id);
        let partition = get_i32(&mut buf)?;
        Ok(Some(Self {
            group,
            topic_id: Uuid::from_bytes(id),
            partition,
        }))
    }

    /// `group:topicId:partition`, Kafka's share coordinator key, which places the state on a
    /// partition of `__share_group_state`.
    pub fn coordinator_key(&self) -> String {
        format!("{}:{}:{}", self.group, self.topic_id, self.partition)
    }
}

/// A share-partition's persisted state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub snapshot_epoch: i32,
    pub state_epoch: i32,
    pub leader_epoch: i32,
    pub start_offset: i64,
    pub create_timestamp: i64,
    pub write_timestamp: i64,
    pub batches: Vec<StateBatch>,
}

impl Snapshot {
    /// Offsets at or above the start offset whose delivery is complete (KIP-1226's
    /// DeliveryCompleteCount).
    pub fn delivery_complete_count(&self) -> i64 {
        self.batches
            .iter()
            .filter(|b| b.state.is_done() && b.last_offset >= self.start_offset)
            .map(|b| b.last_offset - b.first_offset.max(self.start_offset) + 1)
            .sum()
    }

    pub fn encode(&self) -> Bytes {
        let mut buf = BytesMut::with_capacity(48 + self.batches.len() * 20);
        buf.put_i16(SNAPSHOT_VALUE_VERSION);
        buf.put_i32(self.snapshot_epoch);
        buf.put_i32(self.state_epoch);
        buf.put_i32(self.leader_epoch);
        buf.put_i64(self.start_offset);
        buf.put_i64(self.create_timestamp);
        buf.put_i64(self.write_timestamp);
        put_uvarint(&mut buf, self.batches.len() as u64 + 1);
        for batch in &self.batches {
            buf.put_i64(batch.first_offset);
            buf.put_i64(batch.last_offset);
            buf.put_i8(batch.state as i8);
            buf.put_i16(batch.delivery_count);
            put_uvarint(&mut buf, 0);
        }
        put_uvarint(&mut buf, 0);
        buf.freeze()
    }

    pub fn decode(mut buf: &[u8]) -> Result<Self, SchemaError> {
        if get_i16(&mut buf)? != SNAPSHOT_VALUE_VERSION {
            return Err(SchemaError("unknown ShareSnapshotValue version"));
        }
        let snapshot_epoch = get_i32(&mut buf)?;
        let state_epoch = get_i32(&mut buf)?;
        let leader_epoch = get_i32(&mut buf)?;
        let start_offset = get_i64(&mut buf)?;
        let create_timestamp = get_i64(&mut buf)?;
        let write_timestamp = get_i64(&mut buf)?;
        let count = get_compact_len(&mut buf)?.unwrap_or(0);
        // Each batch takes 20 bytes at least: the count cannot promise more than is there.
        if count > buf.remaining() / 20 {
            return Err(SchemaError("more state batches than the record holds"));
        }
        let mut batches = Vec::with_capacity(count);
        for _ in 0..count {
            let first_offset = get_i64(&mut buf)?;
            let last_offset = get_i64(&mut buf)?;
            if buf.remaining() < 1 {
                return Err(SchemaError("truncated state batch"));
            }
            let state =
                RecordState::from_id(buf.get_i8()).ok_or(SchemaError("unknown delivery state"))?;
            let delivery_count = get_i16(&mut buf)?;
            skip_tagged_fields(&mut buf)?;
            if last_offset < first_offset {
                return Err(SchemaError("state batch ends before it starts"));
            }
            batches.push(StateBatch {
                first_offset,
                last_offset,
                state,
                delivery_count,
            });
        }
        if buf.is_empty() {
            return Err(SchemaError("truncated ShareSnapshotValue"));
        }
        skip_tagged_fields(&mut buf)?;
        Ok(Self {
            snapshot_epoch,
            state_epoch,
            leader_epoch,
            start_offset,
            create_timestamp,
            write_timestamp,
            batches,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_snapshots_round_trip_and_garbage_is_refused() {
        let key = StateKey {
            group: "g".into(),
            topic_id: Uuid::new_v4(),
            partition: 3,
        };
        assert_eq!(StateKey::decode(&key.encode()), Ok(Some(key.clone())));
        let snapshot = Snapshot {
            snapshot_epoch: 3,
            state_epoch: 2,
            leader_epoch: 0,
            start_offset: 40,
            create_timestamp: 1_700_000_000_000,
            write_timestamp: 1_700_000_000_500,
            batches: vec![StateBatch {
                first_offset: 41,
                last_offset: 44,
                state: RecordState::Acknowledged,
                delivery_count: 1,
            }],
        };
        let bytes = snapshot.encode();
        assert_eq!(Snapshot::decode(&bytes), Ok(snapshot));
        for cut in 0..bytes.len() {
            assert!(Snapshot::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut huge = bytes[..38].to_vec();
        huge.extend_from_slice(&[0xff, 0xff, 0xff, 0x0f]);
        assert!(Snapshot::decode(&huge).is_err());
    }
}
