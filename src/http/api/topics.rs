//! Topics: `GET /api/v1/topics` (every topic with its size here), `POST /api/v1/topics`
//! (create), `GET /api/v1/topics/{topic}` (partitions with leader, replicas, ISR, offsets and
//! sizes; every topic config with its value and where it comes from), `PUT .../configs`
//! (set and remove overrides), `DELETE` (delete). Offsets and sizes are those of the replicas
//! this broker hosts; a partition hosted elsewhere shows `null` there.

use super::{ApiError, ApiResult};
use crate::auth::acl::{AclOperation, ResourceType};
use crate::broker::{Broker, NewTopic};
use crate::config::{ConfigSource, TOPIC_CONFIGS};
use crate::http::access::Access;
use crate::storage::manager::lock;
use crate::types::TopicPartition;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Serialize)]
pub struct TopicSummary {
    pub name: String,
    pub id: String,
    pub internal: bool,
    pub partitions: usize,
    pub replication_factor: usize,
    pub under_replicated_partitions: usize,
    /// Bytes of this topic's replicas on this broker.
    pub size_bytes: u64,
    /// Records between the start and the high watermark of the partitions hosted here.
    pub messages: i64,
}

#[derive(Debug, Serialize)]
pub struct TopicDetail {
    pub name: String,
    pub id: String,
    pub internal: bool,
    pub partitions: Vec<PartitionView>,
    /// `null` when the principal may not DESCRIBE_CONFIGS the topic.
    pub configs: Option<Vec<ConfigEntry>>,
}

