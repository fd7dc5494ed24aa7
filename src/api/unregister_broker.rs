//! UnregisterBroker (controller listener): forgets a decommissioned broker. The same file
//! builds the request.

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
    Some(match ctx.broker.controller().call(op).await {
        Ok(ControllerReply::Done) => response,
        Ok(other) => response.with_error_code(unexpected(&other).code()),
        Err(e) => response
            .with_error_code(e.code())
            .with_error_message(Some(wire_str(&e.message()))),
    })
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
