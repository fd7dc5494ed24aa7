//! The streams group task assignor (in the manner of Kafka's `StickyTaskAssignor`): active
//! tasks spread evenly over the members, each kept by its previous owner where balance allows;
//! standby replicas on other processes than the task's active copy, preferring previous
//! holders, then the least loaded.

use super::Tasks;
use std::collections::{BTreeMap, BTreeSet};

/// What the assignor knows of a member.
#[derive(Debug, Clone, Default)]
pub struct MemberSpec {
    pub process_id: String,
    pub previous_active: Tasks,
    pub previous_standby: Tasks,
}

/// A member's share of the tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskAssignment {
    pub active: Tasks,
    pub standby: Tasks,
}

type Task = (String, i32);

fn flat(tasks: &Tasks) -> impl Iterator<Item = Task> + '_ {
    tasks
        .iter()
        .flat_map(|(s, ps)| ps.iter().map(move |p| (s.clone(), *p)))
}

/// Assigns every task of `tasks` (subtopology -> task count) to `members`.
pub fn assign(
    members: &BTreeMap<String, MemberSpec>,
    tasks: &BTreeMap<String, i32>,
    standby_replicas: i32,
) -> BTreeMap<String, TaskAssignment> {
    let mut out: BTreeMap<String, TaskAssignment> = members
        .keys()
        .map(|m| (m.clone(), TaskAssignment::default()))
        .collect();
    if members.is_empty() {
        return out;
    }
    let all: Vec<Task> = tasks
        .iter()
        .flat_map(|(s, n)| (0..*n).map(move |p| (s.clone(), p)))
        .collect();
    let total = all.len();
    let floor = total / members.len();
    let mut ceil_slots = total % members.len();
    let previous_owner: BTreeMap<Task, &String> = members
        .iter()
        .flat_map(|(id, spec)| flat(&spec.previous_active).map(move |t| (t, id)))
        .collect();
    let mut load: BTreeMap<&String, usize> = members.keys().map(|m| (m, 0)).collect();
    let mut owner: BTreeMap<Task, String> = BTreeMap::new();
    // Sticky up to the floor, then to the ceiling while ceiling slots remain.
    for pass in 0..2 {
        for task in &all {
            if owner.contains_key(task) {
                continue;
            }
            let Some(&member) = previous_owner.get(task) else {
                continue;
            };
            let Some(n) = load.get_mut(member) else {
                continue;
            };
            let fits = if pass == 0 {
                *n < floor
            } else {
                *n == floor && ceil_slots > 0
            };
            if fits {
                if pass == 1 {
                    ceil_slots -= 1;
                }
                *n += 1;
                owner.insert(task.clone(), member.clone());
            }
        }
    }
    // The rest to the least loaded (ties to the first by member id).
    for task in &all {
        if owner.contains_key(task) {
            continue;
        }
        if let Some((member, n)) = load.iter_mut().min_by_key(|(id, n)| (**n, **id)) {
            *n += 1;
            owner.insert(task.clone(), (*member).clone());
        }
    }
    for ((subtopology, partition), member) in &owner {
        if let Some(a) = out.get_mut(member) {
            a.active
                .entry(subtopology.clone())
                .or_default()
                .insert(*partition);
        }
    }
    if standby_replicas > 0 {
        assign_standbys(members, &all, &owner, standby_replicas, &mut out);
    }
    out
}

