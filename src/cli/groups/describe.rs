//! `--describe`: a group's offsets and lag, its members, or its state, as Kafka's tool prints
//! them (or as JSON).

use super::{Failure, GroupsArgs, Outcome, failed, print_error, selected_groups};
use crate::cli::client::{AdminClient, CommittedOffset, GroupDescription, OffsetSpec};
use crate::cli::output::Output;
use std::collections::{BTreeMap, BTreeSet};

/// One row of `--describe --offsets`.
struct OffsetRow {
    topic: Option<String>,
    partition: Option<i32>,
    leader_epoch: Option<i32>,
    offset: Option<i64>,
    end: Option<i64>,
    consumer: String,
    host: String,
    client: String,
}

impl OffsetRow {
    fn lag(&self) -> Option<i64> {
        Some(self.end? - self.offset?)
    }
}

pub(super) async fn describe(client: &mut AdminClient, args: &GroupsArgs) -> Outcome {
    let mut groups = selected_groups(client, args).await?;
    groups.sort();
    groups.dedup();
    let mut json = Vec::new();
    for group in groups {
        let description = client.describe_group(&group).await.map_err(failed)?;
        if args.members {
            print_members(&description, args, &mut json);
        } else if args.state.is_some() {
            print_state(&description, args, &mut json);
        } else {
            let committed = client.committed_offsets(&group).await.map_err(failed)?;
            let rows = offset_rows(client, &description, &committed).await?;
            print_offsets(&description, &rows, args, &mut json);
        }
    }
    if args.output == Output::Json {
        println!("{}", serde_json::Value::Array(json));
    }
    Ok(())
}

/// Kafka's `shouldPrintMemberState`: says what the state means on standard error (or that
/// the group does not exist, on standard output); whether there are rows to print.
fn member_state_printable(description: &GroupDescription, rows: usize, table: bool) -> bool {
    let group = &description.group_id;
    match description.state.as_str() {
        "Dead" => {
            if table {
                print_error(&format!("Consumer group '{group}' does not exist."));
            }
            return false;
        }
        "Empty" if table => eprintln!("\nConsumer group '{group}' has no active members."),
        "PreparingRebalance" | "CompletingRebalance" | "Assigning" | "Reconciling" if table => {
            eprintln!("\nWarning: Consumer group '{group}' is rebalancing.")
        }
        _ => {}
    }
    rows > 0
}

/// Kafka's `collectGroupsOffsets`: a row per assigned partition (members with the most
/// partitions first), then one per partition with a committed offset and no member.
async fn offset_rows(
    client: &mut AdminClient,
    description: &GroupDescription,
    committed: &[CommittedOffset],
) -> Result<Vec<OffsetRow>, Failure> {
    let committed_at: BTreeMap<(String, i32), &CommittedOffset> = committed
        .iter()
        .map(|c| ((c.topic.clone(), c.partition), c))
        .collect();
    let mut members: Vec<_> = description
        .members
        .iter()
        .filter(|m| m.assignment.values().any(|p| !p.is_empty()))
        .collect();
    members.sort_by_key(|m| std::cmp::Reverse(m.assignment.values().map(Vec::len).sum::<usize>()));
    // Partitions, and the member's id, host and client id.
    type MemberRows = (Vec<(String, i32)>, String, String, String);
    let mut groups_of_rows: Vec<MemberRows> = Vec::new();
    let mut assigned = BTreeSet::new();
    for member in members {
        let partitions: Vec<(String, i32)> = member
            .assignment
            .iter()
            .flat_map(|(t, ps)| ps.iter().map(move |p| (t.clone(), *p)))
            .collect();
        assigned.extend(partitions.iter().cloned());
        groups_of_rows.push((
            partitions,
            member.member_id.clone(),
            member.host.clone(),
            member.client_id.clone(),
        ));
    }
    let unassigned: Vec<(String, i32)> = committed_at
        .keys()
        .filter(|k| !assigned.contains(*k))
        .cloned()
        .collect();
    if !unassigned.is_empty() {
        groups_of_rows.push((unassigned, "-".into(), "-".into(), "-".into()));
    }
    let all: Vec<(String, i32)> = groups_of_rows
        .iter()
        .flat_map(|(p, ..)| p.iter().cloned())
        .collect();
    let ends = if all.is_empty() {
        BTreeMap::new()
    } else {
        client
            .list_offsets(&all, OffsetSpec::Latest)
            .await
            .map_err(failed)?
    };
    let mut rows = Vec::new();
    for (mut partitions, consumer, host, client_id) in groups_of_rows {
        partitions.sort();
        for (topic, partition) in partitions {
            let committed = committed_at.get(&(topic.clone(), partition));
            rows.push(OffsetRow {
                offset: committed.map(|c| c.offset),
                leader_epoch: committed.map(|c| c.leader_epoch).filter(|e| *e >= 0),
                end: ends.get(&(topic.clone(), partition)).copied().flatten(),
                topic: Some(topic),
                partition: Some(partition),
                consumer: consumer.clone(),
                host: host.clone(),
                client: client_id.clone(),
            });
        }
    }
    Ok(rows)
}

