//! `--command-config FILE`: Kafka client properties (`security.protocol`, `ssl.*`,
//! `sasl.mechanism`, `sasl.jaas.config`) turned into the client side of a connection. The
//! tools connect through the broker's own client code ([`crate::net::PeerSecurity`]), which
//! reads its settings as a broker reads them for a listener it connects to; the client
//! properties are therefore set as that listener's (`listener.name.client.`), and read by
//! the same code that secures this broker's connections to other nodes. Properties that do not
//! concern the connection (`client.id`, timeouts, ...) are accepted and have no effect.

use crate::config::{BrokerConfig, parse_properties};
use crate::net::PeerSecurity;
use std::collections::BTreeMap;
use std::path::Path;

/// The listener name the client properties are set under.
const CLIENT_LISTENER: &str = "CLIENT";

/// The connection security a `--command-config` file sets; PLAINTEXT without one.
pub fn security(path: Option<&Path>) -> Result<PeerSecurity, String> {
    let Some(path) = path else {
        return Ok(PeerSecurity::plaintext());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{} (No such file or directory): {e}", path.display()))?;
    let props = parse_properties(&text).map_err(|e| e.to_string())?;
    security_from(&props)
}

/// [`security`] from properties already read.
pub fn security_from(props: &BTreeMap<String, String>) -> Result<PeerSecurity, String> {
    let protocol = props
        .get("security.protocol")
        .map(|p| p.trim().to_ascii_uppercase())
        .unwrap_or_else(|| "PLAINTEXT".into());
    if !["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"].contains(&protocol.as_str()) {
        return Err(format!(
            "Invalid value {protocol} for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"
        ));
    }
    if protocol == "PLAINTEXT" {
        return Ok(PeerSecurity::plaintext());
    }
    let listener = CLIENT_LISTENER.to_ascii_lowercase();
    let mut broker = BTreeMap::new();
    broker.insert(
        "listener.security.protocol.map".to_string(),
        format!("PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,{CLIENT_LISTENER}:{protocol}"),
    );
    // Kafka's client default (the broker's own connections default to GSSAPI too).
    let mechanism = props
        .get("sasl.mechanism")
        .map(|m| m.trim().to_string())
        .unwrap_or_else(|| "GSSAPI".into());
    broker.insert(
        "sasl.mechanism.inter.broker.protocol".to_string(),
        mechanism.clone(),
    );
    for (key, value) in props {
        if key.starts_with("ssl.") {
            broker.insert(format!("listener.name.{listener}.{key}"), value.clone());
        } else if key == "sasl.jaas.config" {
            broker.insert(
                format!(
                    "listener.name.{listener}.{}.sasl.jaas.config",
                    mechanism.to_ascii_lowercase()
                ),
                value.clone(),
            );
        }
    }
    let config = BrokerConfig::from_properties(&broker).map_err(|e| e.to_string())?;
    PeerSecurity::for_listener(
        &config,
        CLIENT_LISTENER,
        "sasl.mechanism.inter.broker.protocol",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn plaintext_without_a_protocol() {
        assert!(security_from(&props(&[("client.id", "tool")])).is_ok());
    }

    #[test]
    fn sasl_plain_credentials_are_read_from_the_jaas_config() {
        let security = security_from(&props(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "PLAIN"),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"alice-secret\";",
            ),
        ]));
        assert!(security.is_ok(), "{security:?}");
    }

    #[test]
    fn bad_protocols_and_missing_credentials_are_named() {
        let bad = security_from(&props(&[("security.protocol", "TLS")])).unwrap_err();
        assert!(bad.contains("security.protocol"), "{bad}");
        let missing = security_from(&props(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "PLAIN"),
        ]))
        .unwrap_err();
        assert!(missing.contains("jaas"), "{missing}");
        let gssapi = security_from(&props(&[("security.protocol", "SASL_PLAINTEXT")])).unwrap_err();
        assert!(gssapi.contains("GSSAPI"), "{gssapi}");
    }
}
