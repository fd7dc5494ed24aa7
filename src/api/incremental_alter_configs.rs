//! IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on a topic's or a group's
//! overrides or a broker resource's dynamic configs (APPEND and SUBTRACT only for list
//! configs, as in Kafka).

use super::ApiContext;
use super::alter_configs::{error_fields, route};
use super::describe_configs::{RESOURCE_BROKER, RESOURCE_GROUP};
use crate::config::{ConfigDef, ConfigType, broker_config_def, group_config_def, topic_config_def};
use crate::error::Error;
use kafka_protocol::messages::incremental_alter_configs_request::AlterableConfig;
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse};
use std::collections::{BTreeMap, BTreeSet};

const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;
const SUBTRACT: i8 = 3;

pub async fn handle(
    ctx: &ApiContext,
    request: IncrementalAlterConfigsRequest,
    _version: i16,
) -> Option<IncrementalAlterConfigsResponse> {
    let mut responses = Vec::with_capacity(request.resources.len());
    for resource in request.resources {
        let definitions: fn(&str) -> Option<&'static ConfigDef> = match resource.resource_type {
            RESOURCE_GROUP => group_config_def,
            RESOURCE_BROKER => broker_config_def,
            _ => topic_config_def,
        };
        // A broker resource stores a name no definition knows, as Kafka does; a group's
        // unknown name is refused by the group configs' check, with Kafka's message.
        let allow_unknown = matches!(resource.resource_type, RESOURCE_BROKER | RESOURCE_GROUP);
        let new_configs = |current| apply(current, &resource.configs, definitions, allow_unknown);
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
    Some(IncrementalAlterConfigsResponse::default().with_responses(responses))
}

/// Applies the operations to `configs` (the current overrides).
fn apply(
    mut configs: BTreeMap<String, String>,
    ops: &[AlterableConfig],
    definitions: fn(&str) -> Option<&'static ConfigDef>,
    allow_unknown: bool,
) -> Result<BTreeMap<String, String>, Error> {
    let mut seen = BTreeSet::new();
    for op in ops {
        let name = op.name.to_string();
        if !seen.insert(name.clone()) {
            return Err(Error::InvalidRequest(format!(
                "config '{name}' given twice"
            )));
        }
        let def = definitions(&name);
        if def.is_none() && !allow_unknown {
            return Err(Error::InvalidConfig(format!("unknown config '{name}'")));
        }
        let value = op.value.as_ref().map(|v| v.to_string());
        match op.config_operation {
            SET => {
                let value = value.ok_or_else(|| {
                    Error::InvalidRequest(format!("SET of '{name}' without a value"))
                })?;
                configs.insert(name, value);
            }
            DELETE => {
                configs.remove(&name);
            }
            APPEND | SUBTRACT => {
                let Some(def) = def.filter(|d| d.kind == ConfigType::List) else {
                    return Err(Error::InvalidConfig(format!(
                        "config '{name}' is not a list; APPEND and SUBTRACT apply to lists only"
                    )));
                };
                let current = configs
                    .get(&name)
                    .cloned()
                    .or_else(|| def.default.map(str::to_string))
                    .unwrap_or_default();
                let mut items: Vec<String> = current
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                for item in value
                    .unwrap_or_default()
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                {
                    if op.config_operation == APPEND {
                        if !items.iter().any(|i| i == item) {
                            items.push(item.to_string());
                        }
                    } else {
                        items.retain(|i| i != item);
                    }
                }
                configs.insert(name, items.join(","));
            }
            other => {
                return Err(Error::InvalidRequest(format!(
                    "unknown config operation {other}"
                )));
            }
        }
    }
    Ok(configs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::protocol::StrBytes;

    fn op(name: &'static str, operation: i8, value: Option<&'static str>) -> AlterableConfig {
        AlterableConfig::default()
            .with_name(StrBytes::from_static_str(name))
            .with_config_operation(operation)
            .with_value(value.map(StrBytes::from_static_str))
    }

    #[test]
    fn operations() {
        let configs = apply(
            BTreeMap::new(),
            &[
                op("retention.ms", SET, Some("5")),
                op("cleanup.policy", APPEND, Some("compact")),
            ],
            topic_config_def,
            false,
        )
        .unwrap();
        assert_eq!(configs["retention.ms"], "5");
        assert_eq!(configs["cleanup.policy"], "delete,compact");
        let configs = apply(
            configs,
            &[
                op("retention.ms", DELETE, None),
                op("cleanup.policy", SUBTRACT, Some("delete")),
            ],
            topic_config_def,
            false,
        )
        .unwrap();
        assert!(!configs.contains_key("retention.ms"));
        assert_eq!(configs["cleanup.policy"], "compact");
        assert!(
            apply(
                BTreeMap::new(),
                &[op("retention.ms", APPEND, Some("1"))],
                topic_config_def,
                false
            )
            .is_err()
        );
        assert!(
            apply(
                BTreeMap::new(),
                &[
                    op("retention.ms", SET, Some("1")),
                    op("retention.ms", SET, Some("2"))
                ],
                topic_config_def,
                false
            )
            .is_err()
        );
        let group = apply(
            BTreeMap::new(),
            &[op("share.auto.offset.reset", SET, Some("earliest"))],
            group_config_def,
            false,
        )
        .unwrap();
        assert_eq!(group["share.auto.offset.reset"], "earliest");
        assert!(
            apply(
                BTreeMap::new(),
                &[op("retention.ms", SET, Some("1"))],
                group_config_def,
                false
            )
            .is_err(),
            "a topic config is not a group config"
        );
    }
}
