//! The controller's event loop: one thread owns this node's quorum voter and, while it is the
//! active controller, the [`ClusterControl`] decisions. It ticks Raft, steps messages from
//! peers, turns commands into proposals, answers each command once its records are
//! committed, and publishes every newly committed image. A thread rather than a task: the
//! loop fsyncs the metadata log and must not stall the runtime's workers.
//!
//! Raft messages leave through the `outbound` channel given to [`start`]; whoever carries
//! them (the TCP transport, or a test) hands replies back with [`ControllerHandle::deliver`].

use super::control::{ClusterControl, ControlConfig, Outcome};
pub use super::ops::{ControllerOp, ControllerReply};
use super::quorum::{Quorum, QuorumError, QuorumSettings};
use super::voters::{AdditionProgress, VoterChanges};
use crate::config::LogConfig;
use crate::error::Error;
use crate::metadata::cache::ImageSlot;
use crate::metadata::image::MetadataImage;
use crate::types::now_ms;
use raft::prelude::Message;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};

/// How often the active controller checks broker sessions.
const SESSION_CHECK_EVERY: Duration = Duration::from_millis(250);

/// The quorum as this node sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QuorumStatus {
    pub leader: Option<u64>,
    pub term: u64,
    /// This node is the active controller.
    pub active: bool,
}

enum Event {
    Command(
        ControllerOp,
        oneshot::Sender<Result<ControllerReply, Error>>,
    ),
    Raft(Message),
    Unreachable(u64),
    Shutdown,
}

#[derive(Debug, Clone)]
pub struct ControllerSettings {
    pub log_dir: PathBuf,
    pub log_config: LogConfig,
    pub quorum: QuorumSettings,
    pub tick: Duration,
    pub control: ControlConfig,
    /// The cluster id the first active controller writes when the log has none.
    pub cluster_id: String,
    /// Records a new quorum starts with (`metadata::bootstrap`).
    pub bootstrap: Vec<crate::metadata::records::MetadataRecord>,
    /// Told when the metadata log cannot be written (an I/O error): the node then halts, as
    /// Kafka's does when its metadata log directory fails.
    pub dir_failures: Option<Arc<crate::storage::space::DirFailures>>,
}

/// Talks to this node's controller thread.
#[derive(Debug, Clone)]
pub struct ControllerHandle {
    events: Sender<Event>,
    image: watch::Receiver<Arc<MetadataImage>>,
    status: watch::Receiver<QuorumStatus>,
}

impl ControllerHandle {
    /// Runs `op` on this node's controller: answered once its records are committed, or
    /// NOT_CONTROLLER when this node is not (or stops being) the active controller.
    pub async fn call(&self, op: ControllerOp) -> Result<ControllerReply, Error> {
        let (reply, answer) = oneshot::channel();
        self.events
            .send(Event::Command(op, reply))
            .map_err(|_| Error::NotController)?;
        answer.await.unwrap_or(Err(Error::NotController))
    }

    /// [`ControllerHandle::call`] from a thread outside the async runtime.
    pub fn call_blocking(&self, op: ControllerOp) -> Result<ControllerReply, Error> {
        let (reply, answer) = oneshot::channel();
        self.events
            .send(Event::Command(op, reply))
            .map_err(|_| Error::NotController)?;
        answer.blocking_recv().unwrap_or(Err(Error::NotController))
    }

    /// Hands a Raft message from a peer to the quorum.
    pub fn deliver(&self, message: Message) {
        let _ = self.events.send(Event::Raft(message));
    }

    /// Tells Raft a peer could not be reached.
    pub fn unreachable(&self, peer: u64) {
        let _ = self.events.send(Event::Unreachable(peer));
    }

    /// The committed metadata, updated as entries commit.
    pub fn image(&self) -> watch::Receiver<Arc<MetadataImage>> {
        self.image.clone()
    }

    pub fn status(&self) -> watch::Receiver<QuorumStatus> {
        self.status.clone()
    }

