//! `sluice format`: what Kafka's `kafka-storage format` does for a node's log directory —
//! `meta.properties` with the cluster id (given with `--cluster-id`, else generated), and the
//! records the cluster starts with: `--add-scram 'SCRAM-SHA-256=[name=alice,password=...]'`
//! users, parsed as Kafka's `ScramParser` does (`name`; `password`, or `salt` and
//! `saltedpassword` in base64; `iterations`, 4096 by default). A directory formatted already
//! is refused unless `--ignore-formatted`, as Kafka's.

use crate::auth::scram::{MAX_ITERATIONS, MIN_ITERATIONS, ScramCredential, ScramMechanism};
use crate::config::BrokerConfig;
use crate::metadata::records::{MetadataRecord, ScramCredentialRecord};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::collections::BTreeMap;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum FormatError {
    #[error("--add-scram: {0}")]
    Scram(String),
    #[error("{0} is already formatted (use --ignore-formatted to leave it as it is)")]
    AlreadyFormatted(String),
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
}

/// What was asked.
#[derive(Debug, Clone, Default)]
pub struct FormatRequest {
    pub cluster_id: Option<String>,
    pub add_scram: Vec<String>,
    pub ignore_formatted: bool,
}

/// What was done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Formatted {
    New { cluster_id: String, users: usize },
    AlreadyFormatted,
}

pub fn format(config: &BrokerConfig, request: &FormatRequest) -> Result<Formatted, FormatError> {
    // Everything is checked before anything is written.
    let records = request
        .add_scram
        .iter()
        .map(|argument| scram_record(argument))
        .collect::<Result<Vec<_>, _>>()?;
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
    crate::metadata::write_meta(dir, config.node_id, &cluster_id).map_err(write_error)?;
    Ok(Formatted::New {
        cluster_id,
        users: records.len(),
    })
}

/// One `--add-scram` argument as the credential record it creates.
pub fn scram_record(argument: &str) -> Result<MetadataRecord, FormatError> {
    let fail = |reason: String| FormatError::Scram(reason);
    let argument = argument.trim();
    let (mechanism, config) = argument
        .split_once('=')
        .ok_or_else(|| fail("expected MECHANISM=[name=...,password=...]".into()))?;
    let mechanism = ScramMechanism::from_name(mechanism)
        .ok_or_else(|| fail(format!("the mechanism {mechanism} is not supported")))?;
    let inner = config
        .strip_prefix('[')
        .and_then(|c| c.strip_suffix(']'))
        .ok_or_else(|| fail("the configuration must be enclosed in [ ]".into()))?;
    let mut components = BTreeMap::new();
    for component in inner.split(',') {
        let (key, value) = component
            .split_once('=')
            .ok_or_else(|| fail("a component without an equals sign".into()))?;
        let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            Some(unquoted) => unquoted,
            None => value,
        };
        components.insert(key.to_string(), value.to_string());
    }
    let name = components
        .remove("name")
        .ok_or_else(|| fail("'name' is required".into()))?;
    let decode = |what: &str, text: &str| {
        BASE64
            .decode(text)
            .map_err(|_| fail(format!("'{what}' is not base64")))
    };
    let salt = components
        .remove("salt")
        .map(|s| decode("salt", &s))
        .transpose()?;
    let iterations = match components.remove("iterations") {
        Some(text) => text
            .parse::<i32>()
            .map_err(|_| fail("'iterations' is not a number".into()))?,
        None => MIN_ITERATIONS,
    };
    if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
        return Err(fail(format!(
            "'iterations' must be between {MIN_ITERATIONS} and {MAX_ITERATIONS}"
        )));
    }
    let password = components.remove("password");
    let salted = components
        .remove("saltedpassword")
        .map(|s| decode("saltedpassword", &s))
        .transpose()?;
    if let Some(unknown) = components.keys().next() {
        return Err(fail(format!("unknown component '{unknown}'")));
    }
    let credential = match (password, salted, salt) {
        (Some(password), None, None) => {
            ScramCredential::from_password(mechanism, &password, iterations)
                .map_err(|e| fail(e.to_string()))?
        }
        (Some(password), None, Some(salt)) => {
            let salted = mechanism.salted_password(password.as_bytes(), &salt, iterations as u32);
            ScramCredential::from_salted_password(mechanism, salt, &salted, iterations)
        }
        (None, Some(salted), Some(salt)) => {
            ScramCredential::from_salted_password(mechanism, salt, &salted, iterations)
        }
        (None, Some(_), None) => return Err(fail("'saltedpassword' needs 'salt'".into())),
        (Some(_), Some(_), _) => {
            return Err(fail(
                "give one of 'password' and 'saltedpassword', not both".into(),
            ));
        }
        (None, None, _) => return Err(fail("'password' or 'saltedpassword' is required".into())),
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
    fn format_writes_the_identity_and_users_once() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().display().to_string();
        let config = BrokerConfig::with_overrides(&[("log.dirs", &log_dir)]).unwrap();
        let request = FormatRequest {
            cluster_id: Some("MkU3OEVBNTcwNTJENDM2Qk".into()),
            add_scram: vec!["SCRAM-SHA-256=[name=alice,password=alice-secret]".into()],
            ignore_formatted: false,
        };
        assert_eq!(
            format(&config, &request).unwrap(),
            Formatted::New {
                cluster_id: "MkU3OEVBNTcwNTJENDM2Qk".into(),
                users: 1
            }
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
