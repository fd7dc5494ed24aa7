//! Kafka's record schemas for `__consumer_offsets`, so tools that read the topic understand
//! what this broker writes (kafka-console-consumer's OffsetsMessageFormatter and
//! GroupMetadataMessageFormatter, kcat with a decoder...). Strings are i16-length-prefixed,
//! byte fields i32-length-prefixed, nullable ones use length -1. All big-endian.
//!
//! ```text
//! key   version 0|1  OffsetCommitKey      group: string, topic: string, partition: i32
//! key   version 2    GroupMetadataKey     group: string
//! value OffsetCommitValue v3   offset: i64, leader_epoch: i32, metadata: string, commit_timestamp: i64
//!       (v0: offset, metadata, timestamp; v1: + expire_timestamp; v2: offset, metadata, commit_timestamp)
//! value GroupMetadataValue v3  protocol_type: string, generation: i32, protocol: string?,
//!       leader: string?, current_state_timestamp: i64, members: [member_id: string,
//!       group_instance_id: string?, client_id: string, client_host: string,
//!       rebalance_timeout: i32, session_timeout: i32, subscription: bytes, assignment: bytes]
//!       (v0: no rebalance_timeout/current_state_timestamp/instance id; v1: + rebalance_timeout;
//!       v2: + current_state_timestamp)
//! ```
//! A null value (tombstone) deletes the key.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
#[error("malformed __consumer_offsets record: {0}")]
pub struct SchemaError(pub &'static str);

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecordKey {
    Offset {
        group: String,
        topic: String,
        partition: i32,
    },
    Group {
        group: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetValue {
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: String,
    pub commit_timestamp: i64,
    /// Only in value version 1 (explicit retention from OffsetCommit v2-v4).
    pub expire_timestamp: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupValue {
    pub protocol_type: String,
    pub generation: i32,
    pub protocol: Option<String>,
    pub leader: Option<String>,
    pub current_state_timestamp: i64,
    pub members: Vec<MemberValue>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemberValue {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub rebalance_timeout: i32,
    pub session_timeout: i32,
    pub subscription: Bytes,
    pub assignment: Bytes,
}

const OFFSET_KEY_VERSION: i16 = 1;
const GROUP_KEY_VERSION: i16 = 2;
const OFFSET_VALUE_VERSION: i16 = 3;
const GROUP_VALUE_VERSION: i16 = 3;

impl RecordKey {
    pub fn encode(&self) -> Bytes {
        let mut buf = BytesMut::new();
        match self {
            RecordKey::Offset {
                group,
                topic,
                partition,
            } => {
                buf.put_i16(OFFSET_KEY_VERSION);
                put_string(&mut buf, group);
                put_string(&mut buf, topic);
                buf.put_i32(*partition);
            }
            RecordKey::Group { group } => {
                buf.put_i16(GROUP_KEY_VERSION);
                put_string(&mut buf, group);
            }
        }
        buf.freeze()
    }

    /// Decodes a key; `Ok(None)` for key versions this coordinator does not own (KIP-848 and
    /// share-group records use versions 3 and up).
    pub fn decode(mut buf: &[u8]) -> Result<Option<Self>, SchemaError> {
        let version = get_i16(&mut buf)?;
        match version {
            0 | 1 => Ok(Some(RecordKey::Offset {
                group: get_string(&mut buf)?,
                topic: get_string(&mut buf)?,
                partition: get_i32(&mut buf)?,
            })),
            2 => Ok(Some(RecordKey::Group {
                group: get_string(&mut buf)?,
            })),
            _ => Ok(None),
        }
    }
}

impl OffsetValue {
    pub fn encode(&self) -> Bytes {
        let mut buf = BytesMut::new();
        match self.expire_timestamp {
            // Version 1 is the only one that can carry an explicit expiry.
            Some(expire) => {
                buf.put_i16(1);
                buf.put_i64(self.offset);
                put_string(&mut buf, &self.metadata);
                buf.put_i64(self.commit_timestamp);
                buf.put_i64(expire);
            }
            None => {
                buf.put_i16(OFFSET_VALUE_VERSION);
                buf.put_i64(self.offset);
                buf.put_i32(self.leader_epoch);
                put_string(&mut buf, &self.metadata);
                buf.put_i64(self.commit_timestamp);
            }
        }
        buf.freeze()
    }

    pub fn decode(mut buf: &[u8]) -> Result<Self, SchemaError> {
        let version = get_i16(&mut buf)?;
        let offset = get_i64(&mut buf)?;
        let leader_epoch = if version >= 3 { get_i32(&mut buf)? } else { -1 };
        let metadata = get_string(&mut buf)?;
        let commit_timestamp = get_i64(&mut buf)?;
        let expire_timestamp = if version == 1 {
            Some(get_i64(&mut buf)?)
        } else {
            None
        };
        if version > 4 {
            return Err(SchemaError("unknown offset value version"));
        }
        Ok(Self {
            offset,
            leader_epoch,
            metadata,
            commit_timestamp,
            expire_timestamp,
        })
    }
}

impl GroupValue {
    pub fn encode(&self) -> Bytes {
        let mut buf = BytesMut::new();
        buf.put_i16(GROUP_VALUE_VERSION);
        put_string(&mut buf, &self.protocol_type);
        buf.put_i32(self.generation);
        put_nullable_string(&mut buf, self.protocol.as_deref());
        put_nullable_string(&mut buf, self.leader.as_deref());
        buf.put_i64(self.current_state_timestamp);
        buf.put_i32(self.members.len() as i32);
        for m in &self.members {
            put_string(&mut buf, &m.member_id);
            put_nullable_string(&mut buf, m.group_instance_id.as_deref());
            put_string(&mut buf, &m.client_id);
            put_string(&mut buf, &m.client_host);
            buf.put_i32(m.rebalance_timeout);
            buf.put_i32(m.session_timeout);
            put_bytes(&mut buf, &m.subscription);
            put_bytes(&mut buf, &m.assignment);
        }
        buf.freeze()
    }

    pub fn decode(mut buf: &[u8]) -> Result<Self, SchemaError> {
        let version = get_i16(&mut buf)?;
        if !(0..=3).contains(&version) {
            return Err(SchemaError("unsupported group metadata value version"));
        }
        let protocol_type = get_string(&mut buf)?;
        let generation = get_i32(&mut buf)?;
        let protocol = get_nullable_string(&mut buf)?;
        let leader = get_nullable_string(&mut buf)?;
        let current_state_timestamp = if version >= 2 { get_i64(&mut buf)? } else { -1 };
        let count = get_i32(&mut buf)?;
        if count < 0 || count as usize > buf.len() {
            return Err(SchemaError("member count out of range"));
        }
        let mut members = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let member_id = get_string(&mut buf)?;
            let group_instance_id = if version >= 3 {
                get_nullable_string(&mut buf)?
            } else {
                None
            };
            let client_id = get_string(&mut buf)?;
            let client_host = get_string(&mut buf)?;
            let rebalance_timeout = if version >= 1 { get_i32(&mut buf)? } else { -1 };
            let session_timeout = get_i32(&mut buf)?;
            let subscription = get_bytes(&mut buf)?;
            let assignment = get_bytes(&mut buf)?;
            members.push(MemberValue {
                member_id,
                group_instance_id,
                client_id,
                client_host,
                rebalance_timeout,
                session_timeout,
                subscription,
                assignment,
            });
        }
        Ok(Self {
            protocol_type,
            generation,
            protocol,
            leader,
            current_state_timestamp,
            members,
        })
    }
}

fn put_string(buf: &mut BytesMut, text: &str) {
    buf.put_i16(text.len() as i16);
    buf.put_slice(text.as_bytes());
}

fn put_nullable_string(buf: &mut BytesMut, text: Option<&str>) {
    match text {
        Some(text) => put_string(buf, text),
        None => buf.put_i16(-1),
    }
}

fn put_bytes(buf: &mut BytesMut, bytes: &[u8]) {
    buf.put_i32(bytes.len() as i32);
    buf.put_slice(bytes);
}

fn get_i16(buf: &mut &[u8]) -> Result<i16, SchemaError> {
    if buf.remaining() < 2 {
        return Err(SchemaError("truncated"));
    }
    Ok(buf.get_i16())
}

fn get_i32(buf: &mut &[u8]) -> Result<i32, SchemaError> {
    if buf.remaining() < 4 {
        return Err(SchemaError("truncated"));
    }
    Ok(buf.get_i32())
}

fn get_i64(buf: &mut &[u8]) -> Result<i64, SchemaError> {
    if buf.remaining() < 8 {
        return Err(SchemaError("truncated"));
    }
    Ok(buf.get_i64())
}

fn get_nullable_string(buf: &mut &[u8]) -> Result<Option<String>, SchemaError> {
    let len = get_i16(buf)?;
    if len < 0 {
        return Ok(None);
    }
    if buf.remaining() < len as usize {
        return Err(SchemaError("truncated string"));
    }
    let text = String::from_utf8(buf[..len as usize].to_vec())
        .map_err(|_| SchemaError("string is not UTF-8"))?;
    buf.advance(len as usize);
    Ok(Some(text))
}

fn get_string(buf: &mut &[u8]) -> Result<String, SchemaError> {
    get_nullable_string(buf)?.ok_or(SchemaError("null where a string is required"))
}

fn get_bytes(buf: &mut &[u8]) -> Result<Bytes, SchemaError> {
    let len = get_i32(buf)?;
    if len < 0 {
        return Ok(Bytes::new());
    }
    if buf.remaining() < len as usize {
        return Err(SchemaError("truncated bytes"));
    }
    let bytes = Bytes::copy_from_slice(&buf[..len as usize]);
    buf.advance(len as usize);
    Ok(bytes)
}

/// Kafka's group placement: `Utils.abs(groupId.hashCode()) % partitions`, with Java's
/// `String.hashCode` over UTF-16 code units.
pub fn partition_for(group: &str, partitions: i32) -> i32 {
    let hash = group
        .encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32));
    let positive = if hash == i32::MIN { 0 } else { hash.abs() };
    positive % partitions.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_layout() {
        let key = RecordKey::Offset {
            group: "g".into(),
            topic: "t".into(),
            partition: 3,
        };
        let bytes = key.encode();
        assert_eq!(&bytes[..], &[0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 3]);
        assert_eq!(RecordKey::decode(&bytes).unwrap(), Some(key));
        let key = RecordKey::Group {
            group: "grp".into(),
        };
        assert_eq!(RecordKey::decode(&key.encode()).unwrap(), Some(key));
        assert_eq!(
            RecordKey::decode(&[0, 5, 0, 0]).unwrap(),
            None,
            "KIP-848 keys are someone else's"
        );
        assert!(RecordKey::decode(&[0, 1, 0, 9, b'x']).is_err());
    }

    #[test]
    fn values_round_trip() {
        let offset = OffsetValue {
            offset: 42,
            leader_epoch: 7,
            metadata: "meta".into(),
            commit_timestamp: 1_000,
            expire_timestamp: None,
        };
        assert_eq!(OffsetValue::decode(&offset.encode()).unwrap(), offset);
        let with_expiry = OffsetValue {
            leader_epoch: -1,
            expire_timestamp: Some(5_000),
            ..offset
        };
        assert_eq!(
            OffsetValue::decode(&with_expiry.encode()).unwrap(),
            with_expiry
        );
        let group = GroupValue {
            protocol_type: "consumer".into(),
            generation: 4,
            protocol: Some("range".into()),
            leader: Some("m1".into()),
            current_state_timestamp: 99,
            members: vec![MemberValue {
                member_id: "m1".into(),
                group_instance_id: Some("i1".into()),
                client_id: "c".into(),
                client_host: "/127.0.0.1".into(),
                rebalance_timeout: 300_000,
                session_timeout: 45_000,
                subscription: Bytes::from_static(b"sub"),
                assignment: Bytes::from_static(b"asg"),
            }],
        };
        assert_eq!(GroupValue::decode(&group.encode()).unwrap(), group);
        assert!(GroupValue::decode(&group.encode()[..20]).is_err());
    }

    #[test]
    fn partitioning_matches_java_string_hash_code() {
        // "a".hashCode() = 97; "group1".hashCode() = -1_237_460_590 (java.lang.String).
        assert_eq!(partition_for("a", 50), 97 % 50);
        assert_eq!(partition_for("group1", 50), 1_237_460_590 % 50);
        // A negative hash: "polygenelubricants".hashCode() = Integer.MIN_VALUE -> 0.
        assert_eq!(partition_for("polygenelubricants", 50), 0);
    }
}