    /// The handle of a node that follows the quorum without voting (`controller::observer`):
    /// it is never the controller, so its commands are refused with NOT_CONTROLLER and its
    /// Raft messages dropped; `image` and `status` are the observer's.
    pub fn observing(
        image: watch::Receiver<Arc<MetadataImage>>,
        status: watch::Receiver<QuorumStatus>,
    ) -> Self {
        // Nobody receives: every command fails at once.
        let (events, _) = std::sync::mpsc::channel();
        Self {
            events,
            image,
            status,
        }
    }

    /// Stops the thread (it flushes the metadata log first).
    pub fn shutdown(&self) {
        let _ = self.events.send(Event::Shutdown);
    }
}

/// A read the quorum refused: not its leader, or a snapshot it no longer has.
fn quorum_refusal(e: QuorumError) -> Error {
    match e {
        QuorumError::SnapshotNotFound { .. } => Error::SnapshotNotFound,
        QuorumError::NotLeader => Error::NotController,
        other => Error::Internal(other.to_string()),
    }
}

/// A command waiting for the entry at its index to commit.
struct Pending {
    term: u64,
    reply: ControllerReply,
    answer: oneshot::Sender<Result<ControllerReply, Error>>,
}

struct Loop {
    quorum: Quorum,
    settings: ControllerSettings,
    control: Option<ClusterControl>,
    /// The term `control` was activated in.
    control_term: u64,
    pending: BTreeMap<u64, Vec<Pending>>,
    outbound: tokio::sync::mpsc::UnboundedSender<Message>,
    image: watch::Sender<Arc<MetadataImage>>,
    publish_to: Option<Arc<ImageSlot>>,
    status: watch::Sender<QuorumStatus>,
    next_session_check: Instant,
    /// When the active controller next removes expired delegation tokens.
    next_token_sweep: Instant,
    /// A dynamic quorum's voter change in progress (KIP-853).
    voter_changes: VoterChanges<oneshot::Sender<Result<ControllerReply, Error>>>,
}

/// Opens the metadata log, applies the entries it knows to be committed, and starts the
/// controller thread. Every committed image is also offered to `publish_to`.
pub fn start(
    settings: ControllerSettings,
    outbound: tokio::sync::mpsc::UnboundedSender<Message>,
    publish_to: Option<Arc<ImageSlot>>,
) -> Result<(ControllerHandle, std::thread::JoinHandle<()>), QuorumError> {
    let mut quorum = Quorum::open(
        &settings.log_dir,
        &settings.quorum,
        settings.log_config.clone(),
    )?;
    let replay_to = quorum.committed_on_disk();
    let mut early_messages = Vec::new();
    for _ in 0..10_000 {
        if quorum.image().offset >= replay_to {
            break;
        }
        early_messages.extend(quorum.handle_ready()?.messages);
    }
    for message in early_messages {
        let _ = outbound.send(message);
    }
    if let Some(slot) = &publish_to {
        slot.offer(Arc::new(quorum.image().clone()));
    }
    let (events, receiver) = std::sync::mpsc::channel();
    let (image_tx, image_rx) = watch::channel(Arc::new(quorum.image().clone()));
    let (status_tx, status_rx) = watch::channel(QuorumStatus::default());
    let mut event_loop = Loop {
        quorum,
        settings,
        control: None,
        control_term: 0,
        pending: BTreeMap::new(),
        outbound,
        image: image_tx,
        publish_to,
        status: status_tx,
        next_session_check: Instant::now(),
        next_token_sweep: Instant::now(),
        voter_changes: VoterChanges::default(),
    };
    let thread = std::thread::Builder::new()
        .name("controller".into())
        .spawn(move || event_loop.run(receiver))
        .map_err(|e| QuorumError::Log(super::metadata_log::MetadataLogError::Storage(e.into())))?;
    Ok((
        ControllerHandle {
            events,
            image: image_rx,
            status: status_rx,
        },
        thread,
    ))
}

/// Pauses before persisting again after the metadata log ran out of space or descriptors.
const RETRY_FIRST: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_secs(1);

