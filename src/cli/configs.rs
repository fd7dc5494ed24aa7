//! `sluice configs`, and `kafka-configs` / `kafka-configs.sh` in the image: Kafka's
//! ConfigCommand with its flags, checks, messages and output (`Dynamic configs for topic t
//! are:`, one `  name=value sensitive=false synonyms={...}` line per entry), for topics,
//! brokers (and their cluster-wide defaults), broker loggers, groups and client-metrics
//! resources; `--output json` prints the same entries as JSON. Usage errors and failures go to
//! standard error with exit code 1, as Kafka's tool. Users' SCRAM credentials are
//! `configs_users.rs`; quota configs of `users`, `clients` and `ips`, `configs_quotas.rs`.

use super::client::{AdminClient, AdminError, ConfigResourceType, DescribedConfig, source_name};
use super::cluster::ConnectArgs;
use super::configs_quotas::UsersFailure;
use super::output::Output;
use clap::Args;
use std::path::PathBuf;

/// The entity types Kafka's tool accepts, in the order its messages list them.
const ENTITY_TYPES: &[&str] = &[
    "broker-loggers",
    "topics",
    "clients",
    "users",
    "brokers",
    "ips",
    "client-metrics",
    "groups",
];

#[derive(Args, Debug, Clone, Default)]
#[command(
    about = "Describe or change the configs of topics, brokers, groups (Kafka's kafka-configs)"
)]
pub struct ConfigsArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// The Kafka controllers to connect to (accepted; the tool talks to brokers).
    #[arg(long = "bootstrap-controller", value_name = "controller to connect to")]
    pub bootstrap_controller: Option<String>,
    /// Alter the configuration for the entity.
    #[arg(long)]
    pub alter: bool,
    /// List configs for the given entity.
    #[arg(long)]
    pub describe: bool,
    /// List all configs for the given entity, including static configs if available.
    #[arg(long)]
    pub all: bool,
    /// Type of entity (topics/clients/users/brokers/broker-loggers/ips/client-metrics/groups).
    #[arg(long = "entity-type")]
    pub entity_type: Vec<String>,
    /// Name of entity (topic name/client id/user principal name/broker id/ip/client metrics/group id).
    #[arg(long = "entity-name")]
    pub entity_name: Vec<String>,
    /// Default entity name for clients/users/brokers/ips (applies to corresponding entity type).
    #[arg(long = "entity-default")]
    pub entity_default: bool,
    /// Key Value pairs of configs to add: 'k1=v1,k2=[v1,v2,v2],k3=v3'.
    #[arg(long = "add-config")]
    pub add_config: Option<String>,
    /// Path to a properties file with configs to add.
    #[arg(long = "add-config-file")]
    pub add_config_file: Option<PathBuf>,
    /// Config keys to remove: 'k1,k2'.
    #[arg(long = "delete-config", value_delimiter = ',')]
    pub delete_config: Vec<String>,
    /// Suppress console prompts.
    #[arg(long)]
    pub force: bool,
    /// The topic's name.
    #[arg(long)]
    pub topic: Option<String>,
    /// The client's ID.
    #[arg(long)]
    pub client: Option<String>,
    /// The config defaults for all clients.
    #[arg(long = "client-defaults")]
    pub client_defaults: bool,
    /// The user's principal name.
    #[arg(long)]
    pub user: Option<String>,
    /// The config defaults for all users.
    #[arg(long = "user-defaults")]
    pub user_defaults: bool,
    /// The broker's ID.
    #[arg(long)]
    pub broker: Option<String>,
    /// The config defaults for all brokers.
    #[arg(long = "broker-defaults")]
    pub broker_defaults: bool,
    /// The broker's ID for its logger config.
    #[arg(long = "broker-logger")]
    pub broker_logger: Option<String>,
    /// The IP address.
    #[arg(long)]
    pub ip: Option<String>,
    /// The config defaults for all IPs.
    #[arg(long = "ip-defaults")]
    pub ip_defaults: bool,
    /// The group's ID.
    #[arg(long)]
    pub group: Option<String>,
    /// The client metrics config resource name.
    #[arg(long = "client-metrics")]
    pub client_metrics: Option<String>,
    /// How to print --describe: `table` (Kafka's text) or `json`.
    #[arg(long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// What went wrong, printed as Kafka's tool prints it.
