//! `kafka-configs` quota configs of `users`, `clients` (and the two together) and `ips`, as
//! Kafka 4.4's ConfigCommand handles them: `--alter --add-config producer_byte_rate=1048576`
//! (values parsed as doubles, deletions checked against what is set), `--describe`
//! (`Quota configs for user-principal 'alice', client-id 'app' are producer_byte_rate=1048576.0`,
//! values printed as Java prints a double), with DescribeClientQuotas and AlterClientQuotas.

use super::client::{AdminClient, AdminError, QuotaEntityParts, QuotaMatch, java_exception};
use crate::metadata::quota::{CLIENT_ID, CONNECTION_CREATION_RATE, IP, USER};

/// How a users, clients or ips command ended early; `sluice configs` prints it as it prints
/// its own.
pub enum UsersFailure {
    /// A refused command line or config: the message alone (Kafka's IllegalArgumentException).
    Message(String),
    /// A failed request: Kafka's "Error while executing ..." line, then this.
    Execution(String),
}

use UsersFailure as Failure;

/// Kafka's user and client quota config names (`QuotaConfig.isClientOrUserQuotaConfig`).
pub(super) const USER_CLIENT_QUOTAS: &[&str] = &[
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "controller_mutation_rate",
];

/// The quota entity type an entity type of the tool names.
fn quota_type(entity_type: &str) -> Result<&'static str, Failure> {
    match entity_type {
        "users" => Ok(USER),
        "clients" => Ok(CLIENT_ID),
        "ips" => Ok(IP),
        other => Err(Failure::Message(format!("Unexpected entity type {other}"))),
    }
}

/// Kafka's `getAllClientQuotasConfigs`: a strict filter of one component per entity type
/// (a name, the default for "", any entity of the type when no name is left).
async fn quotas_of(
    client: &mut AdminClient,
    types: &[String],
    names: &[String],
) -> Result<Vec<(QuotaEntityParts, Vec<(String, f64)>)>, Failure> {
    if names.len() > types.len() {
        return Err(Failure::Message(
            "More entity names specified than entity types".into(),
        ));
    }
    let mut components = Vec::new();
    for (i, entity_type) in types.iter().enumerate() {
        let matched = match names.get(i).map(String::as_str) {
            Some("") => QuotaMatch::Default,
            Some(name) => QuotaMatch::Name(name.to_string()),
            None => QuotaMatch::Any,
        };
        components.push((quota_type(entity_type)?.to_string(), matched));
    }
    client
        .describe_client_quotas(&components, true)
        .await
        .map_err(execution_failure)
}

/// `--describe`: one line per matching entity.
pub(super) async fn describe(
    client: &mut AdminClient,
    types: &[String],
    names: &[String],
) -> Result<(), Failure> {
    for (entity, values) in quotas_of(client, types, names).await? {
        println!("{}", describe_line(&entity, &values));
    }
    Ok(())
}

