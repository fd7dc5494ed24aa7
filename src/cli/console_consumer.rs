//! `sluice consume`, and `kafka-console-consumer` / `kafka-console-consumer.sh` in the image:
//! a topic's records on standard output as Kafka's `DefaultMessageFormatter` prints them
//! (`--property print.key=true`, `print.timestamp`, `print.partition`, `print.offset`,
//! `print.headers`, `print.value`, `key.separator`, `line.separator`, `headers.separator`,
//! `null.literal`), from the committed offsets of `--group` (a KIP-848 member: the broker
//! assigns the partitions; offsets committed when it stops), from `--partition`/`--offset`, or
//! from the start (`--from-beginning`) or the end of every partition. Stops after
//! `--max-messages`, after `--timeout-ms` without a record, or on SIGINT/SIGTERM, then prints
//! `Processed a total of N messages` on standard error as Kafka's tool. Without `--group` no
//! group is made (Kafka's tool makes a random `console-consumer-N` one). Not built: custom
//! formatters and deserializers, `--isolation-level read_committed` filtering of aborted
//! records.

use super::client::{AdminClient, AdminError, FetchedRecord, Membership, OffsetSpec};
use super::cluster::ConnectArgs;
use clap::Args;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Args, Debug, Clone, Default)]
#[command(about = "Print the records of a topic (Kafka's kafka-console-consumer)")]
pub struct ConsumeArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// The topic to consume on.
    #[arg(long)]
    pub topic: Option<String>,
    /// Regular expression specifying list of topics to include for consumption.
    #[arg(long, value_name = "Java regex (String)")]
    pub include: Option<String>,
    /// The partition to consume from (from the end unless --offset or --from-beginning).
    #[arg(long)]
    pub partition: Option<i32>,
    /// The offset to start from: a non-negative number, 'earliest' or 'latest'.
    #[arg(long, value_name = "consume offset")]
    pub offset: Option<String>,
    /// Start with the earliest message present rather than the latest.
    #[arg(long = "from-beginning")]
    pub from_beginning: bool,
    /// The maximum number of messages to consume before exiting.
    #[arg(long = "max-messages", value_name = "num_messages")]
    pub max_messages: Option<i64>,
    /// Exit if no message is available for consumption for this long (ms).
    #[arg(long = "timeout-ms", value_name = "timeout_ms")]
    pub timeout_ms: Option<u64>,
    /// The consumer group id of the consumer.
    #[arg(long, value_name = "consumer group id")]
    pub group: Option<String>,
    /// The properties to initialize the message formatter (repeatable).
    #[arg(long = "formatter-property", value_name = "prop")]
    pub formatter_property: Vec<String>,
    /// Deprecated (Kafka 4.4): --formatter-property.
    #[arg(long = "property", value_name = "prop")]
    pub property: Vec<String>,
    /// Consumer properties (Kafka client names; group.id and the security ones are used).
    #[arg(
        long = "consumer-property",
        alias = "command-property",
        value_name = "consumer_prop"
    )]
    pub consumer_property: Vec<String>,
    /// Consumer config properties file.
    #[arg(long = "consumer.config", value_name = "config file")]
    pub consumer_config: Option<PathBuf>,
    /// read_committed or read_uncommitted (the default).
    #[arg(long = "isolation-level", default_value = "read_uncommitted")]
    pub isolation_level: String,
    /// Skip a message that cannot be printed instead of stopping.
    #[arg(long = "skip-message-on-error")]
    pub skip_message_on_error: bool,
}

/// Kafka's `DefaultMessageFormatter`.
#[derive(Debug, Clone)]
struct Formatter {
    timestamp: bool,
    key: bool,
    value: bool,
    partition: bool,
    offset: bool,
    headers: bool,
    key_separator: Vec<u8>,
    line_separator: Vec<u8>,
    headers_separator: Vec<u8>,
    null_literal: Vec<u8>,
}

