//! ShareAcknowledge (KIP-932): acknowledgements without a fetch, on the member's share
//! session (epoch -1 acknowledges and then closes it, releasing what is left).

use super::share_fetch::{resolve, session_owner};
use super::{ApiContext, wire_str};
use crate::error::{ShareError, code};
use crate::share::AckBatches;
use kafka_protocol::messages::share_acknowledge_response::{
    LeaderIdAndEpoch, PartitionData, ShareAcknowledgeTopicResponse,
};
use kafka_protocol::messages::{ShareAcknowledgeRequest, ShareAcknowledgeResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: ShareAcknowledgeRequest,
    _version: i16,
) -> Option<ShareAcknowledgeResponse> {
    let top = |e: ShareError| {
        Some(
            ShareAcknowledgeResponse::default()
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.to_string()))),
        )
    };
    let (shares, group, member) =
        match session_owner(ctx, &request.group_id, &request.member_id).await {
            Ok(found) => found,
            Err(e) => return top(e),
        };
    let epoch = request.share_session_epoch;
    if epoch != -1
        && let Err(e) = shares.acknowledge_session(&group, &member, epoch)
    {
        return top(e);
    }
    let mut topics = Vec::with_capacity(request.topics.len());
    for topic in &request.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in &topic.partitions {
            let batches: AckBatches = p
                .acknowledgement_batches
                .iter()
                .map(|b| (b.first_offset, b.last_offset, b.acknowledge_types.clone()))
                .collect();
            let outcome = match resolve(ctx, topic.topic_id, p.partition_index) {
                Ok(target) => {
                    shares
                        .acknowledge_partition(&group, &member, &target, &batches)
                        .await
                }
                Err(e) => Err(e),
            };
            let mut data = PartitionData::default()
                .with_partition_index(p.partition_index)
                .with_current_leader(
                    LeaderIdAndEpoch::default()
                        .with_leader_id(-1)
                        .with_leader_epoch(-1),
                );
            if let Err(e) = outcome {
                data = data
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.to_string())));
            }
            partitions.push(data);
        }
        topics.push(
            ShareAcknowledgeTopicResponse::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions),
        );
    }
    if epoch == -1
        && let Err(e) = shares.fetch_session(&group, &member, -1, &[], &[]).await
    {
        return top(e);
    }
    let mut response = ShareAcknowledgeResponse::default()
        .with_error_code(code::NONE)
        .with_responses(topics);
    response.acquisition_lock_timeout_ms =
        shares.settings(&group).limits.lock_duration.as_millis() as i32;
    Some(response)
}
