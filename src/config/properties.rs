//! Where properties come from: Java's `.properties` format (`=`/`:`/space separators, `#`/`!`
//! comments, backslash continuations and escapes), and the environment variables of the Kafka
//! images (`KAFKA_LOG_DIRS` -> `log.dirs`, `___` -> `-`, `__` -> `_`, `_` -> `.`).

use super::ConfigError;
use std::collections::BTreeMap;

/// Reads Java `.properties` text into ordered key/value pairs (later keys win).
pub fn parse_properties(text: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut out = BTreeMap::new();
    let mut logical = String::new();
    let mut start_line = 0;
    for (number, raw) in text.lines().enumerate() {
        let line = if logical.is_empty() {
            start_line = number + 1;
            raw.trim_start()
        } else {
            raw.trim_start()
        };
        if logical.is_empty() && (line.is_empty() || line.starts_with('#') || line.starts_with('!'))
        {
            continue;
        }
        let trailing_backslashes = line.chars().rev().take_while(|c| *c == '\\').count();
        if trailing_backslashes % 2 == 1 {
            logical.push_str(&line[..line.len() - 1]);
            continue;
        }
        logical.push_str(line);
        let (key, value) = split_property(&logical).ok_or_else(|| ConfigError::Syntax {
            line: start_line,
            text: logical.clone(),
        })?;
        out.insert(key, value);
        logical.clear();
    }
    if !logical.is_empty() {
        let (key, value) = split_property(&logical).ok_or(ConfigError::Syntax {
            line: start_line,
            text: logical.clone(),
        })?;
        out.insert(key, value);
    }
    Ok(out)
}

/// Properties as `.properties` text that [`parse_properties`] reads back unchanged: one
/// `key=value` line each.
pub fn to_properties_text(props: &BTreeMap<String, String>) -> String {
    props
        .iter()
        .map(|(key, value)| {
            format!(
                "{}={}\n",
                escape_property(key, true),
                escape_property(value, false)
            )
        })
        .collect()
}

/// Escapes a key (`is_key`) or a value for a `.properties` line so that [`parse_properties`]
/// reads it back: backslashes, line breaks and tabs always; in a key also spaces, separators
/// and comment marks; in a value a leading space.
pub fn escape_property(text: &str, is_key: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' ' if is_key || i == 0 => out.push_str("\\ "),
            '=' | ':' | '#' | '!' if is_key => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

fn split_property(line: &str) -> Option<(String, String)> {
    let mut key_end = line.len();
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '=' | ':' | ' ' | '\t' => {
                key_end = i;
                break;
            }
            _ => {}
        }
    }
    let key = unescape(&line[..key_end]);
    let mut rest = line[key_end..].trim_start_matches([' ', '\t']);
    if let Some(stripped) = rest.strip_prefix(['=', ':']) {
        rest = stripped.trim_start_matches([' ', '\t']);
    }
    if key.is_empty() {
        return None;
    }
    Some((key, unescape(rest)))
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(decoded) => out.push(decoded),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Environment variables of Kafka's own images that configure the JVM, the image or its
/// start script, not the broker; they are never turned into properties (apache/kafka's
/// `ExcludeServerPropsEnv`, cp-kafka's template, and the topics-at-startup variables).
const NOT_PROPERTIES: &[&str] = &[
    "VERSION",
    "HOME",
    "OPTS",
    "HEAP_OPTS",
    "HEAP_OPT",
    "JVM_PERFORMANCE_OPTS",
    "JMX_OPTS",
    "JMX_HOSTNAME",
    "JMX_PORT",
    "GC_LOG_OPTS",
    "LOG4J_OPTS",
    "LOG4J_LOGGERS",
    "LOG4J_ROOT_LOGLEVEL",
    "TOOLS_LOG4J_LOGLEVEL",
    "DEBUG",
    "LOG_DIR",
    "CREATE_TOPICS",
    "CREATE_TOPICS_SEPARATOR",
];