enum Failure {
    /// A bad command line or a refused config: the message alone.
    Message(String),
    /// A failed request: Kafka's "Error while executing ..." line, then the cause.
    Execution(String),
}

impl ConfigsArgs {
    /// The entity types, from --entity-type and the specific flags (Kafka's `entityTypes`).
    fn entity_types(&self) -> Vec<String> {
        let mut types = self.entity_type.clone();
        let flags = [
            (self.topic.is_some(), "topics"),
            (self.client.is_some(), "clients"),
            (self.user.is_some(), "users"),
            (self.broker.is_some(), "brokers"),
            (self.broker_logger.is_some(), "broker-loggers"),
            (self.ip.is_some(), "ips"),
            (self.client_metrics.is_some(), "client-metrics"),
            (self.group.is_some(), "groups"),
            (self.client_defaults, "clients"),
            (self.user_defaults, "users"),
            (self.broker_defaults, "brokers"),
            (self.ip_defaults, "ips"),
        ];
        types.extend(
            flags
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, t)| t.to_string()),
        );
        types
    }

    /// The entity names ("" for a default entity), as Kafka's `entityNames`.
    fn entity_names(&self) -> Vec<String> {
        let mut names = self.entity_name.clone();
        if self.entity_default {
            names.push(String::new());
        }
        for name in [
            &self.topic,
            &self.client,
            &self.user,
            &self.broker,
            &self.broker_logger,
            &self.ip,
            &self.client_metrics,
            &self.group,
        ]
        .into_iter()
        .flatten()
        {
            names.push(name.clone());
        }
        for on in [
            self.client_defaults,
            self.user_defaults,
            self.broker_defaults,
            self.ip_defaults,
        ] {
            if on {
                names.push(String::new());
            }
        }
        names
    }

    fn specific_flags(&self) -> bool {
        self.topic.is_some()
            || self.client.is_some()
            || self.user.is_some()
            || self.broker.is_some()
            || self.broker_logger.is_some()
            || self.ip.is_some()
            || self.client_metrics.is_some()
            || self.group.is_some()
            || self.client_defaults
            || self.user_defaults
            || self.broker_defaults
            || self.ip_defaults
    }
}

/// Runs the command, printing what Kafka's tool prints; the exit code.
pub fn run(args: &ConfigsArgs, command_line: &[String]) -> i32 {
    let outcome = check(args).and_then(|()| {
        match super::output::block_on(async { Ok(execute(args).await) }) {
            Ok(outcome) => outcome,
            Err(message) => Err(Failure::Message(message)),
        }
    });
    match outcome {
        Ok(()) => 0,
        Err(Failure::Message(message)) => {
            eprintln!("{message}");
            1
        }
        Err(Failure::Execution(message)) => {
            eprintln!(
                "Error while executing config command with args '{}'",
                command_line.join(" ")
            );
            eprintln!("{message}");
            1
        }
    }
}