impl Formatter {
    fn from_properties(props: &BTreeMap<String, String>) -> Self {
        let flag = |name: &str, default: bool| {
            props
                .get(name)
                .map_or(default, |v| v.trim().eq_ignore_ascii_case("true"))
        };
        // Taken as given, as Kafka's tool takes them (no escapes: a shell passes a tab as is).
        let bytes = |name: &str, default: &str| {
            props
                .get(name)
                .map_or_else(|| default.as_bytes().to_vec(), |v| v.as_bytes().to_vec())
        };
        Self {
            timestamp: flag("print.timestamp", false),
            key: flag("print.key", false),
            value: flag("print.value", true),
            partition: flag("print.partition", false),
            offset: flag("print.offset", false),
            headers: flag("print.headers", false),
            key_separator: bytes("key.separator", "\t"),
            line_separator: bytes("line.separator", "\n"),
            headers_separator: bytes("headers.separator", ","),
            null_literal: bytes("null.literal", "null"),
        }
    }

    fn write(&self, out: &mut Vec<u8>, partition: i32, record: &FetchedRecord) {
        let after = |rest: &[bool]| rest.iter().any(|b| *b);
        let separator = |out: &mut Vec<u8>, column: bool| {
            out.extend_from_slice(if column {
                &self.key_separator
            } else {
                &self.line_separator
            })
        };
        if self.timestamp {
            let kind = if record.log_append_time {
                "LogAppendTime"
            } else {
                "CreateTime"
            };
            out.extend_from_slice(format!("{kind}:{}", record.timestamp).as_bytes());
            separator(
                out,
                after(&[
                    self.partition,
                    self.offset,
                    self.headers,
                    self.key,
                    self.value,
                ]),
            );
        }
        if self.partition {
            out.extend_from_slice(format!("Partition:{partition}").as_bytes());
            separator(
                out,
                after(&[self.offset, self.headers, self.key, self.value]),
            );
        }
        if self.offset {
            out.extend_from_slice(format!("Offset:{}", record.offset).as_bytes());
            separator(out, after(&[self.headers, self.key, self.value]));
        }
        if self.headers {
            if record.headers.is_empty() {
                out.extend_from_slice(b"NO_HEADERS");
            }
            for (i, (name, value)) in record.headers.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(&self.headers_separator);
                }
                out.extend_from_slice(name.as_bytes());
                out.push(b':');
                out.extend_from_slice(value.as_deref().unwrap_or(&self.null_literal));
            }
            separator(out, after(&[self.key, self.value]));
        }
        if self.key {
            out.extend_from_slice(record.key.as_deref().unwrap_or(&self.null_literal));
            separator(out, self.value);
        }
        if self.value {
            out.extend_from_slice(record.value.as_deref().unwrap_or(&self.null_literal));
            out.extend_from_slice(&self.line_separator);
        }
    }
}

/// Runs the command; the exit code.
pub fn run(args: &ConsumeArgs) -> i32 {
    if let Err(message) = check(args) {
        eprintln!("{message}");
        return 1;
    }
    let mut count = 0i64;
    let outcome = super::output::block_on(consume(args, &mut count));
    eprintln!("Processed a total of {count} messages");
    match outcome {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("ERROR Error processing message, terminating consumer process: {message}");
            1
        }
    }
}

/// Kafka's `ConsoleConsumerOptions` checks.
fn check(args: &ConsumeArgs) -> Result<(), String> {
    if args.connect.bootstrap_server.is_none() {
        return Err("Missing required argument \"[bootstrap-server]\"".into());
    }
    if args.topic.is_some() == args.include.is_some() {
        return Err("Exactly one of --include/--topic is required. ".into());
    }
    if args.partition.is_some() && args.topic.is_none() {
        return Err("The topic is required when partition is specified.".into());
    }
    if args.from_beginning && args.offset.is_some() {
        return Err("Options from-beginning and offset cannot be specified together.".into());
    }
    if args.offset.is_some() && args.partition.is_none() {
        return Err("The partition is required when offset is specified.".into());
    }
    if group_of(args).is_some() && args.partition.is_some() {
        return Err("Options group and partition cannot be specified together.".into());
    }
    if let Some(offset) = &args.offset
        && start_of(offset).is_none()
    {
        return Err(format!(
            "The provided offset value '{offset}' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."
        ));
    }
    Ok(())
}

