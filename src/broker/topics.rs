//! Topic and partition administration (CreateTopics, DeleteTopics, CreatePartitions, the
//! config APIs, ElectLeaders, reassignments) as commands to the active controller, each
//! answered once this broker has applied the result so a client can use it at once; and what
//! the API layer asks of a partition here: its state as Metadata reports it, ListOffsets,
//! DeleteRecords, the log directory.

use super::{Broker, CONTROLLER_REQUEST_WAIT};
use crate::controller::control::{Election, TopicRequest};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::metadata::TopicInfo;
use crate::metadata::records::NO_LEADER;
use crate::storage::StorageError;
use crate::storage::manager::{LogDirUsage, MoveStatus, lock};
use crate::types::TopicPartition;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// A partition reassignment in progress, as ListPartitionReassignments lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OngoingReassignment {
    pub partition: i32,
    pub replicas: Vec<i32>,
    pub adding: Vec<i32>,
    pub removing: Vec<i32>,
}

/// A partition's leadership as Metadata reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    /// `None` when no replica can lead.
    pub leader: Option<i32>,
    pub leader_epoch: i32,
    /// Preferred replica first.
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub offline: Vec<i32>,
}

/// ElectLeaders' election types (Kafka's `ElectionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElectionType {
    /// Make the first replica the leader (0).
    Preferred,
    /// Elect any live replica when no in-sync replica is left (1).
    Unclean,
}

/// A topic to create, as CreateTopics (or auto-creation) asks for it. `-1` means "default".
#[derive(Debug, Clone)]
pub struct NewTopic {
    pub name: String,
    pub partitions: i32,
    pub replication_factor: i16,
    /// Explicit replica assignment: broker ids per partition, in partition order.
    pub assignments: Vec<Vec<i32>>,
    pub configs: BTreeMap<String, String>,
}

impl Broker {
    /// Creates a topic (or only validates the request) through the active controller.
    pub async fn create_topic(
        &self,
        request: NewTopic,
        validate_only: bool,
    ) -> Result<Arc<TopicInfo>, Error> {
        self.create_topic_within(request, validate_only, CONTROLLER_REQUEST_WAIT)
            .await
    }

    /// [`Broker::create_topic`] waiting at most `wait` for an active controller.
    pub(super) async fn create_topic_within(
        &self,
        request: NewTopic,
        validate_only: bool,
        wait: Duration,
    ) -> Result<Arc<TopicInfo>, Error> {
        let name = request.name.clone();
        let configs = request.configs.clone();
        let op = ControllerOp::CreateTopic {
            request: TopicRequest {
                name: request.name,
                partitions: request.partitions,
                replication_factor: request.replication_factor,
                assignments: request.assignments,
                configs: request.configs,
            },
            validate_only,
        };
        let reply = self.call_active_controller_within(op, wait).await?;
        let ControllerReply::TopicCreated {
            topic_id,
            partitions,
        } = reply
        else {
            return Err(Error::InvalidRequest(format!(
                "unexpected controller reply {reply:?}"
            )));
        };
        let committed = Arc::new(TopicInfo {
            name: Arc::from(name.as_str()),
            id: topic_id,
            partitions,
            configs,
        });
        if validate_only {
            return Ok(committed);
        }
        self.await_visible(|image| image.topic_by_id(topic_id).is_some())
            .await;
        tracing::info!(topic = %name, partitions, "created topic");
        // The controller committed it: that is the answer even when this broker has not
        // applied it yet (creating thousands of logs on a busy disk can take longer than the
        // wait), as Kafka answers once its controller has.
        Ok(self.metadata.topic(&name).unwrap_or(committed))
    }

    /// Creates `name` with this broker's `num.partitions` and `default.replication.factor`,
    /// as Kafka's `AutoTopicCreationManager` does (a controller-only node's defaults do not
    /// apply). Already existing is success.
    pub async fn auto_create_topic(&self, name: &str) -> Result<Arc<TopicInfo>, Error> {
        let request = NewTopic {
            name: name.to_string(),
            partitions: self.config.num_partitions,
            // Beyond i16 no cluster has the brokers: refused as too large.
            replication_factor: i16::try_from(self.config.default_replication_factor)
                .unwrap_or(i16::MAX),
            assignments: Vec::new(),
            configs: BTreeMap::new(),
        };
        match self.create_topic(request, false).await {
            Err(Error::TopicAlreadyExists(_)) => {
                self.await_visible(|image| image.topic(name).is_some())
                    .await;
                self.metadata
                    .topic(name)
                    .ok_or(Error::UnknownTopicOrPartition)
            }
            other => other,
        }
    }

    /// Deletes a topic; every replica deletes its logs when it applies the change.
    pub async fn delete_topic(&self, name: &str) -> Result<Arc<TopicInfo>, Error> {
        if !self.config.delete_topic_enable {
            return Err(Error::TopicDeletionDisabled);
        }
        let info = self
            .metadata
            .topic(name)
            .ok_or(Error::UnknownTopicOrPartition)?;
        self.call_active_controller(ControllerOp::DeleteTopic(name.to_string()))
            .await?;
        self.await_visible(|image| image.topic_by_id(info.id).is_none())
            .await;
        tracing::info!(topic = %name, "deleted topic");
        Ok(info)
    }

