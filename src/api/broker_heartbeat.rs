//! BrokerHeartbeat (controller listener): keeps a broker's session, unfences it once caught
//! up, and runs its controlled shutdown. The same file builds the request a broker sends.

use super::ApiContext;
use super::broker_registration::unexpected;
use crate::controller::control::{HeartbeatReply, HeartbeatRequest as Heartbeat};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use kafka_protocol::messages::{BrokerHeartbeatRequest, BrokerHeartbeatResponse, BrokerId};

pub async fn handle(
    ctx: &ApiContext,
    request: BrokerHeartbeatRequest,
    _version: i16,
) -> Option<BrokerHeartbeatResponse> {
    let op = ControllerOp::Heartbeat(Heartbeat {
        broker_id: request.broker_id.0,
        broker_epoch: request.broker_epoch,
        metadata_offset: request.current_metadata_offset.max(0) as u64,
        want_fence: request.want_fence,
        want_shutdown: request.want_shut_down,
        offline_log_dirs: request.offline_log_dirs,
    });
    let response = BrokerHeartbeatResponse::default().with_is_fenced(true);
    Some(match ctx.broker.controller().call(op).await {
        Ok(ControllerReply::Heartbeat(reply)) => response
            .with_is_caught_up(reply.is_caught_up)
            .with_is_fenced(reply.is_fenced)
            .with_should_shut_down(reply.should_shutdown),
        Ok(other) => response.with_error_code(unexpected(&other).code()),
        Err(e) => response.with_error_code(e.code()),
    })
}

pub fn request_for(heartbeat: &Heartbeat) -> BrokerHeartbeatRequest {
    BrokerHeartbeatRequest::default()
        .with_broker_id(BrokerId(heartbeat.broker_id))
        .with_broker_epoch(heartbeat.broker_epoch)
        .with_current_metadata_offset(heartbeat.metadata_offset as i64)
        .with_want_fence(heartbeat.want_fence)
        .with_want_shut_down(heartbeat.want_shutdown)
        .with_offline_log_dirs(heartbeat.offline_log_dirs.clone())
}

pub fn reply_from(response: BrokerHeartbeatResponse) -> Result<ControllerReply, Error> {
    match Error::from_code(response.error_code, None) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::Heartbeat(HeartbeatReply {
            is_caught_up: response.is_caught_up,
            is_fenced: response.is_fenced,
            should_shutdown: response.should_shut_down,
        })),
    }
}
