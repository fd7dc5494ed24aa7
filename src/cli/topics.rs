//! `sluice topics`, and `kafka-topics` / `kafka-topics.sh` in the image: Kafka's TopicCommand
//! with its flags, checks, messages, output formats and exit codes (0, or 1 with
//! `Error while executing topic command : ...` on standard output), so that scripts written
//! against Kafka's tool read ours. `--topic` is a regular expression matched against whole
//! names (`,` means `|`), as Kafka's IncludeList; `--list` and `--describe` take all topics
//! without it. Internal topics: `__consumer_offsets`, `__transaction_state`,
//! `__share_group_state`. Not built: `--topic-id`.

use super::client::{
    AdminClient, AdminError, ConfigEntry, DEFAULT_CONFIG_SOURCE, NewTopicRequest, PartitionInfo,
};
use super::output::Output;
use crate::net::PeerSecurity;
use clap::Args;
use std::path::PathBuf;

/// Kafka's internal topics (`Topic.INTERNAL_TOPICS`).
const INTERNAL_TOPICS: &[&str] = &[
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

#[derive(Args, Debug, Clone, Default)]
#[command(about = "Create, delete, describe, or change a topic (Kafka's kafka-topics)")]
pub struct TopicsArgs {
    /// REQUIRED: The Kafka server to connect to.
    #[arg(long = "bootstrap-server", value_name = "String: server to connect to")]
    pub bootstrap_server: Option<String>,
    /// Property file containing configs to be passed to Admin Client.
    #[arg(
        long = "command-config",
        value_name = "String: command config property file"
    )]
    pub command_config: Option<PathBuf>,
    /// List all available topics.
    #[arg(long)]
    pub list: bool,
    /// Create a new topic.
    #[arg(long)]
    pub create: bool,
    /// Delete a topic.
    #[arg(long)]
    pub delete: bool,
    /// Alter the number of partitions.
    #[arg(long)]
    pub alter: bool,
    /// List details for the given topics.
    #[arg(long)]
    pub describe: bool,
    /// The topic to create, alter, describe or delete; a regular expression except with
    /// --create.
    #[arg(long, value_name = "String: topic")]
    pub topic: Option<String>,
    /// The topic-id to describe.
    #[arg(long = "topic-id", value_name = "String: topic-id")]
    pub topic_id: Option<String>,
    /// The number of partitions for the topic being created or altered.
    #[arg(long, value_name = "Integer: # of partitions")]
    pub partitions: Option<i32>,
    /// The replication factor for each partition in the topic being created.
    #[arg(
        long = "replication-factor",
        value_name = "Integer: replication factor"
    )]
    pub replication_factor: Option<i32>,
    /// A list of manual partition-to-broker assignments: `1:2,3:4` (partitions by commas,
    /// replicas by colons).
    #[arg(
        long = "replica-assignment",
        value_name = "broker_id_for_part1_replica1 : ..."
    )]
    pub replica_assignment: Option<String>,
    /// A topic configuration override for the topic being created (repeatable).
    #[arg(long = "config", value_name = "String: name=value")]
    pub config: Vec<String>,
    /// With --create: only create the topic if it does not exist.
    #[arg(long = "if-not-exists")]
    pub if_not_exists: bool,
    /// With --alter, --delete or --describe: only act if the topic exists.
    #[arg(long = "if-exists")]
    pub if_exists: bool,
    /// Exclude internal topics when listing or describing.
    #[arg(long = "exclude-internal")]
    pub exclude_internal: bool,
    /// With --describe: only topics that have overridden configs.
    #[arg(long = "topics-with-overrides")]
    pub topics_with_overrides: bool,
    /// With --describe: only partitions whose ISR is smaller than their replicas.
    #[arg(long = "under-replicated-partitions")]
    pub under_replicated_partitions: bool,
    /// With --describe: only partitions whose leader is not available.
    #[arg(long = "unavailable-partitions")]
    pub unavailable_partitions: bool,
    /// With --describe: only partitions whose ISR is smaller than min.insync.replicas.
    #[arg(long = "under-min-isr-partitions")]
    pub under_min_isr_partitions: bool,
    /// With --describe: only partitions whose ISR equals min.insync.replicas.
    #[arg(long = "at-min-isr-partitions")]
    pub at_min_isr_partitions: bool,
    /// How to print --list and --describe: `table` (Kafka's text) or `json`.
    #[arg(long, value_enum, default_value_t = super::output::Output::Table)]
    pub output: super::output::Output,
}

