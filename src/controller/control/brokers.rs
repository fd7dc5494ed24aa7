//! Brokers as the active controller sees them (KRaft's `ClusterControlManager` and
//! `BrokerHeartbeatManager`): registration (a restarted broker waits out its old
//! incarnation's session), heartbeats that fence and unfence, the session timeout that fences
//! a silent broker and moves its leaderships, controlled shutdown, unregistration.

use super::partitions::{
    elect_for_leaderless, leader_and_isr_updates, leader_and_isr_updates_where,
};
use super::{
    BrokerRegistrationRequest, Changes, ClusterControl, DirectoryAssignment, HeartbeatReply,
    HeartbeatRequest, Outcome,
};
use crate::error::Error;
use crate::metadata::image::MetadataImage;
use crate::metadata::records::MetadataRecord;
use uuid::Uuid;

impl ClusterControl {
    /// BrokerRegistration. The broker epoch is `offset`, the log offset of the registration
    /// (as in KRaft). A retry with the same incarnation gets the epoch it already has; a new
    /// incarnation is refused while the old one's session lives.
    pub fn register_broker(
        &mut self,
        offset: u64,
        request: BrokerRegistrationRequest,
        now_ms: i64,
    ) -> Result<Outcome<i64>, Error> {
        if let Some(expected) = &self.image.cluster_id
            && *expected != request.cluster_id
        {
            return Err(Error::InconsistentClusterId {
                got: request.cluster_id,
                expected: expected.clone(),
            });
        }
        let mut changes = Changes::new(&self.image);
        if let Some(existing) = self.image.brokers.get(&request.broker_id) {
            if existing.incarnation_id == request.incarnation_id {
                return Ok(self.finish(offset, changes, existing.epoch));
            }
            let alive = !existing.fenced && !self.session_expired(request.broker_id, now_ms);
            if alive && request.broker_id != self.config.own_node {
                return Err(Error::DuplicateBrokerRegistration(request.broker_id));
            }
            // The old incarnation may have led or been in sync; it no longer is.
            let updates = leader_and_isr_updates(&self.config, &changes.image, request.broker_id);
            changes.push(updates)?;
        }
        let epoch = offset as i64;
        changes.push(vec![MetadataRecord::RegisterBroker {
            broker_id: request.broker_id,
            incarnation_id: request.incarnation_id,
            broker_epoch: epoch,
            endpoints: request.endpoints,
            rack: request.rack,
            fenced: true,
            log_dirs: request.log_dirs,
        }])?;
        self.last_heartbeat_ms.insert(request.broker_id, now_ms);
        Ok(self.finish(offset, changes, epoch))
    }

    fn session_expired(&self, broker: i32, now_ms: i64) -> bool {
        self.last_heartbeat_ms
            .get(&broker)
            .is_none_or(|last| now_ms - last > self.config.broker_session_timeout_ms)
    }

    pub(super) fn check_broker_epoch(&self, broker: i32, epoch: i64) -> Result<(), Error> {
        let registration = self
            .image
            .brokers
            .get(&broker)
            .ok_or(Error::BrokerIdNotRegistered(broker))?;
        if registration.epoch != epoch {
            return Err(Error::StaleBrokerEpoch {
                got: epoch,
                current: registration.epoch,
            });
        }
        Ok(())
    }

    /// BrokerHeartbeat: keeps the session alive, unfences a caught-up broker, and runs a
    /// controlled shutdown (leadership and ISR membership moved away, then the broker is
    /// fenced and told it may stop).
    pub fn heartbeat(
        &mut self,
        offset: u64,
        request: HeartbeatRequest,
        now_ms: i64,
    ) -> Result<Outcome<HeartbeatReply>, Error> {
        let broker = request.broker_id;
        self.check_broker_epoch(broker, request.broker_epoch)?;
        self.last_heartbeat_ms.insert(broker, now_ms);
        let Some(registration) = self.image.brokers.get(&broker).cloned() else {
            return Err(Error::BrokerIdNotRegistered(broker));
        };
        // Caught up once it has applied its own registration (KRaft's rule).
        let is_caught_up = request.metadata_offset >= registration.epoch as u64;
        let mut changes = Changes::new(&self.image);
        let change = |fenced: Option<bool>, in_controlled_shutdown: Option<bool>| {
            MetadataRecord::BrokerRegistrationChange {
                broker_id: broker,
                broker_epoch: registration.epoch,
                fenced,
                in_controlled_shutdown,
                log_dirs: None,
            }
        };
        let mut should_shutdown = false;
        if request.want_shutdown {
            if registration.fenced {
                should_shutdown = true;
            } else {
                if !registration.in_controlled_shutdown {
                    changes.push(vec![change(None, Some(true))])?;
                }
                let updates = leader_and_isr_updates(&self.config, &changes.image, broker);
                changes.push(updates)?;
                if !leads_any(&changes.image, broker) {
                    changes.push(vec![change(Some(true), None)])?;
                    should_shutdown = true;
                }
            }
        } else if registration.fenced && !request.want_fence && is_caught_up {
            changes.push(vec![change(Some(false), Some(false))])?;
            // Partitions left without a leader may have one now.
            let elections = elect_for_leaderless(&self.config, &changes.image, broker);
            changes.push(elections)?;
        } else if !registration.fenced && request.want_fence {
            changes.push(vec![change(Some(true), None)])?;
            let updates = leader_and_isr_updates(&self.config, &changes.image, broker);
            changes.push(updates)?;
        }
        // Log directories that failed: the replicas in them leave their ISRs and leaderships
        // (Kafka's `handleDirectoriesOffline`).
        let online: Vec<Uuid> = registration
            .log_dirs
            .iter()
            .filter(|d| !request.offline_log_dirs.contains(d))
            .copied()
            .collect();
        if online.len() < registration.log_dirs.len() {
            tracing::warn!(broker, offline = ?request.offline_log_dirs, "log directories offline; moving their replicas' leadership away");
            changes.push(vec![MetadataRecord::BrokerRegistrationChange {
                broker_id: broker,
                broker_epoch: registration.epoch,
                fenced: None,
                in_controlled_shutdown: None,
                log_dirs: Some(online),
            }])?;
            let image = changes.image.clone();
            let updates = leader_and_isr_updates_where(&self.config, &image, broker, |_, _, p| {
                image.replica_dir_offline(p, broker)
            });
            changes.push(updates)?;
        }
        let is_fenced = changes.image.brokers.get(&broker).is_none_or(|b| b.fenced);
        let reply = HeartbeatReply {
            is_caught_up,
            is_fenced,
            should_shutdown,
        };
        Ok(self.finish(offset, changes, reply))
    }

