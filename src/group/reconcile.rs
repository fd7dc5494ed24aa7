//! What KIP-848 consumer groups and KIP-1071 streams groups share of Kafka's
//! `CurrentAssignmentBuilder`: moving one member from what it owns towards its target —
//! revocation first, then the new epoch with what no other member still holds — over
//! name -> partitions maps (topic partitions, or subtopology tasks), with the epoch each
//! partition was assigned at, and the offset commit check against them (KIP-1251: a commit
//! from an older member epoch stands for the partitions the member held at that epoch).

use crate::error::GroupError;
use std::collections::{BTreeMap, BTreeSet};
use tokio::time::Instant;

/// name (topic or subtopology) -> partitions.
pub type Assignment = BTreeMap<String, BTreeSet<i32>>;

pub fn flatten(a: &Assignment) -> BTreeSet<(String, i32)> {
    a.iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| (t.clone(), *p)))
        .collect()
}

pub fn unflatten(set: impl IntoIterator<Item = (String, i32)>) -> Assignment {
    let mut out = Assignment::new();
    for (t, p) in set {
        out.entry(t).or_default().insert(p);
    }
    out
}

pub fn difference(a: &Assignment, b: &Assignment) -> Assignment {
    unflatten(flatten(a).difference(&flatten(b)).cloned())
}

pub fn intersection(a: &Assignment, b: &Assignment) -> Assignment {
    unflatten(flatten(a).intersection(&flatten(b)).cloned())
}

pub fn is_subset(a: &Assignment, b: &Assignment) -> bool {
    flatten(a).is_subset(&flatten(b))
}

/// (name, partition) -> the member epoch it was assigned at, for what a member holds or is
/// giving up (Kafka's assignment epochs).
pub type AssignmentEpochs = BTreeMap<(String, i32), i32>;

/// Assignment epochs for `assignment`, each `epoch` (records written before assignment epochs
/// existed: Kafka takes the member epoch).
pub fn epochs_at(assignment: &Assignment, epoch: i32) -> AssignmentEpochs {
    flatten(assignment)
        .into_iter()
        .map(|tp| (tp, epoch))
        .collect()
}

/// Where a member is on its way to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    Stable,
    /// It must confirm giving up `pending` before it gets anything new.
    Unrevoked,
    /// At the target epoch, waiting for partitions others still hold.
    Unreleased,
}

/// One member's reconciliation state.
pub struct Reconciling<'a> {
    pub epoch: &'a mut i32,
    pub previous_epoch: &'a mut i32,
    pub progress: Progress,
    pub assigned: &'a mut Assignment,
    pub pending: &'a mut Assignment,
    /// The assignment epochs of `assigned` and `pending`.
    pub epochs: &'a mut AssignmentEpochs,
    pub revocation_deadline: &'a mut Option<Instant>,
}

/// One step of Kafka's `CurrentAssignmentBuilder`: `owned` is what the member reports holding
/// (`None`: unchanged), `held_elsewhere` what other members hold or are still giving up.
/// Returns the member's progress after the step. A partition newly assigned takes the target
/// epoch as its assignment epoch; one kept keeps its own.
pub fn step(
    mut m: Reconciling<'_>,
    target: &Assignment,
    target_epoch: i32,
    owned: Option<&Assignment>,
    held_elsewhere: &BTreeSet<(String, i32)>,
    revocation_deadline: Instant,
) -> Progress {
    let progress = step_assignment(
        &mut m,
        target,
        target_epoch,
        owned,
        held_elsewhere,
        revocation_deadline,
    );
    let held: BTreeSet<(String, i32)> = flatten(m.assigned)
        .into_iter()
        .chain(flatten(m.pending))
        .collect();
    m.epochs.retain(|tp, _| held.contains(tp));
    progress
}

