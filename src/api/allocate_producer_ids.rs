//! AllocateProducerIds (controller listener): a block of producer ids for a broker. The same
//! file builds the request a broker sends.

use super::ApiContext;
use super::broker_registration::unexpected;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use kafka_protocol::messages::{
    AllocateProducerIdsRequest, AllocateProducerIdsResponse, BrokerId, ProducerId,
};

pub async fn handle(
    ctx: &ApiContext,
    request: AllocateProducerIdsRequest,
    _version: i16,
) -> Option<AllocateProducerIdsResponse> {
    let op = ControllerOp::AllocateProducerIds {
        broker: request.broker_id.0,
        broker_epoch: request.broker_epoch,
    };
    let response = AllocateProducerIdsResponse::default();
    Some(match ctx.broker.controller().call(op).await {
        Ok(ControllerReply::ProducerIds { first, count }) => response
            .with_producer_id_start(ProducerId(first))
            .with_producer_id_len(count as i32),
        Ok(other) => response.with_error_code(unexpected(&other).code()),
        Err(e) => response.with_error_code(e.code()),
    })
}

pub fn request_for(broker: i32, broker_epoch: i64) -> AllocateProducerIdsRequest {
    AllocateProducerIdsRequest::default()
        .with_broker_id(BrokerId(broker))
        .with_broker_epoch(broker_epoch)
}

pub fn reply_from(response: AllocateProducerIdsResponse) -> Result<ControllerReply, Error> {
    match Error::from_code(response.error_code, None) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::ProducerIds {
            first: response.producer_id_start.0,
            count: response.producer_id_len as i64,
        }),
    }
}
