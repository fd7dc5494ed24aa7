//! AddRaftVoter (KIP-853): adds a controller to a dynamic quorum (`kafka-metadata-quorum
//! add-controller`). The leader of the quorum runs it (`controller::voters`); any other
//! controller answers NOT_CONTROLLER so the admin client finds the leader, and a broker
//! forwards it to the active controller, as Kafka's do. The same file builds the request.

use super::{ApiContext, wire_str};
use crate::controller::ops::NewVoter;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::{Error, code};
use crate::metadata::records::Endpoint;
use kafka_protocol::messages::add_raft_voter_request::Listener;
use kafka_protocol::messages::{AddRaftVoterRequest, AddRaftVoterResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: AddRaftVoterRequest,
    _version: i16,
) -> Option<AddRaftVoterResponse> {
    let response = AddRaftVoterResponse::default();
    if let Some(refusal) = super::remove_raft_voter::foreign_cluster(ctx, &request.cluster_id) {
        return Some(
            response
                .with_error_code(code::INCONSISTENT_CLUSTER_ID)
                .with_error_message(Some(wire_str(&refusal))),
        );
    }
    let endpoints = voter_endpoints(
        ctx,
        request
            .listeners
            .iter()
            .map(|l| (l.name.as_str(), l.host.as_str(), l.port)),
    );
    let op = ControllerOp::AddVoter(NewVoter {
        node: request.voter_id,
        directory_id: request.voter_directory_id,
        endpoints,
        timeout_ms: i64::from(request.timeout_ms.max(0)),
    });
    Some(
        match super::unregister_broker::controller_command(ctx, op).await {
            Ok(()) => response,
            Err(e) => response
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.message()))),
        },
    )
}

/// A voter's listeners (name, host, port) as endpoints, each with the security protocol of
/// this node's listener of that name (the voters' controller listeners are alike).
pub(super) fn voter_endpoints<'a>(
    ctx: &ApiContext,
    listeners: impl Iterator<Item = (&'a str, &'a str, u16)>,
) -> Vec<Endpoint> {
    let config = ctx.broker.config();
    listeners
        .map(|(name, host, port)| Endpoint {
            name: name.to_string(),
            host: host.to_string(),
            port,
            security_protocol: config
                .listeners
                .iter()
                .find(|l| l.name == name)
                .map_or(0, |l| l.protocol.id()),
        })
        .collect()
}

pub fn request_for(voter: &NewVoter, cluster_id: Option<&str>) -> AddRaftVoterRequest {
    AddRaftVoterRequest::default()
        .with_cluster_id(cluster_id.map(wire_str))
        .with_timeout_ms(voter.timeout_ms.clamp(0, i64::from(i32::MAX)) as i32)
        .with_voter_id(voter.node)
        .with_voter_directory_id(voter.directory_id)
        .with_listeners(
            voter
                .endpoints
                .iter()
                .map(|e| {
                    Listener::default()
                        .with_name(wire_str(&e.name))
                        .with_host(wire_str(&e.host))
                        .with_port(e.port)
                })
                .collect(),
        )
}

pub fn reply_from(response: AddRaftVoterResponse) -> Result<ControllerReply, Error> {
    match Error::from_code(response.error_code, response.error_message.as_deref()) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::Done),
    }
}