fn step_assignment(
    m: &mut Reconciling<'_>,
    target: &Assignment,
    target_epoch: i32,
    owned: Option<&Assignment>,
    held_elsewhere: &BTreeSet<(String, i32)>,
    revocation_deadline: Instant,
) -> Progress {
    if m.progress == Progress::Unrevoked {
        let revoked = owned.is_some_and(|o| flatten(o).is_disjoint(&flatten(m.pending)));
        if !revoked {
            return Progress::Unrevoked;
        }
        m.pending.clear();
        *m.revocation_deadline = None;
    } else if *m.epoch == target_epoch && m.progress == Progress::Stable {
        return Progress::Stable;
    }
    let revoke = difference(m.assigned, target);
    if !revoke.is_empty() {
        *m.assigned = intersection(m.assigned, target);
        *m.pending = revoke;
        *m.revocation_deadline = Some(revocation_deadline);
        return Progress::Unrevoked;
    }
    if *m.epoch != target_epoch {
        *m.previous_epoch = *m.epoch;
        *m.epoch = target_epoch;
    }
    let mut withheld = false;
    for (name, partitions) in target {
        for p in partitions {
            if held_elsewhere.contains(&(name.clone(), *p)) {
                withheld = true;
            } else if m.assigned.entry(name.clone()).or_default().insert(*p) {
                m.epochs.insert((name.clone(), *p), target_epoch);
            }
        }
    }
    if withheld {
        Progress::Unreleased
    } else {
        Progress::Stable
    }
}

/// What an offset commit is checked against: the member's epoch, what it holds and is giving
/// up, and the epochs those were assigned at.
pub struct Committer<'a> {
    pub epoch: i32,
    pub assigned: &'a Assignment,
    pub pending: &'a Assignment,
    pub epochs: &'a AssignmentEpochs,
}

/// OffsetCommit against a KIP-848 or streams group (Kafka's `validateOffsetCommit`): a
/// negative epoch commits only to an empty group; the member's own epoch commits anything; an
/// older one (KIP-1251) only partitions the member holds or is giving up and was assigned at
/// or before that epoch; a newer one nothing. `partitions` are the (name, partition) pairs
/// the commit touches, in the assignment's terms; `Err` names a pair as `None` when the
/// commit cannot be put in those terms (a topic outside a streams topology). A member's
/// commit must come in a request that can carry its epoch (`epoch_aware`: OffsetCommit v9+,
/// or TxnOffsetCommit).
pub fn validate_commit(
    group_is_empty: bool,
    member: Option<Committer<'_>>,
    received_epoch: i32,
    epoch_aware: bool,
    partitions: impl IntoIterator<Item = Option<(String, i32)>>,
) -> Result<(), GroupError> {
    if received_epoch < 0 && group_is_empty {
        return Ok(());
    }
    let member = member.ok_or(GroupError::UnknownMemberId)?;
    if !epoch_aware {
        return Err(GroupError::UnsupportedVersion);
    }
    if received_epoch == member.epoch {
        return Ok(());
    }
    if received_epoch > member.epoch {
        return Err(GroupError::StaleMemberEpoch);
    }
    for partition in partitions {
        let Some(tp) = partition else {
            return Err(GroupError::StaleMemberEpoch);
        };
        let held = member
            .assigned
            .get(&tp.0)
            .is_some_and(|ps| ps.contains(&tp.1))
            || member
                .pending
                .get(&tp.0)
                .is_some_and(|ps| ps.contains(&tp.1));
        // A partition held without a recorded epoch was assigned at the member's epoch.
        let assigned_at = member.epochs.get(&tp).copied().unwrap_or(member.epoch);
        if !held || assigned_at > received_epoch {
            return Err(GroupError::StaleMemberEpoch);
        }
    }
    Ok(())
}

/// OffsetFetch from a member of a KIP-848 or streams group (Kafka's `validateOffsetFetch`):
/// the member must exist with exactly this epoch.
pub fn validate_fetch_epoch(
    member_epoch_now: Option<i32>,
    member_epoch: i32,
) -> Result<(), GroupError> {
    let current = member_epoch_now.ok_or(GroupError::UnknownMemberId)?;
    if member_epoch != current {
        return Err(GroupError::StaleMemberEpoch);
    }
    Ok(())
}

/// The earlier of a member's session and revocation deadlines.
pub fn deadline(session: Instant, revocation: Option<Instant>) -> Instant {
    revocation.map_or(session, |d| d.min(session))
}
