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

/// Environment variables of Kafka's own images that configure the JVM or the image, not the
/// broker; they are never turned into properties.
const NOT_PROPERTIES: &[&str] = &[
    "VERSION",
    "HOME",
    "OPTS",
    "HEAP_OPTS",
    "JVM_PERFORMANCE_OPTS",
    "JMX_OPTS",
    "GC_LOG_OPTS",
    "LOG4J_OPTS",
    "LOG4J_LOGGERS",
    "LOG4J_ROOT_LOGLEVEL",
    "TOOLS_LOG4J_LOGLEVEL",
    "DEBUG",
    "LOG_DIR",
];

/// Properties from environment variables, following the Kafka images' convention:
/// `KAFKA_ADVERTISED_LISTENERS` -> `advertised.listeners` (prefix dropped, lower case, `_` -> `.`,
/// `__` -> `_`, `___` -> `-`); `SLUICE_*` likewise and wins over `KAFKA_*`. `KAFKA_CLUSTER_ID`
/// (the image's format-step variable) becomes `cluster.id`.
pub fn properties_from_env(
    vars: impl IntoIterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    let mut kafka = BTreeMap::new();
    let mut sluice = BTreeMap::new();
    for (name, value) in vars {
        let (target, rest) = if let Some(rest) = name.strip_prefix("SLUICE_") {
            (&mut sluice, rest)
        } else if let Some(rest) = name.strip_prefix("KAFKA_") {
            if NOT_PROPERTIES.contains(&rest) {
                continue;
            }
            (&mut kafka, rest)
        } else {
            continue;
        };
        if rest.is_empty() {
            continue;
        }
        target.insert(env_name_to_property(rest), value);
    }
    kafka.extend(sluice);
    kafka
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
