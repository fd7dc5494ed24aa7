//! DescribeCluster: cluster id, controller and brokers (this node; it is also the controller).

use super::{
    ApiContext, CLUSTER_OPERATIONS, OPERATIONS_NOT_REQUESTED, authorized_operations, wire_str,
};
use crate::error::code;
use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::{BrokerId, DescribeClusterRequest, DescribeClusterResponse};

/// DescribeCluster endpoint types (v1+).
const ENDPOINT_BROKERS: i8 = 1;
const ENDPOINT_CONTROLLERS: i8 = 2;

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
    let response = DescribeClusterResponse::default()
        .with_endpoint_type(endpoint_type)
        .with_cluster_id(wire_str(&ctx.broker.cluster_id()));
    if endpoint_type != ENDPOINT_BROKERS && endpoint_type != ENDPOINT_CONTROLLERS {
        return Some(
            response
                .with_error_code(code::UNSUPPORTED_ENDPOINT_TYPE)
                .with_error_message(Some(wire_str("unknown endpoint type"))),
        );
    }
    let node = BrokerId(ctx.broker.node_id());
    let cluster_ops = if request.include_cluster_authorized_operations {
        authorized_operations(CLUSTER_OPERATIONS)
    } else {
        OPERATIONS_NOT_REQUESTED
    };
    Some(
        response
            .with_error_code(code::NONE)
            .with_controller_id(node)
            .with_brokers(vec![
                DescribeClusterBroker::default()
                    .with_broker_id(node)
                    .with_host(wire_str(&ctx.advertised_host))
                    .with_port(ctx.advertised_port),
            ])
            .with_cluster_authorized_operations(cluster_ops),
    )
}
