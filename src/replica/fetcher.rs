//! Followers copy their leaders (Kafka's `ReplicaFetcherThread`): one task per leader broker
//! fetches every partition this broker follows from it, with the ordinary Fetch API and this
//! broker's id as replica id. Batches are appended exactly as the leader stored them; the
//! leader's high watermark is taken (capped at the local log end); a log that diverged from
//! the leader's (the leader answers with the epoch and offset where they part) is truncated
//! there first. The wire exchange is the API layer's ([`LeaderConnector`]).

use super::{Partition, ReplicaManager};
use crate::error::Error;
use crate::storage::manager::lock;
use crate::types::{TopicPartition, now_ms};
use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The longest a fetcher whose every partition is throttled waits before looking again.
const MAX_THROTTLED_PAUSE: Duration = Duration::from_millis(500);

/// One partition of a follower's fetch.
#[derive(Debug, Clone)]
pub struct FollowerFetch {
    pub tp: TopicPartition,
    pub fetch_offset: i64,
    pub current_leader_epoch: i32,
    pub last_fetched_epoch: i32,
    pub max_bytes: i32,
}

/// A follower's fetch request.
#[derive(Debug, Clone)]
pub struct FetchSpec {
    pub replica_id: i32,
    pub max_wait_ms: i32,
    pub min_bytes: i32,
    pub max_bytes: i32,
    pub partitions: Vec<FollowerFetch>,
}

/// The leader's answer for one partition.
#[derive(Debug)]
pub struct FollowerFetched {
    pub tp: TopicPartition,
    pub error: Option<Error>,
    pub records: Bytes,
    pub high_watermark: i64,
    pub log_start_offset: i64,
    /// Where the follower's log parts from the leader's: (epoch, end offset).
    pub diverging: Option<(i32, i64)>,
}

/// A connection to a leader that carries fetches.
pub trait LeaderConnection: Send {
    fn fetch<'a>(
        &'a mut self,
        spec: &'a FetchSpec,
    ) -> BoxFuture<'a, Result<Vec<FollowerFetched>, Error>>;
}

/// Opens connections to leaders (the API layer implements it).
pub trait LeaderConnector: Send + Sync + std::fmt::Debug {
    fn connect<'a>(
        &'a self,
        address: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn LeaderConnection>, Error>>;
}

/// Settings of the fetch loop (Kafka's `replica.fetch.*`).
#[derive(Debug, Clone, Copy)]
pub struct FetcherConfig {
    pub node_id: i32,
    pub max_wait_ms: i32,
    pub min_bytes: i32,
    pub partition_max_bytes: i32,
    pub response_max_bytes: i32,
    pub backoff: Duration,
}

/// The partitions this broker follows with `leader` leading.
fn followed(replicas: &ReplicaManager, node: i32, leader: i32) -> Vec<Arc<Partition>> {
    replicas
        .all()
        .into_iter()
        .filter(|p| {
            p.leadership()
                .is_some_and(|l| l.leader == leader && l.leader != node)
        })
        .collect()
}

