//! `sluice format` and `sluice storage-info`: what Kafka's `kafka-storage format` and
//! `kafka-storage info` do for a node's log directory — `meta.properties` with the cluster id
//! (given with `--cluster-id`, else generated) and a directory id, and the records the cluster
//! starts with: `--add-scram 'SCRAM-SHA-256=[name=alice,password=...]'` users, parsed as
//! Kafka's `ScramParser` does, with its messages. A directory formatted already is refused
//! unless `--ignore-formatted`, as Kafka's. Both print Kafka's lines (its `Formatter` and
//! `StorageTool`), with our feature levels where Kafka prints its own.

use crate::auth::scram::{MAX_ITERATIONS, MIN_ITERATIONS, ScramCredential, ScramMechanism};
use crate::config::BrokerConfig;
use crate::metadata::features::{FEATURES, KRAFT_VERSION, METADATA_VERSION_NAME};
use crate::metadata::records::{Endpoint, MetadataRecord, ScramCredentialRecord};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::collections::BTreeMap;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum FormatError {
    /// An `--add-scram` argument Kafka's `ScramParser` refuses, in its words.
    #[error("{0}")]
    Scram(String),
    #[error(
        "Log directory {0} is already formatted. Use --ignore-formatted to ignore this directory and format the others."
    )]
    AlreadyFormatted(String),
    #[error("Error while writing meta.properties file {path}: {reason}")]
    Write { path: String, reason: String },
    /// A dynamic quorum's first voters that cannot be (KIP-853), in Kafka's words.
    #[error("{0}")]
    Quorum(String),
}

/// How a dynamic quorum (KIP-853) starts, for a controller formatted with
/// `controller.quorum.bootstrap.servers`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum QuorumStart {
    /// No flag: a static quorum, or Sluice's own start (a controller whose only bootstrap
    /// server is itself starts alone, any other waits to be added).
    #[default]
    Unspecified,
    /// `--standalone`: this controller alone.
    Standalone,
    /// `--initial-controllers id@host:port:directoryId,...`.
    InitialControllers(String),
    /// `--no-initial-controllers`: it joins a quorum that runs already.
    NoInitialControllers,
}

/// What was asked.
#[derive(Debug, Clone, Default)]
pub struct FormatRequest {
    pub cluster_id: Option<String>,
    pub add_scram: Vec<String>,
    pub ignore_formatted: bool,
    pub quorum: QuorumStart,
}

/// What was done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Formatted {
    /// The directory was formatted with this cluster id; `records` are the SCRAM users the
    /// cluster starts with.
    New {
        cluster_id: String,
        records: Vec<MetadataRecord>,
    },
    AlreadyFormatted,
}

impl Formatted {
    /// What Kafka's `kafka-storage format` prints for the same outcome (its `Formatter`): the
    /// bootstrap metadata (our feature levels, then the credentials) and the directory
    /// formatted, or that every directory was formatted already.
    pub fn kafka_lines(&self, config: &BrokerConfig) -> Vec<String> {
        let Formatted::New { records, .. } = self else {
            return vec!["All of the log directories are already formatted.".into()];
        };
        let metadata_version = FEATURES
            .iter()
            .find(|f| f.name == "metadata.version")
            .map_or(0, |f| f.default_level);
        // Kafka's order: metadata.version first, then the other features by name;
        // kraft.version is no FeatureLevelRecord.
        let mut features: Vec<_> = FEATURES
            .iter()
            .filter(|f| f.name != "metadata.version" && f.name != KRAFT_VERSION)
            .collect();
        features.sort_by_key(|f| f.name);
        let feature_text = |name: &str, level: i16| {
            format!(
                "ApiMessageAndVersion(FeatureLevelRecord(name='{name}', featureLevel={level}) at version 0)"
            )
        };
        let mut listed = vec![feature_text("metadata.version", metadata_version)];
        listed.extend(
            features
                .iter()
                .map(|f| feature_text(f.name, f.default_level)),
        );
        listed.extend(records.iter().filter_map(scram_record_text));
        let mut lines = vec![
            format!(
                "Bootstrap metadata: BootstrapMetadata(records=[{}], metadataVersionLevel={metadata_version}, source=format command)",
                listed.join(", ")
            ),
            format!(
                "Formatting metadata directory {} with metadata.version {METADATA_VERSION_NAME}.",
                config.log_dir.display()
            ),
        ];
        lines.extend(config.log_dirs.iter().skip(1).map(|dir| {
            format!(
                "Formatting data directory {} with metadata.version {METADATA_VERSION_NAME}.",
                dir.display()
            )
        }));
        lines
    }
}

