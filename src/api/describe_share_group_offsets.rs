//! DescribeShareGroupOffsets (KIP-932; v1 with the lag of KIP-1226): each share-partition's
//! start offset and lag (-1 where the group has no state), for the topics asked or, without
//! topics, every one it has state for.

use super::{ApiContext, wire_str};
use crate::error::{GroupError, ShareError, code};
use kafka_protocol::messages::describe_share_group_offsets_response::{
    DescribeShareGroupOffsetsResponseGroup, DescribeShareGroupOffsetsResponsePartition,
    DescribeShareGroupOffsetsResponseTopic,
};
use kafka_protocol::messages::{
    DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse,
};
use std::collections::BTreeMap;
use uuid::Uuid;

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeShareGroupOffsetsRequest,
    _version: i16,
) -> Option<DescribeShareGroupOffsetsResponse> {
    let mut groups = Vec::with_capacity(request.groups.len());
    for asked in request.groups {
        let group =
            DescribeShareGroupOffsetsResponseGroup::default().with_group_id(asked.group_id.clone());
        let failed = |group: DescribeShareGroupOffsetsResponseGroup, e: ShareError| {
            group
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.to_string())))
        };
        let shares = match super::share_coordinator_for(ctx, &asked.group_id).await {
            Ok(s) => s,
            Err(e) => {
                groups.push(failed(group, e));
                continue;
            }
        };
        // Topics named but unknown are answered per partition.
        let mut unknown: Vec<DescribeShareGroupOffsetsResponseTopic> = Vec::new();
        let wanted = asked.topics.as_ref().map(|topics| {
            let mut wanted = Vec::new();
            for t in topics {
                match ctx.broker.topic(&t.topic_name) {
                    Some(info) => wanted.extend(t.partitions.iter().map(|p| (info.id, *p))),
                    None => unknown.push(
                        DescribeShareGroupOffsetsResponseTopic::default()
                            .with_topic_name(t.topic_name.clone())
                            .with_partitions(
                                t.partitions
                                    .iter()
                                    .map(|p| {
                                        DescribeShareGroupOffsetsResponsePartition::default()
                                            .with_partition_index(*p)
                                            .with_start_offset(-1)
                                            .with_leader_epoch(-1)
                                            .with_error_code(code::UNKNOWN_TOPIC_OR_PARTITION)
                                    })
                                    .collect(),
                            ),
                    ),
                }
            }
            wanted
        });
        let offsets = match shares.start_offsets(&asked.group_id, wanted).await {
            Ok(o) => o,
            Err(ShareError::Group(GroupError::GroupIdNotFound)) if asked.topics.is_some() => {
                // A group never seen has no state: every partition asked reads -1.
                Vec::new()
            }
            Err(e) => {
                groups.push(failed(group, e));
                continue;
            }
        };
        let mut by_topic: BTreeMap<Uuid, Vec<DescribeShareGroupOffsetsResponsePartition>> =
            BTreeMap::new();
        for (topic_id, partition, start, lag) in offsets {
            let mut answer = DescribeShareGroupOffsetsResponsePartition::default()
                .with_partition_index(partition)
                .with_start_offset(start)
                .with_leader_epoch(if start >= 0 { 0 } else { -1 })
                .with_error_code(code::NONE);
            answer.lag = lag;
            by_topic.entry(topic_id).or_default().push(answer);
        }
        if let Some(topics) = &asked.topics {
            // Asked partitions of a group never seen.
            for t in topics {
                if let Some(info) = ctx.broker.topic(&t.topic_name) {
                    let entry = by_topic.entry(info.id).or_default();
                    for p in &t.partitions {
                        if !entry.iter().any(|e| e.partition_index == *p) {
                            entry.push(
                                DescribeShareGroupOffsetsResponsePartition::default()
                                    .with_partition_index(*p)
                                    .with_start_offset(-1)
                                    .with_leader_epoch(-1),
                            );
                        }
                    }
                }
            }
        }
        let mut topics: Vec<DescribeShareGroupOffsetsResponseTopic> = by_topic
            .into_iter()
            .map(|(topic_id, partitions)| {
                DescribeShareGroupOffsetsResponseTopic::default()
                    .with_topic_name(super::topic_name_of(ctx, topic_id))
                    .with_topic_id(topic_id)
                    .with_partitions(partitions)
            })
            .collect();
        topics.extend(unknown);
        groups.push(group.with_error_code(code::NONE).with_topics(topics));
    }
    Some(DescribeShareGroupOffsetsResponse::default().with_groups(groups))
}
