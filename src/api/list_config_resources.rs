//! ListConfigResources (KIP-1142; v0 was KIP-714's ListClientMetricsResources): the resources
//! DescribeConfigs can be asked about. v0 lists client-metrics subscriptions only; v1 lists
//! the requested types, or every supported type when none is named, in Kafka's order. Sluice
//! has topic and broker configs; it has no client-metrics subscriptions and no group configs,
//! so those types are listed empty. Broker loggers (type 8) are not configurable here, so
//! naming that type (or any unknown one) fails the request with UNSUPPORTED_VERSION, as
//! Kafka does for a type it does not support.

use super::{ApiContext, wire_str};
use crate::error::code;
use kafka_protocol::messages::list_config_resources_response::ConfigResource;
use kafka_protocol::messages::{ListConfigResourcesRequest, ListConfigResourcesResponse};

const TOPIC: i8 = 2;
const BROKER: i8 = 4;
const CLIENT_METRICS: i8 = 16;
const GROUP: i8 = 32;
/// Kafka's listing order.
const SUPPORTED: [i8; 4] = [GROUP, CLIENT_METRICS, BROKER, TOPIC];

pub async fn handle(
    ctx: &ApiContext,
    request: ListConfigResourcesRequest,
    version: i16,
) -> Option<ListConfigResourcesResponse> {
    let wanted: Vec<i8> = if version == 0 {
        vec![CLIENT_METRICS]
    } else if request.resource_types.is_empty() {
        SUPPORTED.to_vec()
    } else {
        request.resource_types.clone()
    };
    if wanted.iter().any(|t| !SUPPORTED.contains(t)) {
        return Some(
            ListConfigResourcesResponse::default().with_error_code(code::UNSUPPORTED_VERSION),
        );
    }
    let mut resources = Vec::new();
    for resource_type in SUPPORTED.into_iter().filter(|t| wanted.contains(t)) {
        let mut names: Vec<String> = match resource_type {
            BROKER => vec![ctx.broker.node_id().to_string()],
            TOPIC => ctx
                .broker
                .topics()
                .iter()
                .map(|t| t.name.to_string())
                .collect(),
            GROUP => ctx
                .broker
                .metadata()
                .image()
                .group_configs
                .keys()
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        names.sort();
        resources.extend(names.iter().map(|name| {
            ConfigResource::default()
                .with_resource_name(wire_str(name))
                .with_resource_type(resource_type)
        }));
    }
    Some(
        ListConfigResourcesResponse::default()
            .with_error_code(code::NONE)
            .with_config_resources(resources),
    )
}
