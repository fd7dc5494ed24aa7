//! CreateTopics: default partition count and replication factor (-1), explicit assignments,
//! validated configs, `validate_only`. From v5 the response carries the topic's configs.

use super::{ApiContext, wire_str};
use crate::api::describe_configs::source_code;
use crate::broker::NewTopic;
use crate::config::describe_topic_configs;
use crate::error::code;
use kafka_protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse};
use std::collections::BTreeMap;

pub async fn handle(
    ctx: &ApiContext,
    request: CreateTopicsRequest,
    version: i16,
) -> Option<CreateTopicsResponse> {
    let broker = &ctx.broker;
    let mut results = Vec::with_capacity(request.topics.len());
    let names: Vec<String> = request.topics.iter().map(|t| t.name.to_string()).collect();
    for topic in request.topics {
        let name = topic.name.to_string();
        let result = CreatableTopicResult::default().with_name(topic.name.clone());
        if names.iter().filter(|n| **n == name).count() > 1 {
            results.push(
                result
                    .with_error_code(code::INVALID_REQUEST)
                    .with_error_message(Some(wire_str(
                        "topic given more than once in the request",
                    ))),
            );
            continue;
        }
        let mut configs = BTreeMap::new();
        for config in &topic.configs {
            if let Some(value) = &config.value {
                configs.insert(config.name.to_string(), value.to_string());
            }
        }
        let mut assignments = topic.assignments.clone();
        assignments.sort_by_key(|a| a.partition_index);
        let request_topic = NewTopic {
            name,
            partitions: topic.num_partitions,
            replication_factor: topic.replication_factor,
            assignments: assignments
                .iter()
                .map(|a| a.broker_ids.iter().map(|b| b.0).collect())
                .collect(),
            configs,
        };
        results.push(
            match broker
                .create_topic(request_topic, request.validate_only)
                .await
            {
                Ok(info) => {
                    let configs = (version >= 5).then(|| {
                        describe_topic_configs(&broker.config().topic_defaults, &info.configs)
                            .into_iter()
                            .map(|c| {
                                CreatableTopicConfigs::default()
                                    .with_name(wire_str(c.name))
                                    .with_value(c.value.map(|v| wire_str(&v)))
                                    .with_read_only(c.read_only)
                                    .with_config_source(source_code(c.source))
                                    .with_is_sensitive(false)
                            })
                            .collect()
                    });
                    result
                        .with_error_code(code::NONE)
                        .with_topic_id(info.id)
                        .with_num_partitions(info.partitions)
                        .with_replication_factor(1)
                        .with_configs(configs)
                }
                Err(e) => result
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.message())))
                    .with_num_partitions(-1)
                    .with_replication_factor(-1),
            },
        );
    }
    Some(CreateTopicsResponse::default().with_topics(results))
}