/// `--offset`: where to start.
fn start_of(text: &str) -> Option<Start> {
    match text.trim().to_ascii_lowercase().as_str() {
        "earliest" => Some(Start::Earliest),
        "latest" => Some(Start::Latest),
        number => number
            .parse::<i64>()
            .ok()
            .filter(|n| *n >= 0)
            .map(Start::At),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    Earliest,
    Latest,
    At(i64),
}

/// The group: --group, or group.id among the consumer properties.
fn group_of(args: &ConsumeArgs) -> Option<String> {
    args.group.clone().or_else(|| {
        args.consumer_property
            .iter()
            .find_map(|p| p.strip_prefix("group.id=").map(str::to_string))
    })
}

fn properties(items: &[String]) -> BTreeMap<String, String> {
    items
        .iter()
        .filter_map(|item| item.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .collect()
}

/// How long to wait before asking again about a partition that had no leader to fetch from
/// (Kafka's `retry.backoff.ms` default).
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// A KIP-848 membership kept alive between fetches.
struct Member {
    group: String,
    coordinator: i32,
    member_id: String,
    epoch: i32,
    interval: Duration,
    next_heartbeat: Instant,
}

async fn consume(args: &ConsumeArgs, count: &mut i64) -> Result<(), String> {
    if !args.property.is_empty() {
        // Kafka's tool says so on standard output.
        println!(
            "Option --property is deprecated and will be removed in a future version. Use --formatter-property instead."
        );
    }
    let mut formatter_properties = properties(&args.property);
    formatter_properties.extend(properties(&args.formatter_property));
    let formatter = Formatter::from_properties(&formatter_properties);
    let security = super::console_producer::security_of(
        &args.connect,
        args.consumer_config.as_ref(),
        &args.consumer_property,
    )?;
    let bootstrap = args.connect.bootstrap_server.clone().unwrap_or_default();
    let mut client = AdminClient::connect(&bootstrap, &security)
        .await
        .map_err(|e| e.to_string())?;
    let topics: Vec<String> = match (&args.topic, &args.include) {
        (Some(topic), _) => vec![topic.clone()],
        (None, Some(pattern)) => {
            let pattern = regex::Regex::new(&format!("^(?:{pattern})$"))
                .map_err(|e| format!("Invalid regular expression {pattern}: {e}"))?;
            client
                .list_topics()
                .await
                .map_err(|e| e.to_string())?
                .into_iter()
                .filter(|t| !t.internal && pattern.is_match(&t.name))
                .map(|t| t.name)
                .collect()
        }
        (None, None) => Vec::new(),
    };
    let mut layouts = BTreeMap::new();
    for topic in &topics {
        let layout = client
            .topic_layout(topic, args.topic.is_some())
            .await
            .map_err(|e| e.to_string())?;
        layouts.insert(topic.clone(), layout);
    }
    let reset = if args.from_beginning {
        Start::Earliest
    } else {
        Start::Latest
    };
    let group = group_of(args);
    let mut member = None;
    // (topic, partition) -> next offset to fetch.
    let mut positions: BTreeMap<(String, i32), i64> = BTreeMap::new();
    match (&group, args.partition) {
        (Some(group), _) => {
            let (coordinator, joined) = join(&mut client, group, &topics).await?;
            let mut joined_member = Member {
                group: group.clone(),
                coordinator,
                member_id: joined.member_id.clone(),
                epoch: joined.epoch,
                interval: Duration::from_millis(joined.heartbeat_interval_ms.max(100) as u64),
                next_heartbeat: Instant::now(),
            };
            if let Some(assignment) = joined.assignment {
                apply_assignment(
                    &mut client,
                    group,
                    &layouts,
                    &assignment,
                    &mut positions,
                    reset,
                )
                .await?;
            }
            joined_member.next_heartbeat = Instant::now() + joined_member.interval;
            member = Some(joined_member);
        }
        (None, Some(partition)) => {
            let topic = topics.first().cloned().unwrap_or_default();
            let start = args.offset.as_deref().and_then(start_of).unwrap_or(reset);
            let offset = resolve(&mut client, &topic, partition, start).await?;
            positions.insert((topic, partition), offset);
        }
        (None, None) => {
            for (topic, layout) in &layouts {
                for partition in layout.leaders.keys() {
                    let offset = resolve(&mut client, topic, *partition, reset).await?;
                    positions.insert((topic.clone(), *partition), offset);
                }
            }
        }
    }
    let max = args.max_messages.filter(|m| *m >= 0);
    let timeout = args.timeout_ms.map(Duration::from_millis);
    let mut last_record = Instant::now();
    let stop = stop_signal();
    tokio::pin!(stop);
    let stdout = std::io::stdout();
    let outcome = loop {
        if max.is_some_and(|m| *count >= m) {
            break Ok(());
        }
        if let Some(member) = member.as_mut()
            && Instant::now() >= member.next_heartbeat
        {
            let beat = client
                .consumer_heartbeat(
                    member.coordinator,
                    &member.group,
                    &member.member_id,
                    member.epoch,
                    Some(&topics),
                )
                .await;
            match beat {
                Ok(beat) => {
                    member.epoch = beat.epoch;
                    member.interval =
                        Duration::from_millis(beat.heartbeat_interval_ms.max(100) as u64);
                    member.next_heartbeat = Instant::now() + member.interval;
                    if let Some(assignment) = beat.assignment {
                        let group = member.group.clone();
                        apply_assignment(
                            &mut client,
                            &group,
                            &layouts,
                            &assignment,
                            &mut positions,
                            reset,
                        )
                        .await?;
                    }
                }
                Err(e) if e.code().is_some_and(coordinator_retriable) => {
                    // As the Java consumer: the coordinator moved or is loading, so find it
                    // again and beat after the backoff rather than give up.
                    tokio::time::sleep(RETRY_BACKOFF).await;
                    if let Ok(coordinator) = client.find_coordinator(&member.group).await {
                        member.coordinator = coordinator.id;
                    }
                }
                Err(e) => break Err(e.to_string()),
            }
        }
        let fetched = tokio::select! {
            _ = &mut stop => break Ok(()),
            fetched = fetch_round(&mut client, &layouts, &positions) => fetched,
        };
        let fetched = match fetched {
            Ok(fetched) => fetched,
            Err(e) => break Err(e),
        };
        let mut out = Vec::new();
        for ((topic, partition), result) in fetched {
            match result {
                Fetched::Records(records, next) => {
                    for record in records {
                        if max.is_some_and(|m| *count >= m) {
                            break;
                        }
                        formatter.write(&mut out, partition, &record);
                        *count += 1;
                        last_record = Instant::now();
                        positions.insert((topic.clone(), partition), record.offset + 1);
                    }
                    if let Some(next) = next
                        && max.is_none_or(|m| *count < m)
                    {
                        positions.insert((topic.clone(), partition), next);
                    }
                }
                Fetched::OutOfRange => {
                    let offset = resolve(&mut client, &topic, partition, reset).await?;
                    positions.insert((topic.clone(), partition), offset);
                }
                Fetched::Retry => {
                    // Kafka's retry.backoff.ms: a partition without a leader (or a topic
                    // being deleted) is not asked for again at once.
                    tokio::time::sleep(RETRY_BACKOFF).await;
                    if let Ok(layout) = client.topic_layout(&topic, false).await {
                        layouts.insert(topic.clone(), layout);
                    }
                }
            }
        }
        if !out.is_empty() {
            let mut lock = stdout.lock();
            if lock.write_all(&out).and_then(|()| lock.flush()).is_err() {
                // Standard output closed (a pipe's reader left): stop as Kafka's tool does.
                break Ok(());
            }
        }
        if let Some(timeout) = timeout
            && last_record.elapsed() > timeout
        {
            eprintln!(
                "ERROR Error processing message, terminating consumer process:  (org.apache.kafka.tools.consumer.ConsoleConsumer)\norg.apache.kafka.common.errors.TimeoutException"
            );
            break Ok(());
        }
    };
    if let Some(member) = member {
        let offsets: Vec<(String, i32, i64)> = positions
            .iter()
            .map(|((t, p), o)| (t.clone(), *p, *o))
            .collect();
        if !offsets.is_empty() {
            client
                .commit_offsets_as(
                    &member.group,
                    Some((&member.member_id, member.epoch)),
                    &offsets,
                )
                .await
                .map_err(|e| format!("cannot commit offsets: {e}"))?;
        }
        // Leave, so that the group rebalances at once.
        let _ = client
            .consumer_heartbeat(
                member.coordinator,
                &member.group,
                &member.member_id,
                -1,
                None,
            )
            .await;
    }
    outcome
}

/// The first offset `start` names in a partition.
/// How long joining a group may keep retrying a coordinator that is not ready (Kafka's
/// `default.api.timeout.ms`).
const JOIN_TIMEOUT: Duration = Duration::from_secs(60);

/// Errors after which the Java consumer looks for the coordinator again and retries:
/// COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR.
fn coordinator_retriable(code: i16) -> bool {
    matches!(code, 14..=16)
}

/// Joins `group` as a new member: finds its coordinator and sends the first heartbeat,
/// retrying while the coordinator is being created, moved or loaded (right after a broker
/// starts, `__consumer_offsets` may still be loading). Gives the coordinator's id.
async fn join(
    client: &mut AdminClient,
    group: &str,
    topics: &[String],
) -> Result<(i32, Membership), String> {
    let deadline = Instant::now() + JOIN_TIMEOUT;
    let member_id = crate::metadata::generate_cluster_id();
    loop {
        let attempt = match client.find_coordinator(group).await {
            Ok(coordinator) => client
                .consumer_heartbeat(coordinator.id, group, &member_id, 0, Some(topics))
                .await
                .map(|joined| (coordinator.id, joined)),
            Err(e) => Err(e),
        };
        match attempt {
            Ok(joined) => return Ok(joined),
            Err(e) if e.code().is_some_and(coordinator_retriable) && Instant::now() < deadline => {
                tokio::time::sleep(RETRY_BACKOFF).await;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

async fn resolve(
    client: &mut AdminClient,
    topic: &str,
    partition: i32,
    start: Start,
) -> Result<i64, String> {
    let spec = match start {
        Start::At(offset) => return Ok(offset),
        Start::Earliest => OffsetSpec::Earliest,
        Start::Latest => OffsetSpec::Latest,
    };
    let found = client
        .list_offsets(&[(topic.to_string(), partition)], spec)
        .await
        .map_err(|e| e.to_string())?;
    Ok(found
        .get(&(topic.to_string(), partition))
        .copied()
        .flatten()
        .unwrap_or(0))
}

/// Takes a new assignment: positions of partitions kept stay, new ones start at the group's
/// committed offset or where `reset` says.
async fn apply_assignment(
    client: &mut AdminClient,
    group: &str,
    layouts: &BTreeMap<String, super::client::TopicLayout>,
    assignment: &BTreeMap<uuid::Uuid, Vec<i32>>,
    positions: &mut BTreeMap<(String, i32), i64>,
    reset: Start,
) -> Result<(), String> {
    let mut assigned = Vec::new();
    for (id, partitions) in assignment {
        if let Some((topic, _)) = layouts.iter().find(|(_, l)| l.id == *id) {
            assigned.extend(partitions.iter().map(|p| (topic.clone(), *p)));
        }
    }
    positions.retain(|tp, _| assigned.contains(tp));
    let committed: BTreeMap<(String, i32), i64> = client
        .committed_offsets(group)
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|c| ((c.topic, c.partition), c.offset))
        .collect();
    for tp in assigned {
        if positions.contains_key(&tp) {
            continue;
        }
        let offset = match committed.get(&tp) {
            Some(offset) => *offset,
            None => resolve(client, &tp.0, tp.1, reset).await?,
        };
        positions.insert(tp, offset);
    }
    Ok(())
}

enum Fetched {
    /// Records, and the offset past the last batch.
    Records(Vec<FetchedRecord>, Option<i64>),
    OutOfRange,
    /// Not the leader any more, or no leader: ask for the layout again.
    Retry,
}

/// One fetch from every leader of the partitions being read.
async fn fetch_round(
    client: &mut AdminClient,
    layouts: &BTreeMap<String, super::client::TopicLayout>,
    positions: &BTreeMap<(String, i32), i64>,
) -> Result<Vec<((String, i32), Fetched)>, String> {
    if positions.is_empty() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        return Ok(Vec::new());
    }
    let mut by_leader: BTreeMap<(i32, String), BTreeMap<i32, i64>> = BTreeMap::new();
    let mut out = Vec::new();
    for ((topic, partition), offset) in positions {
        match layouts
            .get(topic)
            .and_then(|l| l.leaders.get(partition).copied().flatten())
        {
            Some(leader) => {
                by_leader
                    .entry((leader, topic.clone()))
                    .or_default()
                    .insert(*partition, *offset);
            }
            None => out.push(((topic.clone(), *partition), Fetched::Retry)),
        }
    }
    let wait = if by_leader.len() > 1 { 100 } else { 500 };
    for ((leader, topic), offsets) in by_leader {
        let fetched = match client.fetch(leader, &topic, &offsets, wait).await {
            Ok(fetched) => fetched,
            Err(AdminError::Kafka { code: 2, message }) => {
                return Err(format!("org.apache.kafka.common.KafkaException: {message}"));
            }
            Err(e) => return Err(e.to_string()),
        };
        for (partition, result) in fetched {
            let outcome = match result.error_code {
                0 => Fetched::Records(result.records, result.next_offset),
                1 => Fetched::OutOfRange,
                _ => Fetched::Retry,
            };
            out.push(((topic.clone(), partition), outcome));
        }
    }
    Ok(out)
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> FetchedRecord {
        FetchedRecord {
            offset: 7,
            timestamp: 1_000,
            log_append_time: false,
            key: Some(b"k".to_vec()),
            value: None,
            headers: vec![("h".into(), Some(b"v".to_vec()))],
        }
    }

    #[test]
    fn records_print_as_kafkas_default_formatter() {
        let print = |pairs: &[(&str, &str)]| {
            let props = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let mut out = Vec::new();
            Formatter::from_properties(&props).write(&mut out, 2, &record());
            String::from_utf8(out).unwrap()
        };
        assert_eq!(print(&[]), "null\n");
        assert_eq!(print(&[("print.key", "true")]), "k\tnull\n");
        assert_eq!(
            print(&[
                ("print.timestamp", "true"),
                ("print.partition", "true"),
                ("print.offset", "true"),
                ("print.headers", "true"),
                ("print.key", "true"),
                ("key.separator", " | "),
                ("null.literal", "-"),
            ]),
            "CreateTime:1000 | Partition:2 | Offset:7 | h:v | k | -\n"
        );
        assert_eq!(
            print(&[("print.value", "false"), ("print.key", "true")]),
            "k\n"
        );
        assert_eq!(print(&[("line.separator", "\n\n")]), "null\n\n");
        assert_eq!(print(&[("line.separator", "\\n")]), "null\\n");
    }

    #[test]
    fn kafkas_argument_checks() {
        let base = ConsumeArgs {
            connect: ConnectArgs {
                bootstrap_server: Some("127.0.0.1:9092".into()),
                command_config: None,
            },
            isolation_level: "read_uncommitted".into(),
            ..Default::default()
        };
        assert!(check(&base).is_err());
        let topic = ConsumeArgs {
            topic: Some("t".into()),
            ..base.clone()
        };
        assert!(check(&topic).is_ok());
        let offset_without_partition = ConsumeArgs {
            offset: Some("5".into()),
            ..topic.clone()
        };
        assert!(check(&offset_without_partition).is_err());
        let bad_offset = ConsumeArgs {
            partition: Some(0),
            offset: Some("soon".into()),
            ..topic.clone()
        };
        assert!(check(&bad_offset).unwrap_err().contains("incorrect"));
        let group_and_partition = ConsumeArgs {
            partition: Some(0),
            group: Some("g".into()),
            ..topic
        };
        assert!(check(&group_and_partition).is_err());
    }
}