#[derive(Debug, Serialize)]
pub struct PartitionView {
    pub partition: i32,
    /// -1 when no replica can lead.
    pub leader: i32,
    pub leader_epoch: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    /// `null` unless this broker hosts a replica.
    pub log_start_offset: Option<i64>,
    pub high_watermark: Option<i64>,
    pub log_end_offset: Option<i64>,
    pub size_bytes: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct ConfigEntry {
    pub name: &'static str,
    pub value: Option<String>,
    /// `topic` (set on the topic), `broker` (the broker's setting) or `default`.
    pub source: &'static str,
}

/// A replica hosted here: (start, high watermark, end, size).
fn local_log(broker: &Broker, tp: &TopicPartition) -> Option<(i64, i64, i64, u64)> {
    let partition = broker.replicas().get(tp).ok()?;
    let log = lock(partition.log());
    Some((
        log.log_start_offset(),
        log.high_watermark(),
        log.log_end_offset(),
        log.size_bytes(),
    ))
}

pub async fn list(
    State(broker): State<Arc<Broker>>,
    access: Access,
) -> ApiResult<Vec<TopicSummary>> {
    let image = broker.metadata().image();
    let topics = image
        .topics
        .values()
        .filter(|topic| access.sees_topic(&topic.name))
        .map(|topic| {
            let (mut size_bytes, mut messages) = (0, 0);
            for p in 0..topic.partitions.len() as i32 {
                if let Some((start, high_watermark, _, size)) =
                    local_log(&broker, &TopicPartition::new(&topic.name, p))
                {
                    size_bytes += size;
                    messages += (high_watermark - start).max(0);
                }
            }
            TopicSummary {
                name: topic.name.to_string(),
                id: topic.id.to_string(),
                internal: crate::metadata::INTERNAL_TOPICS.contains(&topic.name.as_ref()),
                partitions: topic.partitions.len(),
                replication_factor: topic.partitions.first().map_or(0, |p| p.replicas.len()),
                under_replicated_partitions: topic
                    .partitions
                    .iter()
                    .filter(|p| p.isr.len() < p.replicas.len())
                    .count(),
                size_bytes,
                messages,
            }
        })
        .collect();
    Ok(Json(topics))
}

pub async fn describe(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(name): Path<String>,
) -> ApiResult<TopicDetail> {
    // Before looking: a topic the principal may not describe is not said to exist or not.
    access.require_topic(AclOperation::Describe, &name)?;
    detail(&broker, &access, &name)
}

fn detail(broker: &Broker, access: &Access, name: &str) -> ApiResult<TopicDetail> {
    let image = broker.metadata().image();
    let topic = image
        .topic(name)
        .ok_or_else(|| unknown_topic(name))?
        .clone();
    let partitions = topic
        .partitions
        .iter()
        .enumerate()
        .map(|(index, p)| {
            let local = local_log(broker, &TopicPartition::new(&topic.name, index as i32));
            PartitionView {
                partition: index as i32,
                leader: p.leader,
                leader_epoch: p.leader_epoch,
                replicas: p.replicas.clone(),
                isr: p.isr.clone(),
                log_start_offset: local.map(|l| l.0),
                high_watermark: local.map(|l| l.1),
                log_end_offset: local.map(|l| l.2),
                size_bytes: local.map(|l| l.3),
            }
        })
        .collect();
    let defaults = &broker.config().topic_defaults;
    let configs = access.topic(AclOperation::DescribeConfigs, name).then(|| {
        TOPIC_CONFIGS
            .iter()
            .map(|def| match topic.configs.get(def.name) {
                Some(value) => ConfigEntry {
                    name: def.name,
                    value: Some(value.clone()),
                    source: "topic",
                },
                None => {
                    let default = defaults.get(def.name);
                    ConfigEntry {
                        name: def.name,
                        value: default
                            .and_then(|d| d.value.clone())
                            .or_else(|| def.default.map(str::to_string)),
                        source: match default.map(|d| d.source) {
                            Some(ConfigSource::StaticBroker) => "broker",
                            _ => "default",
                        },
                    }
                }
            })
            .collect()
    });
    Ok(Json(TopicDetail {
        name: topic.name.to_string(),
        id: topic.id.to_string(),
        internal: crate::metadata::INTERNAL_TOPICS.contains(&topic.name.as_ref()),
        partitions,
        configs,
    }))
}

fn unknown_topic(name: &str) -> ApiError {
    ApiError::not_found(
        "UNKNOWN_TOPIC_OR_PARTITION",
        format!("no topic named {name}"),
    )
}

#[derive(Debug, Deserialize)]
pub struct CreateTopic {
    pub name: String,
    /// -1 or absent: `num.partitions`.
    #[serde(default = "unset")]
    pub partitions: i32,
    /// -1 or absent: `default.replication.factor`.
    #[serde(default = "unset_short")]
    pub replication_factor: i16,
    #[serde(default)]
    pub configs: BTreeMap<String, String>,
}

fn unset() -> i32 {
    -1
}

fn unset_short() -> i16 {
    -1
}

pub async fn create(
    State(broker): State<Arc<Broker>>,
    access: Access,
    super::Body(request): super::Body<CreateTopic>,
) -> Result<(StatusCode, Json<TopicDetail>), ApiError> {
    // CreateTopics: CREATE on the cluster, or on the topic.
    access.require(
        access.cluster(AclOperation::Create)
            || access.allowed(AclOperation::Create, ResourceType::Topic, &request.name),
        "TOPIC_AUTHORIZATION_FAILED",
        format!(
            "{} may not CREATE topic {}",
            access.principal(),
            request.name
        ),
    )?;
    let name = request.name.clone();
    broker
        .create_topic(
            NewTopic {
                name: request.name,
                partitions: request.partitions,
                replication_factor: request.replication_factor,
                assignments: Vec::new(),
                configs: request.configs,
            },
            false,
        )
        .await?;
    let detail = detail(&broker, &access, &name)?;
    Ok((StatusCode::CREATED, detail))
}

#[derive(Debug, Deserialize)]
pub struct AlterConfigs {
    /// Each config to set to a value, or to remove (back to its default) with `null`.
    pub configs: BTreeMap<String, Option<String>>,
}

pub async fn alter_configs(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(name): Path<String>,
    super::Body(request): super::Body<AlterConfigs>,
) -> ApiResult<TopicDetail> {
    access.require_topic(AclOperation::AlterConfigs, &name)?;
    let topic = broker.topic(&name).ok_or_else(|| unknown_topic(&name))?;
    let mut configs = topic.configs.clone();
    for (key, value) in request.configs {
        match value {
            Some(value) => configs.insert(key, value),
            None => configs.remove(&key),
        };
    }
    broker.set_topic_configs(&name, configs, false).await?;
    detail(&broker, &access, &name)
}

pub async fn delete(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    access.require_topic(AclOperation::Delete, &name)?;
    broker.delete_topic(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}
