//! OffsetFetch: committed offsets with their leader epoch and metadata; one group (v1-v7) or
//! several (v8+; topics by id from v10); null topics means every committed offset of the
//! group. Partitions without a commit answer offset -1.

use super::ApiContext;
use crate::error::{GroupError, code};
use crate::group::GroupCoordinator;
use crate::group::classic::CommittedOffset;
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::{OffsetFetchRequest, OffsetFetchResponse, TopicName};
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeMap;
use std::sync::Arc;

type Fetched = Vec<(String, i32, Option<CommittedOffset>)>;

fn fetch(
    groups: Option<&Arc<GroupCoordinator>>,
    group_id: &str,
    topics: Option<Vec<(String, Vec<i32>)>>,
    member: Option<(&str, i32)>,
) -> Result<Fetched, GroupError> {
    let groups = groups.ok_or(GroupError::CoordinatorNotAvailable)?;
    if groups.is_loading(group_id) {
        return Err(GroupError::CoordinatorLoadInProgress);
    }
    if !groups.owns(group_id) {
        return Err(GroupError::NotCoordinator);
    }
    groups.fetch_offsets(group_id, topics.as_deref(), member)
}

/// Groups per topic, keeping the request's topic order when there was one.
fn by_topic(fetched: Fetched) -> BTreeMap<String, Vec<(i32, Option<CommittedOffset>)>> {
    let mut out: BTreeMap<String, Vec<(i32, Option<CommittedOffset>)>> = BTreeMap::new();
    for (topic, partition, offset) in fetched {
        out.entry(topic).or_default().push((partition, offset));
    }
    out
}

fn fields(offset: &Option<CommittedOffset>, version: i16) -> (i64, i32, Option<StrBytes>) {
    match offset {
        Some(o) => (
            o.offset,
            if version >= 5 { o.leader_epoch } else { -1 },
            Some(StrBytes::from_string(o.metadata.clone())),
        ),
        None => (-1, -1, Some(StrBytes::default())),
    }
}

/// One fetched partition as every version answers it.
struct Answered {
    partition: i32,
    offset: i64,
    leader_epoch: i32,
    metadata: Option<StrBytes>,
    error_code: i16,
}

/// A group's fetched offsets per topic, each partition answered (`unstable`: the code of a
/// partition a transaction holds an offset of, KIP-447).
fn answered(
    fetched: Fetched,
    group: &str,
    version: i16,
    unstable: &dyn Fn(&str, &str, i32) -> i16,
) -> Vec<(String, Vec<Answered>)> {
    by_topic(fetched)
        .into_iter()
        .map(|(topic, partitions)| {
            let partitions = partitions
                .iter()
                .map(|(p, o)| {
                    let (offset, leader_epoch, metadata) = fields(o, version);
                    Answered {
                        partition: *p,
                        offset,
                        leader_epoch,
                        metadata,
                        error_code: unstable(group, &topic, *p),
                    }
                })
                .collect();
            (topic, partitions)
        })
        .collect()
}

/// [`answered`] topics in the response types of a version range (one group before v8, each
/// of several from v8).
macro_rules! answer_topics {
    ($answered:expr, $topic:ty, $partition:ty) => {
        $answered
            .into_iter()
            .map(|(topic, partitions)| {
                <$topic>::default()
                    .with_name(TopicName(StrBytes::from_string(topic)))
                    .with_partitions(
                        partitions
                            .into_iter()
                            .map(|a: Answered| {
                                <$partition>::default()
                                    .with_partition_index(a.partition)
                                    .with_committed_offset(a.offset)
                                    .with_committed_leader_epoch(a.leader_epoch)
                                    .with_metadata(a.metadata)
                                    .with_error_code(a.error_code)
                            })
                            .collect(),
                    )
            })
            .collect()
    };
}

