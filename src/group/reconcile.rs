//! What KIP-848 consumer groups and KIP-1071 streams groups share of Kafka's
//! `CurrentAssignmentBuilder`: moving one member from what it owns towards its target —
//! revocation first, then the new epoch with what no other member still holds — over
//! name -> partitions maps (topic partitions, or subtopology tasks), and the offset commit
//! check against a member epoch.

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
    pub revocation_deadline: &'a mut Option<Instant>,
}

/// One step of Kafka's `CurrentAssignmentBuilder`: `owned` is what the member reports holding
/// (`None`: unchanged), `held_elsewhere` what other members hold or are still giving up.
/// Returns the member's progress after the step.
pub fn step(
    m: Reconciling<'_>,
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
            } else {
                m.assigned.entry(name.clone()).or_default().insert(*p);
            }
        }
    }
    if withheld {
        Progress::Unreleased
    } else {
        Progress::Stable
    }
}

/// OffsetCommit against a KIP-848 or streams group (Kafka's `validateOffsetCommit`): the
/// member must exist with this epoch; a negative epoch commits only to an empty group.
pub fn validate_member_epoch(
    group_is_empty: bool,
    member_epoch_now: Option<i32>,
    member_epoch: i32,
) -> Result<(), GroupError> {
    if member_epoch < 0 && group_is_empty {
        return Ok(());
    }
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