    /// Periodic work: fences every broker whose session expired, moving its leaderships
    /// and removing it from ISRs. Returns the brokers fenced.
    pub fn tick(&mut self, offset: u64, now_ms: i64) -> Result<Outcome<Vec<i32>>, Error> {
        let expired: Vec<(i32, i64)> = self
            .image
            .brokers
            .values()
            .filter(|b| !b.fenced && self.session_expired(b.id, now_ms))
            .map(|b| (b.id, b.epoch))
            .collect();
        let mut changes = Changes::new(&self.image);
        let mut fenced = Vec::new();
        for (broker, epoch) in expired {
            tracing::info!(
                broker,
                "fencing broker: no heartbeat within broker.session.timeout.ms"
            );
            changes.push(vec![MetadataRecord::BrokerRegistrationChange {
                broker_id: broker,
                broker_epoch: epoch,
                fenced: Some(true),
                in_controlled_shutdown: None,
                log_dirs: None,
            }])?;
            let updates = leader_and_isr_updates(&self.config, &changes.image, broker);
            changes.push(updates)?;
            fenced.push(broker);
        }
        Ok(self.finish(offset, changes, fenced))
    }

    /// AssignReplicasToDirs: records which log directory each of `broker`'s replicas is in;
    /// a replica placed in a directory already offline leaves its ISR and leadership. Each
    /// assignment's outcome (UNKNOWN_TOPIC_ID, NOT_LEADER_OR_FOLLOWER for a partition the
    /// broker holds no replica of) comes back in order.
    pub fn assign_replicas_to_dirs(
        &mut self,
        offset: u64,
        broker: i32,
        broker_epoch: i64,
        assignments: Vec<DirectoryAssignment>,
    ) -> Result<Outcome<Vec<Option<Error>>>, Error> {
        self.check_broker_epoch(broker, broker_epoch)?;
        let mut changes = Changes::new(&self.image);
        let mut outcomes = Vec::with_capacity(assignments.len());
        for assignment in assignments {
            let Some(topic) = changes.image.topic_by_id(assignment.topic_id) else {
                outcomes.push(Some(Error::UnknownTopicId));
                continue;
            };
            let Some(partition) = usize::try_from(assignment.partition)
                .ok()
                .and_then(|p| topic.partitions.get(p))
            else {
                outcomes.push(Some(Error::UnknownTopicOrPartition));
                continue;
            };
            if !partition.replicas.contains(&broker) {
                outcomes.push(Some(Error::NotLeaderOrFollower));
                continue;
            }
            outcomes.push(None);
            if partition.directories.get(&broker) == Some(&assignment.directory_id) {
                continue;
            }
            changes.push(vec![MetadataRecord::ReplicaDirectory {
                topic_id: assignment.topic_id,
                partition_id: assignment.partition,
                broker_id: broker,
                directory_id: assignment.directory_id,
            }])?;
            let image = changes.image.clone();
            let placed = (assignment.topic_id, assignment.partition);
            let updates =
                leader_and_isr_updates_where(&self.config, &image, broker, |topic, index, p| {
                    (topic, index) == placed && image.replica_dir_offline(p, broker)
                });
            changes.push(updates)?;
        }
        Ok(self.finish(offset, changes, outcomes))
    }

    /// UnregisterBroker: forgets a broker (decommissioning); its replicas stay assigned.
    pub fn unregister_broker(&mut self, offset: u64, broker: i32) -> Result<Outcome<()>, Error> {
        let registration = self
            .image
            .brokers
            .get(&broker)
            .cloned()
            .ok_or(Error::BrokerIdNotRegistered(broker))?;
        let mut changes = Changes::new(&self.image);
        if !registration.fenced {
            changes.push(vec![MetadataRecord::BrokerRegistrationChange {
                broker_id: broker,
                broker_epoch: registration.epoch,
                fenced: Some(true),
                in_controlled_shutdown: None,
                log_dirs: None,
            }])?;
        }
        let updates = leader_and_isr_updates(&self.config, &changes.image, broker);
        changes.push(updates)?;
        changes.push(vec![MetadataRecord::UnregisterBroker {
            broker_id: broker,
            broker_epoch: registration.epoch,
        }])?;
        self.last_heartbeat_ms.remove(&broker);
        Ok(self.finish(offset, changes, ()))
    }
}

/// Whether `broker` leads a partition that another in-sync, active replica could lead.
fn leads_any(image: &MetadataImage, broker: i32) -> bool {
    image.topics.values().any(|t| {
        t.partitions.iter().any(|p| {
            p.leader == broker && p.isr.iter().any(|r| *r != broker && image.is_active(*r))
        })
    })
}
