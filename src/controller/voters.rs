//! A dynamic quorum's voter changes (KIP-853), as its leader runs them: AddRaftVoter and
//! RemoveRaftVoter, with the checks and messages of Kafka's `AddVoterHandler` and
//! `RemoveVoterHandler`.
//!
//! Adding runs in two Raft configuration changes where Kafka appends one `VotersRecord`: the
//! new controller first joins as a learner (raft-rs brings it up to date: the snapshot, then
//! the entries after it), and once it holds every committed entry it is promoted to voter, so
//! a controller that cannot keep up never counts towards the majority. Kafka checks the same
//! thing on an observer that fetches already. A learner that does not catch up in time is
//! answered REQUEST_TIMED_OUT and stays a learner; asking again goes on from there.
//!
//! One change at a time, as in Kafka (and raft-rs, which turns a second one into an empty
//! entry).

use super::ops::NewVoter;
use super::quorum::{Quorum, QuorumError, VoterChange};
use crate::error::Error;
use crate::metadata::records::MetadataRecord;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// A voter being added: a learner now, promoted once it caught up.
#[derive(Debug)]
struct Addition<A> {
    node: u64,
    /// The entry that made it a learner: it must be applied first.
    learner_index: u64,
    deadline: Instant,
    answer: A,
}

/// What became of an addition in progress, for the event loop.
#[derive(Debug)]
pub enum AdditionProgress<A> {
    /// Still catching up.
    Waiting,
    /// Promoted by the entry at this index: answer once it is applied.
    Promoted(u64, A),
    Failed(Error, A),
}

/// The change in progress (`A` answers the request that asked for it).
#[derive(Debug)]
pub struct VoterChanges<A> {
    addition: Option<Addition<A>>,
}

impl<A> Default for VoterChanges<A> {
    fn default() -> Self {
        Self { addition: None }
    }
}

fn replica_key(node: i32, directory_id: Uuid) -> String {
    format!(
        "ReplicaKey(id={node}, directoryId=Optional[{}])",
        crate::metadata::kafka_uuid_text(directory_id)
    )
}

fn proposal_refused(e: QuorumError) -> Error {
    match e {
        QuorumError::NotLeader => Error::NotController,
        other => Error::Internal(other.to_string()),
    }
}

/// Kafka's checks before any change: a dynamic quorum, a leader that has committed in its
/// term (the active controller), no change pending.
fn check_can_change(quorum: &Quorum, active: bool, verb: &str) -> Result<(), Error> {
    if !quorum.is_leader() {
        return Err(Error::NotController);
    }
    if !quorum.is_dynamic() {
        return Err(Error::VoterChangeUnsupported(format!(
            "Cluster doesn't support {verb} voter because the kraft.version feature is 0"
        )));
    }
    if !active {
        return Err(Error::VoterChangeTimedOut(
            "Request timed out waiting for leader to establish HWM and fence previous voter changes"
                .into(),
        ));
    }
    if quorum.has_pending_voter_change() {
        return Err(Error::VoterChangeTimedOut(format!(
            "Request timed out waiting for leader to handle previous {verb} voter request"
        )));
    }
    Ok(())
}

impl<A> VoterChanges<A> {
    /// Starts adding `voter` (AddRaftVoter); `answer` is handed back with the outcome.
    pub fn add(
        &mut self,
        quorum: &mut Quorum,
        active: bool,
        voter: NewVoter,
        answer: A,
    ) -> Result<(), (Error, A)> {
        if self.addition.is_some() {
            return Err((
                Error::VoterChangeTimedOut(
                    "Request timed out waiting for leader to handle previous add voter request"
                        .into(),
                ),
                answer,
            ));
        }
        if let Err(e) = check_can_change(quorum, active, "adding") {
            return Err((e, answer));
        }
        let node = match u64::try_from(voter.node) {
            Ok(node) => node,
            Err(_) => {
                return Err((
                    Error::InvalidRequest(format!("invalid voter id {}", voter.node)),
                    answer,
                ));
            }
        };
        if quorum.voters().contains(&node) {
            return Err((
                Error::DuplicateVoter(format!(
                    "The voter id for {} is already part of the set of voters {:?}.",
                    replica_key(voter.node, voter.directory_id),
                    quorum.voters()
                )),
                answer,
            ));
        }
        // A learner from an earlier attempt goes on catching up.
        let learner_index = if quorum.learners().contains(&node) {
            quorum.image().offset
        } else {
            let record = MetadataRecord::QuorumVoter {
                node_id: voter.node,
                directory_id: voter.directory_id,
                endpoints: voter.endpoints,
            };
            match quorum.propose_voter_change(VoterChange::AddLearner(node), &[record]) {
                Ok(index) => index,
                Err(e) => return Err((proposal_refused(e), answer)),
            }
        };
        let timeout = Duration::from_millis(u64::try_from(voter.timeout_ms).unwrap_or(0).max(1));
        tracing::info!(
            node,
            "adding a controller to the quorum: catching up as a learner"
        );
        self.addition = Some(Addition {
            node,
            learner_index,
            deadline: Instant::now() + timeout,
            answer,
        });
        Ok(())
    }

