//! UnregisterBroker: forgets a decommissioned broker (`kafka-cluster unregister`). On the
//! controller listener the controller answers; a broker forwards it to the active controller,
//! as Kafka's do. The same file builds the request.

use super::broker_registration::unexpected;
use super::{ApiContext, wire_str};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use kafka_protocol::messages::{BrokerId, UnregisterBrokerRequest, UnregisterBrokerResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: UnregisterBrokerRequest,
    _version: i16,
) -> Option<UnregisterBrokerResponse> {
    let op = ControllerOp::UnregisterBroker(request.broker_id.0);
    let response = UnregisterBrokerResponse::default();
    Some(match controller_command(ctx, op).await {
        Ok(()) => response,
        Err(e) => response
            .with_error_code(e.code())
            .with_error_message(Some(wire_str(&e.message()))),
    })
}

/// Runs a command answered Done: on this node's controller on the controller listener, else
/// on the active controller (forwarded), as Kafka's brokers forward it.
pub(super) async fn controller_command(ctx: &ApiContext, op: ControllerOp) -> Result<(), Error> {
    let answer = if ctx.is_controller_listener() {
        ctx.broker.controller().call(op).await
    } else {
        ctx.broker.call_active_controller(op).await
    };
    match answer? {
        ControllerReply::Done => Ok(()),
        other => Err(unexpected(&other)),
    }
}

pub fn request_for(broker: i32) -> UnregisterBrokerRequest {
    UnregisterBrokerRequest::default().with_broker_id(BrokerId(broker))
}

pub fn reply_from(response: UnregisterBrokerResponse) -> Result<ControllerReply, Error> {
    match Error::from_code(response.error_code, response.error_message.as_deref()) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::Done),
    }
}
