//! AlterConfigs (the legacy, non-incremental form): a topic's overrides are replaced by
//! exactly the configs given. Broker configs are static here, so broker resources are refused.

use super::describe_configs::{RESOURCE_BROKER, RESOURCE_TOPIC, broker_resource};
use super::{ApiContext, wire_str};
use crate::error::{Error, code};
use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{AlterConfigsRequest, AlterConfigsResponse};
use std::collections::BTreeMap;

pub async fn handle(
    ctx: &ApiContext,
    request: AlterConfigsRequest,
    _version: i16,
) -> Option<AlterConfigsResponse> {
    let responses = request
        .resources
        .into_iter()
        .map(|resource| {
            let result = match resource.resource_type {
                RESOURCE_TOPIC => {
                    let mut configs = BTreeMap::new();
                    let mut duplicate = None;
                    for config in &resource.configs {
                        if let Some(value) = &config.value
                            && configs
                                .insert(config.name.to_string(), value.to_string())
                                .is_some()
                        {
                            duplicate = Some(config.name.to_string());
                        }
                    }
                    match duplicate {
                        Some(name) => Err(Error::InvalidRequest(format!(
                            "config '{name}' given twice"
                        ))),
                        None => ctx.broker.set_topic_configs(
                            &resource.resource_name,
                            configs,
                            request.validate_only,
                        ),
                    }
                }
                RESOURCE_BROKER => broker_resource(ctx, &resource.resource_name)
                    .and_then(|_| Err(static_broker_configs())),
                other => Err(Error::InvalidRequest(format!(
                    "unsupported resource type {other}"
                ))),
            };
            let response = AlterConfigsResourceResponse::default()
                .with_resource_type(resource.resource_type)
                .with_resource_name(resource.resource_name);
            match result {
                Ok(()) => response.with_error_code(code::NONE),
                Err(e) => response
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.message()))),
            }
        })
        .collect();
    Some(AlterConfigsResponse::default().with_responses(responses))
}

pub fn static_broker_configs() -> Error {
    Error::InvalidRequest(
        "broker configs cannot be changed at runtime; set them in the config file".into(),
    )
}
