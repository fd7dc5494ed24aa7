//! AlterConfigs (the legacy, non-incremental form): a topic's or a group's overrides, or a
//! broker resource's dynamic configs, are replaced by exactly the configs given.

use super::describe_configs::{RESOURCE_BROKER, RESOURCE_GROUP, RESOURCE_TOPIC};
use super::{ApiContext, wire_str};
use crate::error::{Error, code};
use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{AlterConfigsRequest, AlterConfigsResponse};
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeMap;

pub async fn handle(
    ctx: &ApiContext,
    request: AlterConfigsRequest,
    _version: i16,
) -> Option<AlterConfigsResponse> {
    let mut responses = Vec::with_capacity(request.resources.len());
    for resource in request.resources {
        let new_configs = |_current: BTreeMap<String, String>| {
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
            new_configs,
        )
        .await;
        let (error_code, error_message) = error_fields(result);
        responses.push(
            AlterConfigsResourceResponse::default()
                .with_resource_type(resource.resource_type)
                .with_resource_name(resource.resource_name)
                .with_error_code(error_code)
                .with_error_message(error_message),
        );
    }
    Some(AlterConfigsResponse::default().with_responses(responses))
}

/// A resource's error code and message in either AlterConfigs answer (shared with
/// IncrementalAlterConfigs).
pub(super) fn error_fields(result: Result<(), Error>) -> (i16, Option<StrBytes>) {
    match result {
        Ok(()) => (code::NONE, None),
        Err(e) => (e.code(), Some(wire_str(&e.message()))),
    }
}

/// Routes an alteration by resource type (shared with IncrementalAlterConfigs): a topic's or
/// a group's overrides, or a broker resource's dynamic configs (this broker's or the
/// cluster-wide defaults), become what `new_configs` computes from the current ones; other
/// types are invalid.
pub(super) async fn route(
    ctx: &ApiContext,
    resource_type: i8,
    resource_name: &str,
    validate_only: bool,
    new_configs: impl FnOnce(BTreeMap<String, String>) -> Result<BTreeMap<String, String>, Error>,
) -> Result<(), Error> {
    match resource_type {
        RESOURCE_TOPIC => {
            let topic = ctx
                .broker
                .topic(resource_name)
                .ok_or(Error::UnknownTopicOrPartition)?;
            let configs = new_configs(topic.configs.clone())?;
            ctx.broker
                .set_topic_configs(resource_name, configs, validate_only)
                .await
        }
        RESOURCE_GROUP => {
            if resource_name.is_empty() {
                return Err(Error::InvalidRequest(
                    "a group config needs a group id".into(),
                ));
            }
            let current = ctx
                .broker
                .metadata()
                .image()
                .group_configs
                .get(resource_name)
                .cloned()
                .unwrap_or_default();
            let configs = new_configs(current)?;
            ctx.broker
                .set_group_configs(resource_name, configs, validate_only)
                .await
        }
        RESOURCE_BROKER => {
            // A broker checks that a client names it (or the cluster default); a change
            // forwarded to the controller listener may name any broker.
            if !ctx.is_controller_listener() && !resource_name.is_empty() {
                // Kafka's ConfigAdminManager's words.
                let id = resource_name.parse::<i32>().map_err(|_| {
                    Error::InvalidRequest(format!(
                        "Node id must be an integer, but it is: {resource_name}"
                    ))
                })?;
                if id != ctx.broker.node_id() {
                    return Err(Error::InvalidRequest(format!(
                        "Unexpected broker id, expected {}, but received {resource_name}",
                        ctx.broker.node_id()
                    )));
                }
            }
            let configs = new_configs(ctx.broker.broker_configs(resource_name))?;
            ctx.broker
                .set_broker_configs(resource_name, configs, validate_only)
                .await
        }
        other => Err(Error::InvalidRequest(format!(
            "unsupported resource type {other}"
        ))),
    }
}
