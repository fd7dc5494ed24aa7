//! `sluice groups`, and `kafka-consumer-groups` / `kafka-consumer-groups.sh` in the image:
//! Kafka's ConsumerGroupCommand with its flags, checks and output — `--list` (with `--state`
//! and `--type`), `--describe` of offsets and lag, members (`--verbose`: epochs and
//! assignments) or state, `--reset-offsets` (to an offset, the earliest, the latest, the
//! current, a date-time, a duration ago, or shifted; a dry run unless `--execute`; `--export`
//! as CSV), and `--delete`. `--output json` prints what --list and --describe found as JSON.
//!
//! Exit codes: under Kafka's script name, Kafka's (1 for a bad command line; 0 when the
//! command itself fails, after `Error: ...` on standard output — what scripts written against
//! Kafka's tool expect); as `sluice groups`, 1 whenever the command failed. Not built:
//! `--delete-offsets`, `--from-file`, `--validate-regex`.

use super::client::{
    AdminClient, AdminError, CommittedOffset, GroupDescription, GroupListing, OffsetSpec,
    default_message, java_exception,
};
use super::cluster::ConnectArgs;
use super::output::Output;
use clap::Args;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Args, Debug, Clone, Default)]
#[command(
    about = "List, describe, delete consumer groups and reset their offsets (Kafka's kafka-consumer-groups)"
)]
pub struct GroupsArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// The consumer group we wish to act on (repeatable).
    #[arg(long, value_name = "group id")]
    pub group: Vec<String>,
    /// The topic whose consumer group information should be reset: `topic` or
    /// `topic:0,1,2` (repeatable).
    #[arg(long, value_name = "topic")]
    pub topic: Vec<String>,
    /// Consider all topics assigned to a group in the `reset-offsets` process.
    #[arg(long = "all-topics")]
    pub all_topics: bool,
    /// List all consumer groups.
    #[arg(long)]
    pub list: bool,
    /// Describe consumer group and list offset lag related to given group.
    #[arg(long)]
    pub describe: bool,
    /// Apply to all consumer groups.
    #[arg(long = "all-groups")]
    pub all_groups: bool,
    /// Pass in groups to delete topic partition offsets and ownership information.
    #[arg(long)]
    pub delete: bool,
    /// The timeout that can be set for some use cases (ms).
    #[arg(long, value_name = "timeout (ms)", default_value_t = 30000)]
    pub timeout: i64,
    /// Reset offsets of consumer group (a dry run unless --execute is given).
    #[arg(long = "reset-offsets")]
    pub reset_offsets: bool,
    /// Only show results without executing changes on consumer groups.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// Execute the operation.
    #[arg(long)]
    pub execute: bool,
    /// Export the operation's result to CSV format.
    #[arg(long)]
    pub export: bool,
    /// Reset offsets to a specific offset.
    #[arg(
        long = "to-offset",
        value_name = "offset",
        allow_negative_numbers = true
    )]
    pub to_offset: Option<i64>,
    /// Reset offsets to offset from datetime: 'YYYY-MM-DDThh:mm:ss.sss'.
    #[arg(long = "to-datetime", value_name = "datetime")]
    pub to_datetime: Option<String>,
    /// Reset offsets to offset by duration from the current timestamp: 'PnDTnHnMnS'.
    #[arg(long = "by-duration", value_name = "duration")]
    pub by_duration: Option<String>,
    /// Reset offsets to the earliest offset.
    #[arg(long = "to-earliest")]
    pub to_earliest: bool,
    /// Reset offsets to the latest offset.
    #[arg(long = "to-latest")]
    pub to_latest: bool,
    /// Reset offsets to the current offset.
    #[arg(long = "to-current")]
    pub to_current: bool,
    /// Reset offsets shifting the current offset by 'n', where 'n' can be positive or negative.
    #[arg(
        long = "shift-by",
        value_name = "number-of-offsets",
        allow_negative_numbers = true
    )]
    pub shift_by: Option<i64>,
    /// Describe members of the group.
    #[arg(long)]
    pub members: bool,
    /// Provide additional information, if any, when describing the group.
    #[arg(long)]
    pub verbose: bool,
    /// Describe the group and list all topic partitions in the group along with their offset
    /// information (the default for --describe).
    #[arg(long)]
    pub offsets: bool,
    /// With --describe: the group's state; with --list: show (and, given a list, filter by)
    /// the groups' states.
    #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "states")]
    pub state: Option<String>,
    /// With --list: show (and, given a list, filter by) the groups' types (classic, consumer).
    #[arg(long = "type", num_args = 0..=1, default_missing_value = "", value_name = "types")]
    pub group_type: Option<String>,
    /// How to print --list and --describe: `table` (Kafka's text) or `json`.
    #[arg(long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// What ended the command early.
