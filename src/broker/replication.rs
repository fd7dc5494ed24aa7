//! Replication as this broker takes part in it (Kafka's `ReplicaFetcherManager` and
//! `AlterPartitionManager`): a fetcher task per leader it follows partitions of, started when
//! the metadata makes it a follower and stopped when nothing is followed there any more; and
//! the ISR task, which asks the active controller to shrink or expand the ISR of the partitions
//! it leads (AlterPartition) as followers fall behind or catch up.

use super::Broker;
use crate::controller::control::IsrChange;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::code;
use crate::metadata::records::NO_LEADER;
use crate::replica::alter_partition::IsrRequests;
use crate::replica::fetcher::{self, FetcherConfig, LeaderConnector};
use crate::replica::partition::Partition;
use crate::types::{TopicPartition, now_ms};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl Broker {
    /// Installs what opens fetch connections to leaders (the server does, once).
    pub fn set_leader_connector(&self, connector: Arc<dyn LeaderConnector>) {
        let _ = self.leader_connector.set(connector);
    }

    /// Starts a fetcher for every leader this broker follows partitions of and has none.
    pub(super) fn sync_fetchers(self: &Arc<Self>) {
        let Some(runtime) = self
            .runtime
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        else {
            return;
        };
        let Some(connector) = self.leader_connector.get().cloned() else {
            return;
        };
        let node = self.config.node_id;
        let leaders: std::collections::BTreeSet<i32> = self
            .replicas
            .all()
            .iter()
            .filter_map(|p| p.leadership())
            .filter(|l| l.leader != node && l.leader != NO_LEADER && l.replicas.contains(&node))
            .map(|l| l.leader)
            .collect();
        let mut running = self.fetchers.lock().unwrap_or_else(|p| p.into_inner());
        for leader in leaders {
            if !running.insert(leader) {
                continue;
            }
            let broker = self.clone();
            let connector = connector.clone();
            runtime.spawn(async move { broker.run_fetcher(leader, connector).await });
        }
    }

    async fn run_fetcher(self: Arc<Self>, leader: i32, connector: Arc<dyn LeaderConnector>) {
        let cluster = &self.config.cluster;
        let config = FetcherConfig {
            node_id: self.config.node_id,
            max_wait_ms: cluster.replica_fetch_wait_max_ms,
            min_bytes: cluster.replica_fetch_min_bytes,
            partition_max_bytes: cluster.replica_fetch_max_bytes,
            response_max_bytes: cluster.replica_fetch_response_max_bytes,
            backoff: Duration::from_millis(cluster.replica_fetch_backoff_ms.clamp(10, 10_000)),
        };
        tracing::info!(leader, "replica fetcher started");
        loop {
            let metadata = self.metadata.clone();
            let listener = cluster.inter_broker_listener.clone();
            let address_of = move |id: i32| {
                let image = metadata.image();
                let endpoint = image.brokers.get(&id)?.endpoint(&listener)?.clone();
                Some(format!("{}:{}", endpoint.host, endpoint.port))
            };
            fetcher::run(
                leader,
                self.replicas.clone(),
                connector.clone(),
                address_of,
                config,
                self.tasks.clone(),
            )
            .await;
            // Stopped: nothing to follow there any more (checked again under the lock, so
            // a partition that just arrived is not left without a fetcher).
            let mut running = self.fetchers.lock().unwrap_or_else(|p| p.into_inner());
            let still_followed = self.replicas.all().iter().any(|p| {
                p.leadership()
                    .is_some_and(|l| l.leader == leader && l.leader != self.config.node_id)
            });
            if !still_followed || self.tasks.is_cancelled() {
                running.remove(&leader);
                tracing::info!(leader, "replica fetcher stopped");
                return;
            }
        }
    }

    /// Keeps the ISR of the partitions this broker leads right: followers that fell behind
    /// for `replica.lag.time.max.ms` leave, caught-up ones join. Every change found in a
    /// pass goes to the active controller in one AlterPartition, one request in flight at a
    /// time (Kafka's `AlterPartitionManager`): changes found meanwhile wait for the next.
    /// A broker rejoining a cluster of 10,000 partitions makes thousands of changes at once;
    /// one request each cost a decision, a controller connection and a commit apiece.
    pub(super) async fn run_isr_updates(self: Arc<Self>) {
        let lag_ms = self.config.cluster.replica_lag_time_max_ms;
        let period = Duration::from_millis((lag_ms / 2).clamp(50, 5_000) as u64);
        let mut requests = IsrRequests::default();
        let mut forgotten_at = std::time::Instant::now();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(period) => {}
                _ = self.replicas.isr_candidate() => {}
                _ = self.tasks.cancelled() => return,
            }
            // No other broker: no partition has a follower to lose or gain (the pass would
            // look at every partition for nothing, which at 50,000 partitions was most of an
            // idle broker's CPU).
            if self.metadata.image().brokers.len() <= 1 && requests.is_empty() {
                continue;
            }
            let partitions = self.replicas.all();
            // Requests of partitions no longer led here are only looked up for partitions led
            // here, so they may wait a while to be forgotten (a set of every partition each
            // pass would cost more than the pass).
            if !requests.is_empty() && forgotten_at.elapsed() >= FORGET_EVERY {
                forgotten_at = std::time::Instant::now();
                let led: HashSet<&TopicPartition> =
                    partitions.iter().map(|p| p.topic_partition()).collect();
                requests.retain(|tp| led.contains(tp));
            }
            let batch = self.isr_changes(&partitions, &mut requests, lag_ms);
            if batch.is_empty() {
                continue;
            }
            let changes: Vec<IsrChange> = batch.iter().map(|(_, c, _)| c.clone()).collect();
            let answered = self
                .call_active_controller(ControllerOp::AlterPartition(changes))
                .await;
            // Each change's outcome as AlterPartition carries it: a Kafka error code.
            let outcomes: Vec<Result<(), i16>> = match answered {
                Ok(ControllerReply::Partitions(outcomes)) if outcomes.len() == batch.len() => {
                    outcomes.into_iter().map(|o| o.map(|_| ())).collect()
                }
                Ok(other) => {
                    tracing::warn!(reply = ?other, "AlterPartition answered out of turn");
                    vec![Err(code::UNKNOWN_SERVER_ERROR); batch.len()]
                }
                Err(e) => {
                    // Nothing reached the controller, or nothing is known: one line for all.
                    tracing::info!(partitions = batch.len(), error = %e, "ISR changes not made; retrying");
                    vec![Err(e.code()); batch.len()]
                }
            };
            let now = std::time::Instant::now();
            let mut retry_in: Option<Duration> = None;
            for ((partition, change, grows), outcome) in batch.into_iter().zip(outcomes) {
                let isr_stats = &self.replicas.isr_stats;
                let epoch = change.partition_epoch;
                let Err(error_code) = outcome else {
                    if grows {
                        isr_stats.expand();
                    } else {
                        isr_stats.shrink();
                    }
                    continue;
                };
                isr_stats.failed_update();
                // Refused by the controller: nothing was committed. An unknown outcome (no
                // controller, a timeout) keeps the asked-for members counting until the
                // metadata shows the partition's next epoch.
                if refused_by_controller(error_code) {
                    partition.isr_refused(epoch);
                    tracing::info!(partition = %partition.topic_partition(), error_code, "ISR change refused; retrying");
                }
                let backoff = requests.refused(partition.topic_partition(), epoch, now);
                retry_in = Some(retry_in.map_or(backoff, |r| r.min(backoff)));
            }
            if let Some(backoff) = retry_in {
                let broker = self.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(backoff).await;
                    broker.replicas.wake_isr_updates();
                });
            }
        }
    }

    /// The ISR changes to ask for now, at most [`MAX_ISR_CHANGES`] (the rest in the next
    /// pass): each partition, the change, and whether it grows the ISR. Each is recorded in
    /// `requests` as outstanding, and its new members count for the high watermark until
    /// the answer.
    fn isr_changes(
        self: &Arc<Self>,
        partitions: &[Arc<Partition>],
        requests: &mut IsrRequests,
        lag_ms: i64,
    ) -> Vec<(Arc<Partition>, IsrChange, bool)> {
        let now = now_ms();
        let image = self.metadata.image();
        let mut batch = Vec::new();
        for partition in partitions {
            let Some((leadership, mut isr)) = partition.wanted_isr(now, lag_ms) else {
                continue;
            };
            // Kafka's `isReplicaIsrEligible`: a replica joins only while its broker is
            // registered, unfenced and not shutting down (the controller would refuse it
            // with INELIGIBLE_REPLICA); it is asked for again once it is. The partitions take
            // a new leadership just before the metadata cache takes its image, so an ISR
            // shrunk by a fencing can be seen here while the cache still has the broker
            // unfenced: members join only on an image at least as new as the leadership.
            let tp = partition.topic_partition();
            let image_current = image
                .partition(&tp.topic, tp.partition)
                .is_some_and(|p| p.partition_epoch >= leadership.partition_epoch);
            isr.retain(|r| leadership.isr.contains(r) || (image_current && image.is_active(*r)));
            if isr == leadership.isr {
                continue;
            }
            if batch.len() >= MAX_ISR_CHANGES {
                // The rest next time round, straight after this request.
                self.replicas.wake_isr_updates();
                break;
            }
            let epoch = leadership.partition_epoch;
            if !requests.should_send(tp, epoch, std::time::Instant::now()) {
                continue;
            }
            tracing::info!(partition = %tp, from = ?leadership.isr, to = ?isr, "changing the ISR");
            let change = IsrChange {
                broker_id: self.config.node_id,
                broker_epoch: self.broker_epoch.load(Ordering::SeqCst),
                topic_id: partition.topic_id(),
                partition: tp.partition,
                leader_epoch: leadership.leader_epoch,
                partition_epoch: epoch,
                new_isr: isr,
            };
            partition.propose_isr(epoch, &change.new_isr);
            let grows = change.new_isr.len() > leadership.isr.len();
            batch.push((partition.clone(), change, grows));
        }
        batch
    }
}

