//! Client quota changes (KRaft's `ClientQuotaControlManager`): each alteration's entity and
//! keys checked with Kafka's messages, then one record per changed quota; all the request's
//! records are proposed together.

use super::{Changes, ClusterControl, Outcome};
use crate::error::Error;
use crate::metadata::quota::{
    CLIENT_ID, IP, IP_KEYS, QuotaEntity, QuotaKind, QuotaValue, USER, USER_AND_CLIENT_KEYS,
};
use crate::metadata::records::MetadataRecord;
use std::collections::BTreeMap;

/// One entity's quota changes as AlterClientQuotas carries them: the entity as (type, name)
/// pairs in request order, and (key, value) ops where `None` removes the key.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaAlteration {
    pub entity: Vec<(String, Option<String>)>,
    pub ops: Vec<(String, Option<f64>)>,
}

impl QuotaAlteration {
    /// The entity as Kafka compares it (a map; a type named twice keeps its last name).
    pub fn entity_key(&self) -> QuotaEntity {
        QuotaEntity(self.entity.iter().cloned().collect())
    }
}

impl ClusterControl {
    /// Applies AlterClientQuotas: one result per alteration, in order (`Err` carries Kafka's
    /// INVALID_REQUEST message). Nothing is written for `validate_only`.
    pub fn alter_client_quotas(
        &mut self,
        offset: u64,
        alterations: &[QuotaAlteration],
        validate_only: bool,
    ) -> Result<Outcome<Vec<Result<(), String>>>, Error> {
        let mut changes = Changes::new(&self.image);
        let mut records = Vec::new();
        // Kafka keys its results by entity: an entity named again gets the "duplicate" error,
        // and that is what every alteration of it reports.
        let mut results: BTreeMap<QuotaEntity, Result<(), String>> = BTreeMap::new();
        for alteration in alterations {
            let entity = alteration.entity_key();
            let mut ops: BTreeMap<&str, Option<f64>> = BTreeMap::new();
            let mut duplicate_key = None;
            for (key, value) in &alteration.ops {
                if ops.insert(key, *value).is_some() {
                    duplicate_key = Some(key.clone());
                }
            }
            if results.contains_key(&entity) || duplicate_key.is_some() {
                results.insert(
                    entity.clone(),
                    Err(format!("Ignoring duplicate entity {entity}")),
                );
                continue;
            }
            let outcome = self.alteration_records(alteration, &entity, &ops);
            match outcome {
                Ok(mut of_entity) => {
                    records.append(&mut of_entity);
                    results.insert(entity, Ok(()));
                }
                Err(message) => {
                    results.insert(entity, Err(message));
                }
            }
        }
        if !validate_only && !records.is_empty() {
            changes.push(records)?;
        }
        let reply = alterations
            .iter()
            .map(|a| results.get(&a.entity_key()).cloned().unwrap_or(Ok(())))
            .collect();
        Ok(self.finish(offset, changes, reply))
    }

    fn alteration_records(
        &self,
        alteration: &QuotaAlteration,
        entity: &QuotaEntity,
        ops: &BTreeMap<&str, Option<f64>>,
    ) -> Result<Vec<MetadataRecord>, String> {
        let keys = keys_for(alteration)?;
        let current = self.image.client_quotas.get(entity);
        let mut records = Vec::new();
        for (key, value) in ops {
            match value {
                None => {
                    if current.is_some_and(|c| c.contains_key(*key)) {
                        records.push(MetadataRecord::ClientQuota {
                            entity: entity.clone(),
                            key: key.to_string(),
                            value: None,
                        });
                    }
                }
                Some(value) => {
                    validate_value(keys, key, *value)?;
                    let value = QuotaValue(*value);
                    if current.and_then(|c| c.get(*key)) != Some(&value) {
                        records.push(MetadataRecord::ClientQuota {
                            entity: entity.clone(),
                            key: key.to_string(),
                            value: Some(value),
                        });
                    }
                }
            }
        }
        Ok(records)
    }
}