enum Failure {
    /// A bad command line: the message on standard error, exit 1.
    Usage(String),
    /// The command failed: Kafka's `Error: ...` on standard output.
    Command(String),
}

type Outcome = Result<(), Failure>;

/// Runs the command; the exit code. `kafka_exit_codes`: exit as Kafka's tool does (0 after a
/// failed command), for its script name.
pub fn run(args: &GroupsArgs, kafka_exit_codes: bool) -> i32 {
    let outcome = check(args).and_then(|()| {
        match super::output::block_on(async { Ok(execute(args).await) }) {
            Ok(outcome) => outcome,
            Err(message) => Err(Failure::Command(message)),
        }
    });
    match outcome {
        Ok(()) => 0,
        Err(Failure::Usage(message)) => {
            eprintln!("{message}");
            1
        }
        Err(Failure::Command(message)) => {
            print_error(&message);
            if kafka_exit_codes { 0 } else { 1 }
        }
    }
}

/// Kafka's `printError`.
fn print_error(message: &str) {
    println!("\nError: {message}");
}

/// Kafka's `checkArgs` and the action count `main` checks.
fn check(args: &GroupsArgs) -> Outcome {
    let usage = |m: String| Err(Failure::Usage(m));
    let actions = [args.list, args.describe, args.delete, args.reset_offsets];
    if args.connect.bootstrap_server.is_none() {
        return usage("Missing required argument \"[bootstrap-server]\"".into());
    }
    let selected = args.all_groups || !args.group.is_empty();
    if args.describe {
        if !selected {
            return usage(
                "Option [describe] takes one of these options: [all-groups], [group]".into(),
            );
        }
        let views = [args.members, args.offsets, args.state.is_some()];
        if views.iter().filter(|v| **v).count() > 1 {
            return usage(
                "Option [describe] takes at most one of these options: [members], [offsets], [state]"
                    .into(),
            );
        }
        if args.state.as_deref().is_some_and(|s| !s.is_empty()) {
            return usage("Option [describe] does not take a value for [state]".into());
        }
    }
    if (args.members || args.verbose || args.offsets) && !args.describe {
        return usage(
            "Option [members], [verbose] and [offsets] are only available with [describe]".into(),
        );
    }
    if args.state.is_some() && !(args.describe || args.list) {
        return usage("Option [state] is only available with [describe] or [list]".into());
    }
    if args.group_type.is_some() && !args.list {
        return usage("Option [type] is only available with [list]".into());
    }
    if args.delete {
        if !selected {
            return usage(
                "Option [delete] takes one of these options: [all-groups], [group]".into(),
            );
        }
        if !args.topic.is_empty() {
            return usage(
                "The consumer does not support topic-specific offset deletion from a consumer group."
                    .into(),
            );
        }
    }
    if args.reset_offsets {
        if args.dry_run && args.execute {
            return usage(
                "Option [reset-offsets] only accepts one of [execute] and [dry-run]".into(),
            );
        }
        if !args.dry_run && !args.execute {
            eprintln!(
                "WARN: No action will be performed as the --execute option is missing. In version 5.0, this command will require either --dry-run or --execute to be specified. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without executing."
            );
        }
        if !selected {
            return usage(
                "Option [reset-offsets] takes one of these options: [all-groups], [group]".into(),
            );
        }
        if scenarios(args) > 1 {
            return usage(
                "Option [reset-offsets] takes one of these scenarios: [to-offset], [shift-by], [to-datetime], [by-duration], [to-earliest], [to-latest], [to-current]"
                    .into(),
            );
        }
    }
    if !args.group.is_empty() && args.all_groups {
        return usage("Option \"[group]\" can't be used with option \"[all-groups]\"".into());
    }
    if !args.group.is_empty() && args.list {
        return usage("Option \"[group]\" can't be used with option \"[list]\"".into());
    }
    if !args.topic.is_empty() && (args.list || args.describe) {
        return usage(
            "Option \"[topic]\" can't be used with option \"[list]\" or \"[describe]\"".into(),
        );
    }
    if actions.iter().filter(|a| **a).count() != 1 {
        return usage(
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets, --validate-regex"
                .into(),
        );
    }
    Ok(())
}