/// A credential record as Kafka's generated `UserScramCredentialRecord.toString` prints it
/// (byte arrays as Java's `Arrays.toString` of signed bytes).
fn scram_record_text(record: &MetadataRecord) -> Option<String> {
    let MetadataRecord::UserScramCredential {
        name,
        mechanism,
        credential,
    } = record
    else {
        return None;
    };
    let bytes = |b: &[u8]| {
        let signed: Vec<String> = b.iter().map(|x| (*x as i8).to_string()).collect();
        format!("[{}]", signed.join(", "))
    };
    Some(format!(
        "ApiMessageAndVersion(UserScramCredentialRecord(name='{name}', mechanism={mechanism}, salt={}, storedKey={}, serverKey={}, iterations={}) at version 0)",
        bytes(&credential.salt),
        bytes(&credential.stored_key),
        bytes(&credential.server_key),
        credential.iterations
    ))
}

pub fn format(config: &BrokerConfig, request: &FormatRequest) -> Result<Formatted, FormatError> {
    // Everything is checked before anything is written.
    let mut records = request
        .add_scram
        .iter()
        .map(|argument| scram_record(argument))
        .collect::<Result<Vec<_>, _>>()?;
    let (voters, directory_id) = initial_voters(config, &request.quorum)?;
    records.extend(voters);
    let dir = &config.log_dir;
    let write_error = |e: crate::storage::StorageError| FormatError::Write {
        path: dir.display().to_string(),
        reason: e.to_string(),
    };
    if dir.join("meta.properties").exists() {
        return if request.ignore_formatted {
            Ok(Formatted::AlreadyFormatted)
        } else {
            Err(FormatError::AlreadyFormatted(dir.display().to_string()))
        };
    }
    std::fs::create_dir_all(dir).map_err(|e| write_error(e.into()))?;
    let cluster_id = request
        .cluster_id
        .clone()
        .or_else(|| config.cluster_id.clone())
        .unwrap_or_else(crate::metadata::generate_cluster_id);
    crate::metadata::bootstrap::write(dir, &records).map_err(write_error)?;
    crate::metadata::write_meta_with_directory(dir, config.node_id, &cluster_id, directory_id)
        .map_err(write_error)?;
    // The other log directories (JBOD): the same identity, each its own directory id.
    for data_dir in config.log_dirs.iter().skip(1) {
        if data_dir.join("meta.properties").exists() {
            continue;
        }
        let failed = |e: crate::storage::StorageError| FormatError::Write {
            path: data_dir.display().to_string(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(data_dir).map_err(|e| failed(e.into()))?;
        crate::metadata::write_meta(data_dir, config.node_id, &cluster_id).map_err(failed)?;
    }
    Ok(Formatted::New {
        cluster_id,
        records,
    })
}

/// The records naming a dynamic quorum's first voters, and this node's directory id (the
/// one `--initial-controllers` gives it, else a new one), with Kafka's refusals.
fn initial_voters(
    config: &BrokerConfig,
    start: &QuorumStart,
) -> Result<(Vec<MetadataRecord>, uuid::Uuid), FormatError> {
    let fail = |text: &str| Err(FormatError::Quorum(text.to_string()));
    let cluster = &config.cluster;
    if *start != QuorumStart::Unspecified && !cluster.voters.is_empty() {
        return fail(
            "You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone. If you want to use dynamic quorum, please remove controller.quorum.voters and specify controller.quorum.bootstrap.servers instead.",
        );
    }
    let own_directory = uuid::Uuid::new_v4();
    let listener_name = &cluster.controller_listener;
    let protocol = config
        .listeners
        .iter()
        .find(|l| &l.name == listener_name)
        .map_or(0, |l| l.protocol.id());
    let endpoint = |host: &str, port: u16| Endpoint {
        name: listener_name.clone(),
        host: host.to_string(),
        port,
        security_protocol: protocol,
    };
    match start {
        QuorumStart::Unspecified | QuorumStart::NoInitialControllers => {
            Ok((Vec::new(), own_directory))
        }
        QuorumStart::Standalone => {
            if !cluster.controller_role {
                return fail("You can only use --standalone on a controller.");
            }
            let listener = config
                .advertised_listeners
                .iter()
                .chain(config.listeners.iter())
                .find(|l| &l.name == listener_name);
            let Some(listener) = listener else {
                return fail("Unable to find the controller listener to use for --standalone");
            };
            let host = if listener.host.is_empty() {
                "localhost"
            } else {
                &listener.host
            };
            let record = MetadataRecord::QuorumVoter {
                node_id: config.node_id,
                directory_id: own_directory,
                endpoints: vec![endpoint(host, listener.port)],
            };
            Ok((vec![record], own_directory))
        }
        QuorumStart::InitialControllers(text) => {
            if !cluster.controller_role {
                return fail("You can only use --initial-controllers on a controller.");
            }
            let mut records = Vec::new();
            let mut directory = None;
            for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                let (node_id, directory_id, host, port) = parse_voter(item)?;
                if records.iter().any(|r| matches!(r, MetadataRecord::QuorumVoter { node_id: n, .. } if *n == node_id)) {
                    return fail(&format!("Node id {node_id} was specified more than once."));
                }
                if node_id == config.node_id {
                    directory = Some(directory_id);
                }
                records.push(MetadataRecord::QuorumVoter {
                    node_id,
                    directory_id,
                    endpoints: vec![endpoint(&host, port)],
                });
            }
            if records.is_empty() {
                return fail("No initial controllers were given.");
            }
            Ok((records, directory.unwrap_or(own_directory)))
        }
    }
}

/// One `--initial-controllers` entry: `id@host:port:directoryId` (an IPv6 host in brackets),
/// the directory id in Kafka's base64 form.
fn parse_voter(item: &str) -> Result<(i32, uuid::Uuid, String, u16), FormatError> {
    let fail = |why: &str| FormatError::Quorum(format!("Unable to parse {item}: {why}"));
    let (id, rest) = item.split_once('@').ok_or_else(|| fail("no @ found"))?;
    let node_id: i32 = id
        .parse()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| fail("invalid node id"))?;
    let (address, directory) = rest
        .rsplit_once(':')
        .ok_or_else(|| fail("no directory id found"))?;
    let (host, port) = address
        .rsplit_once(':')
        .ok_or_else(|| fail("no port found"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(fail("no hostname found"));
    }
    let port: u16 = port.parse().map_err(|_| fail("invalid port"))?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(directory)
        .map_err(|_| fail("invalid directory id"))?;
    let directory_id = uuid::Uuid::from_slice(&bytes).map_err(|_| fail("invalid directory id"))?;
    Ok((node_id, directory_id, host.to_string(), port))
}

/// One `--add-scram` argument as the credential record it creates: Kafka's `ScramParser`,
/// its checks in its order and its messages (`MECHANISM=[name=...,password=...]`, or `salt`
/// and `saltedpassword` in base64; `iterations`, 4096 by default; values may be quoted).
pub fn scram_record(argument: &str) -> Result<MetadataRecord, FormatError> {
    let fail = |reason: String| FormatError::Scram(reason);
    let argument = argument.trim();
    let (mechanism_name, config) = argument.split_once('=').ok_or_else(|| {
        fail(format!(
            "Failed to find equals sign in SCRAM argument '{argument}'"
        ))
    })?;
    let mechanism = ScramMechanism::from_name(mechanism_name).ok_or_else(|| {
        fail(format!(
            "The add-scram mechanism {mechanism_name} is not supported."
        ))
    })?;
    let inner = config
        .strip_prefix('[')
        .ok_or_else(|| fail("Expected configuration string to start with [".into()))?
        .strip_suffix(']')
        .ok_or_else(|| fail("Expected configuration string to end with ]".into()))?;
    let mut components = BTreeMap::new();
    for component in inner.split(',') {
        let (key, value) = component.split_once('=').ok_or_else(|| {
            fail(format!(
                "No equals sign found in SCRAM component: {component}"
            ))
        })?;
        let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            Some(unquoted) if value.len() >= 2 => unquoted,
            _ => value,
        };
        components.insert(key.to_string(), value.to_string());
    }
    let name = components
        .remove("name")
        .ok_or_else(|| fail("You must supply 'name' to add-scram".into()))?;
    let salt = match components.remove("salt") {
        Some(text) => Some(
            BASE64
                .decode(&text)
                .map_err(|_| fail(format!("Failed to decode given salt: {text}")))?,
        ),
        None => None,
    };
    let iterations = match components.remove("iterations") {
        Some(text) => text
            .parse::<i32>()
            .map_err(|_| fail(format!("Failed to parse iterations count: {text}")))?,
        None => MIN_ITERATIONS,
    };
    let password = components.remove("password");
    let salted_text = components.remove("saltedpassword");
    let salted = match (&password, salted_text) {
        (Some(_), _) => None,
        (None, None) => {
            return Err(fail(
                "You must supply one of 'password' or 'saltedpassword' to add-scram".into(),
            ));
        }
        (None, Some(_)) if salt.is_none() => {
            return Err(fail(
                "You must supply 'salt' with 'saltedpassword' to add-scram".into(),
            ));
        }
        (None, Some(text)) => Some(
            BASE64
                .decode(&text)
                .map_err(|_| fail(format!("Failed to decode given saltedPassword: {text}")))?,
        ),
    };
    if !components.is_empty() {
        let unknown: Vec<&str> = components.keys().map(String::as_str).collect();
        return Err(fail(format!(
            "Unknown SCRAM configurations: {}",
            unknown.join(", ")
        )));
    }
    // Kafka names the mechanism by its Java enum constant here.
    let constant = mechanism.name().replace('-', "_");
    if iterations < MIN_ITERATIONS {
        return Err(fail(format!(
            "The 'iterations' value must be >= {MIN_ITERATIONS} for add-scram using {constant}"
        )));
    }
    if iterations > MAX_ITERATIONS {
        return Err(fail(format!(
            "The 'iterations' value must be <= {MAX_ITERATIONS} for add-scram using {constant}"
        )));
    }
    let credential = match (password, salted, salt) {
        (Some(password), _, None) => {
            ScramCredential::from_password(mechanism, &password, iterations)
                .map_err(|e| fail(e.to_string()))?
        }
        (Some(password), _, Some(salt)) => {
            let salted = mechanism.salted_password(password.as_bytes(), &salt, iterations as u32);
            ScramCredential::from_salted_password(mechanism, salt, &salted, iterations)
        }
        (None, Some(salted), Some(salt)) => {
            ScramCredential::from_salted_password(mechanism, salt, &salted, iterations)
        }
        // Refused above: no password and no (salt, salted password) pair.
        (None, _, _) => {
            return Err(fail(
                "You must supply one of 'password' or 'saltedpassword' to add-scram".into(),
            ));
        }
    };
    Ok(MetadataRecord::UserScramCredential {
        name,
        mechanism: mechanism.type_id(),
        credential: ScramCredentialRecord {
            salt: credential.salt,
            stored_key: credential.stored_key,
            server_key: credential.server_key,
            iterations: credential.iterations,
        },
    })
}

