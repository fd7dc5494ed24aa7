//! AlterReplicaLogDirs: moves replicas between this broker's log directories (in the
//! background; DescribeLogDirs shows the copy as a future log until it takes over); see
//! `Broker::alter_replica_log_dir` for Kafka's answers.

use super::ApiContext;
use crate::error::code;
use crate::types::TopicPartition;
use kafka_protocol::messages::alter_replica_log_dirs_response::{
    AlterReplicaLogDirPartitionResult, AlterReplicaLogDirTopicResult,
};
use kafka_protocol::messages::{AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: AlterReplicaLogDirsRequest,
    _version: i16,
) -> Option<AlterReplicaLogDirsResponse> {
    let mut results = Vec::new();
    for dir in &request.dirs {
        for topic in &dir.topics {
            let partitions = topic
                .partitions
                .iter()
                .map(|&p| {
                    let tp = TopicPartition::new(&topic.name, p);
                    let error_code = match ctx.broker.alter_replica_log_dir(&tp, &dir.path) {
                        Ok(()) => code::NONE,
                        Err(e) => e.code(),
                    };
                    AlterReplicaLogDirPartitionResult::default()
                        .with_partition_index(p)
                        .with_error_code(error_code)
                })
                .collect();
            results.push(
                AlterReplicaLogDirTopicResult::default()
                    .with_topic_name(topic.name.clone())
                    .with_partitions(partitions),
            );
        }
    }
    Some(AlterReplicaLogDirsResponse::default().with_results(results))
}
