//! Kafka 4.4's record values for streams groups in `__consumer_offsets` (its generated
//! `StreamsGroup*Value` classes, version 0, flexible: compact strings and arrays, a tagged-field
//! section per struct), so the coordinator's state survives a restart or a move and tools that
//! read the topic understand it. Keys are in [`crate::group::records::RecordKey`].
//!
//! ```text
//! 17 StreamsGroupMetadataValue        epoch: i32, metadata_hash: i64; tagged 0:
//!    validated_topology_epoch: i32 (-1), 1: last_assignment_configs: [{key, value}] (we leave
//!    out tags 2 and 3, the topology description epochs of a description plugin)
//! 19 StreamsGroupMemberMetadataValue  instance_id?, rack_id?, client_id, client_host,
//!    rebalance_timeout_ms: i32, topology_epoch: i32, process_id,
//!    user_endpoint?: {host, port: u16}, client_tags: [{key, value}]
//! 20 StreamsGroupTargetAssignmentMetadataValue  assignment_epoch: i32, assignment_timestamp: i64
//! 21 StreamsGroupTargetAssignmentMemberValue    active/standby/warmup: [{subtopology_id, partitions: [i32]}]
//! 22 StreamsGroupCurrentMemberAssignmentValue   member_epoch, previous_member_epoch: i32, state: i8,
//!    active/standby/warmup, and their *_pending_revocation: [{subtopology_id, partitions: [i32],
//!    tagged 0: assignment_epochs: [i32] (active tasks: the epoch each was assigned at)}]
//! 23 StreamsGroupTopologyValue  epoch: i32, subtopologies: [{subtopology_id, source_topics: [string],
//!    source_topic_regex: [string], state_changelog_topics: [TopicInfo], repartition_sink_topics:
//!    [string], repartition_source_topics: [TopicInfo], copartition_groups: [{source_topics: [i16],
//!    source_topic_regex: [i16], repartition_source_topics: [i16]}]}]
//!    TopicInfo: {name, partitions: i32, replication_factor: i16, topic_configs: [{key, value}]}
//! ```
//!
//! Array lengths come from the log: nothing is reserved ahead from them.

use super::Tasks;
use super::topology::{CopartitionGroup, Subtopology, TopicInfo, Topology};
use crate::group::reconcile::AssignmentEpochs;
use crate::group::records::{get_partitions_and_epochs, put_partitions_and_epochs};
use crate::record::schema::{
    SchemaError, get_compact_len, get_compact_nullable_string, get_i16, get_i32, get_i64,
    get_tagged_fields, put_compact_nullable_string, put_tagged_field, put_uvarint,
    skip_tagged_fields,
};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use std::collections::{BTreeMap, BTreeSet};

const VERSION: i16 = 0;

fn put_str(buf: &mut BytesMut, text: &str) {
    put_compact_nullable_string(buf, Some(text));
}

fn get_str(buf: &mut &[u8]) -> Result<String, SchemaError> {
    Ok(get_compact_nullable_string(buf)?.unwrap_or_default())
}

fn put_len(buf: &mut BytesMut, len: usize) {
    put_uvarint(buf, len as u64 + 1);
}

fn no_tags(buf: &mut BytesMut) {
    put_uvarint(buf, 0);
}

/// A compact array read element by element (`None`: a null array).
fn get_array<T>(
    buf: &mut &[u8],
    mut element: impl FnMut(&mut &[u8]) -> Result<T, SchemaError>,
) -> Result<Option<Vec<T>>, SchemaError> {
    let Some(len) = get_compact_len(buf)? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for _ in 0..len {
        out.push(element(buf)?);
    }
    Ok(Some(out))
}

fn get_i8(buf: &mut &[u8]) -> Result<i8, SchemaError> {
    if buf.remaining() < 1 {
        return Err(SchemaError("truncated int8"));
    }
    Ok(buf.get_i8())
}

fn get_u16(buf: &mut &[u8]) -> Result<u16, SchemaError> {
    if buf.remaining() < 2 {
        return Err(SchemaError("truncated uint16"));
    }
    Ok(buf.get_u16())
}

fn put_strings(buf: &mut BytesMut, items: &[String]) {
    put_len(buf, items.len());
    for item in items {
        put_str(buf, item);
    }
}

fn get_strings(buf: &mut &[u8]) -> Result<Vec<String>, SchemaError> {
    Ok(get_array(buf, get_str)?.unwrap_or_default())
}

