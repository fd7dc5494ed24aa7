//! `sluice quorum` = Kafka's `kafka-metadata-quorum`: `describe --status` (the summary: cluster
//! id, leader, epoch, high watermark, the largest follower lag, voters with their endpoints)
//! and `describe --replication [--human-readable]` (one row per voter and observer), with
//! Kafka 4.4's checks, messages and output (MetadataQuorumCommand), or `--output json`.
//! With `--bootstrap-controller` it asks the controllers directly (KIP-919): DescribeCluster
//! for their endpoints and the active one, DescribeQuorum of that one. `add-controller` /
//! `remove-controller` change a dynamic quorum's voters (KIP-853, `quorum_voters.rs`).

use super::client::{AdminClient, AdminError, QuorumInfo, QuorumReplica};
use super::output::Output;
use clap::{ArgGroup, Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
#[command(
    about = "This tool describes kraft metadata quorum status.",
    group(ArgGroup::new("connection").required(true).args(["bootstrap_server", "bootstrap_controller"]))
)]
pub struct QuorumArgs {
    /// A comma-separated list of host:port pairs to use for establishing the connection to
    /// the Kafka cluster.
    #[arg(long = "bootstrap-server")]
    pub bootstrap_server: Option<String>,
    /// A comma-separated list of host:port pairs to use for establishing the connection to
    /// the Kafka controllers.
    #[arg(long = "bootstrap-controller")]
    pub bootstrap_controller: Option<String>,
    /// Property file containing configs to be passed to Admin Client. For add-controller,
    /// the file is used to specify the controller properties as well.
    #[arg(long = "command-config", global = true)]
    pub command_config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: QuorumCommand,
}

#[derive(Subcommand, Debug, Clone)]
pub enum QuorumCommand {
    /// Describe the metadata quorum info
    Describe(DescribeArgs),
    /// Add a controller to the KRaft controller cluster
    #[command(name = "add-controller")]
    AddController,
    /// Remove a controller from the KRaft controller cluster
    #[command(name = "remove-controller")]
    RemoveController(super::quorum_voters::RemoveArgs),
}

#[derive(Args, Debug, Clone)]
pub struct DescribeArgs {
    /// A short summary of the quorum status and the other provides detailed information
    /// about the status of replication.
    #[arg(long)]
    pub status: bool,
    /// Detailed information about the status of replication
    #[arg(long)]
    pub replication: bool,
    /// Human-readable output
    #[arg(long = "human-readable")]
    pub human_readable: bool,
    /// How to print: Kafka's text (`table`) or `json`.
    #[arg(long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// Runs the command; the exit code (Kafka's tool exits 1 on every failure).
pub fn run(args: &QuorumArgs) -> i32 {
    match super::output::block_on(execute(args)) {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("{message}");
            1
        }
    }
}