fn scenarios(args: &GroupsArgs) -> usize {
    [
        args.to_offset.is_some(),
        args.shift_by.is_some(),
        args.to_datetime.is_some(),
        args.by_duration.is_some(),
        args.to_earliest,
        args.to_latest,
        args.to_current,
    ]
    .iter()
    .filter(|s| **s)
    .count()
}

/// A failed request as Kafka's tool reports it (`ExecutionException` text: the Java class of
/// the cause and its message).
fn failed(e: AdminError) -> Failure {
    Failure::Command(format!(
        "Executing consumer group command failed due to {}",
        exception_text(&e)
    ))
}

fn exception_text(e: &AdminError) -> String {
    match e {
        AdminError::Kafka { code, message } => format!("{}: {message}", java_exception(*code)),
        other => format!("org.apache.kafka.common.KafkaException: {other}"),
    }
}

async fn execute(args: &GroupsArgs) -> Outcome {
    let mut client = args.connect.connect().await.map_err(|e| {
        Failure::Command(format!(
            "Executing consumer group command failed due to org.apache.kafka.common.KafkaException: {e}"
        ))
    })?;
    if args.list {
        list(&mut client, args).await
    } else if args.describe {
        describe(&mut client, args).await
    } else if args.delete {
        delete(&mut client, args).await
    } else {
        reset(&mut client, args).await
    }
}

/// Consumer groups (classic groups of the consumer protocol, and KIP-848 groups), as Kafka's
/// `ListGroupsOptions.forConsumerGroups()` lists them.
async fn consumer_groups(client: &mut AdminClient) -> Result<Vec<GroupListing>, Failure> {
    let groups = client
        .list_groups(&["consumer", "classic"])
        .await
        .map_err(failed)?;
    Ok(groups
        .into_iter()
        .filter(|g| {
            ["consumer", "classic", ""].contains(&g.group_type.as_str())
                && (g.protocol_type.is_empty() || g.protocol_type == "consumer")
        })
        .collect())
}

async fn selected_groups(
    client: &mut AdminClient,
    args: &GroupsArgs,
) -> Result<Vec<String>, Failure> {
    if args.all_groups {
        Ok(consumer_groups(client)
            .await?
            .into_iter()
            .map(|g| g.group_id)
            .collect())
    } else {
        Ok(args.group.clone())
    }
}

/// Kafka's `GroupType.toString`: `Classic`, `Consumer`, ...
fn type_text(group: &GroupListing) -> String {
    let kind = if group.group_type.is_empty() {
        "classic"
    } else {
        group.group_type.as_str()
    };
    let mut chars = kind.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => "Unknown".into(),
    }
}