fn put_key_values(buf: &mut BytesMut, pairs: &BTreeMap<String, String>) {
    put_len(buf, pairs.len());
    for (key, value) in pairs {
        put_str(buf, key);
        put_str(buf, value);
        no_tags(buf);
    }
}

fn get_key_values(buf: &mut &[u8]) -> Result<BTreeMap<String, String>, SchemaError> {
    let pairs = get_array(buf, |b| {
        let pair = (get_str(b)?, get_str(b)?);
        skip_tagged_fields(b)?;
        Ok(pair)
    })?;
    Ok(pairs.unwrap_or_default().into_iter().collect())
}

/// `[{subtopology_id, partitions}]`, each with its tagged `assignment_epochs` (tag 0) where
/// `epochs` knows them.
fn put_tasks(buf: &mut BytesMut, tasks: &Tasks, epochs: &AssignmentEpochs) {
    put_len(buf, tasks.len());
    for (subtopology, partitions) in tasks {
        put_str(buf, subtopology);
        let partitions: Vec<i32> = partitions.iter().copied().collect();
        put_partitions_and_epochs(buf, &partitions, |p| {
            epochs.get(&(subtopology.clone(), p)).copied()
        });
    }
}

/// What [`put_tasks`] wrote; the epochs a record gives go to `epochs`, others read as
/// `default_epoch` (Kafka's reading of a record without them).
fn get_tasks(
    buf: &mut &[u8],
    epochs: &mut AssignmentEpochs,
    default_epoch: i32,
) -> Result<Tasks, SchemaError> {
    let entries = get_array(buf, |b| {
        let subtopology = get_str(b)?;
        let mut partitions = BTreeSet::new();
        for (p, epoch) in get_partitions_and_epochs(b)? {
            partitions.insert(p);
            epochs.insert((subtopology.clone(), p), epoch.unwrap_or(default_epoch));
        }
        Ok((subtopology, partitions))
    })?;
    Ok(entries.unwrap_or_default().into_iter().collect())
}

/// StreamsGroupMetadataValue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupMetadataValue {
    pub epoch: i32,
    /// The topology epoch last configured against the topics (-1: none).
    pub validated_topology_epoch: i32,
    /// What the last target assignment was computed with (`None`: a record without them).
    pub last_assignment_configs: Option<BTreeMap<String, String>>,
}

impl GroupMetadataValue {
    pub fn encode(&self) -> Bytes {
        let mut buf = BytesMut::new();
        buf.put_i16(VERSION);
        buf.put_i32(self.epoch);
        buf.put_i64(0); // metadata_hash: the topic metadata is read again on load
        let configs = self
            .last_assignment_configs
            .as_ref()
            .filter(|c| !c.is_empty());
        let tags = u64::from(self.validated_topology_epoch != -1) + u64::from(configs.is_some());
        put_uvarint(&mut buf, tags);
        if self.validated_topology_epoch != -1 {
            put_tagged_field(&mut buf, 0, &self.validated_topology_epoch.to_be_bytes());
        }
        if let Some(configs) = configs {
            let mut body = BytesMut::new();
            put_key_values(&mut body, configs);
            put_tagged_field(&mut buf, 1, &body);
        }
        buf.freeze()
    }

    pub fn decode(mut buf: &[u8]) -> Result<Self, SchemaError> {
        get_i16(&mut buf)?;
        let epoch = get_i32(&mut buf)?;
        get_i64(&mut buf)?;
        let mut value = Self {
            epoch,
            validated_topology_epoch: -1,
            last_assignment_configs: None,
        };
        get_tagged_fields(&mut buf, |tag, mut body| {
            match tag {
                0 => value.validated_topology_epoch = get_i32(&mut body)?,
                1 => value.last_assignment_configs = Some(get_key_values(&mut body)?),
                _ => {}
            }
            Ok(())
        })?;
        Ok(value)
    }
}

/// StreamsGroupTargetAssignmentMetadataValue.
pub fn encode_target_epoch(epoch: i32, timestamp_ms: i64) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(VERSION);
    buf.put_i32(epoch);
    buf.put_i64(timestamp_ms);
    no_tags(&mut buf);
    buf.freeze()
}

pub fn decode_target_epoch(mut buf: &[u8]) -> Result<i32, SchemaError> {
    get_i16(&mut buf)?;
    let epoch = get_i32(&mut buf)?;
    get_i64(&mut buf)?;
    skip_tagged_fields(&mut buf)?;
    Ok(epoch)
}

