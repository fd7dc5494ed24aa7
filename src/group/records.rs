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
//!
//! KIP-848 consumer groups (key = i16 record type + non-flexible fields; value = i16 version 0
//! + flexible fields: compact strings/arrays, 16-byte uuids, a tagged-field section per struct):
//!
//! ```text
//! key 3 ConsumerGroupMetadataKey          group            -> epoch: i32
//! key 5 ConsumerGroupMemberMetadataKey    group, member    -> instance_id?, rack_id?, client_id,
//!       client_host, subscribed_topic_names: [string], subscribed_topic_regex?,
//!       rebalance_timeout_ms: i32, server_assignor?
//! key 6 ConsumerGroupTargetAssignmentMetadataKey group     -> assignment_epoch: i32; tagged
//!       field 0, assignment_timestamp: i64 (KIP-1263)
//! key 7 ConsumerGroupTargetAssignmentMemberKey   group, member -> [topic_id: uuid, partitions: [i32]]
//! key 8 ConsumerGroupCurrentMemberAssignmentKey  group, member -> member_epoch: i32,
//!       previous_member_epoch: i32, state: i8, assigned: [topic partitions],
//!       pending_revocation: [topic partitions]; each with tagged field 0, assignment_epochs:
//!       [i32] (KIP-1251), one per partition
//! ```
//! (Key 4, ConsumerGroupPartitionMetadata, is not written: Kafka 4.1 replaced it by a hash.)
//! Streams groups' keys (17, 19–23: group, and member for 19, 21, 22) are [`RecordKey::Streams`].
//!
//! A null value (tombstone) deletes the key.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::record::schema::*;
pub use crate::record::schema::{SchemaError, partition_for};

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
    ConsumerGroup {
        group: String,
    },
    ConsumerMember {
        group: String,
        member: String,
    },
    TargetMetadata {
        group: String,
    },
    TargetMember {
        group: String,
        member: String,
    },
    CurrentAssignment {
        group: String,
        member: String,
    },
    /// Streams groups (KIP-1071; values in `streams/records.rs`): record types 17, 19–23.
    Streams {
        kind: StreamsRecord,
        group: String,
        /// The member, for the per-member kinds.
        member: Option<String>,
    },
}

/// The streams group record kinds and their record types (key versions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StreamsRecord {
    Metadata = 17,
    Member = 19,
    TargetMetadata = 20,
    TargetMember = 21,
    CurrentAssignment = 22,
    Topology = 23,
}

impl StreamsRecord {
    fn of_version(version: i16) -> Option<Self> {
        Some(match version {
            17 => Self::Metadata,
            19 => Self::Member,
            20 => Self::TargetMetadata,
            21 => Self::TargetMember,
            22 => Self::CurrentAssignment,
            23 => Self::Topology,
            _ => return None,
        })
    }