/// What went wrong: a usage error (printed with the command's usage) or a failed command.
#[derive(Debug)]
pub enum TopicsFailure {
    Usage(String),
    Command(String),
}

/// Runs the command, printing what Kafka's tool prints; the exit code.
pub fn run(args: &TopicsArgs) -> i32 {
    match check(args).and_then(|()| execute(args)) {
        Ok(()) => 0,
        Err(TopicsFailure::Usage(message)) => {
            eprintln!("{message}");
            1
        }
        Err(TopicsFailure::Command(message)) => {
            println!("Error while executing topic command : {message}");
            1
        }
    }
}

/// Kafka's `checkArgs`.
fn check(args: &TopicsArgs) -> Result<(), TopicsFailure> {
    let usage = |m: &str| Err(TopicsFailure::Usage(m.to_string()));
    let given = [
        args.create,
        args.list,
        args.alter,
        args.describe,
        args.delete,
    ];
    if args.bootstrap_server.is_none() && args.topic.is_none() && !given.iter().any(|a| *a) {
        return usage("Create, delete, describe, or change a topic. (--help lists the options)");
    }
    let actions = [
        args.create,
        args.list,
        args.alter,
        args.describe,
        args.delete,
    ];
    if actions.iter().filter(|a| **a).count() != 1 {
        return usage(
            "Command must include exactly one action: --list, --describe, --create, --alter or --delete",
        );
    }
    if args.bootstrap_server.is_none() {
        return Err(TopicsFailure::Command(
            "--bootstrap-server must be specified".into(),
        ));
    }
    if args.describe && args.if_exists {
        if args.topic.is_none() && args.topic_id.is_none() {
            return usage("--topic or --topic-id is required to describe a topic");
        }
        if args.topic.is_some() && args.topic_id.is_some() {
            println!(
                "Only topic id will be used when both --topic and --topic-id are specified and topicId is not Uuid.ZERO_UUID"
            );
        }
    }
    if !args.list && !args.describe && args.topic.is_none() {
        return usage("Missing required argument \"[topic]\"");
    }
    if args.alter && args.partitions.is_none() {
        return usage("Missing required argument \"[partitions]\"");
    }
    if args.alter && !args.config.is_empty() {
        return usage(
            "Option \"[alter]\" can't be used with option \"[config]\" (To alter topic configurations, the kafka-configs tool can be used.)",
        );
    }
    let invalid = |option: &str, allowed: &str| {
        Err(TopicsFailure::Usage(format!(
            "Option \"[{option}]\" can't be used with option {allowed}"
        )))
    };
    if !(args.config.is_empty() || args.alter || args.create) {
        return invalid("config", "\"[alter]\" or \"[create]\"");
    }
    if args.partitions.is_some() && !(args.alter || args.create) {
        return invalid("partitions", "\"[alter]\" or \"[create]\"");
    }
    if args.replication_factor.is_some() && !args.create {
        return invalid("replication-factor", "\"[create]\"");
    }
    if args.create
        && args.replica_assignment.is_some()
        && (args.partitions.is_some() || args.replication_factor.is_some())
    {
        return usage(
            "Option \"[replica-assignment]\" can't be used with option \"[partitions]\" or \"[replication-factor]\"",
        );
    }
    if args.if_exists && !(args.alter || args.delete || args.describe) {
        return invalid("if-exists", "\"[alter]\" or \"[delete]\" or \"[describe]\"");
    }
    if args.if_not_exists && !args.create {
        return invalid("if-not-exists", "\"[create]\"");
    }
    Ok(())
}