/// How often the ISR task forgets its requests of partitions no longer led here.
const FORGET_EVERY: Duration = Duration::from_secs(60);

/// The most ISR changes one AlterPartition carries (about 40 bytes each on the wire; Kafka
/// sets no limit, this keeps one request and its metadata entry bounded).
const MAX_ISR_CHANGES: usize = 10_000;

/// Whether the active controller answered an AlterPartition change with a refusal (nothing
/// committed), as opposed to an outcome this broker cannot know (no controller reached, a
/// timeout). By Kafka error code: a refusal from another node arrives as one.
fn refused_by_controller(error_code: i16) -> bool {
    matches!(
        error_code,
        code::FENCED_LEADER_EPOCH
            | code::INVALID_UPDATE_VERSION
            | code::INELIGIBLE_REPLICA
            | code::INVALID_REQUEST
            | code::STALE_BROKER_EPOCH
            | code::UNKNOWN_TOPIC_OR_PARTITION
            | code::UNKNOWN_TOPIC_ID
            | code::NOT_LEADER_OR_FOLLOWER
    )
}

/// The replication throttles in effect (`leader.replication.throttled.rate`,
/// `follower.replication.throttled.rate`, static or dynamic).
pub(super) fn configure_throttles(
    replicas: &crate::replica::ReplicaManager,
    config: &crate::config::BrokerConfig,
) {
    let windows = config.replication_quota_windows;
    replicas
        .leader_throttle
        .configure(config.leader_replication_throttled_rate, windows);
    replicas
        .follower_throttle
        .configure(config.follower_replication_throttled_rate, windows);
    replicas
        .alter_log_dirs_throttle
        .configure(config.alter_log_dirs_rate, windows);
}