    /// Whether the key names a member besides the group.
    pub fn per_member(self) -> bool {
        matches!(
            self,
            Self::Member | Self::TargetMember | Self::CurrentAssignment
        )
    }
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
            RecordKey::ConsumerGroup { group } | RecordKey::TargetMetadata { group } => {
                buf.put_i16(if matches!(self, RecordKey::ConsumerGroup { .. }) {
                    3
                } else {
                    6
                });
                put_string(&mut buf, group);
            }
            RecordKey::ConsumerMember { group, member }
            | RecordKey::TargetMember { group, member }
            | RecordKey::CurrentAssignment { group, member } => {
                buf.put_i16(match self {
                    RecordKey::ConsumerMember { .. } => 5,
                    RecordKey::TargetMember { .. } => 7,
                    _ => 8,
                });
                put_string(&mut buf, group);
                put_string(&mut buf, member);
            }
            RecordKey::Streams {
                kind,
                group,
                member,
            } => {
                buf.put_i16(*kind as i16);
                put_string(&mut buf, group);
                if let Some(member) = member {
                    put_string(&mut buf, member);
                }
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
            3 => Ok(Some(RecordKey::ConsumerGroup {
                group: get_string(&mut buf)?,
            })),
            6 => Ok(Some(RecordKey::TargetMetadata {
                group: get_string(&mut buf)?,
            })),
            5 | 7 | 8 => {
                let (group, member) = (get_string(&mut buf)?, get_string(&mut buf)?);
                Ok(Some(match version {
                    5 => RecordKey::ConsumerMember { group, member },
                    7 => RecordKey::TargetMember { group, member },
                    _ => RecordKey::CurrentAssignment { group, member },
                }))
            }
            other => match StreamsRecord::of_version(other) {
                Some(kind) => {
                    let group = get_string(&mut buf)?;
                    let member = if kind.per_member() {
                        Some(get_string(&mut buf)?)
                    } else {
                        None
                    };
                    Ok(Some(RecordKey::Streams {
                        kind,
                        group,
                        member,
                    }))
                }
                None => Ok(None),
            },
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

/// KIP-848 member metadata (ConsumerGroupMemberMetadataValue v0).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConsumerMemberValue {
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub subscribed_topic_names: Vec<String>,
    pub subscribed_topic_regex: Option<String>,
    pub rebalance_timeout_ms: i32,
    pub server_assignor: Option<String>,
}

/// Partitions by topic id, as KIP-848 records store them.
pub type TopicIdPartitions = Vec<(uuid::Uuid, Vec<i32>)>;

/// KIP-848 current assignment (ConsumerGroupCurrentMemberAssignmentValue v0).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CurrentAssignmentValue {
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    /// Kafka's MemberState: 0 stable, 1 unrevoked partitions, 2 unreleased partitions.
    pub state: i8,
    pub assigned: TopicIdPartitions,
    pub pending_revocation: TopicIdPartitions,
    /// The epoch each partition of both was assigned at; one the record does not give reads
    /// as the member epoch, as Kafka reads it.
    pub epochs: std::collections::BTreeMap<(uuid::Uuid, i32), i32>,
}

/// ConsumerGroupTargetAssignmentMetadataValue: the assignment epoch and, in tagged field 0
/// (KIP-1263, Kafka 4.3), the wall-clock time the assignment was computed. 0, the field's
/// default (not known), is left out, as Kafka leaves out a tagged field at its default.
pub fn encode_target_metadata(epoch: i32, timestamp_ms: i64) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(0);
    buf.put_i32(epoch);
    if timestamp_ms == 0 {
        put_uvarint(&mut buf, 0);
    } else {
        put_uvarint(&mut buf, 1);
        put_tagged_field(&mut buf, 0, &timestamp_ms.to_be_bytes());
    }
    buf.freeze()
}

/// The assignment epoch and time (0 when not written) of
/// [`encode_target_metadata`]'s value; unknown tagged fields are skipped.
pub fn decode_target_metadata(mut buf: &[u8]) -> Result<(i32, i64), SchemaError> {
    get_i16(&mut buf)?;
    let epoch = get_i32(&mut buf)?;
    let mut timestamp_ms = 0;
    get_tagged_fields(&mut buf, |tag, mut body| {
        if tag == 0 {
            timestamp_ms = get_i64(&mut body)?;
        }
        Ok(())
    })?;
    Ok((epoch, timestamp_ms))
}

/// Encodes a value holding one i32 (ConsumerGroupMetadataValue).
pub fn encode_epoch_value(epoch: i32) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(0);
    buf.put_i32(epoch);
    put_uvarint(&mut buf, 0);
    buf.freeze()
}

pub fn decode_epoch_value(mut buf: &[u8]) -> Result<i32, SchemaError> {
    get_i16(&mut buf)?;
    get_i32(&mut buf)
}

