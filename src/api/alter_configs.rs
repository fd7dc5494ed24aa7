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
    let mut responses = Vec::with_capacity(request.resources.len());
    for resource in request.resources {
        let topic_configs = || {
            let mut configs = BTreeMap::new();
            for config in &resource.configs {
                if let Some(value) = &config.value
                    && configs
                        .insert(config.name.to_string(), value.to_string())
                        .is_some()
                {
                    return Err(Error::InvalidRequest(format!(
                        "config '{}' given twice",
                        config.name
                    )));
                }
            }
            Ok(configs)
        };
        let result = route(
            ctx,
            resource.resource_type,
            &resource.resource_name,
            request.validate_only,
            topic_configs,
        )
        .await;
        let response = AlterConfigsResourceResponse::default()
            .with_resource_type(resource.resource_type)
            .with_resource_name(resource.resource_name);
        responses.push(match result {
            Ok(()) => response.with_error_code(code::NONE),
            Err(e) => response
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.message()))),
        });
    }
    Some(AlterConfigsResponse::default().with_responses(responses))
}

/// Routes an alteration by resource type (shared with IncrementalAlterConfigs): a topic's
/// overrides become what `topic_configs` computes; this broker's resource is refused, since broker configs are static here;
/// other types are invalid.
pub(super) async fn route(
    ctx: &ApiContext,
    resource_type: i8,
    resource_name: &str,
    validate_only: bool,
    topic_configs: impl FnOnce() -> Result<BTreeMap<String, String>, Error>,
) -> Result<(), Error> {
    match resource_type {
        RESOURCE_TOPIC => {
            let configs = topic_configs()?;
            ctx.broker
                .set_topic_configs(resource_name, configs, validate_only)
                .await
        }
        RESOURCE_BROKER => {
            broker_resource(ctx, resource_name)?;
            Err(Error::InvalidRequest(
                "broker configs cannot be changed at runtime; set them in the config file".into(),
            ))
        }
        other => Err(Error::InvalidRequest(format!(
            "unsupported resource type {other}"
        ))),
    }
}