/// A member's own settings (StreamsGroupMemberMetadataValue).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemberValue {
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub rebalance_timeout_ms: i32,
    pub topology_epoch: i32,
    pub process_id: String,
    pub user_endpoint: Option<(String, u16)>,
    pub client_tags: BTreeMap<String, String>,
}

impl MemberValue {
    pub fn encode(&self) -> Bytes {
        let mut buf = BytesMut::new();
        buf.put_i16(VERSION);
        put_compact_nullable_string(&mut buf, self.instance_id.as_deref());
        put_compact_nullable_string(&mut buf, self.rack_id.as_deref());
        put_str(&mut buf, &self.client_id);
        put_str(&mut buf, &self.client_host);
        buf.put_i32(self.rebalance_timeout_ms);
        buf.put_i32(self.topology_epoch);
        put_str(&mut buf, &self.process_id);
        match &self.user_endpoint {
            // A nullable struct: -1 for null, else 1 and the struct.
            None => buf.put_i8(-1),
            Some((host, port)) => {
                buf.put_i8(1);
                put_str(&mut buf, host);
                buf.put_u16(*port);
                no_tags(&mut buf);
            }
        }
        put_key_values(&mut buf, &self.client_tags);
        no_tags(&mut buf);
        buf.freeze()
    }

    pub fn decode(mut buf: &[u8]) -> Result<Self, SchemaError> {
        let buf = &mut buf;
        get_i16(buf)?;
        let instance_id = get_compact_nullable_string(buf)?;
        let rack_id = get_compact_nullable_string(buf)?;
        let client_id = get_str(buf)?;
        let client_host = get_str(buf)?;
        let rebalance_timeout_ms = get_i32(buf)?;
        let topology_epoch = get_i32(buf)?;
        let process_id = get_str(buf)?;
        let user_endpoint = if get_i8(buf)? < 0 {
            None
        } else {
            let endpoint = (get_str(buf)?, get_u16(buf)?);
            skip_tagged_fields(buf)?;
            Some(endpoint)
        };
        let client_tags = get_key_values(buf)?;
        skip_tagged_fields(buf)?;
        Ok(Self {
            instance_id,
            rack_id,
            client_id,
            client_host,
            rebalance_timeout_ms,
            topology_epoch,
            process_id,
            user_endpoint,
            client_tags,
        })
    }
}

/// Tasks of each kind (the target, and the current assignment's parts).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskSets {
    pub active: Tasks,
    pub standby: Tasks,
    pub warmup: Tasks,
}

/// StreamsGroupTargetAssignmentMemberValue.
pub fn encode_target(target: &TaskSets) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(VERSION);
    for tasks in [&target.active, &target.standby, &target.warmup] {
        put_tasks(&mut buf, tasks, &AssignmentEpochs::new());
    }
    no_tags(&mut buf);
    buf.freeze()
}

pub fn decode_target(mut buf: &[u8]) -> Result<TaskSets, SchemaError> {
    let buf = &mut buf;
    get_i16(buf)?;
    let ignored = &mut AssignmentEpochs::new();
    let sets = TaskSets {
        active: get_tasks(buf, ignored, 0)?,
        standby: get_tasks(buf, ignored, 0)?,
        warmup: get_tasks(buf, ignored, 0)?,
    };
    skip_tagged_fields(buf)?;
    Ok(sets)
}

/// StreamsGroupCurrentMemberAssignmentValue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CurrentAssignmentValue {
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    /// Kafka's `MemberState` code.
    pub state: i8,
    pub assigned: TaskSets,
    /// Active tasks to revoke (standby and warm-up ones are never held back here).
    pub active_pending_revocation: Tasks,
    /// The epoch each active task (held or pending revocation) was assigned at.
    pub active_epochs: AssignmentEpochs,
}

impl CurrentAssignmentValue {
    pub fn encode(&self) -> Bytes {
        let mut buf = BytesMut::new();
        buf.put_i16(VERSION);
        buf.put_i32(self.member_epoch);
        buf.put_i32(self.previous_member_epoch);
        buf.put_i8(self.state);
        let (none, no_epochs) = (Tasks::new(), AssignmentEpochs::new());
        for (tasks, epochs) in [
            (&self.assigned.active, &self.active_epochs),
            (&self.assigned.standby, &no_epochs),
            (&self.assigned.warmup, &no_epochs),
            (&self.active_pending_revocation, &self.active_epochs),
            (&none, &no_epochs),
            (&none, &no_epochs),
        ] {
            put_tasks(&mut buf, tasks, epochs);
        }
        no_tags(&mut buf);
        buf.freeze()
    }