/// Kafka's `checkArgs`.
fn check(args: &ConfigsArgs) -> Result<(), Failure> {
    let fail = |m: String| Err(Failure::Message(m));
    if [args.alter, args.describe].iter().filter(|a| **a).count() != 1 {
        return fail("Command must include exactly one action: --describe, --alter".into());
    }
    if args.describe && (args.add_config.is_some() || !args.delete_config.is_empty()) {
        return fail(
            "Option \"[describe]\" can't be used with option \"[alter]\", \"[add-config]\" or \"[delete-config]\""
                .into(),
        );
    }
    let types = args.entity_types();
    let mut seen = std::collections::BTreeSet::new();
    let duplicates: Vec<&str> = types
        .iter()
        .filter(|t| !seen.insert(t.as_str()))
        .map(String::as_str)
        .collect();
    if !duplicates.is_empty() {
        return fail(format!(
            "Duplicate entity type(s) specified: {}",
            duplicates.join(",")
        ));
    }
    if args.connect.bootstrap_server.is_none() && args.bootstrap_controller.is_none() {
        return fail(
            "Either --bootstrap-server or --bootstrap-controller must be specified.".into(),
        );
    }
    if let Some(bad) = types.iter().find(|t| !ENTITY_TYPES.contains(&t.as_str())) {
        return fail(format!(
            "Invalid entity type {bad}, the entity type must be one of {} with a --bootstrap-server or --bootstrap-controller argument",
            ENTITY_TYPES.join(", ")
        ));
    }
    if types.is_empty() {
        return fail("At least one entity type must be specified".into());
    }
    if types.len() > 1 && !(types.len() == 2 && seen.contains("users") && seen.contains("clients"))
    {
        return fail("Only 'users' and 'clients' entity types may be specified together".into());
    }
    if (!args.entity_name.is_empty() || !args.entity_type.is_empty() || args.entity_default)
        && args.specific_flags()
    {
        return fail(
            "--entity-{type,name,default} should not be used in conjunction with specific entity flags"
                .into(),
        );
    }
    if args.connect.bootstrap_server.is_some() && args.bootstrap_controller.is_some() {
        return fail(
            "Only one of --bootstrap-server or --bootstrap-controller can be specified".into(),
        );
    }
    let names = args.entity_names();
    let has_name = names.iter().any(|n| !n.is_empty());
    let has_default = names.iter().any(String::is_empty);
    let first = types[0].as_str();
    if has_name && (first == "brokers" || first == "broker-loggers") {
        for id in args
            .entity_name
            .iter()
            .chain(&args.broker)
            .chain(&args.broker_logger)
        {
            if id.parse::<i32>().is_err() {
                return fail(format!(
                    "The entity name for {first} must be a valid integer broker id, but it is: {id}"
                ));
            }
        }
    }
    let quota_or_broker = types
        .iter()
        .any(|t| ["users", "clients", "brokers", "ips"].contains(&t.as_str()));
    if args.describe {
        if !quota_or_broker && args.entity_default {
            return fail(format!(
                "--entity-default must not be specified with --describe of {}",
                types.join(",")
            ));
        }
        if first == "broker-loggers" && !has_name {
            return fail(format!(
                "An entity name must be specified with --describe of {}",
                types.join(",")
            ));
        }
    }
    if args.alter {
        if quota_or_broker {
            if !has_name && !has_default {
                return fail("An entity-name or default entity must be specified with --alter of users, clients, brokers or ips".into());
            }
        } else if !has_name {
            return fail(format!(
                "An entity name must be specified with --alter of {}",
                types.join(",")
            ));
        }
        if args.add_config.is_some() && args.add_config_file.is_some() {
            return fail("Only one of --add-config or --add-config-file must be specified".into());
        }
        if args.add_config.is_none()
            && args.add_config_file.is_none()
            && args.delete_config.is_empty()
        {
            return fail("At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter".into());
        }
        if types.len() != names.len() {
            return fail("An entity name must be specified for every entity type".into());
        }
    }
    Ok(())
}

fn resource_type(entity_type: &str) -> Option<ConfigResourceType> {
    Some(match entity_type {
        "topics" => ConfigResourceType::Topic,
        "brokers" => ConfigResourceType::Broker,
        "broker-loggers" => ConfigResourceType::BrokerLogger,
        "client-metrics" => ConfigResourceType::ClientMetrics,
        "groups" => ConfigResourceType::Group,
        _ => return None,
    })
}

/// The source id of a resource's dynamic configs (what --describe shows without --all).
fn dynamic_source(entity_type: &str, name: &str) -> i8 {
    match (entity_type, name) {
        ("topics", _) => 1,
        ("brokers", "") => 3,
        ("brokers", _) => 2,
        ("broker-loggers", _) => 6,
        ("client-metrics", _) => 7,
        _ => 8,
    }
}