fn assign_standbys(
    members: &BTreeMap<String, MemberSpec>,
    all: &[Task],
    owner: &BTreeMap<Task, String>,
    replicas: i32,
    out: &mut BTreeMap<String, TaskAssignment>,
) {
    let mut load: BTreeMap<String, usize> = out
        .iter()
        .map(|(m, a)| (m.clone(), a.active.values().map(BTreeSet::len).sum()))
        .collect();
    let previous: BTreeSet<(Task, &String)> = members
        .iter()
        .flat_map(|(id, spec)| flat(&spec.previous_standby).map(move |t| (t, id)))
        .collect();
    for task in all {
        let Some(active_member) = owner.get(task) else {
            continue;
        };
        let Some(active_process) = members.get(active_member).map(|m| &m.process_id) else {
            continue;
        };
        let mut used: BTreeSet<&String> = BTreeSet::from([active_process]);
        for _ in 0..replicas {
            let candidates = members
                .iter()
                .filter(|(_, spec)| !used.contains(&spec.process_id));
            let chosen = candidates
                .min_by_key(|(id, _)| {
                    let was_here = previous.contains(&(task.clone(), *id));
                    (
                        !was_here,
                        load.get(*id).copied().unwrap_or(0),
                        (*id).clone(),
                    )
                })
                .map(|(id, spec)| (id.clone(), &spec.process_id));
            let Some((member, process)) = chosen else {
                break;
            };
            used.insert(process);
            *load.entry(member.clone()).or_default() += 1;
            if let Some(a) = out.get_mut(&member) {
                a.standby.entry(task.0.clone()).or_default().insert(task.1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(process: &str, active: &[(&str, i32)]) -> MemberSpec {
        let mut previous_active = Tasks::new();
        for (s, p) in active {
            previous_active.entry(s.to_string()).or_default().insert(*p);
        }
        MemberSpec {
            process_id: process.into(),
            previous_active,
            previous_standby: Tasks::new(),
        }
    }

    fn count(t: &Tasks) -> usize {
        t.values().map(BTreeSet::len).sum()
    }

    #[test]
    fn balanced_and_sticky() {
        let tasks = BTreeMap::from([("0".to_string(), 4), ("1".to_string(), 4)]);
        let one = BTreeMap::from([("a".to_string(), member("p1", &[]))]);
        let first = assign(&one, &tasks, 0);
        assert_eq!(count(&first["a"].active), 8);
        // A second member arrives: a keeps half of what it had, b gets the rest.
        let owned: Vec<(&str, i32)> = flat(&first["a"].active)
            .map(|(s, p)| (if s == "0" { "0" } else { "1" }, p))
            .collect();
        let two = BTreeMap::from([
            ("a".to_string(), member("p1", &owned)),
            ("b".to_string(), member("p2", &[])),
        ]);
        let second = assign(&two, &tasks, 0);
        assert_eq!(count(&second["a"].active), 4);
        assert_eq!(count(&second["b"].active), 4);
        let kept: BTreeSet<Task> = flat(&second["a"].active).collect();
        assert!(kept.is_subset(&flat(&first["a"].active).collect()));
        // Three members that all held tasks before: still within one of each other.
        let three = BTreeMap::from([
            (
                "a".to_string(),
                member("p1", &[("0", 0), ("0", 1), ("0", 2)]),
            ),
            (
                "b".to_string(),
                member("p2", &[("0", 3), ("1", 0), ("1", 1)]),
            ),
            ("c".to_string(), member("p3", &[])),
        ]);
        let third = assign(&three, &tasks, 0);
        let counts: Vec<usize> = third.values().map(|a| count(&a.active)).collect();
        assert_eq!(counts.iter().sum::<usize>(), 8);
        assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1);
    }

    #[test]
    fn standbys_go_to_other_processes() {
        let tasks = BTreeMap::from([("0".to_string(), 2)]);
        let members = BTreeMap::from([
            ("a".to_string(), member("p1", &[])),
            ("b".to_string(), member("p1", &[])),
            ("c".to_string(), member("p2", &[])),
        ]);
        let out = assign(&members, &tasks, 1);
        for (id, a) in &out {
            for task in flat(&a.standby) {
                let active_owner = out
                    .iter()
                    .find(|(_, x)| flat(&x.active).any(|t| t == task))
                    .map(|(m, _)| m.clone())
                    .unwrap();
                assert_ne!(
                    members[&active_owner].process_id, members[id].process_id,
                    "standby of {task:?} on the active's process"
                );
            }
        }
        let standbys: usize = out.values().map(|a| count(&a.standby)).sum();
        assert_eq!(standbys, 2);
    }
}