    pub fn decode(mut buf: &[u8]) -> Result<Self, SchemaError> {
        let buf = &mut buf;
        get_i16(buf)?;
        let member_epoch = get_i32(buf)?;
        let previous_member_epoch = get_i32(buf)?;
        let state = get_i8(buf)?;
        let mut active_epochs = AssignmentEpochs::new();
        let ignored = &mut AssignmentEpochs::new();
        let active = get_tasks(buf, &mut active_epochs, member_epoch)?;
        let assigned = TaskSets {
            active,
            standby: get_tasks(buf, ignored, member_epoch)?,
            warmup: get_tasks(buf, ignored, member_epoch)?,
        };
        let active_pending_revocation = get_tasks(buf, &mut active_epochs, member_epoch)?;
        get_tasks(buf, ignored, member_epoch)?;
        get_tasks(buf, ignored, member_epoch)?;
        skip_tagged_fields(buf)?;
        Ok(Self {
            member_epoch,
            previous_member_epoch,
            state,
            assigned,
            active_pending_revocation,
            active_epochs,
        })
    }
}

fn put_topic_infos(buf: &mut BytesMut, infos: &[TopicInfo]) {
    put_len(buf, infos.len());
    for info in infos {
        put_str(buf, &info.name);
        buf.put_i32(info.partitions);
        buf.put_i16(info.replication_factor);
        put_key_values(buf, &info.configs);
        no_tags(buf);
    }
}

fn get_topic_infos(buf: &mut &[u8]) -> Result<Vec<TopicInfo>, SchemaError> {
    Ok(get_array(buf, |b| {
        let info = TopicInfo {
            name: get_str(b)?,
            partitions: get_i32(b)?,
            replication_factor: get_i16(b)?,
            configs: get_key_values(b)?,
        };
        skip_tagged_fields(b)?;
        Ok(info)
    })?
    .unwrap_or_default())
}

fn put_indexes(buf: &mut BytesMut, indexes: &[i16]) {
    put_len(buf, indexes.len());
    for i in indexes {
        buf.put_i16(*i);
    }
}

fn get_indexes(buf: &mut &[u8]) -> Result<Vec<i16>, SchemaError> {
    Ok(get_array(buf, get_i16)?.unwrap_or_default())
}

/// StreamsGroupTopologyValue.
pub fn encode_topology(topology: &Topology) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(VERSION);
    buf.put_i32(topology.epoch);
    put_len(&mut buf, topology.subtopologies.len());
    for s in topology.subtopologies.values() {
        put_str(&mut buf, &s.id);
        put_strings(&mut buf, &s.source_topics);
        put_strings(&mut buf, &s.source_topic_regex);
        put_topic_infos(&mut buf, &s.state_changelog_topics);
        put_strings(&mut buf, &s.repartition_sink_topics);
        put_topic_infos(&mut buf, &s.repartition_source_topics);
        put_len(&mut buf, s.copartition_groups.len());
        for g in &s.copartition_groups {
            put_indexes(&mut buf, &g.source_topics);
            put_indexes(&mut buf, &g.source_topic_regex);
            put_indexes(&mut buf, &g.repartition_source_topics);
            no_tags(&mut buf);
        }
        no_tags(&mut buf);
    }
    no_tags(&mut buf);
    buf.freeze()
}