/// Kafka's `validateEntity` and `configKeysForEntityType`: the keys the entity may set.
fn keys_for(alteration: &QuotaAlteration) -> Result<&'static [(&'static str, QuotaKind)], String> {
    if alteration.entity.is_empty() {
        return Err("Invalid empty client quota entity".into());
    }
    let mut seen: Vec<&str> = Vec::new();
    for (entity_type, name) in &alteration.entity {
        if seen.contains(&entity_type.as_str()) {
            return Err(format!(
                "Invalid client quota entity, duplicate entity entry {entity_type}"
            ));
        }
        if ![USER, CLIENT_ID, IP].contains(&entity_type.as_str()) {
            return Err(format!("Unhandled client quota entity type: {entity_type}"));
        }
        seen.push(entity_type);
        if name.as_deref() == Some("") {
            return Err(format!("Empty {entity_type} not supported"));
        }
    }
    if seen.contains(&IP) {
        if seen.len() > 1 {
            // Kafka's message, missing space included.
            return Err("Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId".into());
        }
        Ok(IP_KEYS)
    } else {
        Ok(USER_AND_CLIENT_KEYS)
    }
}

/// Kafka's `validateQuotaKeyValue`.
fn validate_value(keys: &[(&str, QuotaKind)], key: &str, value: f64) -> Result<(), String> {
    let Some((_, kind)) = keys.iter().find(|(k, _)| *k == key) else {
        return Err(format!("Invalid configuration key {key}"));
    };
    if value.is_nan() || value <= 0.0 {
        return Err(format!("Quota {key} must be greater than 0"));
    }
    let integral = |max: f64, name: &str| {
        if value > max {
            Err(format!("Proposed value for {key} is too large for {name}."))
        } else if (value % 1.0).abs() > 1e-6 {
            Err(format!("{key} cannot be a fractional value."))
        } else {
            Ok(())
        }
    };
    match kind {
        QuotaKind::Double if value.is_finite() => Ok(()),
        // JSON (the metadata log) has no infinity; Kafka's double would take it.
        QuotaKind::Double => Err(format!("Quota {key} must be a finite number")),
        QuotaKind::Int => integral(i32::MAX as f64, "an INT"),
        QuotaKind::Long => integral(i64::MAX as f64, "a LONG"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::quota::{CONNECTION_CREATION_RATE, PRODUCER_BYTE_RATE};

    fn alteration(entity: &[(&str, Option<&str>)], ops: &[(&str, Option<f64>)]) -> QuotaAlteration {
        QuotaAlteration {
            entity: entity
                .iter()
                .map(|(t, n)| (t.to_string(), n.map(str::to_string)))
                .collect(),
            ops: ops.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn entities_and_values_are_checked_with_kafkas_messages() {
        let check = |a: QuotaAlteration| {
            let keys = keys_for(&a)?;
            for (key, value) in &a.ops {
                if let Some(value) = value {
                    validate_value(keys, key, *value)?;
                }
            }
            Ok::<(), String>(())
        };
        assert_eq!(
            check(alteration(&[], &[])),
            Err("Invalid empty client quota entity".into())
        );
        assert_eq!(
            check(alteration(&[("group", Some("g"))], &[])),
            Err("Unhandled client quota entity type: group".into())
        );
        assert_eq!(
            check(alteration(&[(USER, Some(""))], &[])),
            Err("Empty user not supported".into())
        );
        assert!(check(alteration(&[(IP, Some("1.2.3.4")), (USER, None)], &[])).is_err());
        assert_eq!(
            check(alteration(
                &[(IP, None)],
                &[(PRODUCER_BYTE_RATE, Some(1.0))]
            )),
            Err("Invalid configuration key producer_byte_rate".into())
        );
        assert_eq!(
            check(alteration(
                &[(USER, None)],
                &[(PRODUCER_BYTE_RATE, Some(0.0))]
            )),
            Err("Quota producer_byte_rate must be greater than 0".into())
        );
        assert_eq!(
            check(alteration(
                &[(USER, None)],
                &[(PRODUCER_BYTE_RATE, Some(1.5))]
            )),
            Err("producer_byte_rate cannot be a fractional value.".into())
        );
        assert_eq!(
            check(alteration(
                &[(IP, None)],
                &[(CONNECTION_CREATION_RATE, Some(3e9))]
            )),
            Err("Proposed value for connection_creation_rate is too large for an INT.".into())
        );
        assert_eq!(
            check(alteration(
                &[(USER, Some("a")), (CLIENT_ID, None)],
                &[("request_percentage", Some(12.5))]
            )),
            Ok(())
        );
    }
}
