//! DescribeClientQuotas (v0–1, KIP-546): the quota entities matching a filter and their
//! values, answered from this broker's metadata image as Kafka's brokers answer it.

use super::{ApiContext, wire_str};
use crate::error::code;
use crate::metadata::quota::{FilterError, describe};
use kafka_protocol::messages::describe_client_quotas_response::{EntityData, EntryData, ValueData};
use kafka_protocol::messages::{DescribeClientQuotasRequest, DescribeClientQuotasResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeClientQuotasRequest,
    _version: i16,
) -> Option<DescribeClientQuotasResponse> {
    let image = ctx.broker.metadata().image();
    let components: Vec<(String, i8, Option<String>)> = request
        .components
        .iter()
        .map(|c| {
            (
                c.entity_type.to_string(),
                c.match_type,
                c._match.as_ref().map(|m| m.to_string()),
            )
        })
        .collect();
    let response = match describe(&image.client_quotas, &components, request.strict) {
        Ok(found) => DescribeClientQuotasResponse::default().with_entries(Some(
            found
                .into_iter()
                .map(|(entity, values)| {
                    EntryData::default()
                        .with_entity(
                            entity
                                .0
                                .iter()
                                .map(|(entity_type, name)| {
                                    EntityData::default()
                                        .with_entity_type(wire_str(entity_type))
                                        .with_entity_name(name.as_deref().map(wire_str))
                                })
                                .collect(),
                        )
                        .with_values(
                            values
                                .iter()
                                .map(|(key, value)| {
                                    ValueData::default()
                                        .with_key(wire_str(key))
                                        .with_value(value.0)
                                })
                                .collect(),
                        )
                })
                .collect(),
        )),
        Err(FilterError::Invalid(message)) => DescribeClientQuotasResponse::default()
            .with_error_code(code::INVALID_REQUEST)
            .with_error_message(Some(wire_str(&message))),
        Err(FilterError::UnsupportedType(message)) => DescribeClientQuotasResponse::default()
            .with_error_code(code::UNSUPPORTED_VERSION)
            .with_error_message(Some(wire_str(&message))),
    };
    Some(response)
}
