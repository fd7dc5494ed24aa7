//! Client quotas (KIP-546) as Kafka's AdminClient asks for them: DescribeClientQuotas with a
//! filter of (entity type, name) components, AlterClientQuotas of one entity.

use super::{AdminClient, AdminError, kafka_error};
use kafka_protocol::messages::alter_client_quotas_request::{EntityData, EntryData, OpData};
use kafka_protocol::messages::describe_client_quotas_request::ComponentData;
use kafka_protocol::messages::{
    AlterClientQuotasRequest, AlterClientQuotasResponse, ApiKey, DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
};
use kafka_protocol::protocol::StrBytes;

/// How a filter component names its entity type's entities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuotaMatch {
    /// Exactly this name.
    Name(String),
    /// The type's default entity.
    Default,
    /// Any entity of the type.
    Any,
}

/// An entity as (type, name) pairs, `None` naming the type's default.
pub type QuotaEntityParts = Vec<(String, Option<String>)>;

fn wire(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

impl AdminClient {
    /// The entities matching every component (`strict`: and no other entity type), with
    /// their quotas, in the order the broker lists them.
    pub async fn describe_client_quotas(
        &mut self,
        components: &[(String, QuotaMatch)],
        strict: bool,
    ) -> Result<Vec<(QuotaEntityParts, Vec<(String, f64)>)>, AdminError> {
        let request = DescribeClientQuotasRequest::default()
            .with_strict(strict)
            .with_components(
                components
                    .iter()
                    .map(|(entity_type, matched)| {
                        let (match_type, name) = match matched {
                            QuotaMatch::Name(name) => (0, Some(wire(name))),
                            QuotaMatch::Default => (1, None),
                            QuotaMatch::Any => (2, None),
                        };
                        ComponentData::default()
                            .with_entity_type(wire(entity_type))
                            .with_match_type(match_type)
                            .with_match(name)
                    })
                    .collect(),
            );
        let response: DescribeClientQuotasResponse = self
            .call(
                ApiKey::DescribeClientQuotas,
                "DESCRIBE_CLIENT_QUOTAS",
                &request,
            )
            .await?;
        if response.error_code != 0 {
            return Err(kafka_error(
                response.error_code,
                response.error_message.as_ref(),
            ));
        }
        Ok(response
            .entries
            .unwrap_or_default()
            .into_iter()
            .map(|entry| {
                let entity = entry
                    .entity
                    .into_iter()
                    .map(|e| {
                        (
                            e.entity_type.to_string(),
                            e.entity_name.map(|n| n.to_string()),
                        )
                    })
                    .collect();
                let values = entry
                    .values
                    .into_iter()
                    .map(|v| (v.key.to_string(), v.value))
                    .collect();
                (entity, values)
            })
            .collect())
    }

    /// Sets (`Some`) and removes (`None`) quotas of one entity.
    pub async fn alter_client_quotas(
        &mut self,
        entity: &[(String, Option<String>)],
        ops: &[(String, Option<f64>)],
    ) -> Result<(), AdminError> {
        let request = AlterClientQuotasRequest::default().with_entries(vec![
            EntryData::default()
                .with_entity(
                    entity
                        .iter()
                        .map(|(entity_type, name)| {
                            EntityData::default()
                                .with_entity_type(wire(entity_type))
                                .with_entity_name(name.as_deref().map(wire))
                        })
                        .collect(),
                )
                .with_ops(
                    ops.iter()
                        .map(|(key, value)| {
                            OpData::default()
                                .with_key(wire(key))
                                .with_value(value.unwrap_or(0.0))
                                .with_remove(value.is_none())
                        })
                        .collect(),
                ),
        ]);
        let response: AlterClientQuotasResponse = self
            .call(ApiKey::AlterClientQuotas, "ALTER_CLIENT_QUOTAS", &request)
            .await?;
        match response.entries.iter().find(|e| e.error_code != 0) {
            Some(failed) => Err(kafka_error(
                failed.error_code,
                failed.error_message.as_ref(),
            )),
            None => Ok(()),
        }
    }
}
