//! UnregisterController (KIP-1312): forgets a decommissioned controller's registration
//! (`kafka-cluster unregister-controller`, `kafka-metadata-quorum remove-controller
//! --unregister`). On the controller listener the controller answers; a broker forwards it
//! to the active controller, as Kafka's do. The same file builds the request.

use super::unregister_broker::controller_command;
use super::{ApiContext, wire_str};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use kafka_protocol::messages::{UnregisterControllerRequest, UnregisterControllerResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: UnregisterControllerRequest,
    _version: i16,
) -> Option<UnregisterControllerResponse> {
    let op = ControllerOp::UnregisterController(request.controller_id);
    let response = UnregisterControllerResponse::default();
    Some(match controller_command(ctx, op).await {
        Ok(()) => response,
        Err(e) => response
            .with_error_code(e.code())
            .with_error_message(Some(wire_str(&e.message()))),
    })
}

pub fn request_for(controller: i32) -> UnregisterControllerRequest {
    UnregisterControllerRequest::default().with_controller_id(controller)
}

pub fn reply_from(response: UnregisterControllerResponse) -> Result<ControllerReply, Error> {
    match Error::from_code(response.error_code, response.error_message.as_deref()) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::Done),
    }
}