fn dash<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn print_offsets(
    description: &GroupDescription,
    rows: &[OffsetRow],
    args: &GroupsArgs,
    json: &mut Vec<serde_json::Value>,
) {
    if args.output == Output::Json {
        json.push(serde_json::json!({
            "group": description.group_id,
            "state": description.state,
            "partitions": rows.iter().map(|r| serde_json::json!({
                "topic": r.topic, "partition": r.partition, "leader_epoch": r.leader_epoch,
                "current_offset": r.offset, "log_end_offset": r.end, "lag": r.lag(),
                "consumer_id": r.consumer, "host": r.host, "client_id": r.client,
            })).collect::<Vec<_>>(),
        }));
        return;
    }
    if !member_state_printable(description, rows.len(), true) {
        return;
    }
    let group_width = description.group_id.len().max(15);
    let topic_width = rows
        .iter()
        .map(|r| r.topic.as_deref().unwrap_or("-").len())
        .chain([15])
        .max()
        .unwrap_or(15);
    let consumer_width = rows
        .iter()
        .map(|r| r.consumer.len())
        .chain([15])
        .max()
        .unwrap_or(15);
    let host_width = rows
        .iter()
        .map(|r| r.host.len())
        .chain([15])
        .max()
        .unwrap_or(15);
    let line = |cells: [&str; 10]| {
        let [
            group,
            topic,
            partition,
            epoch,
            offset,
            end,
            lag,
            consumer,
            host,
            client,
        ] = cells;
        let mut text = format!("\n{group:<group_width$} {topic:<topic_width$} {partition:<10} ");
        if args.verbose {
            text.push_str(&format!("{epoch:<15} "));
        }
        text.push_str(&format!(
            "{offset:<15} {end:<15} {lag:<15} {consumer:<consumer_width$} {host:<host_width$} {client}"
        ));
        text
    };
    let mut out = line([
        "GROUP",
        "TOPIC",
        "PARTITION",
        "LEADER-EPOCH",
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
    ]);
    for row in rows {
        out.push_str(&line([
            &description.group_id,
            row.topic.as_deref().unwrap_or("-"),
            &dash(row.partition),
            &dash(row.leader_epoch),
            &dash(row.offset),
            &dash(row.end),
            &dash(row.lag()),
            &row.consumer,
            &row.host,
            &row.client,
        ]));
    }
    println!("{out}");
}

/// An assignment as Kafka's `getAssignmentString`: `topic:0,1;other:2`.
fn assignment_text(assignment: &BTreeMap<String, Vec<i32>>) -> String {
    let parts: Vec<String> = assignment
        .iter()
        .filter(|(_, partitions)| !partitions.is_empty())
        .map(|(topic, partitions)| {
            let mut partitions = partitions.clone();
            partitions.sort_unstable();
            let list: Vec<String> = partitions.iter().map(i32::to_string).collect();
            format!("{topic}:{}", list.join(","))
        })
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(";")
    }
}

