//! `sluice groups`, and `kafka-consumer-groups` / `kafka-consumer-groups.sh` in the image:
//! Kafka's ConsumerGroupCommand with its flags, checks and output — `--list` (with `--state`
//! and `--type`), `--describe` of offsets and lag, members (`--verbose`: epochs and
//! assignments) or state, `--reset-offsets` (to an offset, the earliest, the latest, the
//! current, a date-time, a duration ago, or shifted; a dry run unless `--execute`; `--export`
//! as CSV), `--delete`, and `--delete-offsets`. `--output json` prints what --list and
//! --describe found as JSON.
//!
//! Exit codes: under Kafka's script name, Kafka's (1 for a bad command line; 0 when the
//! command itself fails, after `Error: ...` on standard output — what scripts written against
//! Kafka's tool expect); as `sluice groups`, 1 whenever the command failed. Not built:
//! `--from-file`, `--validate-regex`.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the flags and Kafka's checks, `--list`, `--delete`, errors and exit codes |
//! | `describe.rs` | `--describe`: offsets and lag, members, state |
//! | `reset.rs` | `--reset-offsets`: partitions, new offsets by scenario, `--execute`, `--export` |
//! | `delete_offsets.rs` | `--delete-offsets`: a group's offsets of some partitions, each one's status |

use super::client::{AdminClient, AdminError, GroupListing, default_message, java_exception};
use super::cluster::ConnectArgs;
use super::output::Output;
use clap::Args;
use std::collections::BTreeSet;

mod delete_offsets;
mod describe;
mod reset;

use delete_offsets::delete_offsets;
use describe::describe;
use reset::reset;

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
    /// Delete offsets of consumer group. Supports one consumer group at the time, and
    /// multiple topics.
    #[arg(long = "delete-offsets")]
    pub delete_offsets: bool,
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
    let actions = [
        args.list,
        args.describe,
        args.delete,
        args.reset_offsets,
        args.delete_offsets,
    ];
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
    if args.delete_offsets && (args.group.is_empty() || args.topic.is_empty()) {
        return usage(
            "Option [delete-offsets] takes the following options: [group], [topic]".into(),
        );
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

/// A `--topic` argument: `topic` (every partition: None) or `topic:0,1,2`, refused as Kafka's
/// `parseTopicsWithPartitions` refuses a bad partition.
fn topic_partitions(arg: &str) -> Result<(String, Option<Vec<i32>>), Failure> {
    let Some((topic, list)) = arg.split_once(':') else {
        return Ok((arg.to_string(), None));
    };
    let partitions = list
        .split(',')
        .map(|item| {
            item.trim().parse::<i32>().map_err(|_| {
                Failure::Usage(format!(
                    "Invalid partition '{item}' specified in topic arg '{arg}''"
                ))
            })
        })
        .collect::<Result<Vec<i32>, Failure>>()?;
    Ok((topic.to_string(), Some(partitions)))
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
    } else if args.delete_offsets {
        delete_offsets(&mut client, args).await
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

#[cfg(test)]
mod tests {
    use super::*;

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