fn execute(args: &TopicsArgs) -> Result<(), TopicsFailure> {
    let security = command_security(args)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| TopicsFailure::Command(e.to_string()))?;
    runtime.block_on(async {
        let bootstrap = args.bootstrap_server.clone().unwrap_or_default();
        let mut client = AdminClient::connect(&bootstrap, &security)
            .await
            .map_err(failed)?;
        if args.create {
            create(&mut client, args).await
        } else if args.list {
            let topics = matching_topics(&mut client, args).await?;
            if args.output == Output::Json {
                println!("{}", serde_json::json!(topics));
            } else {
                println!("{}", topics.join("\n"));
            }
            Ok(())
        } else if args.describe {
            describe(&mut client, args).await
        } else if args.delete {
            let topics = existing_topics(&mut client, args).await?;
            if topics.is_empty() {
                return Ok(());
            }
            client.delete_topics(&topics).await.map_err(failed)
        } else {
            let topics = existing_topics(&mut client, args).await?;
            if topics.is_empty() {
                return Ok(());
            }
            let count = args.partitions.unwrap_or_default();
            client
                .create_partitions(&topics, count)
                .await
                .map_err(failed)
        }
    })
}

fn failed(e: AdminError) -> TopicsFailure {
    TopicsFailure::Command(e.to_string())
}

/// The connection's security from `--command-config` (Kafka client property names).
fn command_security(args: &TopicsArgs) -> Result<PeerSecurity, TopicsFailure> {
    super::command_config::security(args.command_config.as_deref()).map_err(TopicsFailure::Command)
}

/// Kafka's IncludeList: the pattern with `,` as `|`, spaces and surrounding quotes removed,
/// matched against whole names.
fn include_list(raw: &str) -> Result<regex::Regex, TopicsFailure> {
    let pattern = raw
        .trim()
        .replace(',', "|")
        .replace(' ', "")
        .trim_start_matches(['"', '\''])
        .trim_end_matches(['"', '\''])
        .to_string();
    regex::Regex::new(&format!("^(?:{pattern})$"))
        .map_err(|_| TopicsFailure::Command(format!("{pattern} is an invalid regex.")))
}

/// Kafka's `getTopics`: every topic (sorted), filtered by --topic and --exclude-internal.
async fn matching_topics(
    client: &mut AdminClient,
    args: &TopicsArgs,
) -> Result<Vec<String>, TopicsFailure> {
    let filter = args.topic.as_deref().map(include_list).transpose()?;
    let topics = client.list_topics().await.map_err(failed)?;
    Ok(topics
        .into_iter()
        .map(|t| t.name)
        .filter(|name| !(args.exclude_internal && INTERNAL_TOPICS.contains(&name.as_str())))
        .filter(|name| filter.as_ref().is_none_or(|f| f.is_match(name)))
        .collect())
}

/// [`matching_topics`], failing as Kafka's `ensureTopicExists` when --topic matched nothing
/// and --if-exists was not given.
async fn existing_topics(
    client: &mut AdminClient,
    args: &TopicsArgs,
) -> Result<Vec<String>, TopicsFailure> {
    let topics = matching_topics(client, args).await?;
    if let Some(requested) = args.topic.as_deref().filter(|t| !t.is_empty())
        && !args.if_exists
        && topics.is_empty()
    {
        return Err(TopicsFailure::Command(format!(
            "Topic '{requested}' does not exist as expected"
        )));
    }
    Ok(topics)
}

