//! `kafka-metadata-quorum add-controller / remove-controller` (KIP-853): a dynamic quorum's
//! voters added and removed, as Kafka 4.4's `MetadataQuorumCommand` does it — the new
//! controller's id, directory id (its metadata directory's `meta.properties`) and advertised
//! controller listeners read from its configuration file (`--command-config`), its checks
//! and messages, AddRaftVoter / RemoveRaftVoter to the active controller (found with
//! DescribeCluster when given `--bootstrap-controller`) or through a broker.

use super::client::{AdminClient, AdminError, QuorumEndpoint};
use crate::config::ListenerConfig;
use clap::Args;
use std::collections::BTreeMap;

/// Where the command connects, and its `--command-config`.
#[derive(Debug, Clone)]
pub struct Connection {
    pub bootstrap_server: Option<String>,
    pub bootstrap_controller: Option<String>,
    pub command_config: Option<std::path::PathBuf>,
}

fn failure(e: AdminError) -> String {
    e.tool_text()
}

#[derive(Args, Debug, Clone)]
pub struct RemoveArgs {
    /// The id of the controller to remove.
    #[arg(long = "controller-id", short = 'i')]
    pub controller_id: i32,
    /// The directory ID of the controller to remove.
    #[arg(long = "controller-directory-id", short = 'd')]
    pub controller_directory_id: String,
}

/// How long the active controller may take to bring the new one up to date.
const ADD_TIMEOUT_MS: i32 = 60_000;

fn terse(text: &str) -> String {
    text.to_string()
}

/// The new controller as its configuration file describes it: id, directory id, endpoints.
fn new_controller(
    props: &BTreeMap<String, String>,
) -> Result<(i32, uuid::Uuid, Vec<QuorumEndpoint>), String> {
    let id: i32 = props
        .get("node.id")
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            terse(
                "node.id not found in configuration file. Is this a valid controller configuration file?",
            )
        })?;
    if id < 0 {
        return Err(terse(
            "node.id was negative in configuration file. Is this a valid controller configuration file?",
        ));
    }
    let roles = props.get("process.roles").cloned().unwrap_or_default();
    if !roles.split(',').any(|r| r.trim() == "controller") {
        return Err(terse(
            "process.roles did not contain 'controller' in configuration file. Is this a valid controller configuration file?",
        ));
    }
    let directory = props
        .get("metadata.log.dir")
        .cloned()
        .or_else(|| {
            props
                .get("log.dirs")
                .and_then(|d| d.split(',').next().map(|d| d.trim().to_string()))
        })
        .ok_or_else(|| {
            terse(
                "Neither metadata.log.dir nor log.dirs were found. Is this a valid controller configuration file?",
            )
        })?;
    let directory_id = crate::metadata::read_directory_id(std::path::Path::new(&directory))
        .ok_or_else(|| format!("No directory id found in {directory}"))?;
    let names: Vec<String> = props
        .get("controller.listener.names")
        .ok_or_else(|| {
            terse(
                "controller.listener.names was not found. Is this a valid controller configuration file?",
            )
        })?
        .split(',')
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    let parse = |key: &str| -> Result<Vec<ListenerConfig>, String> {
        match props.get(key) {
            Some(text) => ListenerConfig::parse_list(key, text).map_err(|e| e.to_string()),
            None => Ok(Vec::new()),
        }
    };
    let (advertised, listeners) = (parse("advertised.listeners")?, parse("listeners")?);
    let endpoints = names
        .iter()
        .filter_map(|name| {
            let listener = advertised
                .iter()
                .chain(listeners.iter())
                .find(|l| &l.name == name)?;
            let host = if listener.host.is_empty() {
                "localhost".to_string()
            } else {
                listener.host.clone()
            };
            Some(QuorumEndpoint {
                listener: name.clone(),
                host,
                port: listener.port,
            })
        })
        .collect();
    Ok((id, directory_id, endpoints))
}

/// The active controller with bootstrap controllers (the request goes to it), else none (the
/// bootstrap broker forwards it).
async fn target(client: &mut AdminClient, args: &Connection) -> Result<Option<i32>, String> {
    if args.bootstrap_controller.is_some() && args.bootstrap_server.is_none() {
        Ok(client
            .describe_controllers()
            .await
            .map_err(failure)?
            .controller)
    } else {
        Ok(None)
    }
}

async fn connect(args: &Connection) -> Result<AdminClient, String> {
    let bootstrap = args
        .bootstrap_server
        .as_ref()
        .or(args.bootstrap_controller.as_ref())
        .ok_or("one of the arguments --bootstrap-server --bootstrap-controller is required")?;
    let security = super::command_config::security(args.command_config.as_deref())?;
    AdminClient::connect(bootstrap, &security)
        .await
        .map_err(failure)
}

pub async fn add(args: &Connection) -> Result<(), String> {
    let Some(path) = &args.command_config else {
        return Err(terse(
            "You must supply the configuration file of the controller you are adding when using add-controller.",
        ));
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("Properties file {} cannot be read: {e}", path.display()))?;
    let props = crate::config::parse_properties(&text).map_err(|e| e.to_string())?;
    let (id, directory_id, endpoints) = new_controller(&props)?;
    let mut client = connect(args).await?;
    let at = target(&mut client, args).await?;
    client
        .add_raft_voter(at, id, directory_id, &endpoints, ADD_TIMEOUT_MS)
        .await
        .map_err(failure)?;
    let listed: Vec<String> = endpoints
        .iter()
        .map(|e| {
            let host = if e.host.contains(':') {
                format!("[{}]", e.host)
            } else {
                e.host.clone()
            };
            format!("{}://{host}:{}", e.listener, e.port)
        })
        .collect();
    println!(
        "Added controller {id} with directory id {} and endpoints: {}",
        super::topics::kafka_uuid(&directory_id),
        listed.join(", ")
    );
    Ok(())
}

pub async fn remove(args: &Connection, remove: &RemoveArgs) -> Result<(), String> {
    use base64::Engine;
    let directory_id = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(remove.controller_directory_id.trim())
        .ok()
        .and_then(|b| uuid::Uuid::from_slice(&b).ok())
        .ok_or_else(|| {
            format!(
                "Invalid directory id: {}",
                remove.controller_directory_id.trim()
            )
        })?;
    let mut client = connect(args).await?;
    let at = target(&mut client, args).await?;
    client
        .remove_raft_voter(at, remove.controller_id, directory_id)
        .await
        .map_err(failure)?;
    println!(
        "Removed KRaft controller {} with directory id {}",
        remove.controller_id,
        super::topics::kafka_uuid(&directory_id)
    );
    Ok(())
}
