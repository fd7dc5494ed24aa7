//! `--delete-offsets --group G --topic T[:P,...]`: a group's committed offsets deleted for the
//! given partitions (whole topics: every partition), as Kafka's ConsumerGroupCommand does it —
//! the group's outcome in one line, then each partition's status in Kafka's table (a topic
//! that cannot be described is one row with partition `-`).

use super::{Failure, GroupsArgs, Outcome, default_message, failed, java_exception, print_error};
use crate::cli::client::AdminClient;
use std::collections::BTreeMap;

const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
const GROUP_AUTHORIZATION_FAILED: i16 = 30;
const INVALID_GROUP_ID: i16 = 24;
const GROUP_ID_NOT_FOUND: i16 = 69;
const NON_EMPTY_GROUP: i16 = 68;
const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
const GROUP_SUBSCRIBED_TO_TOPIC: i16 = 86;

pub(super) async fn delete_offsets(client: &mut AdminClient, args: &GroupsArgs) -> Outcome {
    let Some(group) = args.group.first() else {
        return Err(Failure::Usage(
            "Option [delete-offsets] takes the following options: [group], [topic]".into(),
        ));
    };
    // Per partition (-1: the whole topic could not be described): None = deleted, else the
    // error code.
    let mut statuses: BTreeMap<(String, i32), Option<i16>> = BTreeMap::new();
    let mut partitions = Vec::new();
    for arg in &args.topic {
        match super::topic_partitions(arg)? {
            (topic, Some(listed)) => {
                partitions.extend(listed.into_iter().map(|p| (topic.clone(), p)));
            }
            (_, None) => match client.describe_topics(std::slice::from_ref(arg)).await {
                Ok(described) => {
                    for topic in described {
                        partitions.extend(
                            topic
                                .partitions
                                .iter()
                                .map(|p| (topic.name.clone(), p.partition)),
                        );
                    }
                }
                Err(e) => {
                    let code = e.code().ok_or_else(|| failed(e))?;
                    statuses.insert((arg.clone(), -1), Some(code));
                }
            },
        }
    }
    partitions.sort();
    partitions.dedup();
    let (group_error, results) = client
        .delete_offsets(group, &partitions)
        .await
        .map_err(failed)?;
    for (partition, code) in results {
        statuses.insert(partition, (code != 0).then_some(code));
    }
    // Kafka's summary: the group's error, else the first partition's (all() fails with it).
    let summary = if group_error != 0 {
        group_error
    } else {
        statuses
            .iter()
            .filter(|((_, p), _)| *p >= 0)
            .find_map(|(_, code)| *code)
            .unwrap_or(0)
    };
    match summary {
        0 => println!("Request succeeded for deleting offsets from group {group}."),
        INVALID_GROUP_ID | GROUP_ID_NOT_FOUND | GROUP_AUTHORIZATION_FAILED | NON_EMPTY_GROUP => {
            print_error(default_message(summary))
        }
        GROUP_SUBSCRIBED_TO_TOPIC | TOPIC_AUTHORIZATION_FAILED | UNKNOWN_TOPIC_OR_PARTITION => {
            print_error("Encountered some partition-level error, see the follow-up details.")
        }
        other => print_error(&format!(
            "Encountered some unknown error: {}",
            error_name(other)
        )),
    }
    print!("{}", table(&statuses));
    Ok(())
}

/// Kafka's `Errors` constant name for the codes OffsetDelete answers.
fn error_name(code: i16) -> String {
    match code {
        15 => "COORDINATOR_NOT_AVAILABLE".into(),
        14 => "COORDINATOR_LOAD_IN_PROGRESS".into(),
        16 => "NOT_COORDINATOR".into(),
        42 => "INVALID_REQUEST".into(),
        other => format!("UNKNOWN_SERVER_ERROR ({other})"),
    }
}

/// Kafka's table: `%n%-Ns %-10s %-15s` per row (N the longest topic, at least 15), rows in
/// the order of topic and partition written together as text, then a line end.
fn table(statuses: &BTreeMap<(String, i32), Option<i16>>) -> String {
    let width = statuses
        .keys()
        .map(|(t, _)| t.len())
        .max()
        .unwrap_or(0)
        .max(15);
    let mut rows: Vec<(&(String, i32), &Option<i16>)> = statuses.iter().collect();
    rows.sort_by_key(|((topic, partition), _)| format!("{topic}{partition}"));
    let mut text = format!("\n{:<width$} {:<10} {:<15}", "TOPIC", "PARTITION", "STATUS");
    for ((topic, partition), code) in rows {
        let partition = if *partition >= 0 {
            partition.to_string()
        } else {
            "-".into()
        };
        let status = match code {
            None => "Successful".to_string(),
            Some(code) => format!(
                "Error: {}: {}",
                java_exception(*code),
                default_message(*code)
            ),
        };
        text.push_str(&format!("\n{topic:<width$} {partition:<10} {status:<15}"));
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_print_as_kafkas_table() {
        let statuses = BTreeMap::from([
            (("orders".to_string(), 10), None),
            (("orders".to_string(), 2), Some(GROUP_SUBSCRIBED_TO_TOPIC)),
            (
                ("missing".to_string(), -1),
                Some(UNKNOWN_TOPIC_OR_PARTITION),
            ),
        ]);
        let text = table(&statuses);
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0], "");
        assert_eq!(lines[1], "TOPIC           PARTITION  STATUS         ");
        assert_eq!(
            lines[2],
            "missing         -          Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition."
        );
        // "orders10" sorts before "orders2", as Kafka's string comparison has it.
        assert!(lines[3].starts_with("orders          10         Successful"));
        assert!(lines[4].starts_with("orders          2          Error: "));
        assert_eq!(lines[5], "");
    }
}