async fn execute(args: &QuorumArgs) -> Result<(), String> {
    if let Some(path) = &args.command_config
        && !path.exists()
    {
        return Err(format!(
            "Properties file {} does not exist.",
            path.display()
        ));
    }
    let connection = super::quorum_voters::Connection {
        bootstrap_server: args.bootstrap_server.clone(),
        bootstrap_controller: args.bootstrap_controller.clone(),
        command_config: args.command_config.clone(),
    };
    let describe = match &args.command {
        QuorumCommand::Describe(describe) => describe,
        QuorumCommand::AddController => return super::quorum_voters::add(&connection).await,
        QuorumCommand::RemoveController(remove) => {
            return super::quorum_voters::remove(&connection, remove).await;
        }
    };
    if describe.status && describe.replication {
        return Err(
            "Only one of --status or --replication should be specified with describe sub-command"
                .into(),
        );
    }
    if !describe.status && !describe.replication {
        return Err(
            "One of --status or --replication must be specified with describe sub-command".into(),
        );
    }
    if describe.status && describe.human_readable {
        return Err(
            "The option --human-readable is only supported along with --replication".into(),
        );
    }
    let (bootstrap, to_controllers) = match (&args.bootstrap_server, &args.bootstrap_controller) {
        (Some(servers), _) => (servers, false),
        (None, Some(controllers)) => (controllers, true),
        (None, None) => {
            return Err(
                "one of the arguments --bootstrap-server --bootstrap-controller is required".into(),
            );
        }
    };
    let security = super::command_config::security(args.command_config.as_deref())?;
    let mut client = AdminClient::connect(bootstrap, &security)
        .await
        .map_err(failure)?;
    let (cluster_id, quorum) = if to_controllers {
        let controllers = client.describe_controllers().await.map_err(failure)?;
        let quorum = client
            .describe_quorum(controllers.controller)
            .await
            .map_err(failure)?;
        (controllers.cluster_id, quorum)
    } else {
        let cluster_id = if describe.status {
            client.describe_cluster().await.map_err(failure)?.cluster_id
        } else {
            String::new()
        };
        (
            cluster_id,
            client.describe_quorum(None).await.map_err(failure)?,
        )
    };
    let now_ms = crate::types::now_ms();
    match describe.output {
        Output::Json => println!("{}", json(&cluster_id, &quorum, describe.status)?),
        Output::Table if describe.status => print!("{}", status_text(&cluster_id, &quorum)?),
        Output::Table => print!(
            "{}",
            replication_text(&quorum, describe.human_readable, now_ms)?
        ),
    }
    Ok(())
}

/// A failed request as Kafka's tool prints it: the exception's class and message.
fn failure(e: AdminError) -> String {
    e.tool_text()
}

/// The leader's own row: Kafka's tool fails (`No value present`) when the leader is not
/// among the voters.
fn leader(quorum: &QuorumInfo) -> Result<(usize, &QuorumReplica), String> {
    quorum
        .voters
        .iter()
        .enumerate()
        .find(|(_, v)| v.id == quorum.leader_id)
        .ok_or_else(|| "No value present".to_string())
}

/// The largest follower lag (in offsets) and how long it has lasted, as Kafka's tool
/// computes them: the first voter with the smallest log end offset against the leader.
fn max_follower_lag(quorum: &QuorumInfo) -> Result<(i64, i64), String> {
    let (leader_index, leader) = leader(quorum)?;
    let mut laggard = 0;
    for (i, voter) in quorum.voters.iter().enumerate() {
        if voter.log_end_offset < quorum.voters[laggard].log_end_offset {
            laggard = i;
        }
    }
    let follower = &quorum.voters[laggard];
    let lag = leader.log_end_offset - follower.log_end_offset;
    let lag_time = if laggard == leader_index {
        0
    } else {
        match (leader.last_caught_up_ms, follower.last_caught_up_ms) {
            (Some(l), Some(f)) => l - f,
            _ => -1,
        }
    };
    Ok((lag, lag_time))
}

/// A replica as Kafka's tool lists it in CurrentVoters / CurrentObservers.
fn replica_text(quorum: &QuorumInfo, replica: &QuorumReplica) -> String {
    let mut text = format!("{{\"id\": {}", replica.id);
    if !replica.directory_id.is_nil() {
        text.push_str(&format!(
            ", \"directoryId\": \"{}\"",
            super::topics::kafka_uuid(&replica.directory_id)
        ));
    }
    let endpoints = quorum
        .nodes
        .get(&replica.id)
        .map_or(&[][..], |e| e.as_slice());
    if !endpoints.is_empty() {
        let listed: Vec<String> = endpoints
            .iter()
            .map(|e| {
                let host = if e.host.contains(':') {
                    format!("[{}]", e.host)
                } else {
                    e.host.clone()
                };
                format!("\"{}://{host}:{}\"", e.listener, e.port)
            })
            .collect();
        text.push_str(&format!(", \"endpoints\": [{}]", listed.join(", ")));
    }
    text.push('}');
    text
}

fn replicas_text(quorum: &QuorumInfo, replicas: &[QuorumReplica]) -> String {
    let listed: Vec<String> = replicas.iter().map(|r| replica_text(quorum, r)).collect();
    format!("[{}]", listed.join(", "))
}