/// How a move between log directories paces itself: the bytes of each step are counted
/// against `replica.alter.log.dirs.io.max.bytes.per.second`, and the next step waits while
/// the rate is over it (Kafka's alter-log-dirs fetcher skips a partition while its quota is
/// exceeded).
pub(super) fn move_pace(
    replicas: &crate::replica::ReplicaManager,
) -> crate::storage::manager::MovePace {
    let throttle = replicas.alter_log_dirs_throttle.clone();
    Arc::new(move |bytes| {
        let now = crate::types::now_ms();
        throttle.record(bytes, now);
        throttle.delay(now)
    })
}

#[cfg(test)]
mod tests {
    use super::refused_by_controller;
    use crate::error::Error;

    /// The controller's refusals are known as refusals by their codes, the only form they
    /// have when another node is the controller (they once arrived as unknown outcomes, so a
    /// refused ISR expansion went on counting the follower for the high watermark).
    #[test]
    fn refusals_are_told_from_unknown_outcomes_by_code() {
        let refusals = [
            Error::FencedLeaderEpoch { got: 1, current: 2 },
            Error::InvalidUpdateVersion { got: 1, current: 2 },
            Error::IneligibleReplica(3, "fenced".into()),
            Error::InvalidRequest("not the leader".into()),
            Error::StaleBrokerEpoch { got: 1, current: 2 },
            Error::UnknownTopicOrPartition,
            Error::UnknownTopicId,
            Error::NotLeaderOrFollower,
        ];
        for e in refusals {
            assert!(refused_by_controller(e.code()), "{e}");
        }
        for e in [Error::NotController, Error::RequestTimedOut] {
            assert!(!refused_by_controller(e.code()), "{e}");
        }
    }
}