/// Kafka's `kafka-storage info` for the log directory: the directory found and its
/// `meta.properties` (sorted, as Kafka prints them), or the problems found; and whether there
/// were none.
pub fn info(config: &BrokerConfig) -> (String, bool) {
    let dir = &config.log_dir;
    let mut text = String::new();
    let mut problems = Vec::new();
    let mut found = None;
    if !dir.is_dir() {
        problems.push(if dir.exists() {
            format!("{} is not a directory", dir.display())
        } else {
            format!("{} does not exist", dir.display())
        });
    } else {
        text.push_str(&format!("Found log directory:\n  {}\n\n", dir.display()));
        let path = dir.join("meta.properties");
        match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                problems.push(format!("{} is not formatted.", dir.display()));
            }
            Err(e) => problems.push(format!("Error loading {}: {e}", path.display())),
            Ok(contents) => match crate::config::parse_properties(&contents) {
                Ok(properties) => found = Some(properties),
                Err(e) => problems.push(format!("Error loading {}: {e}", path.display())),
            },
        }
    }
    if let Some(properties) = found {
        let known = ["cluster.id", "directory.id", "node.id", "version"];
        let listed: Vec<String> = known
            .iter()
            .filter_map(|key| properties.get(*key).map(|v| format!("{key}={v}")))
            .collect();
        text.push_str(&format!("Found metadata: {{{}}}\n\n", listed.join(", ")));
        if properties.get("version").map(String::as_str) == Some("0") {
            problems.push("The kafka configuration file appears to be for a cluster in KRaft mode, but the directories are formatted for legacy mode.".into());
        }
    }
    if !problems.is_empty() {
        let heading = if problems.len() == 1 {
            "Found problem:"
        } else {
            "Found problems:"
        };
        text.push_str(heading);
        text.push('\n');
        for problem in &problems {
            text.push_str(&format!("  {problem}\n"));
        }
        text.push('\n');
    }
    (text, problems.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_scram_arguments_parse_as_kafkas() {
        let MetadataRecord::UserScramCredential {
            name,
            mechanism,
            credential,
        } = scram_record("SCRAM-SHA-512=[name=alice,password=alice-secret]").unwrap()
        else {
            panic!("not a credential");
        };
        assert_eq!(
            (name.as_str(), mechanism, credential.iterations),
            ("alice", 2, 4096)
        );
        // Salt and salted password given (RFC 7677's user), quoted: the keys are derived.
        let salt = "W22ZaJ0SNY7soEsUEjb6gQ==";
        let salted = BASE64.encode(ScramMechanism::Sha256.salted_password(
            b"pencil",
            &BASE64.decode(salt).unwrap(),
            4096,
        ));
        let given = scram_record(&format!(
            r#"SCRAM-SHA-256=[name="user",salt="{salt}",saltedpassword="{salted}",iterations=4096]"#
        ))
        .unwrap();
        let from_password = scram_record(&format!(
            "SCRAM-SHA-256=[name=user,salt={salt},password=pencil]"
        ))
        .unwrap();
        assert_eq!(given, from_password);
        for bad in [
            "SCRAM-SHA-1=[name=a,password=b]",
            "SCRAM-SHA-256=name=a,password=b",
            "SCRAM-SHA-256=[password=b]",
            "SCRAM-SHA-256=[name=a]",
            "SCRAM-SHA-256=[name=a,password=b,iterations=10]",
            "SCRAM-SHA-256=[name=a,saltedpassword=AAAA]",
            "SCRAM-SHA-256=[name=a,password=b,colour=red]",
            "SCRAM-SHA-256=[name=a,salt=!!,password=b]",
        ] {
            assert!(scram_record(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn format_and_info_print_kafkas_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().join("data");
        let config =
            BrokerConfig::with_overrides(&[("log.dirs", &log_dir.display().to_string())]).unwrap();
        let (text, healthy) = info(&config);
        assert!(!healthy);
        assert_eq!(
            text,
            format!("Found problem:\n  {} does not exist\n\n", log_dir.display())
        );
        std::fs::create_dir_all(&log_dir).unwrap();
        assert!(info(&config).0.ends_with("is not formatted.\n\n"));
        let request = FormatRequest {
            cluster_id: Some("MkU3OEVBNTcwNTJENDM2Qg".into()),
            // The salted password Kafka's own ScramParser test uses: the keys are derived.
            add_scram: vec![
                r#"SCRAM-SHA-256=[name=alice,salt="N3E=",saltedpassword="YCE=",iterations=8192]"#
                    .into(),
            ],
            ignore_formatted: false,
            quorum: QuorumStart::Unspecified,
        };
        let lines = format(&config, &request).unwrap().kafka_lines(&config);
        assert!(lines[0].starts_with("Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord(name='metadata.version', featureLevel=25) at version 0), "));
        // Kafka 4.4's own tool prints these bytes for the same argument.
        assert!(lines[0].contains("ApiMessageAndVersion(UserScramCredentialRecord(name='alice', mechanism=1, salt=[55, 113], storedKey=[-24, -19, 126, 121, -88, -128, 49, 106, 24, -91, -95, -113, 99, -95, 9, -112, 44, 45, -3, -107, -118, 41, -90, 110, 123, -76, -121, -21, 95, -45, 69, 90], serverKey=[-51, -17, 17, 77, -127, 62, -36, 106, 61, -114, 79, -124, 42, 115, -125, -8, 127, 1, 126, -80, 110, -118, -13, -64, -27, -93, -104, 27, -53, 29, 92, 96], iterations=8192) at version 0)], metadataVersionLevel=25, source=format command)"), "{}", lines[0]);
        assert_eq!(
            lines[1],
            format!(
                "Formatting metadata directory {} with metadata.version 4.0-IV3.",
                log_dir.display()
            )
        );
        let (text, healthy) = info(&config);
        assert!(healthy, "{text}");
        assert!(text.starts_with(&format!("Found log directory:\n  {}\n\nFound metadata: {{cluster.id=MkU3OEVBNTcwNTJENDM2Qg, directory.id=", log_dir.display())));
        assert!(text.ends_with(", node.id=1, version=1}\n\n"), "{text}");
    }

    #[test]
    fn add_scram_refusals_are_kafkas_messages() {
        let refused = |argument: &str| scram_record(argument).unwrap_err().to_string();
        assert_eq!(
            refused("SCRAM-SHA-256=[name=a,password=x,iterations=10]"),
            "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256"
        );
        assert_eq!(
            refused("SCRAM-SHA-256=[name=a,password=x,bogus=1,zzz=2]"),
            "Unknown SCRAM configurations: bogus, zzz"
        );
        assert_eq!(
            refused("SCRAM-SHA-256=[name=a,password]"),
            "No equals sign found in SCRAM component: password"
        );
        assert_eq!(
            refused("SCRAM-SHA-1=[name=a]"),
            "The add-scram mechanism SCRAM-SHA-1 is not supported."
        );
    }

    #[test]
    fn format_writes_the_identity_and_users_once() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().display().to_string();
        let config = BrokerConfig::with_overrides(&[("log.dirs", &log_dir)]).unwrap();
        let request = FormatRequest {
            cluster_id: Some("MkU3OEVBNTcwNTJENDM2Qk".into()),
            add_scram: vec!["SCRAM-SHA-256=[name=alice,password=alice-secret]".into()],
            ignore_formatted: false,
            quorum: QuorumStart::Unspecified,
        };
        let Formatted::New {
            cluster_id,
            records,
        } = format(&config, &request).unwrap()
        else {
            panic!("not formatted");
        };
        assert_eq!(
            (cluster_id.as_str(), records.len()),
            ("MkU3OEVBNTcwNTJENDM2Qk", 1)
        );
        assert_eq!(
            crate::metadata::read_meta(dir.path(), config.node_id).unwrap(),
            Some("MkU3OEVBNTcwNTJENDM2Qk".into())
        );
        assert_eq!(
            crate::metadata::bootstrap::read(dir.path()).unwrap().len(),
            1
        );
        assert!(matches!(
            format(&config, &request),
            Err(FormatError::AlreadyFormatted(_))
        ));
        let again = FormatRequest {
            ignore_formatted: true,
            ..request
        };
        assert_eq!(
            format(&config, &again).unwrap(),
            Formatted::AlreadyFormatted
        );
        // A bad argument writes nothing.
        let other = tempfile::tempdir().unwrap();
        let other_dir = other.path().join("data").display().to_string();
        let config = BrokerConfig::with_overrides(&[("log.dirs", &other_dir)]).unwrap();
        let bad = FormatRequest {
            add_scram: vec!["SCRAM-SHA-256=[name=a]".into()],
            ..Default::default()
        };
        assert!(format(&config, &bad).is_err());
        assert!(!other.path().join("data").exists());
    }
}
