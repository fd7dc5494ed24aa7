//! UpdateRaftVoter (KIP-853): a voter of a dynamic quorum tells the leader where it listens
//! now (a controller restarted with another controller listener), with the checks of Kafka's
//! `UpdateVoterHandler`: a dynamic quorum (UNSUPPORTED_VERSION), no change pending and a
//! leader that has committed in its term (REQUEST_TIMED_OUT), the voter's kraft.version range
//! holding the cluster's and its endpoints naming the controller listener (INVALID_REQUEST), a
//! voter of that id and directory id (VOTER_NOT_FOUND). Sent controller to controller, on the
//! controller listener only, as in Kafka; the same file builds the request.

use super::{ApiContext, wire_str};
use crate::controller::ops::NewVoter;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::{Error, code};
use kafka_protocol::messages::update_raft_voter_request::{KRaftVersionFeature, Listener};
use kafka_protocol::messages::{UpdateRaftVoterRequest, UpdateRaftVoterResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: UpdateRaftVoterRequest,
    _version: i16,
) -> Option<UpdateRaftVoterResponse> {
    let response = UpdateRaftVoterResponse::default();
    let refuse = |error: Error| Some(response.clone().with_error_code(error.code()));
    if super::remove_raft_voter::foreign_cluster(ctx, &request.cluster_id).is_some() {
        return Some(response.with_error_code(code::INCONSISTENT_CLUSTER_ID));
    }
    // A static quorum (kraft.version 0) is refused by the controller (UNSUPPORTED_VERSION).
    let kraft_version = ctx.broker.metadata().image().kraft_version();
    let versions = &request.k_raft_version_feature;
    if !(versions.min_supported_version..=versions.max_supported_version).contains(&kraft_version) {
        return refuse(Error::InvalidRequest(String::new()));
    }
    let config = ctx.broker.config();
    let controller_listener = &config.cluster.controller_listener;
    if !request
        .listeners
        .iter()
        .any(|l| l.name.as_str() == controller_listener)
    {
        return refuse(Error::InvalidRequest(String::new()));
    }
    let endpoints = super::add_raft_voter::voter_endpoints(
        ctx,
        request
            .listeners
            .iter()
            .map(|l| (l.name.as_str(), l.host.as_str(), l.port)),
    );
    let op = ControllerOp::UpdateVoter(NewVoter {
        node: request.voter_id,
        directory_id: request.voter_directory_id,
        endpoints,
        timeout_ms: 0,
    });
    Some(
        match super::unregister_broker::controller_command(ctx, op).await {
            Ok(()) => response,
            Err(e) => response.with_error_code(e.code()),
        },
    )
}

pub fn request_for(voter: &NewVoter, cluster_id: Option<&str>) -> UpdateRaftVoterRequest {
    UpdateRaftVoterRequest::default()
        .with_cluster_id(cluster_id.map(wire_str))
        .with_current_leader_epoch(-1)
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
        .with_k_raft_version_feature(
            KRaftVersionFeature::default()
                .with_min_supported_version(0)
                .with_max_supported_version(1),
        )
}

pub fn reply_from(response: UpdateRaftVoterResponse) -> Result<ControllerReply, Error> {
    match Error::from_code(response.error_code, None) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::Done),
    }
}