async fn execute(args: &ConfigsArgs) -> Result<(), Failure> {
    let types = args.entity_types();
    let names = args.entity_names();
    let entity_type = types[0].as_str();
    if entity_type == "users" && types.len() == 1 {
        let mut client = args.connect.connect().await.map_err(Failure::Execution)?;
        return if args.alter {
            let (set, delete) = alterations(args)?;
            super::configs_users::alter(&mut client, &names[0], &set, &delete).await
        } else {
            super::configs_users::describe(&mut client, &names).await
        }
        .map_err(|failure| match failure {
            UsersFailure::Message(m) => Failure::Message(m),
            UsersFailure::Execution(m) => Failure::Execution(m),
        });
    }
    let Some(resource) = resource_type(entity_type) else {
        // `clients` (alone or with `users`) and `ips`: quota configs.
        let mut client = args.connect.connect().await.map_err(Failure::Execution)?;
        let outcome = if args.alter {
            let (set, delete) = alterations(args)?;
            match super::configs_quotas::check_names(&types, &set, &delete) {
                Ok(()) => {
                    super::configs_quotas::alter(&mut client, &types, &names, &set, &delete).await
                }
                Err(refused) => Err(refused),
            }
        } else {
            super::configs_quotas::describe(&mut client, &types, &names).await
        };
        outcome.map_err(|failure| match failure {
            UsersFailure::Message(m) => Failure::Message(m),
            UsersFailure::Execution(m) => Failure::Execution(m),
        })?;
        if args.alter {
            match names.first().map(String::as_str) {
                Some("") | None => {
                    println!("Completed updating default config for {entity_type} in the cluster.")
                }
                Some(name) => println!(
                    "Completed updating config for {} {name}.",
                    entity_type.trim_end_matches('s')
                ),
            }
        }
        return Ok(());
    };
    let mut client = args.connect.connect().await.map_err(Failure::Execution)?;
    if args.alter {
        alter(&mut client, args, entity_type, resource, &names[0]).await
    } else {
        describe(&mut client, args, entity_type, resource, names.first()).await
    }
}

fn request_failed(e: AdminError) -> Failure {
    Failure::Execution(e.to_string())
}

async fn describe(
    client: &mut AdminClient,
    args: &ConfigsArgs,
    entity_type: &str,
    resource: ConfigResourceType,
    name: Option<&String>,
) -> Result<(), Failure> {
    let singular = entity_type.trim_end_matches('s');
    let entities: Vec<String> = match name {
        Some(name) => {
            if !args.all && !exists(client, entity_type, name).await? {
                println!("The {singular} '{name}' doesn't exist and doesn't have dynamic config.");
                return Ok(());
            }
            vec![name.clone()]
        }
        None => match entity_type {
            "topics" => client
                .list_topics()
                .await
                .map_err(request_failed)?
                .into_iter()
                .map(|t| t.name)
                .collect(),
            "brokers" | "broker-loggers" => {
                let mut ids: Vec<String> = client
                    .brokers()
                    .await
                    .map_err(request_failed)?
                    .into_iter()
                    .map(|b| b.id.to_string())
                    .collect();
                ids.push(String::new());
                ids
            }
            "groups" => client
                .list_groups(&[])
                .await
                .map_err(request_failed)?
                .into_iter()
                .map(|g| g.group_id)
                .collect(),
            _ => {
                return Err(Failure::Execution(
                    "listing client-metrics resources needs ListConfigResources, which this tool does not use yet: name one with --entity-name".into(),
                ));
            }
        },
    };
    let mut json = Vec::new();
    for entity in entities {
        if args.output == Output::Table {
            if entity.is_empty() {
                println!("Default configs for {entity_type} in the cluster are:");
            } else {
                let which = if args.all { "All" } else { "Dynamic" };
                println!("{which} configs for {singular} {entity} are:");
            }
        }
        let mut configs = client
            .describe_configs(resource, &entity, true)
            .await
            .map_err(request_failed)?;
        let wanted = dynamic_source(entity_type, &entity);
        configs.retain(|c| args.all || c.source == wanted);
        configs.sort_by(|a, b| a.name.cmp(&b.name));
        match args.output {
            Output::Table => {
                for config in &configs {
                    println!("  {}", entry_text(config));
                }
            }
            Output::Json => json.push(serde_json::json!({
                "entity_type": entity_type,
                "entity_name": entity,
                "configs": configs.iter().map(entry_json).collect::<Vec<_>>(),
            })),
        }
    }
    if args.output == Output::Json {
        println!("{}", serde_json::Value::Array(json));
    }
    Ok(())
}

