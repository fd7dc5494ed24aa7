//! Kafka's checks of a streams group heartbeat (`GroupMetadataManager`'s
//! `throwIfStreamsGroupHeartbeatRequestIsInvalid`, the topology, the member epoch and the
//! tasks a member reports), with its error messages.

use super::topology::{ConfiguredTopology, Topology};
use super::{LEAVE_STATIC_EPOCH, StreamsHeartbeat, StreamsMember, Tasks};
use crate::error::StreamsError;
use crate::group::reconcile::is_subset;
use std::collections::BTreeSet;

/// Kafka's `throwIfStreamsGroupHeartbeatRequestIsInvalid`.
pub(super) fn validate(hb: &StreamsHeartbeat) -> Result<(), StreamsError> {
    let invalid = |m: &str| Err(StreamsError::InvalidRequest(m.to_string()));
    // `Utils.throwIfEmptyString`: a present value that trims to nothing.
    let blank = |v: Option<&str>| v.is_some_and(|v| v.trim().is_empty());
    if blank(Some(&hb.member_id)) {
        return invalid("MemberId can't be empty.");
    }
    if blank(hb.instance_id.as_deref()) {
        return invalid("InstanceId can't be empty.");
    }
    if blank(hb.rack_id.as_deref()) {
        return invalid("RackId can't be empty.");
    }
    if hb.member_epoch == 0 {
        if hb.rebalance_timeout_ms == -1 {
            return invalid("RebalanceTimeoutMs must be provided in first request.");
        }
        // Kafka's `throwIfNotEmptyCollection` refuses a null list too.
        for (tasks, kind) in [
            (&hb.active, "ActiveTasks"),
            (&hb.standby, "StandbyTasks"),
            (&hb.warmup, "WarmupTasks"),
        ] {
            if tasks.as_ref().is_none_or(|t| !t.is_empty()) {
                return invalid(&format!("{kind} must be empty when (re-)joining."));
            }
        }
        match &hb.topology {
            None => return invalid("Topology must be non-null when (re-)joining."),
            Some(t) => validate_topology(t)?,
        }
    } else if hb.member_epoch == LEAVE_STATIC_EPOCH {
        if hb.instance_id.is_none() {
            return invalid("InstanceId can't be null.");
        }
    } else if hb.member_epoch < LEAVE_STATIC_EPOCH {
        return invalid(&format!(
            "MemberEpoch is {}, but must be greater than or equal to -2.",
            hb.member_epoch
        ));
    }
    let kinds = [&hb.active, &hb.standby, &hb.warmup];
    if kinds.iter().any(|t| t.is_some()) && kinds.iter().any(|t| t.is_none()) {
        return invalid("If one task-type is non-null, all must be non-null.");
    }
    if hb.member_epoch != 0 && hb.topology.is_some() {
        return invalid("Topology can only be provided when (re-)joining.");
    }
    if hb.process_id.as_deref() == Some("") {
        return invalid("ProcessId can't be empty.");
    }
    Ok(())
}

/// Kafka's `throwIfStreamsGroupTopologyIsInvalid` (the checks that do not need the topics).
fn validate_topology(t: &Topology) -> Result<(), StreamsError> {
    let sources: BTreeSet<&str> = t
        .subtopologies
        .values()
        .flat_map(|s| s.repartition_source_topics.iter().map(|i| i.name.as_str()))
        .collect();
    for s in t.subtopologies.values() {
        if s.id.is_empty() {
            return Err(StreamsError::InvalidTopology(
                "Subtopology ids can't be empty.".into(),
            ));
        }
        if s.source_topics.is_empty()
            && s.source_topic_regex.is_empty()
            && s.repartition_source_topics.is_empty()
        {
            return Err(StreamsError::InvalidTopology(format!(
                "Subtopology {} has no source topics.",
                s.id
            )));
        }
        for sink in &s.repartition_sink_topics {
            if !sources.contains(sink.as_str()) {
                return Err(StreamsError::InvalidTopology(format!(
                    "Repartition sink topic {sink} of subtopology {} is not a repartition source topic of any subtopology.",
                    s.id
                )));
            }
        }
    }
    Ok(())
}

/// Kafka's `throwIfStreamsGroupMemberEpochIsInvalid`.
pub(super) fn check_epoch(
    member: &StreamsMember,
    hb: &StreamsHeartbeat,
) -> Result<(), StreamsError> {
    let received = hb.member_epoch;
    if received > member.member_epoch {
        return Err(StreamsError::FencedMemberEpoch(format!(
            "The streams group member has a greater member epoch ({received}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.",
            member.member_epoch
        )));
    }
    if received < member.member_epoch {
        let owned_ok = |owned: &Option<Tasks>, assigned: &Tasks| {
            owned.as_ref().is_none_or(|o| is_subset(o, assigned))
        };
        if received != member.previous_member_epoch
            || !owned_ok(&hb.active, &member.assigned.active)
            || !owned_ok(&hb.standby, &member.assigned.standby)
            || !owned_ok(&hb.warmup, &member.assigned.warmup)
        {
            return Err(StreamsError::FencedMemberEpoch(format!(
                "The streams group member has a smaller member epoch ({received}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.",
                member.member_epoch
            )));
        }
    }
    Ok(())
}

/// Kafka's `throwIfRequestContainsInvalidTasks`.
pub(super) fn check_tasks(
    configured: &ConfiguredTopology,
    tasks: &Tasks,
) -> Result<(), StreamsError> {
    for (subtopology, partitions) in tasks {
        let Some(n) = configured.tasks.get(subtopology) else {
            return Err(StreamsError::InvalidRequest(format!(
                "Subtopology {subtopology} does not exist in the topology."
            )));
        };
        if let Some(p) = partitions.iter().find(|p| **p < 0 || **p >= *n) {
            return Err(StreamsError::InvalidRequest(format!(
                "Task {p} for subtopology {subtopology} is invalid. Number of tasks for this subtopology: {n}"
            )));
        }
    }
    Ok(())
}