/// Fetches from `leader` (at the address `address_of` gives) until this broker follows
/// nothing there any more or `stopping` is set.
pub async fn run(
    leader: i32,
    replicas: Arc<ReplicaManager>,
    connector: Arc<dyn LeaderConnector>,
    address_of: impl Fn(i32) -> Option<String> + Send,
    config: FetcherConfig,
    stop: CancellationToken,
) {
    let mut connection: Option<Box<dyn LeaderConnection>> = None;
    let pause = |duration| {
        let stop = stop.clone();
        async move {
            tokio::select! {
                _ = tokio::time::sleep(duration) => {}
                _ = stop.cancelled() => {}
            }
        }
    };
    while !stop.is_cancelled() {
        let partitions = followed(&replicas, config.node_id, leader);
        if partitions.is_empty() {
            return;
        }
        if connection.is_none() {
            let Some(address) = address_of(leader) else {
                pause(config.backoff).await;
                continue;
            };
            match connector.connect(&address).await {
                Ok(c) => connection = Some(c),
                Err(e) => {
                    tracing::debug!(leader, error = %e, "cannot reach the leader to fetch from");
                    pause(config.backoff).await;
                    continue;
                }
            }
        }
        // Throttled replicas out of the ISR sit this fetch out while the follower's
        // replication throttle is exceeded (Kafka's `shouldFollowerThrottle`).
        let over_throttle =
            replicas.follower_throttle.is_set() && replicas.follower_throttle.is_exceeded(now_ms());
        let throttled: Vec<bool> = partitions.iter().map(|p| p.follower_throttled()).collect();
        let spec = FetchSpec {
            replica_id: config.node_id,
            max_wait_ms: config.max_wait_ms,
            min_bytes: config.min_bytes,
            max_bytes: config.response_max_bytes,
            partitions: partitions
                .iter()
                .zip(&throttled)
                .filter(|(_, throttled)| !(over_throttle && **throttled))
                .filter_map(|(p, _)| {
                    let epoch = p.leadership()?.leader_epoch;
                    let log = lock(p.log());
                    // An offline log (its directory failed) fetches nothing more, as Kafka
                    // removes its fetcher.
                    if log.is_failed() {
                        return None;
                    }
                    Some(FollowerFetch {
                        tp: p.topic_partition().clone(),
                        fetch_offset: log.log_end_offset(),
                        current_leader_epoch: epoch,
                        last_fetched_epoch: log.latest_epoch().unwrap_or(-1),
                        max_bytes: config.partition_max_bytes,
                    })
                })
                .collect(),
        };
        if spec.partitions.is_empty() {
            // Everything followed here is throttled for now (until the rate is back within
            // its bound), or offline (until the partitions move elsewhere).
            let delay = if over_throttle {
                replicas.follower_throttle.delay(now_ms())
            } else {
                config.backoff
            };
            pause(delay.clamp(Duration::from_millis(1), MAX_THROTTLED_PAUSE)).await;
            continue;
        }
        let throttled: std::collections::HashSet<&TopicPartition> = partitions
            .iter()
            .zip(&throttled)
            .filter(|(_, t)| **t)
            .map(|(p, _)| p.topic_partition())
            .collect();
        let Some(conn) = connection.as_mut() else {
            continue;
        };
        let answered = tokio::select! {
            answered = conn.fetch(&spec) => answered,
            _ = stop.cancelled() => return,
        };
        match answered {
            Ok(answers) => {
                let mut back_off = false;
                for answer in answers {
                    if throttled.contains(&answer.tp) {
                        replicas
                            .follower_throttle
                            .record(answer.records.len() as u64, now_ms());
                    }
                    if let Ok(partition) = replicas.get(&answer.tp)
                        && let Err(e) = apply(&partition, answer)
                    {
                        tracing::debug!(partition = %partition.topic_partition(), error = %e, "follower fetch not applied");
                        back_off = true;
                    }
                }
                if back_off {
                    pause(config.backoff).await;
                }
            }
            Err(e) => {
                tracing::debug!(leader, error = %e, "fetch from the leader failed");
                connection = None;
                pause(config.backoff).await;
            }
        }
    }
}

/// Applies the leader's answer for one partition to the local log.
fn apply(partition: &Partition, answer: FollowerFetched) -> Result<(), Error> {
    if let Some(error) = answer.error {
        if let Error::Storage(crate::storage::StorageError::OffsetOutOfRange { .. }) = error {
            return out_of_range(partition, answer.log_start_offset);
        }
        return Err(error);
    }
    let mut log = lock(partition.log());
    if let Some((epoch, end)) = answer.diverging {
        let (local_epoch, local_end) = log.end_offset_for_epoch(epoch);
        let target = if local_epoch >= 0 {
            end.min(local_end)
        } else {
            end
        };
        tracing::info!(partition = %partition.topic_partition(), epoch, offset = target, "log diverged from the leader's; truncating");
        log.truncate_to(target.max(0))?;
        return Ok(());
    }
    if !answer.records.is_empty() {
        log.append_as_follower(&answer.records, now_ms())?;
        partition.stats.add(
            crate::stats::topics::TopicCounter::ReplicationBytesIn,
            answer.records.len() as u64,
        );
    }
    if answer.high_watermark >= 0 {
        log.set_high_watermark(answer.high_watermark);
    }
    Ok(())
}

/// The follower's offset is outside the leader's log: behind its start (retention moved
/// on) restarts the log there; ahead of its end (the follower kept data the leader never
/// had, after an unclean election) truncates to the local high watermark.
fn out_of_range(partition: &Partition, leader_log_start: i64) -> Result<(), Error> {
    let mut log = lock(partition.log());
    if leader_log_start > log.log_end_offset() {
        tracing::info!(partition = %partition.topic_partition(), offset = leader_log_start, "behind the leader's log start; restarting the log there");
        log.truncate_fully_and_start_at(leader_log_start)?;
    } else {
        let high_watermark = log.high_watermark();
        tracing::warn!(partition = %partition.topic_partition(), offset = high_watermark, "ahead of the leader's log; truncating to the high watermark");
        log.truncate_to(high_watermark)?;
    }
    Ok(())
}