fn print_members(
    description: &GroupDescription,
    args: &GroupsArgs,
    json: &mut Vec<serde_json::Value>,
) {
    let partitions =
        |m: &crate::cli::client::GroupMember| m.assignment.values().map(Vec::len).sum::<usize>();
    if args.output == Output::Json {
        json.push(serde_json::json!({
            "group": description.group_id,
            "state": description.state,
            "members": description.members.iter().map(|m| serde_json::json!({
                "consumer_id": m.member_id, "group_instance_id": m.instance_id,
                "host": m.host, "client_id": m.client_id, "partitions": partitions(m),
                "member_epoch": m.member_epoch, "assignment": m.assignment,
                "target_assignment": m.target_assignment,
            })).collect::<Vec<_>>(),
        }));
        return;
    }
    let printable = member_state_printable(description, description.members.len(), true);
    let members = if printable {
        &description.members[..]
    } else {
        &[]
    };
    let width = |f: &dyn Fn(&crate::cli::client::GroupMember) -> usize, least: usize| {
        members.iter().map(f).chain([least]).max().unwrap_or(least)
    };
    let group_width = if members.is_empty() {
        15
    } else {
        description.group_id.len().max(15)
    };
    let consumer_width = width(&|m| m.member_id.len(), 15);
    let instance_width = width(&|m| m.instance_id.as_deref().unwrap_or("").len(), 17);
    let host_width = width(&|m| m.host.len(), 15);
    let client_width = width(&|m| m.client_id.len(), 15);
    let current_width = width(&|m| assignment_text(&m.assignment).len(), 20);
    let target_width = width(
        &|m| assignment_text(m.target_assignment.as_ref().unwrap_or(&BTreeMap::new())).len(),
        20,
    );
    let with_instance = members
        .iter()
        .any(|m| m.instance_id.as_deref().is_some_and(|i| !i.is_empty()));
    let start = |group: &str,
                 consumer: &str,
                 instance: &str,
                 host: &str,
                 client: &str,
                 count: &str| {
        if with_instance {
            format!(
                "{group:<group_width$} {consumer:<consumer_width$} {instance:<instance_width$} {host:<host_width$} {client:<client_width$} {count:<15} "
            )
        } else {
            format!(
                "{group:<group_width$} {consumer:<consumer_width$} {host:<host_width$} {client:<client_width$} {count:<15} "
            )
        }
    };
    let verbose = |epoch: &str, current: &str, target_epoch: &str, target: &str| {
        format!("{epoch:<15} {current:<current_width$} {target_epoch:<15} {target:<target_width$}")
    };
    let mut header = format!(
        "\n{}",
        start(
            "GROUP",
            "CONSUMER-ID",
            "GROUP-INSTANCE-ID",
            "HOST",
            "CLIENT-ID",
            "#PARTITIONS"
        )
    );
    if args.verbose {
        header.push_str(&verbose(
            "CURRENT-EPOCH",
            "CURRENT-ASSIGNMENT",
            "TARGET-EPOCH",
            "TARGET-ASSIGNMENT",
        ));
    }
    println!("{header}");
    for member in members {
        let mut line = start(
            &description.group_id,
            &member.member_id,
            member.instance_id.as_deref().unwrap_or(""),
            &member.host,
            &member.client_id,
            &partitions(member).to_string(),
        );
        if args.verbose {
            line.push_str(&verbose(
                &dash(member.member_epoch),
                &assignment_text(&member.assignment),
                &dash(description.assignment_epoch),
                &assignment_text(
                    member
                        .target_assignment
                        .as_ref()
                        .unwrap_or(&BTreeMap::new()),
                ),
            ));
        }
        println!("{line}");
    }
}

fn print_state(
    description: &GroupDescription,
    args: &GroupsArgs,
    json: &mut Vec<serde_json::Value>,
) {
    let coordinator = format!(
        "{}:{}  ({})",
        description.coordinator.host, description.coordinator.port, description.coordinator.id
    );
    let strategy = if description.assignor.is_empty() {
        "-".to_string()
    } else {
        description.assignor.clone()
    };
    if args.output == Output::Json {
        json.push(serde_json::json!({
            "group": description.group_id, "coordinator": description.coordinator.id,
            "assignment_strategy": description.assignor, "state": description.state,
            "group_epoch": description.group_epoch,
            "target_assignment_epoch": description.assignment_epoch,
            "members": description.members.len(),
        }));
        return;
    }
    if !member_state_printable(description, 1, true) {
        return;
    }
    let group_width = description.group_id.len().max(15);
    let coordinator_width = coordinator.len().max(25);
    let line = |cells: [&str; 7]| {
        let [group, coordinator, strategy, state, epoch, target, members] = cells;
        if args.verbose {
            format!(
                "\n{group:<group_width$} {coordinator:<coordinator_width$} {strategy:<20} {state:<20} {epoch:<15} {target:<25} {members}"
            )
        } else {
            format!(
                "\n{group:<group_width$} {coordinator:<coordinator_width$} {strategy:<20} {state:<20} {members}"
            )
        }
    };
    let header = line([
        "GROUP",
        "COORDINATOR (ID)",
        "ASSIGNMENT-STRATEGY",
        "STATE",
        "GROUP-EPOCH",
        "TARGET-ASSIGNMENT-EPOCH",
        "#MEMBERS",
    ]);
    let row = line([
        &description.group_id,
        &coordinator,
        &strategy,
        &description.state,
        &dash(description.group_epoch),
        &dash(description.assignment_epoch),
        &description.members.len().to_string(),
    ]);
    println!("{header}{row}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_print_as_kafkas() {
        let mut assignment = BTreeMap::new();
        assignment.insert("orders".to_string(), vec![2, 0]);
        assignment.insert("events".to_string(), vec![1]);
        assert_eq!(assignment_text(&assignment), "events:1;orders:0,2");
        assert_eq!(assignment_text(&BTreeMap::new()), "-");
    }
}