fn status_text(cluster_id: &str, quorum: &QuorumInfo) -> Result<String, String> {
    let (lag, lag_time) = max_follower_lag(quorum)?;
    Ok(format!(
        "ClusterId:              {cluster_id}\n\
         LeaderId:               {}\n\
         LeaderEpoch:            {}\n\
         HighWatermark:          {}\n\
         MaxFollowerLag:         {lag}\n\
         MaxFollowerLagTimeMs:   {lag_time}\n\
         CurrentVoters:          {}\n\
         CurrentObservers:       {}\n",
        quorum.leader_id,
        quorum.leader_epoch,
        quorum.high_watermark,
        replicas_text(quorum, &quorum.voters),
        replicas_text(quorum, &quorum.observers),
    ))
}

/// A timestamp column: -1 when unknown, else the time or (human-readable) how long ago,
/// refused as Kafka refuses it when the clock seems to have drifted.
fn time_column(ms: Option<i64>, human: bool, now_ms: i64, what: &str) -> Result<String, String> {
    match ms {
        None => Ok("-1".into()),
        Some(ms) if !human => Ok(ms.to_string()),
        Some(ms) if ms > 0 && ms <= now_ms => Ok(format!("{} ms ago", now_ms - ms)),
        Some(ms) => Err(format!(
            "Error while computing relative time, possible drift in system clock.\nCurrent timestamp is {now_ms}, {what} timestamp is {ms}"
        )),
    }
}

/// Kafka's `--replication` table (ToolsUtils.prettyPrintTable: each column padded to its
/// widest cell, every cell followed by a tab): the leader, the other voters, the observers.
fn replication_text(quorum: &QuorumInfo, human: bool, now_ms: i64) -> Result<String, String> {
    let (_, leader) = leader(quorum)?;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let followers = quorum.voters.iter().filter(|v| v.id != quorum.leader_id);
    let listed = std::iter::once((leader, "Leader"))
        .chain(followers.map(|v| (v, "Follower")))
        .chain(quorum.observers.iter().map(|o| (o, "Observer")));
    for (replica, status) in listed {
        rows.push(vec![
            replica.id.to_string(),
            super::topics::kafka_uuid(&replica.directory_id),
            replica.log_end_offset.to_string(),
            (leader.log_end_offset - replica.log_end_offset).to_string(),
            time_column(replica.last_fetch_ms, human, now_ms, "last fetch")?,
            time_column(replica.last_caught_up_ms, human, now_ms, "last caught up")?,
            status.to_string(),
        ]);
    }
    let headers = [
        "NodeId",
        "DirectoryId",
        "LogEndOffset",
        "Lag",
        "LastFetchTimestamp",
        "LastCaughtUpTimestamp",
        "Status",
    ];
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut text = String::new();
    let header_row: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header_row).chain(rows.iter()) {
        for (cell, width) in row.iter().zip(&widths) {
            text.push_str(&format!("{cell:<width$}\t"));
        }
        text.push('\n');
    }
    Ok(text)
}

