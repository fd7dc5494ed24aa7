//! Config requests: DescribeConfigs with synonyms, IncrementalAlterConfigs.

use super::{AdminClient, AdminError, kafka_error};
use kafka_protocol::messages::{
    ApiKey, DescribeConfigsRequest, DescribeConfigsResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse, describe_configs_request, incremental_alter_configs_request,
};
use kafka_protocol::protocol::StrBytes;

/// A config resource type, by Kafka's wire id (`ConfigResource.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigResourceType {
    Topic,
    Broker,
    BrokerLogger,
    ClientMetrics,
    Group,
}

impl ConfigResourceType {
    fn id(self) -> i8 {
        match self {
            ConfigResourceType::Topic => 2,
            ConfigResourceType::Broker => 4,
            ConfigResourceType::BrokerLogger => 8,
            ConfigResourceType::ClientMetrics => 16,
            ConfigResourceType::Group => 32,
        }
    }
}

/// One synonym of a config: where a value for it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synonym {
    pub name: String,
    pub value: Option<String>,
    pub source: i8,
}

/// One config entry as DescribeConfigs gives it, with its synonyms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribedConfig {
    pub name: String,
    pub value: Option<String>,
    pub source: i8,
    pub sensitive: bool,
    pub read_only: bool,
    pub synonyms: Vec<Synonym>,
}

/// The name Kafka's `ConfigEntry.ConfigSource` gives a wire source id.
pub fn source_name(source: i8) -> &'static str {
    match source {
        1 => "DYNAMIC_TOPIC_CONFIG",
        2 => "DYNAMIC_BROKER_CONFIG",
        3 => "DYNAMIC_DEFAULT_BROKER_CONFIG",
        4 => "STATIC_BROKER_CONFIG",
        5 => "DEFAULT_CONFIG",
        6 => "DYNAMIC_BROKER_LOGGER_CONFIG",
        7 => "DYNAMIC_CLIENT_METRICS_CONFIG",
        8 => "DYNAMIC_GROUP_CONFIG",
        _ => "UNKNOWN",
    }
}

/// A broker's own configs are asked of that broker, as Kafka's AdminClient does.
fn broker_target(resource: ConfigResourceType, name: &str) -> Option<i32> {
    match resource {
        ConfigResourceType::Broker | ConfigResourceType::BrokerLogger => name.parse().ok(),
        _ => None,
    }
}

impl AdminClient {
    /// Every config of one resource, with synonyms when asked for.
    pub async fn describe_configs(
        &mut self,
        resource: ConfigResourceType,
        name: &str,
        include_synonyms: bool,
    ) -> Result<Vec<DescribedConfig>, AdminError> {
        let request = DescribeConfigsRequest::default()
            .with_resources(vec![
                describe_configs_request::DescribeConfigsResource::default()
                    .with_resource_type(resource.id())
                    .with_resource_name(StrBytes::from_string(name.to_string()))
                    // No key list: every config.
                    .with_configuration_keys(None),
            ])
            .with_include_synonyms(include_synonyms);
        let response: DescribeConfigsResponse = match broker_target(resource, name) {
            Some(node) => {
                self.call_node(node, ApiKey::DescribeConfigs, "DESCRIBE_CONFIGS", &request)
                    .await?
            }
            None => {
                self.call(ApiKey::DescribeConfigs, "DESCRIBE_CONFIGS", &request)
                    .await?
            }
        };
        let Some(result) = response.results.into_iter().next() else {
            return Ok(Vec::new());
        };
        if result.error_code != 0 {
            return Err(kafka_error(
                result.error_code,
                result.error_message.as_ref(),
            ));
        }
        Ok(result
            .configs
            .into_iter()
            .map(|c| DescribedConfig {
                name: c.name.to_string(),
                value: c.value.map(|v| v.to_string()),
                source: c.config_source,
                sensitive: c.is_sensitive,
                read_only: c.read_only,
                synonyms: c
                    .synonyms
                    .into_iter()
                    .map(|s| Synonym {
                        name: s.name.to_string(),
                        value: s.value.map(|v| v.to_string()),
                        source: s.source,
                    })
                    .collect(),
            })
            .collect())
    }

    /// Sets and deletes configs of one resource in one IncrementalAlterConfigs request.
    pub async fn alter_configs(
        &mut self,
        resource: ConfigResourceType,
        name: &str,
        set: &[(String, String)],
        delete: &[String],
    ) -> Result<(), AdminError> {
        const SET: i8 = 0;
        const DELETE: i8 = 1;
        let configs = set
            .iter()
            .map(|(key, value)| {
                incremental_alter_configs_request::AlterableConfig::default()
                    .with_name(StrBytes::from_string(key.clone()))
                    .with_config_operation(SET)
                    .with_value(Some(StrBytes::from_string(value.clone())))
            })
            .chain(delete.iter().map(|key| {
                incremental_alter_configs_request::AlterableConfig::default()
                    .with_name(StrBytes::from_string(key.clone()))
                    .with_config_operation(DELETE)
                    .with_value(Some(StrBytes::default()))
            }))
            .collect();
        let request = IncrementalAlterConfigsRequest::default().with_resources(vec![
            incremental_alter_configs_request::AlterConfigsResource::default()
                .with_resource_type(resource.id())
                .with_resource_name(StrBytes::from_string(name.to_string()))
                .with_configs(configs),
        ]);
        let api = ApiKey::IncrementalAlterConfigs;
        let name_of_api = "INCREMENTAL_ALTER_CONFIGS";
        let response: IncrementalAlterConfigsResponse = match broker_target(resource, name) {
            Some(node) => self.call_node(node, api, name_of_api, &request).await?,
            None => self.call(api, name_of_api, &request).await?,
        };
        match response.responses.into_iter().find(|r| r.error_code != 0) {
            Some(failed) => Err(kafka_error(
                failed.error_code,
                failed.error_message.as_ref(),
            )),
            None => Ok(()),
        }
    }
}
