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
        /// Accepted for kafka-storage's command line (a single node is its own quorum).
        #[arg(long, short = 's')]
        standalone: bool,
    },
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
    #[arg(long)]
    config_from_env: bool,
}

fn load_config(args: &ServeArgs) -> anyhow::Result<BrokerConfig> {
    let mut props = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read config file {}", path.display()))?;
            parse_properties(&text).with_context(|| format!("in config file {}", path.display()))?
        }
        None => Default::default(),
    };
    if args.config_from_env {
        props.extend(properties_from_env(std::env::vars()));
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
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line naming the problem (e.g. the bad property), not a backtrace.
            eprintln!("sluice: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Serve(args)) => args,
        Some(Command::Format {
            config,
            cluster_id,
            add_scram,
            ignore_formatted,
            standalone: _,
        }) => {
            let config = load_config(&config)?;
            let request = sluice::cli::format::FormatRequest {
                cluster_id,
                add_scram,
                ignore_formatted,
            };
            match sluice::cli::format::format(&config, &request)? {
                sluice::cli::format::Formatted::New { cluster_id, users } => println!(
                    "Formatted {} with cluster id {cluster_id} and {users} SCRAM credential(s).",
                    config.log_dir.display()
                ),
                sluice::cli::format::Formatted::AlreadyFormatted => println!(
                    "{} is already formatted; left as it is.",
                    config.log_dir.display()
                ),
            }
            return Ok(());
        }
        Some(Command::Probe { address, timeout }) => {
            let apis = sluice::net::probe(&address, std::time::Duration::from_secs(timeout))?;
            println!("{address} is up ({apis} APIs)");
            return Ok(());
        }
        None => cli.serve,
    };
    sluice::telemetry::init();
    sluice::limits::raise_open_file_limit();
    arm_crash_points()?;
    let config = load_config(&args)?;
    if !config.without_effect.is_empty() {
        tracing::warn!(properties = ?config.without_effect, "accepted for compatibility with Kafka config files; they have no effect in this version");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(async move {
        let broker = Broker::open(config).context("cannot open the log directory")?;
        let server = Server::bind(broker)
            .await
            .context("cannot bind the listener")?;
        let shutdown = CancellationToken::new();
        tokio::spawn(wait_for_signal(shutdown.clone()));
        server.run(shutdown).await?;
        anyhow::Ok(())
    });
    // Blocking work still running (a stuck shutdown step) must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served
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