fn json(cluster_id: &str, quorum: &QuorumInfo, status: bool) -> Result<String, String> {
    let (leader_index, leader) = leader(quorum)?;
    let replica = |r: &QuorumReplica, role: &str| {
        let endpoints: Vec<String> = quorum
            .nodes
            .get(&r.id)
            .map(|e| {
                e.iter()
                    .map(|e| format!("{}://{}:{}", e.listener, e.host, e.port))
                    .collect()
            })
            .unwrap_or_default();
        serde_json::json!({
            "id": r.id,
            "directory_id": (!r.directory_id.is_nil()).then(|| super::topics::kafka_uuid(&r.directory_id)),
            "log_end_offset": r.log_end_offset,
            "lag": leader.log_end_offset - r.log_end_offset,
            "last_fetch_timestamp": r.last_fetch_ms,
            "last_caught_up_timestamp": r.last_caught_up_ms,
            "status": role,
            "endpoints": endpoints,
        })
    };
    let voters: Vec<serde_json::Value> = quorum
        .voters
        .iter()
        .enumerate()
        .map(|(i, v)| {
            replica(
                v,
                if i == leader_index {
                    "Leader"
                } else {
                    "Follower"
                },
            )
        })
        .collect();
    let observers: Vec<serde_json::Value> = quorum
        .observers
        .iter()
        .map(|o| replica(o, "Observer"))
        .collect();
    let mut document = serde_json::json!({
        "leader_id": quorum.leader_id,
        "leader_epoch": quorum.leader_epoch,
        "high_watermark": quorum.high_watermark,
        "voters": voters,
        "observers": observers,
    });
    if status {
        let (lag, lag_time) = max_follower_lag(quorum)?;
        document["cluster_id"] = cluster_id.into();
        document["max_follower_lag"] = lag.into();
        document["max_follower_lag_time_ms"] = lag_time.into();
    }
    Ok(document.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::client::QuorumEndpoint;
    use std::collections::BTreeMap;

    fn voter(id: i32, end: i64, caught_up: Option<i64>) -> QuorumReplica {
        QuorumReplica {
            id,
            directory_id: uuid::Uuid::nil(),
            log_end_offset: end,
            last_fetch_ms: caught_up,
            last_caught_up_ms: caught_up,
        }
    }

    fn quorum() -> QuorumInfo {
        let endpoint = |port| QuorumEndpoint {
            listener: "CONTROLLER".into(),
            host: "localhost".into(),
            port,
        };
        QuorumInfo {
            leader_id: 2,
            leader_epoch: 7,
            high_watermark: 120,
            voters: vec![
                voter(1, 118, Some(1_000)),
                voter(2, 121, Some(1_500)),
                voter(3, 121, Some(1_400)),
            ],
            observers: Vec::new(),
            nodes: BTreeMap::from([(1, vec![endpoint(9093)]), (2, vec![endpoint(9094)])]),
        }
    }

    #[test]
    fn status_prints_as_kafkas_tool() {
        assert_eq!(
            status_text("abc", &quorum()).unwrap(),
            "ClusterId:              abc\n\
             LeaderId:               2\n\
             LeaderEpoch:            7\n\
             HighWatermark:          120\n\
             MaxFollowerLag:         3\n\
             MaxFollowerLagTimeMs:   500\n\
             CurrentVoters:          [{\"id\": 1, \"endpoints\": [\"CONTROLLER://localhost:9093\"]}, {\"id\": 2, \"endpoints\": [\"CONTROLLER://localhost:9094\"]}, {\"id\": 3}]\n\
             CurrentObservers:       []\n"
        );
    }

    #[test]
    fn the_lag_is_zero_when_the_leader_is_the_first_with_the_smallest_end() {
        let mut single = quorum();
        single.voters = vec![voter(2, 121, Some(1_500)), voter(3, 121, None)];
        assert_eq!(max_follower_lag(&single).unwrap(), (0, 0));
        // A follower listed first with the same end: compared by caught-up times, -1 unknown.
        single.voters.reverse();
        assert_eq!(max_follower_lag(&single).unwrap(), (0, -1));
        single.leader_id = 9;
        assert_eq!(max_follower_lag(&single).unwrap_err(), "No value present");
    }

    #[test]
    fn replication_prints_kafkas_table() {
        let text = replication_text(&quorum(), false, 2_000).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t"
        );
        assert_eq!(
            lines[1],
            "2     \tAAAAAAAAAAAAAAAAAAAAAA\t121         \t0  \t1500              \t1500                 \tLeader  \t"
        );
        assert!(lines[2].starts_with("1     \tAAAAAAAAAAAAAAAAAAAAAA\t118         \t3  \t"));
        assert!(lines[3].ends_with("\tFollower\t"));
        let human = replication_text(&quorum(), true, 2_000).unwrap();
        assert!(human.lines().nth(1).unwrap().contains("500 ms ago"));
        let drifted = replication_text(&quorum(), true, 1_200).unwrap_err();
        assert!(drifted.starts_with("Error while computing relative time"));
    }
}
