//! DeleteRecords: moves each partition's log start offset forward (offset -1 means the high
//! watermark); whole segments below it are deleted.

use super::ApiContext;
use crate::error::code;
use crate::types::TopicPartition;
use kafka_protocol::messages::delete_records_response::{
    DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
};
use kafka_protocol::messages::{DeleteRecordsRequest, DeleteRecordsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: DeleteRecordsRequest,
    _version: i16,
) -> Option<DeleteRecordsResponse> {
    let topics = request
        .topics
        .into_iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let result = ctx.broker.delete_records(
                        &TopicPartition::new(&topic.name, p.partition_index),
                        p.offset,
                    );
                    let response = DeleteRecordsPartitionResult::default()
                        .with_partition_index(p.partition_index);
                    match result {
                        Ok(low) => response.with_error_code(code::NONE).with_low_watermark(low),
                        Err(e) => response.with_error_code(e.code()).with_low_watermark(-1),
                    }
                })
                .collect();
            DeleteRecordsTopicResult::default()
                .with_name(topic.name)
                .with_partitions(partitions)
        })
        .collect();
    Some(DeleteRecordsResponse::default().with_topics(topics))
}
