//! DescribeLogDirs: each of the broker's log directories (absolute path, file-system size and
//! free space from v4) with the size and offset lag of each partition log in it (logs being
//! moved in as future ones), all of them or only the requested partitions.

use super::ApiContext;
use super::wire_str;
use crate::error::code;
use crate::storage::manager::LogDirUsage;
use crate::types::TopicPartition;
use kafka_protocol::messages::describe_log_dirs_response::{
    DescribeLogDirsPartition, DescribeLogDirsResult, DescribeLogDirsTopic,
};
use kafka_protocol::messages::{DescribeLogDirsRequest, DescribeLogDirsResponse, TopicName};
use std::collections::{BTreeMap, HashSet};

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeLogDirsRequest,
    _version: i16,
) -> Option<DescribeLogDirsResponse> {
    let wanted: Option<HashSet<TopicPartition>> = request.topics.map(|topics| {
        topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|&p| TopicPartition::new(&t.topic, p))
            })
            .collect()
    });
    let results = match ctx.broker.describe_log_dirs(wanted.as_ref()) {
        Ok(usages) => usages.into_iter().map(describe_dir).collect(),
        Err(e) => {
            tracing::warn!(error = %e, "describing the log directories failed");
            ctx.broker
                .config()
                .log_dirs
                .iter()
                .map(|dir| {
                    DescribeLogDirsResult::default()
                        .with_error_code(e.code())
                        .with_log_dir(wire_str(&dir.to_string_lossy()))
                        .with_total_bytes(-1)
                        .with_usable_bytes(-1)
                })
                .collect()
        }
    };
    Some(
        DescribeLogDirsResponse::default()
            .with_error_code(code::NONE)
            .with_results(results),
    )
}

/// One directory's answer: its logs by topic (a log being moved in is a future one).
fn describe_dir(usage: LogDirUsage) -> DescribeLogDirsResult {
    if usage.offline {
        return DescribeLogDirsResult::default()
            .with_error_code(code::KAFKA_STORAGE_ERROR)
            .with_log_dir(wire_str(&usage.path.to_string_lossy()))
            .with_total_bytes(-1)
            .with_usable_bytes(-1);
    }
    let mut by_topic: BTreeMap<String, Vec<DescribeLogDirsPartition>> = BTreeMap::new();
    for log in usage.logs {
        by_topic
            .entry(log.topic_partition.topic.to_string())
            .or_default()
            .push(
                DescribeLogDirsPartition::default()
                    .with_partition_index(log.topic_partition.partition)
                    .with_partition_size(i64::try_from(log.size_bytes).unwrap_or(i64::MAX))
                    .with_offset_lag(log.offset_lag)
                    .with_is_future_key(log.is_future),
            );
    }
    let topics = by_topic
        .into_iter()
        .map(|(name, partitions)| {
            DescribeLogDirsTopic::default()
                .with_name(TopicName(wire_str(&name)))
                .with_partitions(partitions)
        })
        .collect();
    DescribeLogDirsResult::default()
        .with_error_code(code::NONE)
        .with_log_dir(wire_str(&usage.path.to_string_lossy()))
        .with_topics(topics)
        .with_total_bytes(i64::try_from(usage.total_bytes).unwrap_or(i64::MAX))
        .with_usable_bytes(i64::try_from(usage.usable_bytes).unwrap_or(i64::MAX))
}
