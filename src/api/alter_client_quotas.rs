//! AlterClientQuotas (v0–1, KIP-546): quotas of user, client-id and IP entities set and
//! removed through the active controller, one result per entry in request order. An IP
//! entity must name an address or a host that resolves, as Kafka checks it.

use super::{ApiContext, wire_str};
use crate::controller::control::QuotaAlteration;
use crate::error::code;
use crate::metadata::quota::IP;
use kafka_protocol::messages::alter_client_quotas_request;
use kafka_protocol::messages::alter_client_quotas_response::{EntityData, EntryData};
use kafka_protocol::messages::{AlterClientQuotasRequest, AlterClientQuotasResponse};
use std::time::Duration;

/// How long resolving a host named as an IP entity may take.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// A request entry's entity as the response repeats it.
pub fn entity_of(entry: &alter_client_quotas_request::EntryData) -> Vec<EntityData> {
    entry
        .entity
        .iter()
        .map(|e| {
            EntityData::default()
                .with_entity_type(e.entity_type.clone())
                .with_entity_name(e.entity_name.clone())
        })
        .collect()
}

pub async fn handle(
    ctx: &ApiContext,
    request: AlterClientQuotasRequest,
    _version: i16,
) -> Option<AlterClientQuotasResponse> {
    let mut outcomes: Vec<Option<(i16, String)>> = vec![None; request.entries.len()];
    let mut alterations = Vec::new();
    let mut altered = Vec::new();
    for (index, entry) in request.entries.iter().enumerate() {
        let alteration = QuotaAlteration {
            entity: entry
                .entity
                .iter()
                .map(|e| {
                    (
                        e.entity_type.to_string(),
                        e.entity_name.as_ref().map(|n| n.to_string()),
                    )
                })
                .collect(),
            ops: entry
                .ops
                .iter()
                .map(|op| (op.key.to_string(), (!op.remove).then_some(op.value)))
                .collect(),
        };
        if let Some(message) = unresolvable_ip(&alteration).await {
            outcomes[index] = Some((code::INVALID_REQUEST, message));
            continue;
        }
        alterations.push(alteration);
        altered.push(index);
    }
    if !alterations.is_empty() {
        match ctx
            .broker
            .alter_client_quotas(alterations, request.validate_only)
            .await
        {
            Ok(results) => {
                for (index, result) in altered.iter().zip(results) {
                    if let Err(message) = result {
                        outcomes[*index] = Some((code::INVALID_REQUEST, message));
                    }
                }
            }
            Err(e) => {
                let failed = (e.code(), e.message());
                for index in altered {
                    outcomes[index] = Some(failed.clone());
                }
            }
        }
    }
    Some(
        AlterClientQuotasResponse::default().with_entries(
            request
                .entries
                .iter()
                .zip(outcomes)
                .map(|(entry, outcome)| {
                    let (error_code, message) = outcome.unzip();
                    EntryData::default()
                        .with_error_code(error_code.unwrap_or(code::NONE))
                        .with_error_message(message.map(|m| wire_str(&m)))
                        .with_entity(entity_of(entry))
                })
                .collect(),
        ),
    )
}

/// Kafka's `isValidIpEntity`: a named IP entity must be an address or resolve as a host.
async fn unresolvable_ip(alteration: &QuotaAlteration) -> Option<String> {
    let (_, Some(name)) = alteration.entity.iter().find(|(t, _)| t == IP)? else {
        return None;
    };
    if name.parse::<std::net::IpAddr>().is_ok() {
        return None;
    }
    let resolved =
        tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((name.as_str(), 0)))
            .await
            .ok()
            .and_then(Result::ok)
            .is_some_and(|mut addresses| addresses.next().is_some());
    (!resolved).then(|| format!("{name} is not a valid IP or resolvable host."))
}