/// v10's answer names topics by id: each answered topic gets its id (offsets of a topic that
/// no longer exists are left out, having none), and the ids no topic has are answered
/// UNKNOWN_TOPIC_ID.
fn with_topic_ids(
    ctx: &ApiContext,
    topics: &mut Vec<OffsetFetchResponseTopics>,
    unknown_ids: Vec<(uuid::Uuid, Vec<i32>)>,
) {
    topics.retain_mut(|topic| match ctx.broker.topic(&topic.name) {
        Some(info) => {
            topic.topic_id = info.id;
            true
        }
        None => false,
    });
    for (id, partitions) in unknown_ids {
        let partitions = partitions
            .into_iter()
            .map(|p| {
                OffsetFetchResponsePartitions::default()
                    .with_partition_index(p)
                    .with_committed_offset(-1)
                    .with_error_code(code::UNKNOWN_TOPIC_ID)
            })
            .collect();
        topics.push(
            OffsetFetchResponseTopics::default()
                .with_topic_id(id)
                .with_partitions(partitions),
        );
    }
}

pub async fn handle(
    ctx: &ApiContext,
    request: OffsetFetchRequest,
    version: i16,
) -> Option<OffsetFetchResponse> {
    let groups = ctx.broker.groups().await.ok();
    // KIP-447 (v7+): a consumer that wants only stable offsets is told to retry while a
    // transaction still holds one.
    let require_stable = version >= 7 && request.require_stable;
    let unstable = |group: &str, topic: &str, partition: i32| -> i16 {
        let pending =
            require_stable && groups.is_some_and(|g| g.has_pending_offset(group, topic, partition));
        if pending {
            code::UNSTABLE_OFFSET_COMMIT
        } else {
            code::NONE
        }
    };
    if version < 8 {
        let topics = request.topics.map(|ts| {
            ts.into_iter()
                .map(|t| (t.name.to_string(), t.partition_indexes))
                .collect()
        });
        let response = match fetch(groups, &request.group_id, topics, None) {
            Err(e) => OffsetFetchResponse::default().with_error_code(if version >= 2 {
                e.code()
            } else {
                code::NONE
            }),
            Ok(fetched) => OffsetFetchResponse::default()
                .with_error_code(code::NONE)
                .with_topics(answer_topics!(
                    answered(fetched, &request.group_id, version, &unstable),
                    OffsetFetchResponseTopic,
                    OffsetFetchResponsePartition
                )),
        };
        return Some(response);
    }
    let groups = request
        .groups
        .into_iter()
        .map(|group| {
            // v10 names topics by id: an unknown id is answered UNKNOWN_TOPIC_ID.
            let mut unknown_ids = Vec::new();
            let topics = group.topics.map(|ts| {
                ts.into_iter()
                    .filter_map(|t| {
                        match super::topic_named(ctx, &t.name, t.topic_id, version >= 10) {
                            Some(name) => Some((name, t.partition_indexes)),
                            None => {
                                unknown_ids.push((t.topic_id, t.partition_indexes));
                                None
                            }
                        }
                    })
                    .collect()
            });
            let member = group.member_id.as_deref().map(|m| (m, group.member_epoch));
            match fetch(groups, &group.group_id, topics, member) {
                Err(e) => OffsetFetchResponseGroup::default()
                    .with_group_id(group.group_id)
                    .with_error_code(e.code()),
                Ok(fetched) => {
                    let mut topics: Vec<OffsetFetchResponseTopics> = answer_topics!(
                        answered(fetched, &group.group_id, version, &unstable),
                        OffsetFetchResponseTopics,
                        OffsetFetchResponsePartitions
                    );
                    if version >= 10 {
                        with_topic_ids(ctx, &mut topics, unknown_ids);
                    }
                    OffsetFetchResponseGroup::default()
                        .with_topics(topics)
                        .with_group_id(group.group_id)
                        .with_error_code(code::NONE)
                }
            }
        })
        .collect();
    Some(OffsetFetchResponse::default().with_groups(groups))
}
