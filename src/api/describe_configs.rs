//! DescribeConfigs for topics (every topic config with value, source, synonyms, type and
//! documentation), groups (the share group configs) and this broker (every broker property,
//! read-only).

use super::{ApiContext, wire_str};
use crate::config::{
    ConfigSource, ConfigType, DescribedConfig, describe_group_configs, describe_topic_configs,
};
use crate::error::{Error, code};
use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};

/// Kafka's ConfigResource types.
pub const RESOURCE_TOPIC: i8 = 2;
pub const RESOURCE_BROKER: i8 = 4;
pub const RESOURCE_GROUP: i8 = 32;

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeConfigsRequest,
    version: i16,
) -> Option<DescribeConfigsResponse> {
    let results = request
        .resources
        .into_iter()
        .map(|resource| {
            let described = match resource.resource_type {
                RESOURCE_TOPIC => ctx
                    .broker
                    .topic(&resource.resource_name)
                    .map(|t| {
                        describe_topic_configs(&ctx.broker.config().topic_defaults, &t.configs)
                    })
                    .ok_or(Error::UnknownTopicOrPartition),
                RESOURCE_BROKER => broker_resource(ctx, &resource.resource_name)
                    .map(|_| ctx.broker.config().describe()),
                RESOURCE_GROUP if !resource.resource_name.is_empty() => {
                    let image = ctx.broker.metadata().image();
                    let overrides = image
                        .group_configs
                        .get(resource.resource_name.as_str())
                        .cloned()
                        .unwrap_or_default();
                    Ok(describe_group_configs(ctx.broker.config(), &overrides))
                }
                other => Err(Error::InvalidRequest(format!(
                    "unsupported resource type {other}"
                ))),
            };
            let result = DescribeConfigsResult::default()
                .with_resource_type(resource.resource_type)
                .with_resource_name(resource.resource_name);
            match described {
                Ok(configs) => {
                    let wanted = resource.configuration_keys;
                    let configs = configs
                        .into_iter()
                        .filter(|c| {
                            wanted
                                .as_ref()
                                .is_none_or(|keys| keys.iter().any(|k| k.as_str() == c.name))
                        })
                        .map(|c| {
                            to_wire(
                                c,
                                request.include_synonyms,
                                request.include_documentation,
                                version,
                            )
                        })
                        .collect();
                    result.with_error_code(code::NONE).with_configs(configs)
                }
                Err(e) => result
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.message()))),
            }
        })
        .collect();
    Some(DescribeConfigsResponse::default().with_results(results))
}

/// Checks a broker resource name: empty (the default-config resource) or this node's id.
pub fn broker_resource(ctx: &ApiContext, name: &str) -> Result<(), Error> {
    if name.is_empty() || name.parse::<i32>().ok() == Some(ctx.broker.node_id()) {
        Ok(())
    } else {
        Err(Error::InvalidRequest(format!(
            "unexpected broker id '{name}', this is broker {}",
            ctx.broker.node_id()
        )))
    }
}

pub fn source_code(source: ConfigSource) -> i8 {
    match source {
        ConfigSource::TopicOverride => 1,
        ConfigSource::GroupOverride => 8,
        ConfigSource::StaticBroker => 4,
        ConfigSource::Default => 5,
    }
}

fn type_code(kind: ConfigType) -> i8 {
    match kind {
        ConfigType::Boolean => 1,
        ConfigType::String => 2,
        ConfigType::Int => 3,
        ConfigType::Long => 5,
        ConfigType::Double => 6,
        ConfigType::List => 7,
        ConfigType::Password => 9,
    }
}

fn to_wire(
    config: DescribedConfig,
    synonyms: bool,
    documentation: bool,
    version: i16,
) -> DescribeConfigsResourceResult {
    // Kafka never sends a password's value, only that it is set.
    let sensitive = config.kind == ConfigType::Password;
    let synonyms = if synonyms {
        config
            .synonyms
            .into_iter()
            .map(|(name, value, source)| {
                DescribeConfigsSynonym::default()
                    .with_name(wire_str(&name))
                    .with_value(value.filter(|_| !sensitive).map(|v| wire_str(&v)))
                    .with_source(source_code(source))
            })
            .collect()
    } else {
        Vec::new()
    };
    DescribeConfigsResourceResult::default()
        .with_name(wire_str(config.name))
        .with_value(config.value.filter(|_| !sensitive).map(|v| wire_str(&v)))
        .with_read_only(config.read_only)
        .with_config_source(source_code(config.source))
        .with_is_sensitive(sensitive)
        .with_synonyms(synonyms)
        .with_config_type(if version >= 3 {
            type_code(config.kind)
        } else {
            0
        })
        .with_documentation((documentation && version >= 3).then(|| wire_str(config.doc)))
}
