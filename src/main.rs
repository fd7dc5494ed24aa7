//! The `sluice` command: `sluice [serve] [--config FILE] [--override key=value]...`.
//! With no arguments: a single node on 127.0.0.1:9092 with data in ./data.

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use sluice::broker::Broker;
use sluice::config::{BrokerConfig, parse_properties, properties_from_env};
use sluice::server::Server;
use std::path::PathBuf;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
#[command(
    name = "sluice",
    version,
    about = "A Kafka wire-protocol compatible message broker"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run the broker (the default).
    Serve(ServeArgs),
    /// Prepare a node's log directory before its first start, as Kafka's `kafka-storage
    /// format`: the cluster id, and SCRAM users the cluster starts with.
    Format {
        #[command(flatten)]
        config: ServeArgs,
        /// The cluster id (Kafka's -t); generated when not given.
        #[arg(long = "cluster-id", short = 't')]
        cluster_id: Option<String>,
        /// A SCRAM user, as `SCRAM-SHA-256=[name=alice,password=alice-secret]` (repeatable).
        #[arg(long = "add-scram", short = 'S', value_name = "MECHANISM=[...]")]
        add_scram: Vec<String>,
        /// Leave a directory that is formatted already as it is (exit 0).
        #[arg(long = "ignore-formatted", short = 'g')]
        ignore_formatted: bool,
        /// A dynamic quorum (KIP-853) of this controller alone.
        #[arg(long, short = 's', conflicts_with_all = ["initial_controllers", "no_initial_controllers"])]
        standalone: bool,
        /// A dynamic quorum's first controllers: `id@host:port:directoryId,...`.
        #[arg(
            long = "initial-controllers",
            short = 'I',
            conflicts_with = "no_initial_controllers"
        )]
        initial_controllers: Option<String>,
        /// This controller joins a dynamic quorum that runs already (added with
        /// `kafka-metadata-quorum add-controller`).
        #[arg(long = "no-initial-controllers", short = 'N')]
        no_initial_controllers: bool,
    },
    /// Create, delete, describe, or change a topic: Kafka's `kafka-topics`, its flags and output.
    Topics(sluice::cli::topics::TopicsArgs),
    /// Describe or change the configs of topics, brokers and groups: Kafka's `kafka-configs`.
    Configs(sluice::cli::configs::ConfigsArgs),
    /// List, describe, delete consumer groups and reset their offsets: Kafka's
    /// `kafka-consumer-groups`.
    Groups(sluice::cli::groups::GroupsArgs),
    /// Write lines of standard input to a topic: Kafka's `kafka-console-producer`.
    Produce(sluice::cli::console_producer::ProduceArgs),
    /// Print a topic's records: Kafka's `kafka-console-consumer`.
    Consume(sluice::cli::console_consumer::ConsumeArgs),
    /// The cluster's brokers and the APIs they serve (`api-versions` is Kafka's
    /// `kafka-broker-api-versions`).
    Cluster(sluice::cli::cluster::ClusterArgs),
    /// The controller quorum's leader, epoch and replication: Kafka's `kafka-metadata-quorum`.
    Quorum(sluice::cli::quorum::QuorumArgs),
    /// Print a new cluster id (Kafka's `kafka-storage random-uuid`).
    RandomUuid,
    /// What the log directory holds: its cluster id, node id and directory id (Kafka's
    /// `kafka-storage info`), or what is wrong with it (exit 1).
    StorageInfo {
        #[command(flatten)]
        config: ServeArgs,
    },
    /// Print, as a .properties file, the broker properties the environment sets by the Kafka
    /// images' conventions (`KAFKA_*` and `CLUSTER_ID`, or Bitnami's `KAFKA_CFG_*` and
    /// `KAFKA_KRAFT_CLUSTER_ID`; `SLUICE_*` over both): the image's start scripts render the
    /// broker's configuration with it. Variables naming no broker property are left out, each
    /// named on standard error.
    EnvProperties,
    /// Check that a broker answers ApiVersions (exit 0) or not (exit 1): a container health check.
    Probe {
        /// The broker to ask.
        #[arg(default_value = "127.0.0.1:9092")]
        address: String,
        /// Seconds to wait for an answer.
        #[arg(long, default_value_t = 5)]
        timeout: u64,
    },
}

