//! The follower's side of Fetch: a [`FetchSpec`] as a Fetch request (v12: topic names,
//! `last_fetched_epoch`, and the diverging epoch in the answer) to the leader's
//! inter-broker listener, and its response as [`FollowerFetched`] partitions.

use super::wire_str;
use crate::error::Error;
use crate::net::{PeerConnection, PeerSecurity, RequestError};
use crate::replica::fetcher::{
    BoxFuture, FetchSpec, FollowerFetched, LeaderConnection, LeaderConnector,
};
use crate::storage::StorageError;
use crate::types::TopicPartition;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{ApiKey, BrokerId, FetchRequest, FetchResponse, TopicName};
use std::collections::BTreeMap;
use std::time::Duration;

const FETCH_VERSION: i16 = 12;

#[derive(Debug)]
pub struct FollowerConnector {
    client_id: String,
    timeout: Duration,
    security: PeerSecurity,
}

impl FollowerConnector {
    pub fn new(node_id: i32, timeout: Duration, security: PeerSecurity) -> Self {
        Self {
            client_id: format!("sluice-replica-fetcher-{node_id}"),
            timeout,
            security,
        }
    }
}

struct Connection {
    peer: PeerConnection,
    timeout: Duration,
}

fn failed(e: RequestError) -> Error {
    match e {
        RequestError::Timeout(..) => Error::RequestTimedOut,
        other => Error::Remote {
            code: crate::error::code::UNKNOWN_SERVER_ERROR,
            message: other.to_string(),
        },
    }
}

impl LeaderConnector for FollowerConnector {
    fn connect<'a>(
        &'a self,
        address: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn LeaderConnection>, Error>> {
        Box::pin(async move {
            let peer =
                PeerConnection::connect(address, &self.client_id, self.timeout, &self.security)
                    .await
                    .map_err(failed)?;
            Ok(Box::new(Connection {
                peer,
                timeout: self.timeout,
            }) as Box<dyn LeaderConnection>)
        })
    }
}

impl LeaderConnection for Connection {
    fn fetch<'a>(
        &'a mut self,
        spec: &'a FetchSpec,
    ) -> BoxFuture<'a, Result<Vec<FollowerFetched>, Error>> {
        Box::pin(async move {
            let mut topics: BTreeMap<&str, Vec<FetchPartition>> = BTreeMap::new();
            for p in &spec.partitions {
                topics.entry(&p.tp.topic).or_default().push(
                    FetchPartition::default()
                        .with_partition(p.tp.partition)
                        .with_current_leader_epoch(p.current_leader_epoch)
                        .with_fetch_offset(p.fetch_offset)
                        .with_last_fetched_epoch(p.last_fetched_epoch)
                        .with_log_start_offset(-1)
                        .with_partition_max_bytes(p.max_bytes),
                );
            }
            let request = FetchRequest::default()
                .with_replica_id(BrokerId(spec.replica_id))
                .with_max_wait_ms(spec.max_wait_ms)
                .with_min_bytes(spec.min_bytes)
                .with_max_bytes(spec.max_bytes)
                .with_session_id(0)
                .with_session_epoch(-1)
                .with_topics(
                    topics
                        .into_iter()
                        .map(|(topic, partitions)| {
                            FetchTopic::default()
                                .with_topic(TopicName(wire_str(topic)))
                                .with_partitions(partitions)
                        })
                        .collect(),
                );
            // The leader may hold the request for max_wait_ms before answering.
            let timeout = self.timeout + Duration::from_millis(spec.max_wait_ms.max(0) as u64);
            let response: FetchResponse = self
                .peer
                .request(ApiKey::Fetch, FETCH_VERSION, &request, timeout)
                .await
                .map_err(failed)?;
            if let Some(e) = Error::from_code(response.error_code, None) {
                return Err(e);
            }
            let mut out = Vec::new();
            for topic in response.responses {
                for p in topic.partitions {
                    let error = match p.error_code {
                        crate::error::code::OFFSET_OUT_OF_RANGE => {
                            Some(Error::Storage(StorageError::OffsetOutOfRange {
                                offset: -1,
                                start: p.log_start_offset,
                                end: p.high_watermark,
                            }))
                        }
                        code => Error::from_code(code, None),
                    };
                    let diverging = (p.diverging_epoch.epoch >= 0)
                        .then_some((p.diverging_epoch.epoch, p.diverging_epoch.end_offset));
                    out.push(FollowerFetched {
                        tp: TopicPartition::new(&topic.topic, p.partition_index),
                        error,
                        records: p.records.unwrap_or_default(),
                        high_watermark: p.high_watermark,
                        log_start_offset: p.log_start_offset,
                        diverging,
                    });
                }
            }
            Ok(out)
        })
    }
}
