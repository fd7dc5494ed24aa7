//! OffsetFetch: committed offsets with their leader epoch and metadata; one group (v1-v7) or
//! several (v8+); null topics means every committed offset of the group. Partitions without a
//! commit answer offset -1.

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
                .with_topics(
                    by_topic(fetched)
                        .into_iter()
                        .map(|(topic, partitions)| {
                            let errors: Vec<i16> = partitions
                                .iter()
                                .map(|(p, _)| unstable(&request.group_id, &topic, *p))
                                .collect();
                            OffsetFetchResponseTopic::default()
                                .with_name(TopicName(StrBytes::from_string(topic)))
                                .with_partitions(
                                    partitions
                                        .iter()
                                        .zip(errors)
                                        .map(|((p, o), error)| {
                                            let (offset, epoch, metadata) = fields(o, version);
                                            OffsetFetchResponsePartition::default()
                                                .with_partition_index(*p)
                                                .with_committed_offset(offset)
                                                .with_committed_leader_epoch(epoch)
                                                .with_metadata(metadata)
                                                .with_error_code(error)
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                ),
        };
        return Some(response);
    }
    let groups = request
        .groups
        .into_iter()
        .map(|group| {
            let topics = group.topics.map(|ts| {
                ts.into_iter()
                    .map(|t| (t.name.to_string(), t.partition_indexes))
                    .collect()
            });
            let member = group.member_id.as_deref().map(|m| (m, group.member_epoch));
            match fetch(groups, &group.group_id, topics, member) {
                Err(e) => OffsetFetchResponseGroup::default()
                    .with_group_id(group.group_id)
                    .with_error_code(e.code()),
                Ok(fetched) => OffsetFetchResponseGroup::default()
                    .with_group_id(group.group_id.clone())
                    .with_error_code(code::NONE)
                    .with_topics(
                        by_topic(fetched)
                            .into_iter()
                            .map(|(topic, partitions)| {
                                let errors: Vec<i16> = partitions
                                    .iter()
                                    .map(|(p, _)| unstable(&group.group_id, &topic, *p))
                                    .collect();
                                OffsetFetchResponseTopics::default()
                                    .with_name(TopicName(StrBytes::from_string(topic)))
                                    .with_partitions(
                                        partitions
                                            .iter()
                                            .zip(errors)
                                            .map(|((p, o), error)| {
                                                let (offset, epoch, metadata) = fields(o, version);
                                                OffsetFetchResponsePartitions::default()
                                                    .with_partition_index(*p)
                                                    .with_committed_offset(offset)
                                                    .with_committed_leader_epoch(epoch)
                                                    .with_metadata(metadata)
                                                    .with_error_code(error)
                                            })
                                            .collect(),
                                    )
                            })
                            .collect(),
                    ),
            }
        })
        .collect();
    Some(OffsetFetchResponse::default().with_groups(groups))
}