pub fn decode_topology(mut buf: &[u8]) -> Result<Topology, SchemaError> {
    let buf = &mut buf;
    get_i16(buf)?;
    let epoch = get_i32(buf)?;
    let subtopologies = get_array(buf, |b| {
        let id = get_str(b)?;
        let source_topics = get_strings(b)?;
        let source_topic_regex = get_strings(b)?;
        let state_changelog_topics = get_topic_infos(b)?;
        let repartition_sink_topics = get_strings(b)?;
        let repartition_source_topics = get_topic_infos(b)?;
        let copartition_groups = get_array(b, |g| {
            let group = CopartitionGroup {
                source_topics: get_indexes(g)?,
                source_topic_regex: get_indexes(g)?,
                repartition_source_topics: get_indexes(g)?,
            };
            skip_tagged_fields(g)?;
            Ok(group)
        })?
        .unwrap_or_default();
        skip_tagged_fields(b)?;
        Ok(Subtopology {
            id,
            source_topics,
            source_topic_regex,
            state_changelog_topics,
            repartition_sink_topics,
            repartition_source_topics,
            copartition_groups,
        })
    })?
    .unwrap_or_default();
    skip_tagged_fields(buf)?;
    Ok(Topology {
        epoch,
        subtopologies: subtopologies
            .into_iter()
            .map(|s| (s.id.clone(), s))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(pairs: &[(&str, &[i32])]) -> Tasks {
        pairs
            .iter()
            .map(|(s, ps)| (s.to_string(), ps.iter().copied().collect()))
            .collect()
    }

    #[test]
    fn every_value_reads_back_what_was_written() {
        let member = MemberValue {
            instance_id: Some("i".into()),
            rack_id: None,
            client_id: "c".into(),
            client_host: "/127.0.0.1".into(),
            rebalance_timeout_ms: 30_000,
            topology_epoch: 2,
            process_id: "p".into(),
            user_endpoint: Some(("host".into(), 8080)),
            client_tags: [("k".to_string(), "v".to_string())].into(),
        };
        assert_eq!(MemberValue::decode(&member.encode()).unwrap(), member);
        let current = CurrentAssignmentValue {
            member_epoch: 5,
            previous_member_epoch: 4,
            state: 1,
            assigned: TaskSets {
                active: tasks(&[("0", &[0, 1]), ("1", &[3])]),
                standby: tasks(&[("1", &[0])]),
                warmup: Tasks::new(),
            },
            active_pending_revocation: tasks(&[("0", &[2])]),
            active_epochs: [
                (("0".to_string(), 0), 3),
                (("0".to_string(), 1), 5),
                (("1".to_string(), 3), 5),
                (("0".to_string(), 2), 1),
            ]
            .into(),
        };
        assert_eq!(
            CurrentAssignmentValue::decode(&current.encode()).unwrap(),
            current
        );
        // Without epochs in the record, each active task was assigned at the member epoch.
        let without = CurrentAssignmentValue {
            active_epochs: AssignmentEpochs::new(),
            ..current.clone()
        };
        let read = CurrentAssignmentValue::decode(&without.encode()).unwrap();
        assert_eq!(read.active_epochs.len(), 4);
        assert!(read.active_epochs.values().all(|e| *e == 5));
        assert_eq!(
            decode_target(&encode_target(&current.assigned)).unwrap(),
            current.assigned
        );
        let metadata = GroupMetadataValue {
            epoch: 7,
            validated_topology_epoch: 2,
            last_assignment_configs: Some(
                [("num.standby.replicas".to_string(), "1".to_string())].into(),
            ),
        };
        assert_eq!(
            GroupMetadataValue::decode(&metadata.encode()).unwrap(),
            metadata
        );
        let bare = GroupMetadataValue {
            epoch: 7,
            validated_topology_epoch: -1,
            last_assignment_configs: None,
        };
        assert_eq!(GroupMetadataValue::decode(&bare.encode()).unwrap(), bare);
        assert_eq!(
            decode_target_epoch(&encode_target_epoch(6, 123)).unwrap(),
            6
        );
        let mut topology = Topology {
            epoch: 1,
            ..Default::default()
        };
        topology.subtopologies.insert(
            "0".into(),
            Subtopology {
                id: "0".into(),
                source_topics: vec!["in".into()],
                state_changelog_topics: vec![TopicInfo {
                    name: "log".into(),
                    partitions: 0,
                    replication_factor: 3,
                    configs: [("cleanup.policy".to_string(), "compact".to_string())].into(),
                }],
                copartition_groups: vec![CopartitionGroup {
                    source_topics: vec![0],
                    ..Default::default()
                }],
                ..Default::default()
            },
        );
        assert_eq!(
            decode_topology(&encode_topology(&topology)).unwrap(),
            topology
        );
    }

    #[test]
    fn a_truncated_value_is_an_error_not_a_panic() {
        let bytes = encode_topology(&Topology::default());
        // (A missing final tagged-field section reads as empty, as everywhere here.)
        for cut in 0..bytes.len() - 1 {
            assert!(decode_topology(&bytes[..cut]).is_err());
        }
        // An array length far beyond the bytes there are reserves nothing.
        let mut huge = BytesMut::new();
        huge.put_i16(0);
        huge.put_i32(1);
        put_uvarint(&mut huge, u32::MAX as u64);
        assert!(decode_topology(&huge).is_err());
    }
}