async fn list(client: &mut AdminClient, args: &GroupsArgs) -> Outcome {
    let mut groups = consumer_groups(client).await?;
    let parse_list = |text: &Option<String>| -> BTreeSet<String> {
        text.as_deref()
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let states = parse_list(&args.state);
    let types = parse_list(&args.group_type);
    const STATES: &[&str] = &[
        "preparingrebalance",
        "completingrebalance",
        "stable",
        "dead",
        "empty",
        "assigning",
        "reconciling",
    ];
    if let Some(bad) = states.iter().find(|s| !STATES.contains(&s.as_str())) {
        return Err(Failure::Usage(format!(
            "Invalid state list '{bad}'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling"
        )));
    }
    if let Some(bad) = types.iter().find(|t| *t != "classic" && *t != "consumer") {
        return Err(Failure::Usage(format!(
            "Invalid types list '{bad}'. Valid types are: Classic, Consumer"
        )));
    }
    groups.retain(|g| {
        (states.is_empty() || states.contains(&g.state.to_ascii_lowercase()))
            && (types.is_empty() || types.contains(&type_text(g).to_ascii_lowercase()))
    });
    if args.output == Output::Json {
        let items: Vec<serde_json::Value> = groups
            .iter()
            .map(|g| serde_json::json!({"group": g.group_id, "type": type_text(g), "state": g.state}))
            .collect();
        println!("{}", serde_json::Value::Array(items));
        return Ok(());
    }
    let with_type = args.group_type.is_some();
    let with_state = args.state.is_some();
    if !with_type && !with_state {
        for group in &groups {
            println!("{}", group.group_id);
        }
        return Ok(());
    }
    let width = groups
        .iter()
        .map(|g| g.group_id.len().max(15))
        .max()
        .unwrap_or(15)
        + 10;
    let line = |id: &str, kind: &str, state: &str| {
        let mut text = format!("{id:<width$}");
        if with_type {
            text.push_str(&format!(" {kind:<20}"));
        }
        if with_state {
            text.push_str(&format!(" {state:<20}"));
        }
        text
    };
    println!("{}", line("GROUP", "TYPE", "STATE"));
    for group in &groups {
        println!("{}", line(&group.group_id, &type_text(group), &group.state));
    }
    Ok(())
}

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

async fn describe(client: &mut AdminClient, args: &GroupsArgs) -> Outcome {
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
        |m: &super::client::GroupMember| m.assignment.values().map(Vec::len).sum::<usize>();
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
    let width = |f: &dyn Fn(&super::client::GroupMember) -> usize, least: usize| {
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

async fn delete(client: &mut AdminClient, args: &GroupsArgs) -> Outcome {
    let groups = selected_groups(client, args).await?;
    let results = client.delete_groups(&groups).await.map_err(failed)?;
    let quoted = |names: Vec<&String>| {
        names
            .iter()
            .map(|g| format!("'{g}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let succeeded: Vec<&String> = results
        .iter()
        .filter(|(_, c)| *c == 0)
        .map(|(g, _)| g)
        .collect();
    let failures: Vec<&(String, i16)> = results.iter().filter(|(_, c)| *c != 0).collect();
    if failures.is_empty() {
        println!(
            "Deletion of requested consumer groups ({}) was successful.",
            quoted(succeeded)
        );
        return Ok(());
    }
    print_error("Deletion of some consumer groups failed:");
    for (group, code) in &failures {
        println!(
            "* Group '{group}' could not be deleted due to: {}: {}",
            java_exception(*code),
            default_message(*code)
        );
    }
    if !succeeded.is_empty() {
        println!(
            "\nThese consumer groups were deleted successfully: {}",
            quoted(succeeded)
        );
    }
    Ok(())
}

/// A group's new offsets, by topic and partition.
type ResetPlan = BTreeMap<(String, i32), i64>;

async fn reset(client: &mut AdminClient, args: &GroupsArgs) -> Outcome {
    if scenarios(args) == 0 {
        return Err(Failure::Usage(
            "Option '[reset-offsets]' requires one of the following scenarios: [to-offset], [shift-by], [to-datetime], [by-duration], [to-earliest], [to-latest], [to-current], [from-file]"
                .into(),
        ));
    }
    let groups = selected_groups(client, args).await?;
    let mut plans: Vec<(String, ResetPlan)> = Vec::new();
    for group in groups {
        let state = match client.describe_group(&group).await {
            Ok(description) => description.state,
            // A group that does not exist is reset (and, with --execute, made) as an empty one.
            Err(e) if e.code() == Some(69) => "Dead".to_string(),
            Err(e) => return Err(failed(e)),
        };
        if state != "Empty" && state != "Dead" {
            print_error(&format!(
                "Assignments can only be reset if the group '{group}' is inactive, but the current state is {state}."
            ));
            plans.push((group, BTreeMap::new()));
            continue;
        }
        let plan = reset_plan(client, args, &group).await?;
        if args.execute {
            let offsets: Vec<(String, i32, i64)> =
                plan.iter().map(|((t, p), o)| (t.clone(), *p, *o)).collect();
            client.commit_offsets(&group, &offsets).await.map_err(|e| {
                Failure::Command(format!(
                    "Executing consumer group command failed due to {e}"
                ))
            })?;
        }
        plans.push((group, plan));
    }
    if args.export {
        let single = args.group.len() == 1;
        let mut out = String::new();
        for (group, plan) in &plans {
            for ((topic, partition), offset) in plan {
                if single {
                    out.push_str(&format!("{topic},{partition},{offset}\n"));
                } else {
                    out.push_str(&format!("{group},{topic},{partition},{offset}\n"));
                }
            }
        }
        println!("{out}");
        return Ok(());
    }
    let group_width = plans
        .iter()
        .map(|(g, _)| g.len())
        .chain([15])
        .max()
        .unwrap_or(15);
    let topic_width = plans
        .iter()
        .flat_map(|(_, p)| p.keys().map(|(t, _)| t.len()))
        .chain([15])
        .max()
        .unwrap_or(15);
    let mut out = String::new();
    if !plans.is_empty() {
        out.push_str(&format!(
            "\n{:<group_width$} {:<topic_width$} {:<10} NEW-OFFSET",
            "GROUP", "TOPIC", "PARTITION"
        ));
    }
    for (group, plan) in &plans {
        for ((topic, partition), offset) in plan {
            out.push_str(&format!(
                "\n{group:<group_width$} {topic:<topic_width$} {partition:<10} {offset}"
            ));
        }
    }
    println!("{out}");
    Ok(())
}

/// The partitions --all-topics or --topic name, checked to exist and have a leader.
async fn partitions_to_reset(
    client: &mut AdminClient,
    args: &GroupsArgs,
    committed: &[CommittedOffset],
) -> Result<Vec<(String, i32)>, Failure> {
    let plain = |message: String| {
        Failure::Command(format!(
            "Executing consumer group command failed due to {message}"
        ))
    };
    let mut partitions = Vec::new();
    if args.all_topics {
        partitions.extend(committed.iter().map(|c| (c.topic.clone(), c.partition)));
    } else if !args.topic.is_empty() {
        let mut whole_topics = Vec::new();
        for arg in &args.topic {
            match arg.split_once(':') {
                Some((topic, list)) => {
                    for item in list.split(',') {
                        let partition = item.trim().parse::<i32>().map_err(|_| {
                            Failure::Usage(format!(
                                "Invalid partition '{item}' specified in topic arg '{arg}''"
                            ))
                        })?;
                        partitions.push((topic.to_string(), partition));
                    }
                }
                None => whole_topics.push(arg.clone()),
            }
        }
        if !whole_topics.is_empty() {
            let described = client
                .describe_topics(&whole_topics)
                .await
                .map_err(|e| plain(e.to_string()))?;
            for topic in described {
                partitions.extend(
                    topic
                        .partitions
                        .iter()
                        .map(|p| (topic.name.clone(), p.partition)),
                );
            }
        }
    } else {
        return Err(Failure::Usage(
            "One of the reset scopes should be defined: --all-topics, --topic.".into(),
        ));
    }
    let mut topics: Vec<String> = partitions.iter().map(|(t, _)| t.clone()).collect();
    topics.sort();
    topics.dedup();
    if topics.is_empty() {
        return Ok(partitions);
    }
    let described = client
        .describe_topics(&topics)
        .await
        .map_err(|e| plain(e.to_string()))?;
    let mut existing = BTreeMap::new();
    for topic in &described {
        for p in &topic.partitions {
            existing.insert((topic.name.clone(), p.partition), p.leader.is_some());
        }
    }
    let name = |(t, p): &(String, i32)| format!("{t}-{p}");
    let missing: Vec<String> = partitions
        .iter()
        .filter(|tp| !existing.contains_key(*tp))
        .map(name)
        .collect();
    if !missing.is_empty() {
        return Err(plain(format!(
            "The partitions \"{}\" do not exist",
            missing.join(",")
        )));
    }
    let leaderless: Vec<String> = partitions
        .iter()
        .filter(|tp| existing.get(*tp) == Some(&false))
        .map(name)
        .collect();
    if !leaderless.is_empty() {
        return Err(plain(format!(
            "The partitions \"{}\" have no leader",
            leaderless.join(",")
        )));
    }
    Ok(partitions)
}

/// The new offset of each partition, by the scenario asked for.
async fn reset_plan(
    client: &mut AdminClient,
    args: &GroupsArgs,
    group: &str,
) -> Result<BTreeMap<(String, i32), i64>, Failure> {
    let committed = client.committed_offsets(group).await.map_err(failed)?;
    let partitions = partitions_to_reset(client, args, &committed).await?;
    let current: BTreeMap<(String, i32), i64> = committed
        .iter()
        .map(|c| ((c.topic.clone(), c.partition), c.offset))
        .collect();
    let mut plan = BTreeMap::new();
    if let Some(target) = args.to_offset {
        let requested = partitions.iter().map(|tp| (tp.clone(), target)).collect();
        return clamp(client, requested, &partitions).await;
    }
    if let Some(shift) = args.shift_by {
        let mut requested = BTreeMap::new();
        for tp in &partitions {
            let offset = current.get(tp).ok_or_else(|| {
                Failure::Usage(format!(
                    "Cannot shift offset for partition {}-{} since there is no current committed offset",
                    tp.0, tp.1
                ))
            })?;
            requested.insert(tp.clone(), offset + shift);
        }
        return clamp(client, requested, &partitions).await;
    }
    if args.to_earliest || args.to_latest {
        let spec = if args.to_earliest {
            OffsetSpec::Earliest
        } else {
            OffsetSpec::Latest
        };
        for (tp, offset) in offsets(client, &partitions, spec).await? {
            plan.insert(tp, offset.unwrap_or(0));
        }
        return Ok(plan);
    }
    if args.to_current {
        let ends = offsets(client, &partitions, OffsetSpec::Latest).await?;
        for tp in &partitions {
            let offset = match current.get(tp) {
                Some(offset) => *offset,
                None => ends.get(tp).copied().flatten().unwrap_or(0),
            };
            plan.insert(tp.clone(), offset);
        }
        return Ok(plan);
    }
    let timestamp = match (&args.to_datetime, &args.by_duration) {
        (Some(text), _) => parse_datetime(text).map_err(Failure::Usage)?,
        (_, Some(text)) => {
            let ago = parse_duration_ms(text).map_err(Failure::Usage)?;
            crate::types::now_ms() - ago
        }
        _ => return Ok(plan),
    };
    let found = offsets(client, &partitions, OffsetSpec::Timestamp(timestamp)).await?;
    let ends = offsets(client, &partitions, OffsetSpec::Latest).await?;
    for tp in &partitions {
        match found.get(tp).copied().flatten() {
            Some(offset) => {
                plan.insert(tp.clone(), offset);
            }
            None => {
                println!(
                    "\nWarn: Partition {} from topic {} is empty. Falling back to latest known offset.",
                    tp.1, tp.0
                );
                plan.insert(tp.clone(), ends.get(tp).copied().flatten().unwrap_or(0));
            }
        }
    }
    Ok(plan)
}

async fn offsets(
    client: &mut AdminClient,
    partitions: &[(String, i32)],
    spec: OffsetSpec,
) -> Result<BTreeMap<(String, i32), Option<i64>>, Failure> {
    client.list_offsets(partitions, spec).await.map_err(failed)
}

/// Kafka's `checkOffsetsRange`: requested offsets moved into [log start, log end].
async fn clamp(
    client: &mut AdminClient,
    requested: BTreeMap<(String, i32), i64>,
    partitions: &[(String, i32)],
) -> Result<BTreeMap<(String, i32), i64>, Failure> {
    let starts = client
        .list_offsets(partitions, OffsetSpec::Earliest)
        .await
        .map_err(failed)?;
    let ends = client
        .list_offsets(partitions, OffsetSpec::Latest)
        .await
        .map_err(failed)?;
    Ok(requested
        .into_iter()
        .map(|(tp, offset)| {
            let end = ends.get(&tp).copied().flatten();
            let start = starts.get(&tp).copied().flatten();
            let offset = match (start, end) {
                (_, Some(end)) if offset > end => end,
                (Some(start), _) if offset < start => start,
                _ => offset,
            };
            (tp, offset)
        })
        .collect())
}

/// Kafka's `Utils.getDateTime`: `yyyy-MM-ddTHH:mm:ss[.SSS]` with an optional zone (`Z`,
/// `+hh:mm`, `+hhmm`); without one, UTC here (Kafka's tool takes the JVM's zone).
fn parse_datetime(text: &str) -> Result<i64, String> {
    let invalid =
        || format!("Error parsing date: {text}. Expected format: yyyy-MM-dd'T'HH:mm:ss.SSS");
    let (date, time) = text.split_once('T').ok_or_else(invalid)?;
    let mut date_parts = date.split('-').map(str::parse::<i64>);
    let (Some(Ok(year)), Some(Ok(month)), Some(Ok(day)), None) = (
        date_parts.next(),
        date_parts.next(),
        date_parts.next(),
        date_parts.next(),
    ) else {
        return Err(invalid());
    };
    let (clock, offset_minutes) = match time.find(['Z', '+', '-']) {
        Some(at) => {
            let zone = &time[at..];
            let minutes = if zone == "Z" {
                0
            } else {
                let sign = if zone.starts_with('-') { -1 } else { 1 };
                let digits: String = zone[1..].chars().filter(char::is_ascii_digit).collect();
                if digits.len() != 4 {
                    return Err(invalid());
                }
                let hours: i64 = digits[..2].parse().map_err(|_| invalid())?;
                let minutes: i64 = digits[2..].parse().map_err(|_| invalid())?;
                sign * (hours * 60 + minutes)
            };
            (&time[..at], minutes)
        }
        None => (time, 0),
    };
    let (hms, millis) = match clock.split_once('.') {
        Some((hms, fraction)) => (
            hms,
            format!("{fraction:0<3}")[..3]
                .parse::<i64>()
                .map_err(|_| invalid())?,
        ),
        None => (clock, 0),
    };
    let mut parts = hms.split(':').map(str::parse::<i64>);
    let (Some(Ok(hour)), Some(Ok(minute)), Some(Ok(second)), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid());
    };
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(invalid());
    }
    let days = days_from_civil(year, month, day);
    Ok(
        ((days * 86_400 + hour * 3_600 + minute * 60 + second) - offset_minutes * 60) * 1_000
            + millis,
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An ISO-8601 duration as Java's `Duration.parse` reads it (`PnDTnHnMn.nS`), in ms.
fn parse_duration_ms(text: &str) -> Result<i64, String> {
    let invalid = || format!("Text cannot be parsed to a Duration: {text}");
    let upper = text.to_ascii_uppercase();
    let (negative, rest) = match upper.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, upper.trim_start_matches('+')),
    };
    let rest = rest.strip_prefix('P').ok_or_else(invalid)?;
    let (days_part, time_part) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut ms: f64 = 0.0;
    let mut any = false;
    let mut take = |part: &str, units: &[(char, f64)]| -> Result<(), String> {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' || c == '-' {
                number.push(c);
                continue;
            }
            let unit = units.iter().find(|(u, _)| *u == c).ok_or_else(invalid)?;
            let value: f64 = number.parse().map_err(|_| invalid())?;
            ms += value * unit.1;
            any = true;
            number.clear();
        }
        if number.is_empty() {
            Ok(())
        } else {
            Err(invalid())
        }
    };
    take(days_part, &[('D', 86_400_000.0)])?;
    if let Some(time) = time_part {
        if time.is_empty() {
            return Err(invalid());
        }
        take(time, &[('H', 3_600_000.0), ('M', 60_000.0), ('S', 1_000.0)])?;
    }
    if !any {
        return Err(invalid());
    }
    let ms = ms.round() as i64;
    Ok(if negative { -ms } else { ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes_parse_as_kafkas() {
        assert_eq!(parse_datetime("1970-01-01T00:00:00").unwrap(), 0);
        assert_eq!(parse_datetime("1970-01-01T00:00:01.5").unwrap(), 1_500);
        assert_eq!(
            parse_datetime("2024-03-01T10:00:00.000Z").unwrap(),
            1_709_287_200_000
        );
        assert_eq!(
            parse_datetime("2024-03-01T12:00:00.000+02:00").unwrap(),
            1_709_287_200_000
        );
        assert!(parse_datetime("yesterday").is_err());
        assert!(parse_datetime("2024-13-01T00:00:00").is_err());
    }

    #[test]
    fn durations_parse_as_javas() {
        assert_eq!(parse_duration_ms("PT1H").unwrap(), 3_600_000);
        assert_eq!(
            parse_duration_ms("P1DT2M3.5S").unwrap(),
            86_400_000 + 120_000 + 3_500
        );
        assert_eq!(parse_duration_ms("pt10m").unwrap(), 600_000);
        assert!(parse_duration_ms("P").is_err());
        assert!(parse_duration_ms("1H").is_err());
    }

    #[test]
    fn assignments_print_as_kafkas() {
        let mut assignment = BTreeMap::new();
        assignment.insert("orders".to_string(), vec![2, 0]);
        assignment.insert("events".to_string(), vec![1]);
        assert_eq!(assignment_text(&assignment), "events:1;orders:0,2");
        assert_eq!(assignment_text(&BTreeMap::new()), "-");
    }

    #[test]
    fn kafkas_argument_checks() {
        let base = GroupsArgs {
            connect: ConnectArgs {
                bootstrap_server: Some("127.0.0.1:9092".into()),
                command_config: None,
            },
            timeout: 30_000,
            ..Default::default()
        };
        assert!(matches!(check(&base), Err(Failure::Usage(_))));
        let list = GroupsArgs {
            list: true,
            ..base.clone()
        };
        assert!(check(&list).is_ok());
        let describe = GroupsArgs {
            describe: true,
            ..base.clone()
        };
        assert!(matches!(check(&describe), Err(Failure::Usage(_))));
        let both_views = GroupsArgs {
            describe: true,
            group: vec!["g".into()],
            members: true,
            offsets: true,
            ..base.clone()
        };
        assert!(matches!(check(&both_views), Err(Failure::Usage(_))));
        let reset = GroupsArgs {
            reset_offsets: true,
            group: vec!["g".into()],
            to_earliest: true,
            to_latest: true,
            ..base
        };
        assert!(matches!(check(&reset), Err(Failure::Usage(_))));
    }
}
