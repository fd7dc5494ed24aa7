//! DescribeCluster, as Kafka answers it (AuthHelper.computeDescribeClusterResponse): on a
//! client listener the live brokers on that listener, on the controller listener the
//! controllers (KIP-919: what `--bootstrap-controller` tools ask; the registered controllers,
//! voters or observers, and any voter not registered yet at its voter address). The controller id is the quorum's leader when it is
//! among the listed nodes, else -1. Asking a listener for the other kind of endpoint is
//! MISMATCHED_ENDPOINT_TYPE, an unknown kind UNSUPPORTED_ENDPOINT_TYPE (INVALID_REQUEST at v0,
//! which has no such codes).

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
    let (expected, name) = if ctx.is_controller_listener() {
        (ENDPOINT_CONTROLLERS, "CONTROLLER")
    } else {
        (ENDPOINT_BROKERS, "BROKER")
    };
    if endpoint_type != ENDPOINT_BROKERS && endpoint_type != ENDPOINT_CONTROLLERS {
        return Some(refused(
            code::UNSUPPORTED_ENDPOINT_TYPE,
            format!("Unsupported endpoint type {endpoint_type}"),
        ));
    }
    if endpoint_type != expected {
        let wanted = if endpoint_type == ENDPOINT_BROKERS {
            "BROKER"
        } else {
            "CONTROLLER"
        };
        return Some(refused(
            MISMATCHED_ENDPOINT_TYPE,
            format!(
                "The request was sent to an endpoint of type {name}, but we wanted an endpoint of type {wanted}"
            ),
        ));
    }
    let brokers: Vec<DescribeClusterBroker> = if expected == ENDPOINT_CONTROLLERS {
        controllers(ctx)
    } else {
        super::context::live_brokers(ctx)
            .into_iter()
            .map(|b| {
                DescribeClusterBroker::default()
                    .with_broker_id(BrokerId(b.id))
                    .with_host(wire_str(&b.host))
                    .with_port(b.port)
                    .with_rack(b.rack.as_deref().map(wire_str))
            })
            .collect()
    };
    let controller = if expected == ENDPOINT_CONTROLLERS {
        let leader = ctx.broker.controller_id();
        if brokers.iter().any(|b| b.broker_id.0 == leader) {
            leader
        } else {
            -1
        }
    } else {
        super::context::controller_for_clients(ctx, &super::context::live_brokers(ctx))
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

/// The quorum's voters at their `controller.quorum.voters` addresses; the unconfigured single
/// node at its own controller listener's (`localhost` for an empty host, as Kafka's tools
/// read a listener without one).
fn controllers(ctx: &ApiContext) -> Vec<DescribeClusterBroker> {
    let node = |id: i32, host: &str, port: u16| {
        DescribeClusterBroker::default()
            .with_broker_id(BrokerId(id))
            .with_host(wire_str(host))
            .with_port(i32::from(port))
    };
    let voters = ctx
        .broker
        .described_controllers(&ctx.broker.config().cluster.controller_listener);
    if voters.is_empty() {
        let host = if ctx.advertised_host.is_empty() {
            "localhost"
        } else {
            &ctx.advertised_host
        };
        return vec![node(ctx.broker.node_id(), host, ctx.advertised_port as u16)];
    }
    voters
        .iter()
        .map(|(id, host, port)| node(*id, host, *port))
        .collect()
}