async fn create(client: &mut AdminClient, args: &TopicsArgs) -> Result<(), TopicsFailure> {
    let name = args.topic.clone().unwrap_or_default();
    if let Some(rf) = args.replication_factor
        && !(1..=i16::MAX as i32).contains(&rf)
    {
        return Err(TopicsFailure::Command(format!(
            "The replication factor must be between 1 and {} inclusive",
            i16::MAX
        )));
    }
    if args.partitions.is_some_and(|p| p < 1) {
        return Err(TopicsFailure::Command(
            "The partitions must be greater than 0".into(),
        ));
    }
    if name.contains('.') || name.contains('_') {
        println!(
            "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both."
        );
    }
    let mut configs = Vec::new();
    for item in &args.config {
        let (key, value) = item.split_once('=').ok_or_else(|| {
            TopicsFailure::Command(
                "Invalid topic config: all configs to be added must be in the format \"key=val\"."
                    .to_string(),
            )
        })?;
        configs.push((key.trim().to_string(), value.trim().to_string()));
    }
    let assignments = match &args.replica_assignment {
        Some(text) => parse_replica_assignment(text)?,
        None => Vec::new(),
    };
    let request = NewTopicRequest {
        name: name.clone(),
        partitions: if assignments.is_empty() {
            args.partitions.unwrap_or(-1)
        } else {
            -1
        },
        replication_factor: if assignments.is_empty() {
            args.replication_factor.map_or(-1, |rf| rf as i16)
        } else {
            -1
        },
        assignments,
        configs,
    };
    match client.create_topic(&request).await {
        Ok(()) => {
            println!("Created topic {name}.");
            Ok(())
        }
        Err(AdminError::Kafka { code: 36, .. }) if args.if_not_exists => Ok(()),
        Err(e) => Err(failed(e)),
    }
}

/// Kafka's `parseReplicaAssignment`: `1:2,3:4` is partition 0 on brokers 1 and 2, partition 1
/// on 3 and 4.
fn parse_replica_assignment(text: &str) -> Result<Vec<(i32, Vec<i32>)>, TopicsFailure> {
    let mut out = Vec::new();
    for (partition, replicas) in text.split(',').enumerate() {
        let brokers = replicas
            .split(':')
            .map(|b| b.trim().parse::<i32>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| TopicsFailure::Command(format!("For input string: {e}")))?;
        let mut unique = brokers.clone();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() != brokers.len() {
            return Err(TopicsFailure::Command(format!(
                "Partition replica lists may not contain duplicate entries: {}",
                brokers
                    .iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )));
        }
        out.push((partition as i32, brokers));
    }
    Ok(out)
}

/// The topic --topic-id names (none when it names none, or fails as Kafka's
/// `ensureTopicIdExists` without --if-exists); `None` when no id (or the all-zero id) was
/// given, and --topic decides.
async fn topic_by_id(
    client: &mut AdminClient,
    args: &TopicsArgs,
) -> Result<Option<Vec<String>>, TopicsFailure> {
    let Some(text) = args.topic_id.as_deref() else {
        return Ok(None);
    };
    let id = parse_kafka_uuid(text).map_err(TopicsFailure::Command)?;
    if id.is_nil() {
        return Ok(None);
    }
    let listed = client.list_topics().await.map_err(failed)?;
    let named: Vec<String> = listed
        .into_iter()
        .filter(|t| t.id == id)
        .filter(|t| !(args.exclude_internal && INTERNAL_TOPICS.contains(&t.name.as_str())))
        .map(|t| t.name)
        .collect();
    if named.is_empty() && !args.if_exists {
        return Err(TopicsFailure::Command(format!(
            "TopicId '{text}' does not exist as expected"
        )));
    }
    Ok(Some(named))
}