/// Which image's convention an environment follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvConvention {
    /// apache/kafka and Confluent's cp-kafka: every `KAFKA_*` variable is a property, and
    /// `CLUSTER_ID` is the cluster id.
    Kafka,
    /// Bitnami's image: only `KAFKA_CFG_*` variables are properties (its other `KAFKA_*`
    /// variables configure the image's scripts), and `KAFKA_KRAFT_CLUSTER_ID` is the cluster id.
    Bitnami,
}

impl EnvConvention {
    /// Bitnami's when any `KAFKA_CFG_*` variable is set (no Kafka property starts `cfg.`),
    /// else Kafka's.
    pub fn detect<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        if names.into_iter().any(|n| n.starts_with("KAFKA_CFG_")) {
            Self::Bitnami
        } else {
            Self::Kafka
        }
    }
}

/// Properties from environment variables, following the Kafka images' conventions
/// ([`EnvConvention::detect`]): `KAFKA_ADVERTISED_LISTENERS` -> `advertised.listeners` (prefix
/// dropped, lower case, `_` -> `.`, `__` -> `_`, `___` -> `-`), or Bitnami's
/// `KAFKA_CFG_ADVERTISED_LISTENERS` (`_` -> `.`, with its `sasl_ssl`/`sasl_plaintext`
/// exceptions; empty values skipped); `SLUICE_*` likewise and wins over both. The cluster id
/// comes from `CLUSTER_ID` (apache/kafka, cp-kafka), `KAFKA_KRAFT_CLUSTER_ID` (Bitnami) or
/// `KAFKA_CLUSTER_ID`.
pub fn properties_from_env(
    vars: impl IntoIterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    let vars: Vec<(String, String)> = vars.into_iter().collect();
    let convention = EnvConvention::detect(vars.iter().map(|(name, _)| name.as_str()));
    let mut kafka = BTreeMap::new();
    let mut sluice = BTreeMap::new();
    let mut cluster_id = None;
    for (name, value) in vars {
        if let Some(rest) = name.strip_prefix("SLUICE_") {
            if !rest.is_empty() {
                sluice.insert(env_name_to_property(rest), value);
            }
            continue;
        }
        match convention {
            EnvConvention::Kafka => {
                if name == "CLUSTER_ID" {
                    cluster_id = Some(value);
                    continue;
                }
                let Some(rest) = name.strip_prefix("KAFKA_") else {
                    continue;
                };
                if rest.is_empty() || NOT_PROPERTIES.contains(&rest) {
                    continue;
                }
                kafka.insert(env_name_to_property(rest), value);
            }
            EnvConvention::Bitnami => {
                if name == "KAFKA_KRAFT_CLUSTER_ID" {
                    cluster_id = Some(value);
                    continue;
                }
                let Some(rest) = name.strip_prefix("KAFKA_CFG_") else {
                    continue;
                };
                if rest.is_empty() || value.trim().is_empty() {
                    continue;
                }
                kafka.insert(bitnami_name_to_property(rest), value);
            }
        }
    }
    if let Some(id) = cluster_id.filter(|id| !id.trim().is_empty()) {
        kafka.entry("cluster.id".to_string()).or_insert(id);
    }
    kafka.extend(sluice);
    kafka
}

/// Bitnami's mapping (`kafka_configure_from_environment_variables`): every `_` is a `.`,
/// except in the protocol names `sasl_ssl` and `sasl_plaintext`.
fn bitnami_name_to_property(name: &str) -> String {
    name.to_ascii_lowercase()
        .replace('_', ".")
        .replace("sasl.ssl", "sasl_ssl")
        .replace("sasl.plaintext", "sasl_plaintext")
}

fn env_name_to_property(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    // Longest runs first, through placeholders that cannot occur in a variable name.
    lower
        .replace("___", "\u{1}")
        .replace("__", "\u{2}")
        .replace('_', ".")
        .replace("\u{1}", "-")
        .replace("\u{2}", "_")
}
