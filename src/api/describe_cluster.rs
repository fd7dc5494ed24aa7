//! DescribeCluster: the cluster id, the controller and the live brokers on this listener, as
//! Kafka's brokers answer it (AuthHelper.computeDescribeClusterResponse): the controller id is
//! the quorum's leader when it is among the listed brokers (every node is both), else -1; a
//! request for controller endpoints (KIP-919) is MISMATCHED_ENDPOINT_TYPE here, an unknown
//! endpoint type UNSUPPORTED_ENDPOINT_TYPE (INVALID_REQUEST at v0, which has no such codes).

use super::{
    ApiContext, CLUSTER_OPERATIONS, OPERATIONS_NOT_REQUESTED, authorized_operations, wire_str,
};
use crate::error::code;
use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::{BrokerId, DescribeClusterRequest, DescribeClusterResponse};

/// DescribeCluster endpoint types (v1+).
const ENDPOINT_BROKERS: i8 = 1;
const ENDPOINT_CONTROLLERS: i8 = 2;
const MISMATCHED_ENDPOINT_TYPE: i16 = 114;

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeClusterRequest,
    version: i16,
) -> Option<DescribeClusterResponse> {
    let endpoint_type = if version >= 1 {
        request.endpoint_type
    } else {
        ENDPOINT_BROKERS
    };
    let refused = |error: i16, message: String| {
        let error = if version == 0 {
            code::INVALID_REQUEST
        } else {
            error
        };
        DescribeClusterResponse::default()
            .with_error_code(error)
            .with_error_message(Some(wire_str(&message)))
    };
    if endpoint_type == ENDPOINT_CONTROLLERS {
        return Some(refused(
            MISMATCHED_ENDPOINT_TYPE,
            "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER".into(),
        ));
    }
    if endpoint_type != ENDPOINT_BROKERS {
        return Some(refused(
            code::UNSUPPORTED_ENDPOINT_TYPE,
            format!("Unsupported endpoint type {endpoint_type}"),
        ));
    }
    let brokers: Vec<DescribeClusterBroker> = super::context::live_brokers(ctx)
        .into_iter()
        .map(|b| {
            DescribeClusterBroker::default()
                .with_broker_id(BrokerId(b.id))
                .with_host(wire_str(&b.host))
                .with_port(b.port)
                .with_rack(b.rack.as_deref().map(wire_str))
        })
        .collect();
    let leader = ctx.broker.controller_id();
    let controller = if brokers.iter().any(|b| b.broker_id.0 == leader) {
        leader
    } else {
        -1
    };
    let cluster_ops = if request.include_cluster_authorized_operations {
        authorized_operations(CLUSTER_OPERATIONS)
    } else {
        OPERATIONS_NOT_REQUESTED
    };
    Some(
        DescribeClusterResponse::default()
            .with_error_code(code::NONE)
            .with_endpoint_type(endpoint_type)
            .with_cluster_id(wire_str(&ctx.broker.cluster_id()))
            .with_controller_id(BrokerId(controller))
            .with_brokers(brokers)
            .with_cluster_authorized_operations(cluster_ops),
    )
}