#[derive(Args, Clone, Default)]
struct ServeArgs {
    /// A Kafka-style .properties file.
    #[arg(long, short = 'c', value_name = "FILE")]
    config: Option<PathBuf>,
    /// Set a property, overriding the file (repeatable), as kafka-server-start.sh --override.
    #[arg(long = "override", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Also read properties from KAFKA_* and SLUICE_* environment variables, as Kafka's
    /// container images do (KAFKA_ADVERTISED_LISTENERS -> advertised.listeners); they override
    /// the file, --override overrides them.
    /// Also KAFKA_CREATE_TOPICS (see --create-topics) is read then.
    #[arg(long)]
    config_from_env: bool,
    /// A topic to create at startup unless it exists:
    /// NAME[:PARTITIONS[:REPLICATION[:key=value,...]]] (repeatable).
    #[arg(long = "create-topic", value_name = "SPEC")]
    create_topic: Vec<String>,
    /// Topics to create at startup as the wurstmeister images' KAFKA_CREATE_TOPICS lists them:
    /// `orders:3:1,events:1:1:compact`.
    #[arg(long = "create-topics", value_name = "LIST")]
    create_topics: Option<String>,
    /// What separates the items of --create-topics (KAFKA_CREATE_TOPICS_SEPARATOR).
    #[arg(
        long = "create-topics-separator",
        value_name = "SEPARATOR",
        default_value = ","
    )]
    create_topics_separator: String,
}

/// The topics `args` asks to create at startup, all checked.
fn startup_topics(args: &ServeArgs) -> anyhow::Result<Vec<sluice::broker::NewTopic>> {
    use sluice::cli::startup_topics::{parse_list, parse_spec};
    let mut topics = args
        .create_topic
        .iter()
        .map(|spec| parse_spec(spec))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(list) = &args.create_topics {
        topics.extend(parse_list(list, &args.create_topics_separator)?);
    }
    if args.config_from_env
        && let Ok(list) = std::env::var("KAFKA_CREATE_TOPICS")
    {
        let separator = std::env::var("KAFKA_CREATE_TOPICS_SEPARATOR").unwrap_or_default();
        topics.extend(parse_list(&list, &separator)?);
    }
    Ok(topics)
}

/// The broker properties the environment sets, and the variables' properties this broker does
/// not know (another component's, as cp-kafka's KAFKA_REST_*: Kafka warns and goes on).
fn env_properties() -> (std::collections::BTreeMap<String, String>, Vec<String>) {
    BrokerConfig::split_unknown(properties_from_env(std::env::vars()))
}

fn load_config(args: &ServeArgs) -> anyhow::Result<BrokerConfig> {
    load_config_with(args, |unknown| {
        eprintln!(
            "sluice: warning: environment variables for properties this broker does not know, left out: {}",
            unknown.join(", ")
        )
    })
}