impl ConsumerMemberValue {
    pub fn encode(&self) -> Bytes {
        let mut buf = BytesMut::new();
        buf.put_i16(0);
        put_compact_nullable_string(&mut buf, self.instance_id.as_deref());
        put_compact_nullable_string(&mut buf, self.rack_id.as_deref());
        put_compact_nullable_string(&mut buf, Some(&self.client_id));
        put_compact_nullable_string(&mut buf, Some(&self.client_host));
        put_uvarint(&mut buf, self.subscribed_topic_names.len() as u64 + 1);
        for topic in &self.subscribed_topic_names {
            put_compact_nullable_string(&mut buf, Some(topic));
        }
        put_compact_nullable_string(&mut buf, self.subscribed_topic_regex.as_deref());
        buf.put_i32(self.rebalance_timeout_ms);
        put_compact_nullable_string(&mut buf, self.server_assignor.as_deref());
        put_uvarint(&mut buf, 0);
        buf.freeze()
    }

    pub fn decode(mut buf: &[u8]) -> Result<Self, SchemaError> {
        get_i16(&mut buf)?;
        let instance_id = get_compact_nullable_string(&mut buf)?;
        let rack_id = get_compact_nullable_string(&mut buf)?;
        let client_id = get_compact_nullable_string(&mut buf)?.unwrap_or_default();
        let client_host = get_compact_nullable_string(&mut buf)?.unwrap_or_default();
        let count = get_compact_len(&mut buf)?.unwrap_or(0);
        let mut subscribed_topic_names = Vec::with_capacity(count);
        for _ in 0..count {
            subscribed_topic_names.push(get_compact_nullable_string(&mut buf)?.unwrap_or_default());
        }
        let subscribed_topic_regex = get_compact_nullable_string(&mut buf)?;
        let rebalance_timeout_ms = get_i32(&mut buf)?;
        let server_assignor = get_compact_nullable_string(&mut buf)?;
        skip_tagged_fields(&mut buf)?;
        Ok(Self {
            instance_id,
            rack_id,
            client_id,
            client_host,
            subscribed_topic_names,
            subscribed_topic_regex,
            rebalance_timeout_ms,
            server_assignor,
        })
    }
}

/// Encodes ConsumerGroupTargetAssignmentMemberValue v0.
pub fn encode_target_member(partitions: &TopicIdPartitions) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(0);
    put_topic_partitions(&mut buf, partitions);
    put_uvarint(&mut buf, 0);
    buf.freeze()
}

pub fn decode_target_member(mut buf: &[u8]) -> Result<TopicIdPartitions, SchemaError> {
    get_i16(&mut buf)?;
    get_topic_partitions(&mut buf)
}

impl CurrentAssignmentValue {
    pub fn encode(&self) -> Bytes {
        let mut buf = BytesMut::new();
        buf.put_i16(0);
        buf.put_i32(self.member_epoch);
        buf.put_i32(self.previous_member_epoch);
        buf.put_i8(self.state);
        for partitions in [&self.assigned, &self.pending_revocation] {
            put_len_of(&mut buf, partitions.len());
            for (topic_id, ps) in partitions {
                buf.put_slice(topic_id.as_bytes());
                put_partitions_and_epochs(&mut buf, ps, |p| {
                    self.epochs.get(&(*topic_id, p)).copied()
                });
            }
        }
        put_uvarint(&mut buf, 0);
        buf.freeze()
    }

    pub fn decode(mut buf: &[u8]) -> Result<Self, SchemaError> {
        get_i16(&mut buf)?;
        let member_epoch = get_i32(&mut buf)?;
        let previous_member_epoch = get_i32(&mut buf)?;
        if buf.remaining() < 1 {
            return Err(SchemaError("truncated"));
        }
        let state = buf.get_i8();
        let mut epochs = std::collections::BTreeMap::new();
        let mut parts = [Vec::new(), Vec::new()];
        for part in &mut parts {
            let count = get_compact_len(&mut buf)?.unwrap_or(0);
            for _ in 0..count {
                if buf.remaining() < 16 {
                    return Err(SchemaError("truncated uuid"));
                }
                let mut raw = [0u8; 16];
                buf.copy_to_slice(&mut raw);
                let topic_id = uuid::Uuid::from_bytes(raw);
                let partitions = get_partitions_and_epochs(&mut buf)?;
                for (p, epoch) in &partitions {
                    epochs.insert((topic_id, *p), epoch.unwrap_or(member_epoch));
                }
                part.push((topic_id, partitions.into_iter().map(|(p, _)| p).collect()));
            }
        }
        let [assigned, pending_revocation] = parts;
        Ok(Self {
            member_epoch,
            previous_member_epoch,
            state,
            assigned,
            pending_revocation,
            epochs,
        })
    }
}