/// Whether the named entity exists, as Kafka's tool checks before describing its dynamic
/// configs.
async fn exists(client: &mut AdminClient, entity_type: &str, name: &str) -> Result<bool, Failure> {
    Ok(match entity_type {
        "topics" => client
            .list_topics()
            .await
            .map_err(request_failed)?
            .iter()
            .any(|t| t.name == name),
        "brokers" | "broker-loggers" => {
            name.is_empty()
                || client
                    .brokers()
                    .await
                    .map_err(request_failed)?
                    .iter()
                    .any(|b| b.id.to_string() == name)
        }
        "groups" => client
            .list_groups(&[])
            .await
            .map_err(request_failed)?
            .iter()
            .any(|g| g.group_id == name),
        _ => true,
    })
}

/// One entry as Kafka's tool prints it.
fn entry_text(config: &DescribedConfig) -> String {
    let value = |v: &Option<String>| v.clone().unwrap_or_else(|| "null".into());
    let synonyms: Vec<String> = config
        .synonyms
        .iter()
        .map(|s| format!("{}:{}={}", source_name(s.source), s.name, value(&s.value)))
        .collect();
    format!(
        "{}={} sensitive={} synonyms={{{}}}",
        config.name,
        value(&config.value),
        config.sensitive,
        synonyms.join(", ")
    )
}

fn entry_json(config: &DescribedConfig) -> serde_json::Value {
    serde_json::json!({
        "name": config.name,
        "value": config.value,
        "source": source_name(config.source),
        "sensitive": config.sensitive,
        "read_only": config.read_only,
        "synonyms": config.synonyms.iter().map(|s| serde_json::json!({
            "name": s.name, "value": s.value, "source": source_name(s.source),
        })).collect::<Vec<_>>(),
    })
}

async fn alter(
    client: &mut AdminClient,
    args: &ConfigsArgs,
    entity_type: &str,
    resource: ConfigResourceType,
    name: &str,
) -> Result<(), Failure> {
    let (set, delete) = alterations(args)?;
    if entity_type == "broker-loggers" {
        let loggers: Vec<String> = client
            .describe_configs(resource, name, false)
            .await
            .map_err(request_failed)?
            .into_iter()
            .map(|c| c.name)
            .collect();
        let invalid: Vec<&str> = delete
            .iter()
            .map(String::as_str)
            .chain(set.iter().map(|(k, _)| k.as_str()))
            .filter(|k| !loggers.iter().any(|l| l == k))
            .collect();
        if !invalid.is_empty() {
            return Err(Failure::Message(format!(
                "Invalid broker logger(s): {}",
                invalid.join(",")
            )));
        }
    }
    client
        .alter_configs(resource, name, &set, &delete)
        .await
        .map_err(request_failed)?;
    if name.is_empty() {
        println!("Completed updating default config for {entity_type} in the cluster.");
    } else {
        println!(
            "Completed updating config for {} {name}.",
            entity_type.trim_end_matches('s')
        );
    }
    Ok(())
}

/// Configs to set (name, value) and to delete.
type Alterations = (Vec<(String, String)>, Vec<String>);