/// [`load_config`], telling `report_unknown` of properties from the environment it left out.
fn load_config_with(
    args: &ServeArgs,
    report_unknown: impl Fn(&[String]),
) -> anyhow::Result<BrokerConfig> {
    let mut props = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read config file {}", path.display()))?;
            parse_properties(&text).with_context(|| format!("in config file {}", path.display()))?
        }
        None => Default::default(),
    };
    if args.config_from_env {
        let (known, unknown) = env_properties();
        if !unknown.is_empty() {
            report_unknown(&unknown);
        }
        props.extend(known);
    }
    // Kafka takes a static JAAS file as a JVM system property in KAFKA_OPTS.
    if !props.contains_key("java.security.auth.login.config")
        && let Some(path) = std::env::var("KAFKA_OPTS")
            .ok()
            .as_deref()
            .and_then(sluice::config::jaas_file_from_kafka_opts)
    {
        props.insert("java.security.auth.login.config".into(), path);
    }
    for item in &args.overrides {
        let (key, value) = item
            .split_once('=')
            .with_context(|| format!("--override '{item}' is not KEY=VALUE"))?;
        props.insert(key.trim().to_string(), value.to_string());
    }
    Ok(BrokerConfig::from_properties(&props)?)
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            // One line naming the problem (e.g. the bad property), not a backtrace.
            eprintln!("sluice: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The command line as `sluice` reads it, and whether it was invoked under one of Kafka's
/// script names (a link in the image): `kafka-storage[.sh] format ...` is `sluice format ...`
/// (its subcommands are ours), `kafka-topics[.sh] ...` is `sluice topics ...`.
fn command_line() -> (Vec<std::ffi::OsString>, bool) {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let invoked_as = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .map(|n| n.trim_end_matches(".sh").to_string());
    let subcommand = match invoked_as.as_deref() {
        Some("kafka-storage") => {
            // Its `info` is our `storage-info`; its other subcommands are ours by name.
            if args.get(1).is_some_and(|a| a == "info") {
                args[1] = "storage-info".into();
            }
            None
        }
        Some("kafka-topics") => Some(&["topics"][..]),
        Some("kafka-broker-api-versions") => Some(&["cluster", "api-versions"][..]),
        Some("kafka-configs") => Some(&["configs"][..]),
        Some("kafka-consumer-groups") => Some(&["groups"][..]),
        Some("kafka-console-producer") => Some(&["produce"][..]),
        Some("kafka-console-consumer") => Some(&["consume"][..]),
        Some("kafka-metadata-quorum") => Some(&["quorum"][..]),
        _ => return (args, false),
    };
    args[0] = "sluice".into();
    if let Some(subcommand) = subcommand {
        for (i, word) in subcommand.iter().enumerate() {
            args.insert(1 + i, word.into());
        }
    }
    (args, true)
}

fn run() -> anyhow::Result<ExitCode> {
    use sluice::cli::format::QuorumStart;
    let (args, kafka_script) = command_line();
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // Kafka's tools exit 1 on a bad command line.
        Err(e) if kafka_script && e.use_stderr() => {
            let _ = e.print();
            return Ok(ExitCode::from(1));
        }
        Err(e) => e.exit(),
    };
    let args = match cli.command {
        Some(Command::Serve(args)) => args,
        Some(Command::Format {
            config,
            cluster_id,
            add_scram,
            ignore_formatted,
            standalone,
            initial_controllers,
            no_initial_controllers,
        }) => {
            // kafka-storage requires both; `sluice format` generates an id and runs without a
            // file.
            if kafka_script && (config.config.is_none() || cluster_id.is_none()) {
                let missing = if config.config.is_none() {
                    "--config/-c"
                } else {
                    "--cluster-id/-t"
                };
                eprintln!("kafka-storage: error: argument {missing} is required");
                return Ok(ExitCode::from(1));
            }
            let config = load_config(&config)?;
            let quorum = match (standalone, initial_controllers, no_initial_controllers) {
                // `--standalone` without a dynamic quorum: one node that is its own quorum either
                // way (fixtures written for Kafka's dynamic quorum and adapted to static voters,
                // or Sluice's unconfigured single node, pass it); kafka-storage refuses it beside
                // static voters, as Kafka's does.
                (true, ..)
                    if !config.cluster.is_dynamic_quorum()
                        && (!kafka_script || config.cluster.voters.is_empty()) =>
                {
                    QuorumStart::Unspecified
                }
                (true, ..) => QuorumStart::Standalone,
                (_, Some(voters), _) => QuorumStart::InitialControllers(voters),
                (_, _, true) => QuorumStart::NoInitialControllers,
                _ => QuorumStart::Unspecified,
            };
            if kafka_script
                && quorum == QuorumStart::Unspecified
                && config.cluster.is_dynamic_quorum()
            {
                eprintln!(
                    "Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers."
                );
                return Ok(ExitCode::from(1));
            }
            let request = sluice::cli::format::FormatRequest {
                cluster_id,
                add_scram,
                ignore_formatted,
                quorum,
            };
            // Kafka's lines, and its messages for what it refuses (standard error, exit 1).
            match sluice::cli::format::format(&config, &request) {
                Ok(formatted) => {
                    for line in formatted.kafka_lines(&config) {
                        println!("{line}");
                    }
                    return Ok(ExitCode::SUCCESS);
                }
                Err(e) => {
                    eprintln!("{e}");
                    return Ok(ExitCode::from(1));
                }
            }
        }
        Some(Command::StorageInfo { config }) => {
            let config = load_config(&config)?;
            let (text, healthy) = sluice::cli::format::info(&config);
            print!("{text}");
            return Ok(if healthy {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        Some(Command::Topics(args)) => {
            return Ok(ExitCode::from(sluice::cli::topics::run(&args) as u8));
        }
        Some(Command::Configs(args)) => {
            // Kafka's tool names its arguments in its failure message.
            let skip = if kafka_script { 1 } else { 2 };
            let words: Vec<String> = std::env::args().skip(skip).collect();
            return Ok(ExitCode::from(
                sluice::cli::configs::run(&args, &words) as u8
            ));
        }
        Some(Command::Groups(args)) => {
            return Ok(ExitCode::from(
                sluice::cli::groups::run(&args, kafka_script) as u8,
            ));
        }
        Some(Command::Produce(args)) => {
            return Ok(ExitCode::from(
                sluice::cli::console_producer::run(&args) as u8
            ));
        }
        Some(Command::Consume(args)) => {
            return Ok(ExitCode::from(
                sluice::cli::console_consumer::run(&args) as u8
            ));
        }
        Some(Command::Cluster(args)) => {
            return Ok(ExitCode::from(sluice::cli::cluster::run(&args) as u8));
        }
        Some(Command::Quorum(args)) => {
            return Ok(ExitCode::from(sluice::cli::quorum::run(&args) as u8));
        }
        Some(Command::RandomUuid) => {
            println!("{}", sluice::metadata::generate_cluster_id());
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::EnvProperties) => {
            let (known, unknown) = env_properties();
            for name in unknown {
                eprintln!("sluice: not a broker property, left out: {name}");
            }
            print!("{}", sluice::config::to_properties_text(&known));
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Probe { address, timeout }) => {
            let apis = sluice::net::probe(&address, std::time::Duration::from_secs(timeout))?;
            println!("{address} is up ({apis} APIs)");
            return Ok(ExitCode::SUCCESS);
        }
        None => cli.serve,
    };
    sluice::telemetry::init();
    sluice::limits::raise_open_file_limit();
    arm_crash_points()?;
    let config = load_config_with(
        &args,
        |unknown| tracing::warn!(properties = ?unknown, "the environment sets properties this broker does not know; left out"),
    )?;
    let topics = startup_topics(&args)?;
    if !config.without_effect.is_empty() {
        tracing::warn!(properties = ?config.without_effect, "accepted for compatibility with Kafka config files; they have no effect in this version");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(async move {
        let broker = Broker::open(config).context("cannot open the log directory")?;
        let mut server = Server::bind(broker)
            .await
            .context("cannot bind the listener")?;
        server.create_at_startup(topics);
        let shutdown = CancellationToken::new();
        tokio::spawn(wait_for_signal(shutdown.clone()));
        server.run(shutdown).await?;
        anyhow::Ok(())
    });
    // Blocking work still running (a stuck shutdown step) must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served.map(|()| ExitCode::SUCCESS)
}

async fn wait_for_signal(shutdown: CancellationToken) {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(signal) => signal,
        Err(e) => {
            tracing::error!(error = %e, "cannot install the SIGTERM handler");
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    tracing::info!("shutting down");
    shutdown.cancel();
}

/// Arms the crash points the `FAILPOINTS` environment variable names (`name=actions;...`,
/// fail-rs syntax; see `sluice::txn::crash_point`). Inert in builds without fail-rs's
/// `failpoints` feature, which only test builds turn on.
fn arm_crash_points() -> anyhow::Result<()> {
    let Ok(spec) = std::env::var("FAILPOINTS") else {
        return Ok(());
    };
    for entry in spec.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let (name, actions) = entry
            .split_once('=')
            .with_context(|| format!("FAILPOINTS entry {entry:?} is not name=actions"))?;
        fail::cfg(name, actions).map_err(|e| anyhow::anyhow!("FAILPOINTS entry {entry:?}: {e}"))?;
    }
    Ok(())
}
