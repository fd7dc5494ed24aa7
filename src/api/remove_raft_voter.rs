//! RemoveRaftVoter (KIP-853): removes a controller from a dynamic quorum
//! (`kafka-metadata-quorum remove-controller`), answered once the change is committed. A
//! leader that removed itself hands its leadership over. Answered and forwarded as
//! AddRaftVoter is. The same file builds the request.

use super::{ApiContext, wire_str};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::{Error, code};
use kafka_protocol::messages::{RemoveRaftVoterRequest, RemoveRaftVoterResponse};
use kafka_protocol::protocol::StrBytes;

/// Kafka's refusal of a request for another cluster (INCONSISTENT_CLUSTER_ID), if it is one.
pub(super) fn foreign_cluster(ctx: &ApiContext, cluster_id: &Option<StrBytes>) -> Option<String> {
    let asked = cluster_id.as_deref().filter(|id| !id.is_empty())?;
    let image = ctx.broker.controller().image().borrow().clone();
    let ours = image.cluster_id.as_deref()?;
    (asked != ours).then(|| format!("The cluster id {asked} is not this cluster's ({ours})"))
}

pub async fn handle(
    ctx: &ApiContext,
    request: RemoveRaftVoterRequest,
    _version: i16,
) -> Option<RemoveRaftVoterResponse> {
    let response = RemoveRaftVoterResponse::default();
    if let Some(refusal) = foreign_cluster(ctx, &request.cluster_id) {
        return Some(
            response
                .with_error_code(code::INCONSISTENT_CLUSTER_ID)
                .with_error_message(Some(wire_str(&refusal))),
        );
    }
    let op = ControllerOp::RemoveVoter {
        node: request.voter_id,
        directory_id: request.voter_directory_id,
    };
    Some(
        match super::unregister_broker::controller_command(ctx, op).await {
            Ok(()) => response,
            Err(e) => response
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.message()))),
        },
    )
}

pub fn request_for(node: i32, directory_id: uuid::Uuid) -> RemoveRaftVoterRequest {
    RemoveRaftVoterRequest::default()
        .with_voter_id(node)
        .with_voter_directory_id(directory_id)
}

pub fn reply_from(response: RemoveRaftVoterResponse) -> Result<ControllerReply, Error> {
    match Error::from_code(response.error_code, response.error_message.as_deref()) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::Done),
    }
}
