//! `GET /api/v1/topics/{topic}/messages?partition=P&offset=O|timestamp=T&limit=N`: records of
//! one partition hosted here, from an offset (default: the log start) or from the first record
//! at or after a timestamp, up to the high watermark — what a consumer could read. Keys, values
//! and header values come as base64, with their text when they are UTF-8, so a reader can show
//! them as text, JSON or hex. Bounded: at most 500 records and 4 MiB of batches per request.

use super::{ApiError, ApiResult};
use crate::broker::Broker;
use crate::record::records::{FullRecord, decode_batches};
use crate::storage::log::FetchIsolation;
use crate::storage::manager::lock;
use crate::types::TopicPartition;
use axum::Json;
use axum::extract::{Path, State};
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

const DEFAULT_LIMIT: usize = 50;
const MAX_LIMIT: usize = 500;
/// Batch bytes one read takes from the log, and in all.
const READ_BYTES: usize = 1024 * 1024;
const MAX_READ_BYTES: usize = 4 * 1024 * 1024;

#[derive(Debug, Deserialize)]
pub struct MessagesQuery {
    #[serde(default)]
    pub partition: i32,
    pub offset: Option<i64>,
    /// Milliseconds since the epoch: start at the first record at or after it.
    pub timestamp: Option<i64>,
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct Messages {
    pub topic: String,
    pub partition: i32,
    pub records: Vec<MessageView>,
    /// Where the next page starts.
    pub next_offset: i64,
    pub high_watermark: i64,
}

#[derive(Debug, Serialize)]
pub struct MessageView {
    pub offset: i64,
    pub timestamp: i64,
    /// `CreateTime` or `LogAppendTime`.
    pub timestamp_type: &'static str,
    pub key: Option<Bytes>,
    pub value: Option<Bytes>,
    pub headers: Vec<HeaderView>,
}

#[derive(Debug, Serialize)]
pub struct HeaderView {
    pub key: String,
    pub value: Option<Bytes>,
}

/// Bytes as base64, with their text when they are UTF-8.
#[derive(Debug, Serialize)]
pub struct Bytes {
    pub base64: String,
    pub text: Option<String>,
    pub size: usize,
}

impl Bytes {
    fn of(bytes: &[u8]) -> Self {
        Self {
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            text: std::str::from_utf8(bytes).ok().map(str::to_string),
            size: bytes.len(),
        }
    }
}

impl From<FullRecord> for MessageView {
    fn from(record: FullRecord) -> Self {
        Self {
            offset: record.offset,
            timestamp: record.timestamp,
            timestamp_type: if record.log_append_time {
                "LogAppendTime"
            } else {
                "CreateTime"
            },
            key: record.key.as_deref().map(Bytes::of),
            value: record.value.as_deref().map(Bytes::of),
            headers: record
                .headers
                .into_iter()
                .map(|(key, value)| HeaderView {
                    key,
                    value: value.as_deref().map(Bytes::of),
                })
                .collect(),
        }
    }
}

pub async fn read(
    State(broker): State<Arc<Broker>>,
    access: crate::http::access::Access,
    Path(topic): Path<String>,
    super::Params(query): super::Params<MessagesQuery>,
) -> ApiResult<Messages> {
    // What a consumer's Fetch needs.
    access.require_topic(crate::auth::acl::AclOperation::Read, &topic)?;
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit must be from 1 to {MAX_LIMIT}"
        )));
    }
    let tp = TopicPartition::new(&topic, query.partition);
    if broker.topic(&topic).is_none() {
        return Err(ApiError::not_found(
            "UNKNOWN_TOPIC_OR_PARTITION",
            format!("no topic named {topic}"),
        ));
    }
    let partition = broker.replicas().get(&tp).map_err(|_| {
        ApiError::not_found(
            "NOT_LEADER_OR_FOLLOWER",
            format!("{tp} has no replica on this broker"),
        )
    })?;
    let start = match (query.offset, query.timestamp) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "give an offset or a timestamp, not both",
            ));
        }
        (Some(offset), None) if offset >= 0 => offset,
        (Some(_), None) => return Err(ApiError::bad_request("an offset is not negative")),
        (None, Some(timestamp)) => {
            if timestamp < 0 {
                return Err(ApiError::bad_request(
                    "a timestamp is milliseconds since the epoch",
                ));
            }
            let (offset, _, _) = broker.list_offset(&tp, timestamp, -1, false).await?;
            offset
        }
        (None, None) => lock(partition.log()).log_start_offset(),
    };
    // Segment reads touch the disk: off the async workers.
    let read = tokio::task::spawn_blocking(move || -> Result<Messages, ApiError> {
        let high_watermark = lock(partition.log()).high_watermark();
        let mut offset = start.max(lock(partition.log()).log_start_offset());
        let mut records = Vec::new();
        let mut read_bytes = 0;
        while records.len() < limit
            && offset >= 0
            && offset < high_watermark
            && read_bytes < MAX_READ_BYTES
        {
            let fetched = lock(partition.log())
                .read_for_fetch(offset, READ_BYTES, FetchIsolation::HighWatermark, true)
                .map_err(crate::error::Error::from)?;
            let Some(fetched) = fetched else {
                break;
            };
            let bytes = fetched.records.read().map_err(crate::error::Error::from)?;
            read_bytes += bytes.len();
            let next = decode_batches(&bytes, offset, &mut records).map_err(|e| {
                ApiError::new(
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "CORRUPT_MESSAGE",
                    e.to_string(),
                )
            })?;
            match next {
                Some(next) if next > offset => offset = next,
                _ => break,
            }
        }
        records.truncate(limit);
        let next_offset = records.last().map_or(offset, |r| r.offset + 1);
        Ok(Messages {
            topic: tp.topic.to_string(),
            partition: tp.partition,
            records: records.into_iter().map(MessageView::from).collect(),
            next_offset,
            high_watermark,
        })
    })
    .await
    .map_err(|e| {
        ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "UNKNOWN_SERVER_ERROR",
            e.to_string(),
        )
    })??;
    Ok(Json(read))
}
