//! `sluice cluster`: the cluster as a client sees it. `sluice cluster api-versions` is Kafka's
//! `kafka-broker-api-versions` (its flags, its output: each broker's ApiVersions against
//! the Java client's API table, [`super::kafka_apis`]); `sluice cluster describe` lists the
//! cluster id, controller and brokers, as a table or `--output json`.

use super::client::{AdminClient, AdminError, BrokerNode};
use super::kafka_apis::KAFKA_APIS;
use super::output::Output;
use clap::{Args, Subcommand};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
#[command(about = "The cluster as a client sees it: its brokers and the APIs they serve")]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub command: ClusterCommand,
}

#[derive(Subcommand, Debug, Clone)]
pub enum ClusterCommand {
    /// Each broker's API versions (Kafka's kafka-broker-api-versions).
    ApiVersions(ApiVersionsArgs),
    /// The cluster id, the controller and the brokers.
    Describe(DescribeArgs),
}

/// The connection flags every admin command takes, with Kafka's names.
#[derive(Args, Debug, Clone, Default)]
pub struct ConnectArgs {
    /// REQUIRED: The server to connect to.
    #[arg(
        long = "bootstrap-server",
        value_name = "server(s) to use for bootstrapping"
    )]
    pub bootstrap_server: Option<String>,
    /// A property file containing configs to be passed to Admin Client.
    #[arg(long = "command-config", value_name = "command config property file")]
    pub command_config: Option<PathBuf>,
}

impl ConnectArgs {
    /// Connects as the flags say; the message to print when it cannot.
    pub async fn connect(&self) -> Result<AdminClient, String> {
        let bootstrap = self
            .bootstrap_server
            .clone()
            .ok_or_else(|| "Missing required argument \"[bootstrap-server]\"".to_string())?;
        let security = super::command_config::security(self.command_config.as_deref())?;
        AdminClient::connect(&bootstrap, &security)
            .await
            .map_err(|e| e.to_string())
    }
}

#[derive(Args, Debug, Clone)]
pub struct ApiVersionsArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Args, Debug, Clone)]
pub struct DescribeArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// How to print: `table` or `json`.
    #[arg(long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// Runs the command; the exit code.
pub fn run(args: &ClusterArgs) -> i32 {
    let outcome = super::output::block_on(async {
        match &args.command {
            ClusterCommand::ApiVersions(args) => api_versions(args).await,
            ClusterCommand::Describe(args) => describe(args).await,
        }
    });
    match outcome {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("{message}");
            1
        }
    }
}

async fn api_versions(args: &ApiVersionsArgs) -> Result<(), String> {
    if args.connect.bootstrap_server.is_none() {
        return Err("Missing required argument \"[bootstrap-server]\"".into());
    }
    let mut client = args.connect.connect().await.map_err(|e| {
        format!(
            "Request METADATA failed on brokers [{}]: {e}",
            args.connect.bootstrap_server.as_deref().unwrap_or_default()
        )
    })?;
    let brokers = client.brokers().await.map_err(|e| e.to_string())?;
    for broker in brokers {
        match client.node_api_versions(broker.id).await {
            Ok(versions) => println!("{} -> {}", node_text(&broker), versions_text(&versions)),
            Err(e) => println!("{} -> ERROR: {e}", node_text(&broker)),
        }
    }
    Ok(())
}

/// A broker as Kafka's `Node.toString` prints it.
fn node_text(broker: &BrokerNode) -> String {
    format!(
        "{}:{} (id: {} rack: {} isFenced: false)",
        broker.host,
        broker.port,
        broker.id,
        broker.rack.as_deref().unwrap_or("null")
    )
}

/// A node's ApiVersions as Kafka's `NodeApiVersions.toString(true)` prints it: every API
/// it advertises, in id order, with the version the Java client would use, and the client's
/// APIs it does not advertise as UNSUPPORTED.
fn versions_text(advertised: &[(i16, i16, i16)]) -> String {
    let known: BTreeMap<i16, (&str, i16, i16, bool)> = KAFKA_APIS
        .iter()
        .map(|(id, name, oldest, newest, client)| (*id, (*name, *oldest, *newest, *client)))
        .collect();
    let mut lines: BTreeMap<i16, String> = BTreeMap::new();
    for (key, min, max) in advertised {
        let range = if min == max {
            min.to_string()
        } else {
            format!("{min} to {max}")
        };
        let line = match known.get(key) {
            Some((name, oldest, newest, _)) => {
                let usable = if newest < min {
                    " [unusable: node too new]".to_string()
                } else if max < oldest {
                    " [unusable: node too old]".to_string()
                } else {
                    format!(" [usable: {}]", (*newest).min(*max))
                };
                format!("{name}({key}): {range}{usable}")
            }
            None => format!("UNKNOWN({key}): {range}"),
        };
        lines.insert(*key, line);
    }
    for (id, (name, _, _, client)) in &known {
        if *client && !lines.contains_key(id) {
            lines.insert(*id, format!("{name}({id}): UNSUPPORTED"));
        }
    }
    let body: Vec<String> = lines.into_values().collect();
    format!("(\n\t{}\n)", body.join(",\n\t"))
}

async fn describe(args: &DescribeArgs) -> Result<(), String> {
    let mut client = args.connect.connect().await?;
    let cluster = client.describe_cluster().await.map_err(fail)?;
    match args.output {
        Output::Json => {
            let brokers: Vec<serde_json::Value> = cluster
                .brokers
                .iter()
                .map(|b| {
                    serde_json::json!({
                        "id": b.id, "host": b.host, "port": b.port, "rack": b.rack,
                    })
                })
                .collect();
            println!(
                "{}",
                serde_json::json!({
                    "cluster_id": cluster.cluster_id,
                    "controller": cluster.controller,
                    "brokers": brokers,
                })
            );
        }
        Output::Table => {
            println!("Cluster ID: {}", cluster.cluster_id);
            println!(
                "Controller: {}",
                cluster
                    .controller
                    .map_or("none".to_string(), |c| c.to_string())
            );
            println!("{:<8} {:<30} RACK", "ID", "ADDRESS");
            for b in &cluster.brokers {
                println!(
                    "{:<8} {:<30} {}",
                    b.id,
                    format!("{}:{}", b.host, b.port),
                    b.rack.as_deref().unwrap_or("-")
                );
            }
        }
    }
    Ok(())
}

fn fail(e: AdminError) -> String {
    e.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_print_as_kafkas_node_api_versions() {
        let text = versions_text(&[(0, 3, 13), (18, 0, 4), (46, 0, 0), (1000, 0, 1)]);
        assert!(
            text.starts_with("(\n\tProduce(0): 3 to 13 [usable: 13],\n\tFetch(1): UNSUPPORTED,")
        );
        assert!(text.contains("\tApiVersions(18): 0 to 4 [usable: 4],"));
        assert!(text.contains("\tListPartitionReassignments(46): 0 [usable: 0],"));
        assert!(text.ends_with("\tUNKNOWN(1000): 0 to 1\n)"));
        // Non-client APIs the node does not advertise are left out.
        assert!(!text.contains("BrokerHeartbeat"));
    }

    #[test]
    fn nodes_print_as_kafkas() {
        let broker = BrokerNode {
            id: 1,
            host: "127.0.0.1".into(),
            port: 9092,
            rack: None,
        };
        assert_eq!(
            node_text(&broker),
            "127.0.0.1:9092 (id: 1 rack: null isFenced: false)"
        );
    }
}
