//! The KIP-848 server-side assignors (Kafka's `UniformAssignor` and `RangeAssignor`): from
//! each member's subscribed topics and the topics' partition counts to each member's target.

use super::Assignment;
use crate::group::reconcile::flatten;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Kafka's range assignor, server side: per topic, the subscribed members (by id) get
/// contiguous ranges, the first ones one partition more when it does not divide evenly.
pub fn assign_range(
    subscriptions: &BTreeMap<String, BTreeSet<String>>,
    partitions: &BTreeMap<String, i32>,
) -> HashMap<String, Assignment> {
    let mut out: HashMap<String, Assignment> = subscriptions
        .keys()
        .map(|m| (m.clone(), Assignment::new()))
        .collect();
    for (topic, count) in partitions {
        let members: Vec<&String> = subscriptions
            .iter()
            .filter(|(_, topics)| topics.contains(topic))
            .map(|(m, _)| m)
            .collect();
        if members.is_empty() {
            continue;
        }
        let (per, extra) = (
            *count as usize / members.len(),
            *count as usize % members.len(),
        );
        let mut next = 0;
        for (i, member) in members.iter().enumerate() {
            let take = per + usize::from(i < extra);
            let set: BTreeSet<i32> = (next..next + take).map(|p| p as i32).collect();
            next += take;
            if !set.is_empty() {
                out.entry((*member).clone())
                    .or_default()
                    .insert(topic.clone(), set);
            }
        }
    }
    out
}

/// Balanced and sticky: members keep what they had (up to their fair share), the rest goes to
/// the least loaded eligible member. Fair share is computed over the partitions each member
/// can take, so heterogeneous subscriptions stay balanced where they overlap.
pub fn assign_uniform(
    subscriptions: &BTreeMap<String, BTreeSet<String>>,
    partitions: &BTreeMap<String, i32>,
    previous: &HashMap<String, Assignment>,
) -> HashMap<String, Assignment> {
    let mut out: HashMap<String, Assignment> = subscriptions
        .keys()
        .map(|m| (m.clone(), Assignment::new()))
        .collect();
    let all: Vec<(String, i32)> = partitions
        .iter()
        .flat_map(|(t, n)| (0..*n).map(move |p| (t.clone(), p)))
        .collect();
    let eligible =
        |member: &str, topic: &str| subscriptions.get(member).is_some_and(|t| t.contains(topic));
    // Every member gets ⌊P/M⌋ and P mod M of them one more (Kafka's uniform assignor's
    // quotas): a member keeps what it had up to ⌊P/M⌋, and one more only while some of those
    // P mod M places are left. (With ⌈P/M⌉ for everyone, the first members kept ⌈P/M⌉ and the
    // last got nothing: 4 partitions, 3 members made 2, 2, 0.)
    let total_members = subscriptions.len().max(1);
    let floor = all.len() / total_members;
    let mut places_above_floor = all.len() % total_members;
    let mut load: BTreeMap<String, usize> = subscriptions.keys().map(|m| (m.clone(), 0)).collect();
    let mut taken: BTreeSet<(String, i32)> = BTreeSet::new();
    // Keep previous ownership up to the quota, members in id order (deterministic).
    let previous: BTreeMap<&String, &Assignment> = previous.iter().collect();
    for (member, assignment) in previous {
        if !subscriptions.contains_key(member) {
            continue;
        }
        for (topic, p) in flatten(assignment) {
            let exists = partitions.get(&topic).is_some_and(|n| p < *n);
            let held = load.get(member).copied().unwrap_or(0);
            let allowed = held < floor || (held == floor && places_above_floor > 0);
            if exists && eligible(member, &topic) && allowed && taken.insert((topic.clone(), p)) {
                if held == floor {
                    places_above_floor -= 1;
                }
                out.entry(member.clone())
                    .or_default()
                    .entry(topic)
                    .or_default()
                    .insert(p);
                if let Some(l) = load.get_mut(member) {
                    *l += 1;
                }
            }
        }
    }
    // Hand out the rest, least loaded first (ties by member id, deterministic): per topic, its
    // eligible members ordered by (load, id), so each partition costs a logarithm, not a
    // scan of every member (a thousand members times a thousand partitions on every join).
    let mut current_topic: Option<&str> = None;
    let mut candidates: BTreeSet<(usize, &str)> = BTreeSet::new();
    for (topic, p) in &all {
        if current_topic != Some(topic.as_str()) {
            current_topic = Some(topic.as_str());
            candidates = subscriptions
                .keys()
                .filter(|m| eligible(m, topic))
                .map(|m| (load.get(m).copied().unwrap_or(0), m.as_str()))
                .collect();
        }
        if taken.contains(&(topic.clone(), *p)) {
            continue;
        }
        let Some((least, member)) = candidates.pop_first() else {
            continue;
        };
        out.entry(member.to_string())
            .or_default()
            .entry(topic.clone())
            .or_default()
            .insert(*p);
        candidates.insert((least + 1, member));
        if let Some(l) = load.get_mut(member) {
            *l = least + 1;
        }
    }
    out
}