/// The configs to set (--add-config-file, then --add-config, in Kafka's syntax) and delete.
fn alterations(args: &ConfigsArgs) -> Result<Alterations, Failure> {
    let mut set = Vec::new();
    if let Some(path) = &args.add_config_file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Failure::Execution(format!(
                "java.nio.file.NoSuchFileException: {}: {e}",
                path.display()
            ))
        })?;
        let props =
            crate::config::parse_properties(&text).map_err(|e| Failure::Message(e.to_string()))?;
        set.extend(props);
    }
    if let Some(text) = &args.add_config {
        set.extend(parse_add_config(text).map_err(Failure::Message)?);
    }
    if let Some((bad, _)) = set.iter().find(|(k, _)| {
        !k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "$._-".contains(c))
    }) {
        return Err(Failure::Message(format!(
            "Invalid character found for config key: {bad}"
        )));
    }
    let delete: Vec<String> = args
        .delete_config
        .iter()
        .map(|k| k.trim().to_string())
        .collect();
    Ok((set, delete))
}

/// Kafka's `--add-config` syntax: `k1=v1,k2=[v1,v2],k3=v3` (brackets group values with commas
/// and are removed; an empty value is allowed).
fn parse_add_config(text: &str) -> Result<Vec<(String, String)>, String> {
    let invalid = || {
        "Invalid entity config: all configs to be added must be in the format \"key=val\" or  \"key=[val1,val2]\" to group values which contain commas.".to_string()
    };
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    items.push(current);
    let mut out = Vec::new();
    for item in items {
        let (key, value) = item.split_once('=').ok_or_else(invalid)?;
        if value.contains('=') && !value.contains('[') {
            return Err(invalid());
        }
        let value: String = value.chars().filter(|c| *c != '[' && *c != ']').collect();
        out.push((key.trim().to_string(), value.trim().to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_config_splits_as_kafkas() {
        assert_eq!(
            parse_add_config("retention.ms=1000, cleanup.policy=[compact,delete],x=").unwrap(),
            vec![
                ("retention.ms".to_string(), "1000".to_string()),
                ("cleanup.policy".to_string(), "compact,delete".to_string()),
                ("x".to_string(), String::new()),
            ]
        );
        assert!(parse_add_config("retention.ms").is_err());
        assert!(parse_add_config("a=b=c").is_err());
    }

    #[test]
    fn entries_print_as_kafkas() {
        let config = DescribedConfig {
            name: "retention.ms".into(),
            value: Some("1000".into()),
            source: 1,
            sensitive: false,
            read_only: false,
            synonyms: vec![super::super::client::Synonym {
                name: "log.retention.ms".into(),
                value: None,
                source: 5,
            }],
        };
        assert_eq!(
            entry_text(&config),
            "retention.ms=1000 sensitive=false synonyms={DEFAULT_CONFIG:log.retention.ms=null}"
        );
    }

    #[test]
    fn kafkas_argument_checks() {
        let base = ConfigsArgs {
            connect: ConnectArgs {
                bootstrap_server: Some("127.0.0.1:9092".into()),
                command_config: None,
            },
            ..Default::default()
        };
        let message = |args: &ConfigsArgs| match check(args) {
            Err(Failure::Message(m)) => m,
            _ => String::new(),
        };
        assert!(message(&base).contains("exactly one action"));
        let describe = ConfigsArgs {
            describe: true,
            ..base.clone()
        };
        assert_eq!(
            message(&describe),
            "At least one entity type must be specified"
        );
        let topic = ConfigsArgs {
            topic: Some("t".into()),
            ..describe.clone()
        };
        assert!(check(&topic).is_ok());
        let twice = ConfigsArgs {
            entity_type: vec!["topics".into()],
            ..topic.clone()
        };
        assert!(message(&twice).starts_with("Duplicate entity type(s)"));
        let alter = ConfigsArgs {
            alter: true,
            describe: false,
            ..topic.clone()
        };
        assert!(message(&alter).starts_with("At least one of --add-config"));
        let broker = ConfigsArgs {
            broker: Some("x".into()),
            ..describe
        };
        assert!(message(&broker).contains("valid integer broker id"));
    }
}
