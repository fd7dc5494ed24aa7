//! `kafka-configs` for the `users` entity type: SCRAM credentials, as Kafka's ConfigCommand
//! alters and describes them — `--add-config 'SCRAM-SHA-256=[iterations=8192,password=...]'`
//! (salted here, sent with AlterUserScramCredentials), `--delete-config SCRAM-SHA-512`,
//! `--describe` (`SCRAM credential configs for user-principal 'alice' are
//! SCRAM-SHA-256=iterations=8192`). Users' quota configs go to `configs_quotas.rs`.

use super::client::{AdminClient, AdminError, ScramUpsert, java_exception};
use super::configs_quotas::{USER_CLIENT_QUOTAS, UsersFailure as Failure, execution_failure};
use crate::auth::scram::{MIN_ITERATIONS, ScramMechanism};

fn is_scram(name: &str) -> bool {
    ScramMechanism::from_name(name).is_some()
}

/// `--alter` of one user: Kafka's checks in its order, then the credentials set and deleted.
pub(super) async fn alter(
    client: &mut AdminClient,
    user: &str,
    set: &[(String, String)],
    delete: &[String],
) -> Result<(), Failure> {
    let refused = |m: String| Err(Failure::Message(m));
    let quota = |name: &str| USER_CLIENT_QUOTAS.contains(&name);
    let unknown_set: Vec<&str> = set
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !is_scram(k) && !quota(k))
        .collect();
    if !unknown_set.is_empty() {
        return refused(format!(
            "Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: {}",
            unknown_set.join(",")
        ));
    }
    let unknown_delete: Vec<&str> = delete
        .iter()
        .map(String::as_str)
        .filter(|k| !is_scram(k) && !quota(k))
        .collect();
    if !unknown_delete.is_empty() {
        return refused(format!(
            "Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: {}",
            unknown_delete.join(",")
        ));
    }
    let has_quota = set.iter().any(|(k, _)| quota(k)) || delete.iter().any(|k| quota(k));
    let has_scram = set.iter().any(|(k, _)| is_scram(k)) || delete.iter().any(|k| is_scram(k));
    if has_scram {
        if user.is_empty() {
            return refused("The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.".into());
        }
        if has_quota {
            return refused("Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.".into());
        }
    }
    if has_quota {
        let (types, names) = (["users".to_string()], [user.to_string()]);
        super::configs_quotas::alter(client, &types, &names, set, delete).await?;
        if user.is_empty() {
            println!("Completed updating default config for users in the cluster.");
        } else {
            println!("Completed updating config for user {user}.");
        }
        return Ok(());
    }
    let mut upserts = Vec::new();
    for (name, value) in set {
        if let Some(mechanism) = ScramMechanism::from_name(name) {
            upserts.push(credential(mechanism, value).map_err(Failure::Message)?);
        }
    }
    let deletions: Vec<ScramMechanism> = delete
        .iter()
        .filter_map(|k| ScramMechanism::from_name(k))
        .collect();
    client
        .alter_scram_credentials(user, &upserts, &deletions)
        .await
        .map_err(execution_failure)?;
    println!("Completed updating config for user {user}.");
    Ok(())
}

/// Kafka's `parseIterationsAndPasswordBytes`: `[iterations=N,]password=...` (the brackets
/// already removed), 4096 iterations unless given (or -1).
fn credential(mechanism: ScramMechanism, text: &str) -> Result<ScramUpsert, String> {
    let constant = mechanism.name().replace('-', "_");
    let invalid = || format!("Invalid credential property {constant}={text}");
    let (iterations, password) = match text.strip_prefix("iterations=") {
        Some(rest) => {
            let (count, password) = rest.split_once(",password=").ok_or_else(invalid)?;
            let valid = count.strip_prefix('-').unwrap_or(count);
            if !valid.chars().all(|c| c.is_ascii_digit()) {
                return Err(invalid());
            }
            let iterations = match count {
                "" | "-1" => MIN_ITERATIONS,
                digits => digits
                    .parse::<i32>()
                    .map_err(|_| format!("For input string: \"{digits}\""))?,
            };
            (iterations, password)
        }
        None => (
            MIN_ITERATIONS,
            text.strip_prefix("password=").ok_or_else(invalid)?,
        ),
    };
    if iterations < MIN_ITERATIONS {
        return Err(format!(
            "Iterations {iterations} is less than the minimum {MIN_ITERATIONS} required for {}",
            mechanism.name()
        ));
    }
    Ok(ScramUpsert {
        mechanism,
        iterations,
        password: password.as_bytes().to_vec(),
    })
}

/// `--describe` of users: each one's SCRAM mechanisms and iteration counts (every user that
/// has credentials when none is named).
pub(super) async fn describe(client: &mut AdminClient, users: &[String]) -> Result<(), Failure> {
    super::configs_quotas::describe(client, &["users".to_string()], users).await?;
    if users.iter().any(|u| u.is_empty()) {
        // The default user has quota configs only.
        return Ok(());
    }
    let described = client
        .describe_scram_credentials(users)
        .await
        .map_err(execution_failure)?;
    for user in described {
        match user.credentials {
            Ok(credentials) => {
                let listed: Vec<String> = credentials
                    .iter()
                    .map(|(m, iterations)| format!("{}=iterations={iterations}", m.name()))
                    .collect();
                println!(
                    "SCRAM credential configs for user-principal '{}' are {}",
                    user.user,
                    listed.join(", ")
                );
            }
            Err(e) => println!(
                "Error retrieving SCRAM credential configs for user-principal '{}': {}",
                user.user,
                simple_exception(&e)
            ),
        }
    }
    Ok(())
}

/// An error as `getClass().getSimpleName() + ": " + getMessage()`.
fn simple_exception(e: &AdminError) -> String {
    match e {
        AdminError::Kafka { code, message } => {
            let class = java_exception(*code);
            format!("{}: {message}", class.rsplit('.').next().unwrap_or(class))
        }
        other => format!("KafkaException: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_parse_as_kafkas() {
        let sha256 = ScramMechanism::from_name("SCRAM-SHA-256").unwrap();
        let parsed = credential(sha256, "iterations=8192,password=alice-secret").unwrap();
        assert_eq!(
            (parsed.iterations, parsed.password.as_slice()),
            (8192, &b"alice-secret"[..])
        );
        assert_eq!(credential(sha256, "password=a,b").unwrap().iterations, 4096);
        assert_eq!(
            credential(sha256, "iterations=-1,password=x")
                .unwrap()
                .iterations,
            4096
        );
        assert_eq!(
            credential(sha256, "iterations=10,password=x").unwrap_err(),
            "Iterations 10 is less than the minimum 4096 required for SCRAM-SHA-256"
        );
        assert_eq!(
            credential(sha256, "secret").unwrap_err(),
            "Invalid credential property SCRAM_SHA_256=secret"
        );
    }
}