    /// Grows a topic to `count` partitions.
    pub async fn create_partitions(
        &self,
        name: &str,
        count: i32,
        assignments: Option<&[Vec<i32>]>,
        validate_only: bool,
    ) -> Result<(), Error> {
        let op = ControllerOp::CreatePartitions {
            name: name.to_string(),
            count,
            assignments: assignments.map(|a| a.to_vec()),
            validate_only,
        };
        self.call_active_controller(op).await?;
        if !validate_only {
            self.await_visible(|image| {
                image
                    .topic(name)
                    .is_some_and(|t| t.partitions.len() as i32 >= count)
            })
            .await;
        }
        Ok(())
    }

    /// Replaces a topic's config overrides with `configs` (validated).
    pub async fn set_topic_configs(
        &self,
        name: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<(), Error> {
        let op = ControllerOp::SetTopicConfigs {
            name: name.to_string(),
            configs: configs.clone(),
            validate_only,
        };
        self.call_active_controller(op).await?;
        if !validate_only {
            self.await_visible(|image| image.topic(name).is_some_and(|t| t.configs == configs))
                .await;
        }
        Ok(())
    }

    /// A group's dynamic configs (the GROUP config resource) become exactly `configs`.
    pub async fn set_group_configs(
        &self,
        group: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<(), Error> {
        crate::config::validate_group_configs(&self.config(), &configs)
            .map_err(|e| Error::InvalidConfig(e.to_string()))?;
        let op = ControllerOp::SetGroupConfigs {
            group: group.to_string(),
            configs: configs.clone(),
            validate_only,
        };
        self.call_active_controller(op).await?;
        if !validate_only {
            self.await_visible(|image| {
                image.group_configs.get(group).cloned().unwrap_or_default() == configs
            })
            .await;
        }
        Ok(())
    }

    /// ElectLeaders for one partition, decided by the active controller with Kafka's
    /// answers (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
    /// ELIGIBLE_LEADERS_NOT_AVAILABLE).
    pub async fn elect_leader(
        &self,
        tp: &TopicPartition,
        election: ElectionType,
    ) -> Result<(), Error> {
        let Some(registration) = self
            .metadata
            .image()
            .partition(&tp.topic, tp.partition)
            .cloned()
        else {
            return Err(Error::UnknownTopicOrPartition);
        };
        // A replica here whose log failed cannot lead. The controller learns of a failed log
        // directory from the next heartbeat; until then this broker answers for the
        // partitions it alone could lead.
        let node = self.config.node_id;
        let local_failed = self
            .replicas
            .get(tp)
            .is_ok_and(|p| lock(p.log()).is_failed());
        if local_failed && registration.replicas == [node] {
            return Err(match election {
                ElectionType::Preferred => Error::PreferredLeaderNotAvailable,
                ElectionType::Unclean => Error::EligibleLeadersNotAvailable,
            });
        }
        let op = ControllerOp::ElectLeader {
            topic: tp.topic.to_string(),
            partition: tp.partition,
            election: match election {
                ElectionType::Preferred => Election::Preferred,
                ElectionType::Unclean => Election::Unclean,
            },
        };
        self.call_active_controller(op).await?;
        Ok(())
    }

    /// The replicas of a partition, preferred replica first.
    pub fn partition_replicas(&self, tp: &TopicPartition) -> Vec<i32> {
        self.metadata
            .image()
            .partition(&tp.topic, tp.partition)
            .map(|p| p.replicas.clone())
            .unwrap_or_default()
    }

    /// Who leads a partition and which replicas are in sync or offline, as Metadata reports
    /// it. A replica here whose log an I/O error took offline is offline, and cannot lead.
    pub fn partition_state(&self, tp: &TopicPartition) -> PartitionState {
        let image = self.metadata.image();
        let Some(registration) = image.partition(&tp.topic, tp.partition) else {
            return PartitionState {
                leader: None,
                leader_epoch: -1,
                replicas: Vec::new(),
                isr: Vec::new(),
                offline: Vec::new(),
            };
        };
        let node = self.config.node_id;
        let local_failed = self
            .replicas
            .get(tp)
            .is_ok_and(|p| lock(p.log()).is_failed());
        let offline = if local_failed { vec![node] } else { Vec::new() };
        let leader = registration
            .leader()
            .filter(|l| !(local_failed && *l == node))
            .filter(|l| *l != NO_LEADER);
        PartitionState {
            leader,
            leader_epoch: registration.leader_epoch,
            isr: if local_failed {
                registration
                    .isr
                    .iter()
                    .copied()
                    .filter(|r| *r != node)
                    .collect()
            } else {
                registration.isr.clone()
            },
            offline,
            replicas: registration.replicas.clone(),
        }
    }

    /// AlterPartitionReassignments for one partition (`None` cancels), decided by the
    /// active controller (`controller::control::reassignments`).
    pub async fn reassign_partition(
        &self,
        tp: &TopicPartition,
        target: Option<Vec<i32>>,
        allow_replication_factor_change: bool,
    ) -> Result<(), Error> {
        let op = ControllerOp::ReassignPartition {
            topic: tp.topic.to_string(),
            partition: tp.partition,
            target: target.clone(),
            allow_replication_factor_change,
        };
        self.call_active_controller(op).await?;
        // Answered once this broker's metadata shows it (ListPartitionReassignments reads it).
        self.await_visible(|image| {
            image
                .partition(&tp.topic, tp.partition)
                .is_some_and(|p| match &target {
                    Some(target) => p.target_replicas() == *target,
                    None => p.reassignment.is_empty(),
                })
        })
        .await;
        Ok(())
    }

    /// The reassignments in progress (ListPartitionReassignments), of `wanted` partitions or
    /// all, by topic.
    pub fn reassignments(
        &self,
        wanted: Option<&std::collections::HashSet<TopicPartition>>,
    ) -> BTreeMap<String, Vec<OngoingReassignment>> {
        let image = self.metadata.image();
        let mut listed: BTreeMap<String, Vec<_>> = BTreeMap::new();
        for (name, topic) in &image.topics {
            for (p, partition) in topic.partitions.iter().enumerate() {
                if partition.reassignment.is_empty() {
                    continue;
                }
                if wanted.is_some_and(|w| !w.contains(&TopicPartition::new(name, p as i32))) {
                    continue;
                }
                listed
                    .entry(name.to_string())
                    .or_default()
                    .push(OngoingReassignment {
                        partition: p as i32,
                        replicas: partition.replicas.clone(),
                        adding: partition.reassignment.adding.clone(),
                        removing: partition.reassignment.removing.clone(),
                    });
            }
        }
        listed
    }

    /// ListOffsets for one partition: Kafka's special timestamps (-1 latest, -2 earliest,
    /// -3 max timestamp, -4 earliest local, -5 latest tiered) or a time, answered by the
    /// leader (checking the client's current leader epoch). Returns (offset, timestamp,
    /// leader epoch), or (-1, -1, epoch) when no record is at or after the time.
    pub async fn list_offset(
        &self,
        tp: &TopicPartition,
        timestamp: i64,
        current_leader_epoch: i32,
        read_committed: bool,
    ) -> Result<(i64, i64, i32), Error> {
        let partition = self.replicas.get(tp)?;
        let leader_epoch = partition.check_leader_epoch(current_leader_epoch)?;
        let (offset, timestamp) = partition.list_offset(timestamp, read_committed).await?;
        Ok((offset, timestamp, leader_epoch))
    }

    /// DeleteRecords for one partition: -1 means the high watermark. Returns the new low
    /// watermark.
    pub fn delete_records(&self, tp: &TopicPartition, offset: i64) -> Result<i64, Error> {
        let partition = self.replicas.get(tp)?;
        partition.check_leader_epoch(-1)?;
        let mut log = lock(partition.log());
        let target = if offset == -1 {
            log.high_watermark()
        } else {
            offset
        };
        Ok(log.delete_records_before(target)?)
    }

    /// DescribeLogDirs: each log directory with its logs, optionally only the partitions in
    /// `wanted`.
    pub fn describe_log_dirs(
        &self,
        wanted: Option<&std::collections::HashSet<TopicPartition>>,
    ) -> Result<Vec<LogDirUsage>, Error> {
        let mut usages = self.logs.describe()?;
        if let Some(wanted) = wanted {
            for usage in &mut usages {
                usage.logs.retain(|l| wanted.contains(&l.topic_partition));
            }
        }
        Ok(usages)
    }

    /// AlterReplicaLogDirs for one replica, as Kafka's `ReplicaManager.alterReplicaLogDirs`:
    /// LOG_DIR_NOT_FOUND for a path that is not one of `log.dirs`; for a partition this broker
    /// does not host (yet), the directory is remembered for when it does and the answer is
    /// REPLICA_NOT_AVAILABLE; otherwise the log moves there in the background (nothing to do
    /// when it is there already).
    pub fn alter_replica_log_dir(&self, tp: &TopicPartition, dir: &str) -> Result<(), Error> {
        let index = self
            .logs
            .dir_index(dir)
            .ok_or_else(|| Error::LogDirNotFound(dir.to_string()))?;
        let partition = self.replicas.get(tp).ok();
        if partition
            .as_ref()
            .is_some_and(|p| lock(p.log()).is_failed())
        {
            return Err(StorageError::Offline.into());
        }
        let hosted = partition.is_some();
        match self.logs.move_replica(tp, index)? {
            MoveStatus::Started => {
                let pace = super::replication::move_pace(&self.replicas);
                self.logs.start_moving(tp.clone(), self.tasks.clone(), pace);
                Ok(())
            }
            MoveStatus::NotHosted => Err(Error::ReplicaNotAvailable),
            MoveStatus::AlreadyThere | MoveStatus::InProgress if hosted => Ok(()),
            MoveStatus::AlreadyThere | MoveStatus::InProgress => Err(Error::ReplicaNotAvailable),
        }
    }
}