/// Kafka's `Uuid.fromString`: URL-safe base64 of 16 bytes, with its messages.
fn parse_kafka_uuid(text: &str) -> Result<uuid::Uuid, String> {
    use base64::Engine;
    if text.len() > 24 {
        return Err(format!(
            "Input string with prefix `{}` is too long to be decoded as a base64 UUID",
            &text[..text.char_indices().nth(24).map_or(text.len(), |(i, _)| i)]
        ));
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .map_err(|e| e.to_string())?;
    uuid::Uuid::from_slice(&bytes).map_err(|_| {
        format!(
            "Input string `{text}` decoded as {} bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID",
            bytes.len()
        )
    })
}

async fn describe(client: &mut AdminClient, args: &TopicsArgs) -> Result<(), TopicsFailure> {
    let by_id = topic_by_id(client, args).await?;
    let from_id = by_id.is_some();
    let topics = match by_id {
        Some(named) => named,
        None => existing_topics(client, args).await?,
    };
    if topics.is_empty() {
        return Ok(());
    }
    let mut descriptions = client.describe_topics(&topics).await.map_err(failed)?;
    if from_id {
        // Kafka's tool describes a topic id through Metadata, which carries no eligible
        // leader replicas: it prints N/A for them.
        for partition in descriptions
            .iter_mut()
            .flat_map(|d| d.partitions.iter_mut())
        {
            partition.elr = None;
            partition.last_known_elr = None;
        }
    }
    // Kafka's tool prints them in its hash map's order; by name here.
    descriptions.sort_by(|a, b| a.name.cmp(&b.name));
    let report_partitions = args.under_replicated_partitions
        || args.unavailable_partitions
        || args.under_min_isr_partitions
        || args.at_min_isr_partitions;
    let describe_configs = !report_partitions;
    let describe_partitions = !args.topics_with_overrides;
    let table = args.output == Output::Table;
    let mut json = Vec::new();
    for mut topic in descriptions {
        let configs = client
            .describe_topic_configs(&topic.name)
            .await
            .map_err(failed)?;
        topic.partitions.sort_by_key(|p| p.partition);
        let Some(first) = topic.partitions.first() else {
            continue;
        };
        let overridden: Vec<&ConfigEntry> = configs
            .iter()
            .filter(|c| c.source != DEFAULT_CONFIG_SOURCE)
            .collect();
        let mut shown_partitions = Vec::new();
        if describe_configs && table && (!args.topics_with_overrides || !overridden.is_empty()) {
            print!("Topic: {}", topic.name);
            if !topic.id.is_nil() {
                print!("\tTopicId: {}", kafka_uuid(&topic.id));
            }
            print!("\tPartitionCount: {}", topic.partitions.len());
            print!("\tReplicationFactor: {}", first.replicas.len());
            let overridden: Vec<String> = overridden
                .iter()
                .map(|c| format!("{}={}", c.name, c.value.as_deref().unwrap_or("null")))
                .collect();
            println!("\tConfigs: {}", overridden.join(","));
        }
        let min_isr = configs
            .iter()
            .find(|c| c.name == "min.insync.replicas")
            .and_then(|c| c.value.as_deref()?.parse::<usize>().ok())
            .unwrap_or(1);
        for partition in topic.partitions.iter().filter(|_| describe_partitions) {
            let shown = describe_configs
                || (args.under_replicated_partitions
                    && partition.replicas.len() > partition.isr.len())
                || (args.unavailable_partitions && partition.leader.is_none())
                || (args.under_min_isr_partitions
                    && (partition.leader.is_none() || partition.isr.len() < min_isr))
                || (args.at_min_isr_partitions && partition.isr.len() == min_isr);
            if shown && table {
                println!("{}", partition_line(&topic.name, partition));
            } else if shown {
                shown_partitions.push(serde_json::json!({
                    "partition": partition.partition, "leader": partition.leader,
                    "replicas": partition.replicas, "isr": partition.isr,
                    "elr": partition.elr, "last_known_elr": partition.last_known_elr,
                }));
            }
        }
        let listed = if args.topics_with_overrides {
            !overridden.is_empty()
        } else {
            !shown_partitions.is_empty() || describe_configs
        };
        if !table && listed {
            json.push(serde_json::json!({
                "topic": topic.name,
                "topic_id": kafka_uuid(&topic.id),
                "partition_count": topic.partitions.len(),
                "replication_factor": first.replicas.len(),
                "configs": overridden
                    .iter()
                    .map(|c| (c.name.clone(), c.value.clone()))
                    .collect::<std::collections::BTreeMap<_, _>>(),
                "partitions": shown_partitions,
            }));
        }
    }
    if !table {
        println!("{}", serde_json::Value::Array(json));
    }
    Ok(())
}

/// One partition as Kafka's `PartitionDescription.printDescription` prints it.
fn partition_line(topic: &str, partition: &PartitionInfo) -> String {
    let ids = |ids: &[i32]| ids.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
    let optional = |ids_or_none: &Option<Vec<i32>>| match ids_or_none {
        Some(list) => ids(list),
        None => "N/A".to_string(),
    };
    format!(
        "\tTopic: {topic}\tPartition: {}\tLeader: {}\tReplicas: {}\tIsr: {}\tElr: {}\tLastKnownElr: {}",
        partition.partition,
        partition
            .leader
            .map_or("none".to_string(), |l| l.to_string()),
        ids(&partition.replicas),
        ids(&partition.isr),
        optional(&partition.elr),
        optional(&partition.last_known_elr),
    )
}

/// A topic id as Kafka prints a `Uuid`: URL-safe base64 of its 16 bytes, no padding.
pub(crate) fn kafka_uuid(id: &uuid::Uuid) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_lists_match_whole_names_as_kafkas() {
        let filter = include_list("orders").unwrap();
        assert!(filter.is_match("orders"));
        assert!(!filter.is_match("orders-2"));
        let filter = include_list("'orders.*, events'").unwrap();
        assert!(filter.is_match("orders-2") && filter.is_match("events"));
        assert!(!filter.is_match("xevents"));
        assert!(include_list("(").is_err());
    }

    #[test]
    fn partition_lines_are_kafkas() {
        let partition = PartitionInfo {
            partition: 2,
            leader: Some(1),
            replicas: vec![1, 2],
            isr: vec![1],
            elr: Some(vec![]),
            last_known_elr: None,
        };
        assert_eq!(
            partition_line("t", &partition),
            "\tTopic: t\tPartition: 2\tLeader: 1\tReplicas: 1,2\tIsr: 1\tElr: \tLastKnownElr: N/A"
        );
        let leaderless = PartitionInfo {
            leader: None,
            ..partition
        };
        assert!(partition_line("t", &leaderless).contains("Leader: none"));
    }

    #[test]
    fn replica_assignments_parse_as_kafkas() {
        assert_eq!(
            parse_replica_assignment("1:2,3:4").unwrap(),
            vec![(0, vec![1, 2]), (1, vec![3, 4])]
        );
        assert!(parse_replica_assignment("1:1").is_err());
        assert!(parse_replica_assignment("x").is_err());
    }

    #[test]
    fn kafkas_argument_checks() {
        let base = TopicsArgs {
            bootstrap_server: Some("127.0.0.1:9092".into()),
            ..Default::default()
        };
        assert!(matches!(check(&base), Err(TopicsFailure::Usage(_))));
        let both = TopicsArgs {
            list: true,
            create: true,
            ..base.clone()
        };
        assert!(matches!(check(&both), Err(TopicsFailure::Usage(_))));
        let create_without_topic = TopicsArgs {
            create: true,
            ..base.clone()
        };
        assert!(matches!(
            check(&create_without_topic),
            Err(TopicsFailure::Usage(_))
        ));
        let list = TopicsArgs {
            list: true,
            ..base.clone()
        };
        assert!(check(&list).is_ok());
        let no_bootstrap = TopicsArgs {
            list: true,
            ..Default::default()
        };
        assert!(matches!(
            check(&no_bootstrap),
            Err(TopicsFailure::Command(_))
        ));
    }
}
