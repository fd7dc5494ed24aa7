//! Client quota sensors as Kafka's `ClientQuotaManager` metrics come out of the JMX exporter's
//! KRaft rules: the MBean `kafka.server:type=Produce,user=U,client-id=C` (an empty tag left
//! out, as Kafka's JMX reporter leaves it) is matched by the generic `kafka.server<type=(.+)>`
//! rule, so every sensor is a family of its own, its tags in the name:
//! `kafka_server_produce_client_id_c_byte_rate`, `..._throttle_time`,
//! `kafka_server_request_user_u_client_id_c_request_time`,
//! `kafka_server_controllermutation_client_id_c_{mutation_rate,throttle_time,tokens}` —
//! measured on Kafka 4.4 with quotas set (`compat/kafka-peer/metrics/README.md`). A sensor
//! exists once a quota of its kind is configured and a client was measured, and goes when it
//! has been idle for a whole quota span.

use super::gauge;
use crate::broker::Broker;
use prometheus_client::encoding::DescriptorEncoder;
use std::collections::BTreeSet;
use std::sync::Arc;

pub(super) fn encode(
    broker: &Arc<Broker>,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    // Two client ids can sanitize to one name; each family is written once.
    let mut written = BTreeSet::new();
    for sensor in broker.client_quotas().metrics() {
        let mbean_type = sensor.kind.mbean_type();
        // What the rule's `type=(.+)` captures of `kafka.server<type=...><>attribute`.
        let mut captured = mbean_type.to_string();
        for (tag, value) in [("user", &sensor.user), ("client-id", &sensor.client_id)] {
            if !value.is_empty() {
                captured.push_str(&format!(", {tag}={value}"));
            }
        }
        for (attribute, value) in &sensor.attributes {
            let name = exporter_name(&format!("kafka_server_{captured}_{attribute}"));
            if !written.insert(name.clone()) {
                continue;
            }
            let what = match *attribute {
                "throttle-time" => "average throttle-time".to_string(),
                "tokens" => "remaining tokens in the token bucket".to_string(),
                other => other.to_string(),
            };
            let help = format!(
                "Tracking {what} per user/client-id kafka.server:name=null,type={mbean_type},attribute={attribute}"
            );
            gauge(encoder, &name, &help, *value)?;
        }
    }
    Ok(())
}

/// The JMX exporter's name of a matched rule's output: lower case (`lowercaseOutputName`),
/// every character a Prometheus name cannot hold made `_`, runs of `_` made one.
fn exporter_name(raw: &str) -> String {
    let mut name = String::with_capacity(raw.len());
    for c in raw.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
            c
        } else {
            '_'
        };
        if c == '_' && name.ends_with('_') {
            continue;
        }
        name.push(c);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::exporter_name;

    #[test]
    fn names_come_out_as_the_exporter_writes_them() {
        // As measured on Kafka 4.4 with the exporter's KRaft rules.
        assert_eq!(
            exporter_name("kafka_server_Produce, client-id=qc_byte-rate"),
            "kafka_server_produce_client_id_qc_byte_rate"
        );
        assert_eq!(
            exporter_name("kafka_server_ControllerMutation, user=Alice, client-id=qm_tokens"),
            "kafka_server_controllermutation_user_alice_client_id_qm_tokens"
        );
        assert_eq!(
            exporter_name("kafka_server_Request, client-id=adminclient-1_request-time"),
            "kafka_server_request_client_id_adminclient_1_request_time"
        );
    }
}