fn put_len_of(buf: &mut BytesMut, len: usize) {
    put_uvarint(buf, len as u64 + 1);
}

/// `partitions: [i32]` and the struct's tagged fields, with Kafka's `assignmentEpochs` (tag 0,
/// one per partition, KIP-1251) when `epoch_of` knows every partition's epoch.
pub fn put_partitions_and_epochs(
    buf: &mut BytesMut,
    partitions: &[i32],
    epoch_of: impl Fn(i32) -> Option<i32>,
) {
    put_compact_i32_array(buf, partitions);
    let epochs: Option<Vec<i32>> = partitions.iter().map(|p| epoch_of(*p)).collect();
    match epochs {
        Some(epochs) if !epochs.is_empty() => {
            put_uvarint(buf, 1);
            let mut body = BytesMut::new();
            put_compact_i32_array(&mut body, &epochs);
            put_tagged_field(buf, 0, &body);
        }
        _ => put_uvarint(buf, 0),
    }
}

/// What [`put_partitions_and_epochs`] wrote: each partition with its assignment epoch when
/// the record gives one for every partition.
pub fn get_partitions_and_epochs(buf: &mut &[u8]) -> Result<Vec<(i32, Option<i32>)>, SchemaError> {
    let partitions = get_compact_i32_array(buf)?.unwrap_or_default();
    let mut epochs = None;
    get_tagged_fields(buf, |tag, mut body| {
        if tag == 0 {
            epochs = get_compact_i32_array(&mut body)?;
        }
        Ok(())
    })?;
    let epochs = epochs.filter(|e| e.len() == partitions.len());
    Ok(partitions
        .iter()
        .enumerate()
        .map(|(i, p)| (*p, epochs.as_ref().map(|e| e[i])))
        .collect())
}

fn put_topic_partitions(buf: &mut BytesMut, partitions: &TopicIdPartitions) {
    put_uvarint(buf, partitions.len() as u64 + 1);
    for (topic_id, ps) in partitions {
        buf.put_slice(topic_id.as_bytes());
        put_uvarint(buf, ps.len() as u64 + 1);
        for p in ps {
            buf.put_i32(*p);
        }
        put_uvarint(buf, 0); // tagged fields of the struct
    }
}

