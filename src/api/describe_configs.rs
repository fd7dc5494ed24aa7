//! DescribeConfigs for topics (every topic config with value, source, synonyms, type and
//! documentation), groups (the share group configs), this broker (every broker property, with
//! the dynamic ones changeable) and the cluster-wide dynamic defaults (the broker resource
//! `""`).

use super::{ApiContext, wire_str};
use crate::config::{ConfigSource, ConfigType, DescribedConfig, describe_group_configs};
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
                    .map(|t| ctx.broker.config().describe_topic(&t.configs))
                    .ok_or(Error::UnknownTopicOrPartition),
                // The default resource holds the cluster-wide dynamic defaults only.
                RESOURCE_BROKER if resource.resource_name.is_empty() => {
                    Ok(ctx.broker.config().describe_dynamic_defaults())
                }
                RESOURCE_BROKER => broker_resource(ctx, &resource.resource_name)
                    .map(|_| ctx.broker.config().describe()),
                RESOURCE_GROUP if !resource.resource_name.is_empty() => {
                    let image = ctx.broker.metadata().image();
                    let overrides = image
                        .group_configs
                        .get(resource.resource_name.as_str())
                        .cloned()
                        .unwrap_or_default();
                    Ok(describe_group_configs(&ctx.broker.config(), &overrides))
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
                    // Kafka: no keys (null or empty) asks for every config.
                    let wanted = resource.configuration_keys.filter(|keys| !keys.is_empty());
                    let configs = configs
                        .into_iter()
                        .filter(|c| {
                            wanted.as_ref().is_none_or(|keys| {
                                keys.iter().any(|k| k.as_str() == c.name.as_str())
                            })
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

/// Checks a broker resource name a client describes: empty (the cluster-wide defaults) or
/// this node's id, with Kafka's messages.
pub fn broker_resource(ctx: &ApiContext, name: &str) -> Result<(), Error> {
    if name.is_empty() {
        return Ok(());
    }
    let id = name.parse::<i32>().map_err(|_| {
        Error::InvalidRequest(format!("Broker id must be an integer, but it is: {name}"))
    })?;
    if id != ctx.broker.node_id() {
        return Err(Error::InvalidRequest(format!(
            "Unexpected broker id, expected {} or empty string, but received {name}",
            ctx.broker.node_id()
        )));
    }
    Ok(())
}

pub fn source_code(source: ConfigSource) -> i8 {
    match source {
        ConfigSource::TopicOverride => 1,
        ConfigSource::GroupOverride => 8,
        ConfigSource::DynamicBroker => 2,
        ConfigSource::DynamicDefault => 3,
        ConfigSource::StaticBroker => 4,
        ConfigSource::Default => 5,
    }
}

fn type_code(kind: Option<ConfigType>) -> i8 {
    let Some(kind) = kind else {
        return 0;
    };
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
    // Kafka never sends a password's value, only that it is set; nor one of a config of
    // unknown type, which might be a secret.
    let sensitive = config.kind.is_none_or(|k| k == ConfigType::Password);
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
        .with_name(wire_str(&config.name))
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
