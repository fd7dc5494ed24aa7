//! DeleteShareGroupOffsets (KIP-932): forgets a share group's state on every partition of
//! the topics named; the group must have no members.

use super::{ApiContext, wire_str};
use crate::error::{GroupError, ShareError, code};
use kafka_protocol::messages::delete_share_group_offsets_response::DeleteShareGroupOffsetsResponseTopic;
use kafka_protocol::messages::{DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: DeleteShareGroupOffsetsRequest,
    _version: i16,
) -> Option<DeleteShareGroupOffsetsResponse> {
    let top = |e: ShareError| {
        Some(
            DeleteShareGroupOffsetsResponse::default()
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.to_string()))),
        )
    };
    let shares = match super::share_coordinator_for(ctx, &request.group_id).await {
        Ok(s) => s,
        Err(e) => return top(e),
    };
    match shares.describe(&request.group_id) {
        None => return top(ShareError::Group(GroupError::GroupIdNotFound)),
        Some(g) if !g.members.is_empty() => {
            return top(ShareError::Group(GroupError::NonEmptyGroup));
        }
        Some(_) => {}
    }
    let mut responses = Vec::with_capacity(request.topics.len());
    for topic in request.topics {
        let info = ctx.broker.topic(&topic.topic_name);
        let outcome = match &info {
            None => Err(ShareError::Group(GroupError::UnknownTopicOrPartition)),
            Some(t) => shares.delete_topic_state(&request.group_id, t.id).await,
        };
        let mut answer = DeleteShareGroupOffsetsResponseTopic::default()
            .with_topic_id(info.map(|t| t.id).unwrap_or_default())
            .with_topic_name(topic.topic_name);
        if let Err(e) = outcome {
            answer = answer
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.to_string())));
        }
        responses.push(answer);
    }
    Some(
        DeleteShareGroupOffsetsResponse::default()
            .with_error_code(code::NONE)
            .with_responses(responses),
    )
}
