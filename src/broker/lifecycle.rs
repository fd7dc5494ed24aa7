//! This broker's life with the controller (Kafka's `BrokerLifecycleManager`), on its own
//! thread: a single node's topics from before the metadata log imported once, registration
//! with the incarnation and advertised endpoints, heartbeats (often while fenced, then every
//! `broker.heartbeat.interval.ms`), and at shutdown the controlled shutdown that moves this
//! broker's leaderships away before it stops.

use super::{
    APPLY_WAIT, Broker, CONTROLLED_SHUTDOWN_WAIT, CONTROLLER_WAIT, LIFECYCLE_RETRY, READY_WAIT,
};
use crate::controller::control::{
    BrokerRegistrationRequest, DirectoryAssignment, HeartbeatRequest, ImportedTopic,
};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::metadata::records::Endpoint;
use crate::metadata::{self, TopicInfo};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How many replicas' directories one AssignReplicasToDirs reports (the rest follow with the
/// next heartbeats).
const ASSIGNMENTS_PER_ROUND: usize = 1000;

impl Broker {
    /// Brings a single node's topics from before the metadata log into it (once).
    fn import_legacy(&self, legacy: &[Arc<TopicInfo>]) -> Result<(), Error> {
        let topics = legacy
            .iter()
            .map(|t| ImportedTopic {
                name: t.name.to_string(),
                id: t.id,
                partitions: t.partitions,
                configs: t.configs.clone(),
            })
            .collect();
        let next_producer_id = metadata::legacy_next_producer_id(&self.config.log_dir)?;
        let op = ControllerOp::ImportTopics {
            broker: self.config.node_id,
            topics,
            next_producer_id,
        };
        let deadline = std::time::Instant::now() + READY_WAIT;
        loop {
            match self.controller.call_blocking(op.clone()) {
                Ok(_) => break,
                Err(Error::NotController) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(CONTROLLER_WAIT);
                }
                Err(e) => return Err(e),
            }
        }
        metadata::retire_legacy_topics(&self.config.log_dir)?;
        tracing::info!(
            topics = legacy.len(),
            "imported the topics of this single node into the metadata log"
        );
        Ok(())
    }

    pub(super) fn run_lifecycle(&self, endpoints: Vec<Endpoint>) {
        let legacy =
            std::mem::take(&mut *self.legacy_topics.lock().unwrap_or_else(|p| p.into_inner()));
        if !legacy.is_empty()
            && let Err(e) = self.import_legacy(&legacy)
        {
            // Registering anyway would delete the unimported logs as strays.
            tracing::error!(error = %e, "importing this node's earlier topics failed; not registering");
            return;
        }
        let node = self.config.node_id;
        // The cluster is the quorum's: its id comes from the metadata log (written once by
        // the first active controller), checked against this directory's meta.properties.
        let cluster_id = loop {
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            let committed = self.controller.image().borrow().cluster_id.clone();
            if let Some(cluster_id) = committed {
                break cluster_id;
            }
            std::thread::sleep(CONTROLLER_WAIT);
        };
        let log_dirs = match metadata::mark_log_dirs(&self.config.log_dirs, node, &cluster_id) {
            Ok(ids) => ids,
            Err(e) => {
                tracing::error!(error = %e, "the log directories are not this cluster's; not registering");
                return;
            }
        };
        let _ = self.log_dir_ids.set(log_dirs.clone());
        let request = BrokerRegistrationRequest {
            broker_id: node,
            cluster_id,
            incarnation_id: self.incarnation,
            endpoints,
            rack: self.config.cluster.rack.clone(),
            log_dirs,
        };
        let mut refusals = 0u64;
        let epoch = loop {
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            match self.call_from_thread(ControllerOp::RegisterBroker(request.clone())) {
                Ok(ControllerReply::BrokerEpoch(epoch)) => break epoch,
                Ok(other) => tracing::error!(reply = ?other, "unexpected registration reply"),
                Err(Error::NotController) => {
                    std::thread::sleep(CONTROLLER_WAIT);
                    continue;
                }
                // A restarted broker waits out its old incarnation's session; said once.
                Err(e) if refusals == 0 => {
                    refusals += 1;
                    tracing::info!(error = %e, "broker registration refused; retrying");
                }
                Err(e) => {
                    refusals += 1;
                    tracing::debug!(error = %e, refusals, "broker registration refused again");
                }
            }
            std::thread::sleep(LIFECYCLE_RETRY);
        };
        self.broker_epoch.store(epoch, Ordering::SeqCst);
        tracing::info!(broker = node, epoch, "registered with the controller");
        // The publisher applies images from the registration on; heartbeats report them.
        self.images.offer(self.controller.image().borrow().clone());
        self.metadata
            .wait_blocking(APPLY_WAIT, |image| image.offset as i64 >= epoch);
        let interval = Duration::from_millis(self.config.cluster.broker_heartbeat_interval_ms);
        let mut fenced = true;
        while !self.stopping.load(Ordering::SeqCst) {
            if self.metadata.image().offset < epoch as u64 {
                // Not applied its own registration yet: the image holding it again, in case
                // the publisher saw it before the epoch was known and let it go.
                self.images.offer(self.controller.image().borrow().clone());
            }
            let reply = self.heartbeat(epoch, false);
            if let Ok(reply) = reply {
                fenced = reply.is_fenced;
            }
            self.report_replica_dirs(epoch);
            // While fenced, heartbeat often: unfencing is what startup waits for.
            let pause = if fenced { LIFECYCLE_RETRY } else { interval };
            let deadline = std::time::Instant::now() + pause;
            while std::time::Instant::now() < deadline && !self.stopping.load(Ordering::SeqCst) {
                std::thread::sleep(LIFECYCLE_RETRY.min(pause));
            }
        }
        // Controlled shutdown: leadership moves away before the broker stops.
        let deadline = std::time::Instant::now() + CONTROLLED_SHUTDOWN_WAIT;
        while std::time::Instant::now() < deadline {
            match self.heartbeat(epoch, true) {
                Ok(reply) if reply.should_shutdown => {
                    tracing::info!("controlled shutdown complete");
                    let offset = self.controller.image().borrow().offset;
                    self.images.offer(self.controller.image().borrow().clone());
                    self.metadata
                        .wait_blocking(APPLY_WAIT, |image| image.offset >= offset);
                    return;
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(error = %e, "controlled shutdown heartbeat failed"),
            }
            std::thread::sleep(LIFECYCLE_RETRY);
        }
        tracing::warn!("controlled shutdown did not complete in time; stopping anyway");
    }

    fn heartbeat(
        &self,
        epoch: i64,
        want_shutdown: bool,
    ) -> Result<crate::controller::control::HeartbeatReply, Error> {
        let request = HeartbeatRequest {
            broker_id: self.config.node_id,
            broker_epoch: epoch,
            metadata_offset: self.metadata.image().offset,
            want_fence: false,
            want_shutdown,
            offline_log_dirs: self.offline_log_dir_ids(),
        };
        match self.call_from_thread(ControllerOp::Heartbeat(request))? {
            ControllerReply::Heartbeat(reply) => Ok(reply),
            other => Err(Error::InvalidRequest(format!(
                "unexpected heartbeat reply {other:?}"
            ))),
        }
    }

    /// The directory ids of this broker's log directories an I/O error took offline.
    fn offline_log_dir_ids(&self) -> Vec<uuid::Uuid> {
        let Some(ids) = self.log_dir_ids.get() else {
            return Vec::new();
        };
        self.logs
            .offline_dirs()
            .into_iter()
            .filter_map(|i| ids.get(i).copied())
            .collect()
    }

    /// AssignReplicasToDirs for the replicas here whose directory the metadata does not show
    /// yet (new, moved, or in a directory that failed), up to [`ASSIGNMENTS_PER_ROUND`].
    fn report_replica_dirs(&self, epoch: i64) {
        let Some(ids) = self.log_dir_ids.get() else {
            return;
        };
        let image = self.metadata.image();
        // Walking every log each heartbeat cost a broker of 50,000 partitions 2% of a core
        // while idle: once all is reported, look again only when the metadata or the logs
        // change.
        let state = (image.offset, self.logs.placement_changes());
        let mut reported = self
            .replica_dirs_reported
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if *reported == Some(state) {
            return;
        }
        let node = self.config.node_id;
        let assignments: Vec<DirectoryAssignment> = self
            .logs
            .placements()
            .into_iter()
            .filter_map(|(tp, index)| {
                let topic = image.topic(&tp.topic)?;
                let partition = topic.partitions.get(usize::try_from(tp.partition).ok()?)?;
                let directory_id = *ids.get(index)?;
                (partition.replicas.contains(&node)
                    && partition.directories.get(&node) != Some(&directory_id))
                .then_some(DirectoryAssignment {
                    topic_id: topic.id,
                    partition: tp.partition,
                    directory_id,
                })
            })
            .take(ASSIGNMENTS_PER_ROUND)
            .collect();
        if assignments.is_empty() {
            *reported = Some(state);
            return;
        }
        *reported = None;
        drop(reported);
        let op = ControllerOp::AssignReplicasToDirs {
            broker: node,
            broker_epoch: epoch,
            assignments,
        };
        if let Err(e) = self.call_from_thread(op) {
            tracing::debug!(error = %e, "reporting replicas' log directories failed; retrying");
        }
    }
}