impl Loop {
    fn run(&mut self, events: Receiver<Event>) {
        let tick = self.settings.tick;
        let mut next_tick = Instant::now() + tick;
        let mut retry_pause = RETRY_FIRST;
        loop {
            let timeout = next_tick.saturating_duration_since(Instant::now());
            let first = match events.recv_timeout(timeout) {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            // Everything already queued goes into this round: one fsync for many.
            let mut stop = false;
            for event in first
                .into_iter()
                .chain(std::iter::from_fn(|| events.try_recv().ok()))
            {
                match event {
                    Event::Command(op, answer) => self.command(op, answer),
                    Event::Raft(message) => {
                        if let Err(e) = self.quorum.step(message, now_ms()) {
                            tracing::debug!(error = %e, "dropped a raft message");
                        }
                    }
                    Event::Unreachable(peer) => self.quorum.report_unreachable(peer),
                    Event::Shutdown => stop = true,
                }
            }
            if Instant::now() >= next_tick {
                self.quorum.tick();
                next_tick += tick;
                if next_tick < Instant::now() {
                    next_tick = Instant::now() + tick;
                }
            }
            match self.round() {
                Ok(()) => {
                    retry_pause = RETRY_FIRST;
                    self.quorum.restore_space_reserve();
                }
                Err(e) if e.is_transient() => {
                    // Out of disk space or descriptors: give up the space reserve if it is
                    // still held (then the retry can succeed at once), else wait and persist
                    // again; the node falls silent meanwhile, the quorum carries on.
                    if e.is_out_of_space() && self.quorum.release_space_reserve() {
                        continue;
                    }
                    if retry_pause == RETRY_FIRST {
                        tracing::warn!(error = %e, "the metadata log cannot be written for now; retrying");
                    }
                    std::thread::sleep(retry_pause);
                    retry_pause = (retry_pause * 2).min(RETRY_MAX);
                }
                Err(e) => {
                    tracing::error!(error = %e, "controller quorum failed; this node no longer takes part in it");
                    let disk_failed = matches!(
                        &e,
                        QuorumError::Log(super::metadata_log::MetadataLogError::Storage(
                            crate::storage::StorageError::Io(_)
                        ))
                    );
                    if let (true, Some(failures)) = (disk_failed, &self.settings.dir_failures) {
                        failures.metadata_log_failed();
                    }
                    break;
                }
            }
            if stop {
                break;
            }
        }
        self.fail_pending();
        if let Err(e) = self.quorum.close() {
            tracing::error!(error = %e, "closing the metadata log failed");
        }
        self.status.send_replace(QuorumStatus::default());
    }

    /// Persist, send, apply; then follow leadership changes and run periodic decisions.
    fn round(&mut self) -> Result<(), QuorumError> {
        // Test builds: a quorum that fails once a topic named `fail-the-quorum` exists (the
        // shutdown of a broker whose quorum is gone must still finish).
        fail::fail_point!(
            "controller-quorum-fails",
            self.quorum.image().topic("fail-the-quorum").is_some(),
            |_| Err(QuorumError::Apply {
                index: 0,
                source: crate::metadata::image::ApplyError("injected quorum failure".into()),
            })
        );
        let progress = self.quorum.handle_ready()?;
        for message in progress.messages {
            let _ = self.outbound.send(message);
        }
        if progress.snapshot_installed || !progress.applied.is_empty() {
            let image = Arc::new(self.quorum.image().clone());
            // The watch first: the broker's lifecycle, once it knows its registration epoch,
            // offers the watch's image; it must not be older than one the publisher already
            // took (and dropped, the epoch not being known yet), or the broker would wait
            // for the next commit to apply its own registration.
            self.image.send_replace(image.clone());
            if let Some(slot) = &self.publish_to {
                slot.offer(image);
            }
        }
        // After publishing: whoever is answered sees the image with the change.
        if let Some((last, _)) = progress.applied.last() {
            self.complete_through(*last);
        }
        self.follow_leadership()?;
        match self.voter_changes.advance(&mut self.quorum) {
            AdditionProgress::Waiting => {}
            AdditionProgress::Promoted(index, answer) => self.answer_at(index, answer),
            AdditionProgress::Failed(e, answer) => {
                let _ = answer.send(Err(e));
            }
        }
        if self.control.is_some() && Instant::now() >= self.next_session_check {
            self.next_session_check = Instant::now() + SESSION_CHECK_EVERY;
            // Fencings are proposed here and go out with the next round.
            let _ = self.decide(|control, offset| control.tick(offset, now_ms()));
        }
        if self.control.is_some() && Instant::now() >= self.next_token_sweep {
            let interval = self.settings.control.tokens.expiry_check_interval_ms;
            self.next_token_sweep =
                Instant::now() + Duration::from_millis(u64::try_from(interval).unwrap_or(1).max(1));
            let _ = self.decide(|control, offset| control.sweep_expired_tokens(offset, now_ms()));
        }
        let status = QuorumStatus {
            leader: self.quorum.leader_id(),
            term: self.quorum.term(),
            active: self.control.is_some(),
        };
        self.status.send_if_modified(|current| {
            let modified = *current != status;
            *current = status;
            modified
        });
        Ok(())
    }

    fn follow_leadership(&mut self) -> Result<(), QuorumError> {
        let lost = self.control.is_some()
            && (!self.quorum.is_leader() || self.quorum.term() != self.control_term);
        if lost {
            tracing::info!(term = self.quorum.term(), "no longer the active controller");
            self.control = None;
            self.fail_pending();
        }
        if self.control.is_none() && self.quorum.is_active_leader() {
            let now = now_ms();
            self.control = Some(ClusterControl::activate(
                self.settings.control.clone(),
                self.quorum.image().clone(),
                now,
            ));
            self.control_term = self.quorum.term();
            self.next_session_check = Instant::now() + SESSION_CHECK_EVERY;
            tracing::info!(
                node = self.quorum.node_id(),
                term = self.control_term,
                "active controller"
            );
            let cluster_id = self.settings.cluster_id.clone();
            let bootstrap = self.settings.bootstrap.clone();
            let _ =
                self.decide(|control, offset| control.bootstrap(offset, &cluster_id, &bootstrap));
        }
        Ok(())
    }

    /// Makes a decision with the active controller and proposes its records. Returns the
    /// index the caller's answer must wait for (the proposal's, or for a decision without
    /// records the last one already proposed) and the outcome's reply.
    fn decide<T>(
        &mut self,
        decide: impl FnOnce(&mut ClusterControl, u64) -> Result<Outcome<T>, Error>,
    ) -> Result<(u64, T), Error> {
        let next = self.quorum.next_index();
        let Some(control) = self.control.as_mut() else {
            return Err(Error::NotController);
        };
        let outcome = decide(control, next)?;
        if outcome.records.is_empty() {
            return Ok((control.image().offset, outcome.reply));
        }
        match self.quorum.propose(&outcome.records) {
            Ok(index) if index == next => Ok((index, outcome.reply)),
            Ok(index) => {
                tracing::error!(
                    expected = next,
                    got = index,
                    "proposal landed at an unexpected index"
                );
                self.control = None;
                Err(Error::NotController)
            }
            Err(e) => {
                tracing::info!(error = %e, "proposal refused; giving up the controller role");
                self.control = None;
                Err(Error::NotController)
            }
        }
    }

    fn command(
        &mut self,
        op: ControllerOp,
        answer: oneshot::Sender<Result<ControllerReply, Error>>,
    ) {
        let now = now_ms();
        let decided = match op {
            ControllerOp::AddVoter(voter) => {
                let active = self.control.is_some();
                if let Err((e, answer)) =
                    self.voter_changes
                        .add(&mut self.quorum, active, voter, answer)
                {
                    let _ = answer.send(Err(e));
                }
                return;
            }
            ControllerOp::UpdateVoter(voter) => {
                let active = self.control.is_some();
                self.voter_changes
                    .update(&mut self.quorum, active, voter)
                    .map(|index| (index, ControllerReply::Done))
            }
            ControllerOp::RemoveVoter { node, directory_id } => {
                let active = self.control.is_some();
                self.voter_changes
                    .remove(&mut self.quorum, active, node, directory_id)
                    .map(|index| (index, ControllerReply::Done))
            }
            // The leader's view, even before it is the active controller (Kafka's raft
            // layer answers as soon as it leads); index 0 has it answered at once.
            ControllerOp::DescribeQuorum => self
                .quorum
                .describe(now)
                .map(|quorum| (0, ControllerReply::Quorum(quorum)))
                .ok_or(Error::NotController),
            // Committed entries for an observer: any leader answers, as for DescribeQuorum.
            ControllerOp::ReadMetadata {
                observer,
                from_index,
                max_bytes,
            } => self
                .quorum
                .read_for_observer(observer, from_index, max_bytes, now)
                .map(|read| (0, ControllerReply::Metadata(read)))
                .map_err(quorum_refusal),
            ControllerOp::ReadMetadataSnapshot {
                index,
                term,
                position,
                max_bytes,
            } => self
                .quorum
                .read_snapshot(index, term, position, max_bytes)
                .map(|chunk| (0, ControllerReply::MetadataSnapshot(chunk)))
                .map_err(quorum_refusal),
            ControllerOp::RegisterBroker(request) => self
                .decide(|c, o| c.register_broker(o, request, now))
                .map(|(i, epoch)| (i, ControllerReply::BrokerEpoch(epoch))),
            ControllerOp::Heartbeat(request) => self
                .decide(|c, o| c.heartbeat(o, request, now))
                .map(|(i, r)| (i, ControllerReply::Heartbeat(r))),
            ControllerOp::AssignReplicasToDirs {
                broker,
                broker_epoch,
                assignments,
            } => self
                .decide(|c, o| c.assign_replicas_to_dirs(o, broker, broker_epoch, assignments))
                .map(|(i, outcomes)| {
                    let codes = outcomes
                        .iter()
                        .map(|e| e.as_ref().map_or(crate::error::code::NONE, Error::code))
                        .collect();
                    (i, ControllerReply::DirectoriesAssigned(codes))
                }),
            ControllerOp::UnregisterBroker(broker) => self
                .decide(|c, o| c.unregister_broker(o, broker))
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::RegisterController(request) => self
                .decide(|c, o| c.register_controller(o, request))
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::UnregisterController(controller) => self
                .decide(|c, o| c.unregister_controller(o, controller))
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::CreateTopic {
                request,
                validate_only,
            } => self
                .decide(|c, o| c.create_topic(o, request, validate_only))
                .map(|(i, (topic_id, assignments))| {
                    let partitions = assignments.len() as i32;
                    (
                        i,
                        ControllerReply::TopicCreated {
                            topic_id,
                            partitions,
                        },
                    )
                }),
            ControllerOp::DeleteTopic(name) => self
                .decide(|c, o| c.delete_topic(o, &name))
                .map(|(i, id)| (i, ControllerReply::TopicDeleted(id))),
            ControllerOp::CreatePartitions {
                name,
                count,
                assignments,
                validate_only,
            } => self
                .decide(|c, o| {
                    c.create_partitions(o, &name, count, assignments.as_deref(), validate_only)
                })
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::SetTopicConfigs {
                name,
                configs,
                validate_only,
            } => self
                .decide(|c, o| c.set_topic_configs(o, &name, configs, validate_only))
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::SetGroupConfigs {
                group,
                configs,
                validate_only,
            } => self
                .decide(|c, o| c.set_group_configs(o, &group, configs, validate_only))
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::SetBrokerConfigs {
                resource,
                configs,
                validate_only,
            } => self
                .decide(|c, o| c.set_broker_configs(o, &resource, configs, validate_only))
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::AlterScramCredentials {
                upsertions,
                deletions,
            } => self
                .decide(|c, o| c.alter_scram_credentials(o, &upsertions, &deletions))
                .map(|(i, missing)| (i, ControllerReply::ScramAltered { missing })),
            ControllerOp::AlterClientQuotas {
                alterations,
                validate_only,
            } => self
                .decide(|c, o| c.alter_client_quotas(o, &alterations, validate_only))
                .map(|(i, results)| (i, ControllerReply::QuotasAltered(results))),
            ControllerOp::UpdateFeatures {
                updates,
                validate_only,
            } => self
                .decide(|c, o| c.update_features(o, &updates, validate_only))
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::CreateDelegationToken(request) => self
                .decide(|c, o| c.create_delegation_token(o, now, &request))
                .map(|(i, created)| (i, ControllerReply::TokenCreated(created))),
            ControllerOp::RenewDelegationToken {
                requester,
                hmac,
                period_ms,
            } => self
                .decide(|c, o| c.renew_delegation_token(o, now, &requester, &hmac, period_ms))
                .map(|(i, expiry)| (i, ControllerReply::TokenExpiry(expiry))),
            ControllerOp::ExpireDelegationToken {
                requester,
                hmac,
                period_ms,
            } => self
                .decide(|c, o| c.expire_delegation_token(o, now, &requester, &hmac, period_ms))
                .map(|(i, expiry)| (i, ControllerReply::TokenExpiry(expiry))),
            ControllerOp::CreateAcls(acls) => self
                .decide(|c, o| c.create_acls(o, &acls))
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::DeleteAcls(filters) => self
                .decide(|c, o| c.delete_acls(o, &filters))
                .map(|(i, deleted)| (i, ControllerReply::AclsDeleted(deleted))),
            ControllerOp::AlterPartition(changes) => self
                .decide(|c, o| c.alter_partitions(o, &changes))
                .map(|(i, outcomes)| {
                    let codes = outcomes.into_iter().map(|o| o.map_err(|e| e.code()));
                    (i, ControllerReply::Partitions(codes.collect()))
                }),
            ControllerOp::ElectLeader {
                topic,
                partition,
                election,
            } => self
                .decide(|c, o| c.elect_leader(o, &topic, partition, election))
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::ReassignPartition {
                topic,
                partition,
                target,
                allow_replication_factor_change,
            } => self
                .decide(|c, o| {
                    c.reassign_partition(
                        o,
                        &topic,
                        partition,
                        target.as_deref(),
                        allow_replication_factor_change,
                    )
                })
                .map(|(i, ())| (i, ControllerReply::Done)),
            ControllerOp::AllocateProducerIds {
                broker,
                broker_epoch,
            } => self
                .decide(|c, o| c.allocate_producer_ids(o, broker, broker_epoch))
                .map(|(i, (first, count))| (i, ControllerReply::ProducerIds { first, count })),
            ControllerOp::ImportTopics {
                broker,
                topics,
                next_producer_id,
            } => self
                .decide(|c, o| c.import_topics(o, broker, topics, next_producer_id))
                .map(|(i, ())| (i, ControllerReply::Done)),
        };
        match decided {
            Err(e) => {
                let _ = answer.send(Err(e));
            }
            Ok((index, reply)) if index <= self.quorum.image().offset => {
                let _ = answer.send(Ok(reply));
            }
            Ok((index, reply)) => {
                self.pending.entry(index).or_default().push(Pending {
                    term: self.control_term,
                    reply,
                    answer,
                });
            }
        }
    }

    /// Answers Done once the entry at `index` is applied (in this term).
    fn answer_at(&mut self, index: u64, answer: oneshot::Sender<Result<ControllerReply, Error>>) {
        self.pending.entry(index).or_default().push(Pending {
            term: self.quorum.term(),
            reply: ControllerReply::Done,
            answer,
        });
    }

    /// Answers the commands whose entries are now applied.
    fn complete_through(&mut self, applied: u64) {
        let later = self.pending.split_off(&(applied + 1));
        let done = std::mem::replace(&mut self.pending, later);
        for pending in done.into_values().flatten() {
            let outcome = if pending.term == self.quorum.term() {
                Ok(pending.reply)
            } else {
                Err(Error::NotController)
            };
            let _ = pending.answer.send(outcome);
        }
    }

    fn fail_pending(&mut self) {
        for pending in std::mem::take(&mut self.pending).into_values().flatten() {
            let _ = pending.answer.send(Err(Error::NotController));
        }
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