    /// Moves the addition in progress on: promotes the learner once it holds every committed
    /// entry, or gives up at its deadline or when this node stops leading.
    pub fn advance(&mut self, quorum: &mut Quorum) -> AdditionProgress<A> {
        let Some(addition) = self.addition.take() else {
            return AdditionProgress::Waiting;
        };
        if !quorum.is_leader() {
            return AdditionProgress::Failed(Error::NotController, addition.answer);
        }
        let learning = quorum.image().offset >= addition.learner_index
            && quorum.learners().contains(&addition.node);
        if learning && quorum.is_caught_up(addition.node) && !quorum.has_pending_voter_change() {
            return match quorum.propose_voter_change(VoterChange::Promote(addition.node), &[]) {
                Ok(index) => {
                    tracing::info!(
                        node = addition.node,
                        "promoting the new controller to voter"
                    );
                    AdditionProgress::Promoted(index, addition.answer)
                }
                Err(e) => AdditionProgress::Failed(proposal_refused(e), addition.answer),
            };
        }
        if Instant::now() >= addition.deadline {
            tracing::info!(
                node = addition.node,
                "the new controller did not catch up in time; it stays a learner"
            );
            return AdditionProgress::Failed(
                Error::VoterChangeTimedOut(format!(
                    "Aborted add voter operation for {} since it is lagging behind",
                    addition.node
                )),
                addition.answer,
            );
        }
        self.addition = Some(addition);
        AdditionProgress::Waiting
    }

    /// Kafka's checks before an update or removal ([`check_can_change`]), and no addition
    /// still catching up.
    fn check_idle(&self, quorum: &Quorum, active: bool, verb: &str) -> Result<(), Error> {
        if self.addition.is_some() {
            return Err(Error::VoterChangeTimedOut(
                "Request timed out waiting for leader to handle previous add voter request".into(),
            ));
        }
        check_can_change(quorum, active, verb)
    }

    /// Records where voter `voter.node` listens now (UpdateRaftVoter); returns the index to
    /// answer at. The voter set is unchanged: a plain metadata record replaces its endpoints.
    pub fn update(
        &mut self,
        quorum: &mut Quorum,
        active: bool,
        voter: NewVoter,
    ) -> Result<u64, Error> {
        self.check_idle(quorum, active, "updating")?;
        let known = quorum
            .image()
            .quorum_voters
            .get(&voter.node)
            .map(|v| v.directory_id);
        let is_voter = u64::try_from(voter.node).is_ok_and(|id| quorum.voters().contains(&id));
        if !is_voter || known != Some(voter.directory_id) {
            return Err(Error::VoterNotFound(format!(
                "Cannot update voter {}: it is not in the set of voters {:?}",
                replica_key(voter.node, voter.directory_id),
                quorum.voters()
            )));
        }
        tracing::info!(node = voter.node, endpoints = ?voter.endpoints, "a controller's listeners changed");
        let record = MetadataRecord::QuorumVoter {
            node_id: voter.node,
            directory_id: voter.directory_id,
            endpoints: voter.endpoints,
        };
        quorum.propose(&[record]).map_err(proposal_refused)
    }

    /// Removes voter `node` (RemoveRaftVoter); returns the index to answer at.
    pub fn remove(
        &mut self,
        quorum: &mut Quorum,
        active: bool,
        node: i32,
        directory_id: Uuid,
    ) -> Result<u64, Error> {
        self.check_idle(quorum, active, "removing")?;
        let key = replica_key(node, directory_id);
        let voters = quorum.voters();
        let known_directory = quorum
            .image()
            .quorum_voters
            .get(&node)
            .map(|v| v.directory_id);
        let id = u64::try_from(node).ok().filter(|id| voters.contains(id));
        let Some(id) = id.filter(|_| known_directory.is_none_or(|d| d == directory_id)) else {
            return Err(Error::VoterNotFound(format!(
                "Cannot remove voter {key} from the set of voters {voters:?} since it is not in the set"
            )));
        };
        if voters.len() == 1 {
            return Err(Error::InvalidRequest(format!(
                "Cannot remove voter {key}: it is the only voter"
            )));
        }
        let record = MetadataRecord::RemoveQuorumVoter { node_id: node };
        quorum
            .propose_voter_change(VoterChange::Remove(id), &[record])
            .map_err(proposal_refused)
    }
}
