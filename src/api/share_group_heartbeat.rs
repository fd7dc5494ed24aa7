//! ShareGroupHeartbeat (KIP-932): join (epoch 0, with the subscription), stay (the current
//! epoch), leave (-1). The client sends its own member id; the coordinator answers with the
//! member's epoch and, when it changed, its assignment.

use super::{ApiContext, wire_str};
use crate::error::{GroupError, ShareError, code};
use crate::share::group::Heartbeat;
use kafka_protocol::messages::share_group_heartbeat_response::{
    Assignment as WireAssignment, TopicPartitions,
};
use kafka_protocol::messages::{ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse};
use kafka_protocol::protocol::StrBytes;

pub async fn handle(
    ctx: &ApiContext,
    request: ShareGroupHeartbeatRequest,
    _version: i16,
) -> Option<ShareGroupHeartbeatResponse> {
    let error = |e: ShareError| {
        Some(
            ShareGroupHeartbeatResponse::default()
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.to_string())))
                .with_member_epoch(-1),
        )
    };
    let shares = match super::share_coordinator_for(ctx, &request.group_id).await {
        Ok(shares) => shares,
        Err(e) => return error(e),
    };
    let heartbeat = Heartbeat {
        member_id: request.member_id.to_string(),
        member_epoch: request.member_epoch,
        rack_id: request.rack_id.as_ref().map(|s| s.to_string()),
        subscribed_topic_names: request
            .subscribed_topic_names
            .as_ref()
            .map(|names| names.iter().map(|n| n.to_string()).collect()),
        client_id: ctx.client_id.to_string(),
        client_host: ctx.client_host.to_string(),
    };
    if heartbeat.member_id.is_empty() {
        return error(ShareError::Group(GroupError::InvalidRequest));
    }
    match shares.heartbeat(&request.group_id, heartbeat).await {
        Err(e) => error(e),
        Ok((reply, interval)) => {
            let assignment = reply.assignment.map(|a| {
                WireAssignment::default().with_topic_partitions(
                    a.into_iter()
                        .map(|(topic_id, partitions)| {
                            TopicPartitions::default()
                                .with_topic_id(topic_id)
                                .with_partitions(partitions.into_iter().collect())
                        })
                        .collect(),
                )
            });
            Some(
                ShareGroupHeartbeatResponse::default()
                    .with_error_code(code::NONE)
                    .with_member_id(Some(StrBytes::from_string(reply.member_id)))
                    .with_member_epoch(reply.member_epoch)
                    .with_heartbeat_interval_ms(interval)
                    .with_assignment(assignment),
            )
        }
    }
}