fn get_topic_partitions(buf: &mut &[u8]) -> Result<TopicIdPartitions, SchemaError> {
    let count = get_compact_len(buf)?.unwrap_or(0);
    let mut out = Vec::with_capacity(count.min(buf.len()));
    for _ in 0..count {
        if buf.remaining() < 16 {
            return Err(SchemaError("truncated uuid"));
        }
        let mut raw = [0u8; 16];
        buf.copy_to_slice(&mut raw);
        let n = get_compact_len(buf)?.unwrap_or(0);
        if n * 4 > buf.remaining() {
            return Err(SchemaError("truncated partitions"));
        }
        let partitions = (0..n).map(|_| buf.get_i32()).collect();
        skip_tagged_fields(buf)?;
        out.push((uuid::Uuid::from_bytes(raw), partitions));
    }
    Ok(out)
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
            RecordKey::decode(&[0, 4, 0, 0]).unwrap(),
            None,
            "partition metadata records are skipped"
        );
        assert_eq!(
            RecordKey::decode(&[0, 11, 0, 0]).unwrap(),
            None,
            "share and streams groups are someone else's"
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
    fn kip848_records_round_trip() {
        let key = RecordKey::CurrentAssignment {
            group: "g".into(),
            member: "m".into(),
        };
        assert_eq!(&key.encode()[..2], &[0, 8]);
        assert_eq!(RecordKey::decode(&key.encode()).unwrap(), Some(key));
        for key in [
            RecordKey::ConsumerGroup { group: "g".into() },
            RecordKey::TargetMetadata { group: "g".into() },
            RecordKey::ConsumerMember {
                group: "g".into(),
                member: "m".into(),
            },
            RecordKey::TargetMember {
                group: "g".into(),
                member: "m".into(),
            },
        ] {
            assert_eq!(RecordKey::decode(&key.encode()).unwrap(), Some(key));
        }
        assert_eq!(decode_epoch_value(&encode_epoch_value(42)).unwrap(), 42);
        let member = ConsumerMemberValue {
            instance_id: Some("i".into()),
            rack_id: None,
            client_id: "c".into(),
            client_host: "/127.0.0.1".into(),
            subscribed_topic_names: vec!["a".into(), "b".into()],
            subscribed_topic_regex: Some("x.*".into()),
            rebalance_timeout_ms: 300_000,
            server_assignor: Some("uniform".into()),
        };
        assert_eq!(
            ConsumerMemberValue::decode(&member.encode()).unwrap(),
            member
        );
        let id = uuid::Uuid::new_v4();
        let current = CurrentAssignmentValue {
            member_epoch: 5,
            previous_member_epoch: 4,
            state: 1,
            assigned: vec![(id, vec![0, 2])],
            pending_revocation: vec![(id, vec![1])],
            epochs: [((id, 0), 3), ((id, 2), 5), ((id, 1), 2)].into(),
        };
        assert_eq!(
            CurrentAssignmentValue::decode(&current.encode()).unwrap(),
            current
        );
        // Kafka's layout: partitions, then tagged field 0 with the epochs.
        let mut one = BytesMut::new();
        put_partitions_and_epochs(&mut one, &[7], |_| Some(3));
        assert_eq!(&one[..], &[2, 0, 0, 0, 7, 1, 0, 5, 2, 0, 0, 0, 3]);
        // A record without epochs reads them as the member epoch.
        let without = CurrentAssignmentValue {
            epochs: Default::default(),
            ..current.clone()
        };
        let read = CurrentAssignmentValue::decode(&without.encode()).unwrap();
        assert_eq!(read.epochs.values().collect::<Vec<_>>(), vec![&5, &5, &5]);
        assert_eq!(
            decode_target_member(&encode_target_member(&current.assigned)).unwrap(),
            current.assigned
        );
        assert!(CurrentAssignmentValue::decode(&current.encode()[..12]).is_err());
    }

    #[test]
    fn partitioning_matches_java_string_hash_code() {
        // "a".hashCode() = 97; "group1".hashCode() = -1_237_460_590 (java.lang.String).
        assert_eq!(partition_for("a", 50), 97 % 50);
        assert_eq!(partition_for("group1", 50), 1_237_460_590 % 50);
        // A negative hash: "polygenelubricants".hashCode() = Integer.MIN_VALUE -> 0.
        assert_eq!(partition_for("polygenelubricants", 50), 0);
    }

    /// Kafka's layout of ConsumerGroupTargetAssignmentMetadataValue: the time in tagged field
    /// 0 when known, no tagged field when not (a record written before KIP-1263 reads as 0).
    #[test]
    fn target_metadata_carries_the_assignment_time_in_tagged_field_0() {
        let with_time = encode_target_metadata(7, 1_234);
        let mut expected = vec![0, 0, 0, 0, 0, 7, 1, 0, 8];
        expected.extend_from_slice(&1_234i64.to_be_bytes());
        assert_eq!(&with_time[..], &expected[..]);
        assert_eq!(decode_target_metadata(&with_time).unwrap(), (7, 1_234));
        let without = encode_target_metadata(7, 0);
        assert_eq!(&without[..], &[0, 0, 0, 0, 0, 7, 0]);
        assert_eq!(decode_target_metadata(&without).unwrap(), (7, 0));
        assert_eq!(
            decode_target_metadata(&encode_epoch_value(3)).unwrap(),
            (3, 0)
        );
    }
}
