//! Heartbeat: keeps a classic member alive; REBALANCE_IN_PROGRESS tells it to rejoin.

use super::ApiContext;
use crate::error::{GroupError, code};
use kafka_protocol::messages::{HeartbeatRequest, HeartbeatResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: HeartbeatRequest,
    _version: i16,
) -> Option<HeartbeatResponse> {
    let result = match super::coordinator_for(ctx, &request.group_id).await {
        Err(e) => Err(e),
        Ok(groups) => groups.heartbeat(
            &request.group_id,
            &request.member_id,
            request.group_instance_id.as_deref(),
            request.generation_id,
        ),
    };
    Some(
        HeartbeatResponse::default()
            .with_error_code(result.err().map(GroupError::code).unwrap_or(code::NONE)),
    )
}