/// Kafka's line for one entity: user, then client id, then IP.
fn describe_line(entity: &QuotaEntityParts, values: &[(String, f64)]) -> String {
    let part = |entity_type: &str, label: &str| {
        entity
            .iter()
            .find(|(t, _)| t == entity_type)
            .map(|(_, name)| match name {
                Some(name) => format!("{label} '{name}'"),
                None => format!("the default {label}"),
            })
    };
    let entity_text: Vec<String> = [
        part(USER, "user-principal"),
        part(CLIENT_ID, "client-id"),
        part(IP, "ip"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let values_text: Vec<String> = values
        .iter()
        .map(|(key, value)| format!("{key}={}", java_double(*value)))
        .collect();
    format!(
        "Quota configs for {} are {}",
        entity_text.join(", "),
        values_text.join(", ")
    )
}

/// The checks Kafka's tool makes of quota names before altering `clients` (alone or with
/// `users`) or `ips`; `users` alone is checked beside its SCRAM credentials.
pub(super) fn check_names(
    types: &[String],
    set: &[(String, String)],
    delete: &[String],
) -> Result<(), Failure> {
    let refused = |m: String| Err(Failure::Message(m));
    if types.first().map(String::as_str) == Some("ips") {
        let unknown: Vec<&str> = set
            .iter()
            .map(|(k, _)| k.as_str())
            .chain(delete.iter().map(String::as_str))
            .filter(|k| *k != CONNECTION_CREATION_RATE)
            .collect();
        if !unknown.is_empty() {
            return refused(format!(
                "Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: {}",
                unknown.join(", ")
            ));
        }
        return Ok(());
    }
    let quota = |k: &str| USER_CLIENT_QUOTAS.contains(&k);
    let unknown_set: Vec<&str> = set
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !quota(k))
        .collect();
    if !unknown_set.is_empty() {
        return refused(format!(
            "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: {}",
            unknown_set.join(",")
        ));
    }
    let unknown_delete: Vec<&str> = delete
        .iter()
        .map(String::as_str)
        .filter(|k| !quota(k))
        .collect();
    if !unknown_delete.is_empty() {
        return refused(format!(
            "Only quota configs can be deleted for 'clients' using --bootstrap-server. Unexpected config names: {}",
            unknown_delete.join(",")
        ));
    }
    Ok(())
}

/// Kafka's `alterQuotaConfigs`: deletions must name configs the entity has; values parse as
/// doubles; one AlterClientQuotas of the entity.
pub(super) async fn alter(
    client: &mut AdminClient,
    types: &[String],
    names: &[String],
    set: &[(String, String)],
    delete: &[String],
) -> Result<(), Failure> {
    if types.len() != names.len() {
        return Err(Failure::Message(
            "Exactly one entity name must be specified for every entity type".into(),
        ));
    }
    let current = quotas_of(client, types, names)
        .await?
        .into_iter()
        .next()
        .map(|(_, values)| values)
        .unwrap_or_default();
    let invalid: Vec<&str> = delete
        .iter()
        .map(String::as_str)
        .filter(|k| !current.iter().any(|(key, _)| key == k))
        .collect();
    if !invalid.is_empty() {
        // Kafka's InvalidConfigurationException: the message alone.
        return Err(Failure::Message(format!(
            "Invalid config(s): {}",
            invalid.join(",")
        )));
    }
    let mut entity = Vec::new();
    for (entity_type, name) in types.iter().zip(names) {
        entity.push((
            quota_type(entity_type)?.to_string(),
            (!name.is_empty()).then(|| name.clone()),
        ));
    }
    let mut ops = Vec::new();
    for (key, value) in set {
        let parsed = parse_java_double(value).ok_or_else(|| {
            Failure::Message(format!(
                "Cannot parse quota configuration value for {key}: {value}"
            ))
        })?;
        ops.push((key.clone(), Some(parsed)));
    }
    ops.extend(delete.iter().map(|k| (k.clone(), None)));
    client
        .alter_client_quotas(&entity, &ops)
        .await
        .map_err(execution_failure)
}

/// Java's `Double.parseDouble` for what users type (leading/trailing spaces, a sign,
/// decimals, exponents, `d`/`f` suffixes); `None` where Java throws.
fn parse_java_double(text: &str) -> Option<f64> {
    let trimmed = text.trim();
    let number = trimmed
        .strip_suffix(['d', 'D', 'f', 'F'])
        .unwrap_or(trimmed);
    match number {
        "NaN" | "+NaN" | "-NaN" => return Some(f64::NAN),
        "Infinity" | "+Infinity" => return Some(f64::INFINITY),
        "-Infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    if number.is_empty()
        || !number
            .chars()
            .all(|c| c.is_ascii_digit() || "+-.eE".contains(c))
    {
        return None;
    }
    number.parse().ok()
}

/// Java's `Double.toString`: plain with at least one decimal between 10⁻³ and 10⁷,
/// otherwise `d.dddE±n`, with the shortest digits that read back the same.
pub(super) fn java_double(value: f64) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0"
        } else {
            "0.0"
        }
        .into();
    }
    let magnitude = value.abs();
    if (1e-3..1e7).contains(&magnitude) {
        let plain = format!("{value}");
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        // Rust's `{:e}`: "1.5e7", "1e-5".
        let scientific = format!("{value:e}");
        let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exponent}")
    }
}

/// A failed request as Kafka's tool reports it: the Java exception's name, then the message.
pub(super) fn execution_failure(e: AdminError) -> Failure {
    match &e {
        AdminError::Kafka { code, message } => {
            Failure::Execution(format!("{}: {message}", java_exception(*code)))
        }
        other => Failure::Execution(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_java_prints_them() {
        assert_eq!(java_double(1048576.0), "1048576.0");
        assert_eq!(java_double(10_000_000.0), "1.0E7");
        assert_eq!(java_double(12_500_000.0), "1.25E7");
        assert_eq!(java_double(0.5), "0.5");
        assert_eq!(java_double(0.0001), "1.0E-4");
        assert_eq!(java_double(200.0), "200.0");
    }

    #[test]
    fn values_parse_as_javas_parse_double() {
        assert_eq!(parse_java_double("1048576"), Some(1048576.0));
        assert_eq!(parse_java_double(" 1.5e3 "), Some(1500.0));
        assert_eq!(parse_java_double("10d"), Some(10.0));
        assert_eq!(parse_java_double("1MB"), None);
        assert_eq!(parse_java_double(""), None);
    }

    #[test]
    fn entities_describe_as_kafkas_tool() {
        let entity = vec![
            (CLIENT_ID.to_string(), None),
            (USER.to_string(), Some("alice".to_string())),
        ];
        let values = vec![
            ("consumer_byte_rate".to_string(), 2e7),
            ("producer_byte_rate".to_string(), 1048576.0),
        ];
        assert_eq!(
            describe_line(&entity, &values),
            "Quota configs for user-principal 'alice', the default client-id are consumer_byte_rate=2.0E7, producer_byte_rate=1048576.0"
        );
    }
}
