//! Client quotas as the cluster metadata keeps them (KIP-546, KRaft's `ClientQuotaRecord` and
//! `ClientQuotasImage`): an entity — a user, a client id, both, or an IP address, each named
//! or the type's default — and its quota values; which keys each kind of entity takes; and
//! the DescribeClientQuotas filter over them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Kafka's entity type names.
pub const USER: &str = "user";
pub const CLIENT_ID: &str = "client-id";
pub const IP: &str = "ip";

/// The quota keys (Kafka's `QuotaConfig`).
pub const PRODUCER_BYTE_RATE: &str = "producer_byte_rate";
pub const CONSUMER_BYTE_RATE: &str = "consumer_byte_rate";
pub const REQUEST_PERCENTAGE: &str = "request_percentage";
pub const CONTROLLER_MUTATION_RATE: &str = "controller_mutation_rate";
pub const CONNECTION_CREATION_RATE: &str = "connection_creation_rate";

/// How a quota key's value is typed (Kafka's `ConfigDef.Type` of the key): integral types
/// refuse fractions and values beyond their range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaKind {
    Long,
    Int,
    Double,
}

/// The keys a user and/or client-id entity takes.
pub const USER_AND_CLIENT_KEYS: &[(&str, QuotaKind)] = &[
    (PRODUCER_BYTE_RATE, QuotaKind::Long),
    (CONSUMER_BYTE_RATE, QuotaKind::Long),
    (REQUEST_PERCENTAGE, QuotaKind::Double),
    (CONTROLLER_MUTATION_RATE, QuotaKind::Double),
];

/// The keys an IP entity takes.
pub const IP_KEYS: &[(&str, QuotaKind)] = &[(CONNECTION_CREATION_RATE, QuotaKind::Int)];

/// One quota entity: entity type to name, `None` naming the type's default. Kafka compares
/// entities as maps, so this is one.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct QuotaEntity(pub BTreeMap<String, Option<String>>);

impl QuotaEntity {
    pub fn get(&self, entity_type: &str) -> Option<&Option<String>> {
        self.0.get(entity_type)
    }

    /// The user/client-id entity with these parts (`Some(None)`: the default).
    pub fn user_client(user: Option<Option<&str>>, client_id: Option<Option<&str>>) -> Self {
        let mut map = BTreeMap::new();
        if let Some(user) = user {
            map.insert(USER.to_string(), user.map(str::to_string));
        }
        if let Some(client_id) = client_id {
            map.insert(CLIENT_ID.to_string(), client_id.map(str::to_string));
        }
        Self(map)
    }

    /// The IP entity (`None`: the default IP quota).
    pub fn ip(address: Option<&str>) -> Self {
        Self(BTreeMap::from([(
            IP.to_string(),
            address.map(str::to_string),
        )]))
    }
}

impl fmt::Display for QuotaEntity {
    /// As Kafka's `ClientQuotaEntity.toString`, which its messages quote.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries: Vec<String> = self
            .0
            .iter()
            .map(|(t, n)| format!("{t}={}", n.as_deref().unwrap_or("null")))
            .collect();
        write!(f, "ClientQuotaEntity(entries={{{}}})", entries.join(", "))
    }
}

/// A quota value (Kafka keeps every quota as a double). Compared bit for bit, so images can
/// be compared; the controller admits only finite values above zero.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
pub struct QuotaValue(pub f64);

impl PartialEq for QuotaValue {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for QuotaValue {}

/// One entity's quotas, by key.
pub type QuotaValues = BTreeMap<String, QuotaValue>;

/// The quotas of every entity that has one.
pub type ClientQuotas = BTreeMap<QuotaEntity, QuotaValues>;

/// How a DescribeClientQuotas filter component matches an entity type (Kafka's
/// `MATCH_TYPE_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComponentMatch {
    /// The type named exactly so (0 with a name).
    Exact(String),
    /// The type's default (1).
    Default,
    /// The type present, with any name or the default (2).
    Specified,
}

/// Why a filter cannot be answered: INVALID_REQUEST, or UNSUPPORTED_VERSION for an entity
/// type this broker does not know (as Kafka answers both).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterError {
    Invalid(String),
    UnsupportedType(String),
}

/// The entities matching a DescribeClientQuotas filter, with their quotas (Kafka's
/// `ClientQuotasImage.describe`). A wire component: entity type, match type, match string.
pub fn describe<'a>(
    quotas: &'a ClientQuotas,
    components: &[(String, i8, Option<String>)],
    strict: bool,
) -> Result<Vec<(&'a QuotaEntity, &'a QuotaValues)>, FilterError> {
    let mut filter: BTreeMap<&str, ComponentMatch> = BTreeMap::new();
    for (entity_type, match_type, name) in components {
        if entity_type.is_empty() {
            return Err(FilterError::Invalid("Invalid empty entity type.".into()));
        }
        if filter.contains_key(entity_type.as_str()) {
            return Err(FilterError::Invalid(format!(
                "Entity type {entity_type} cannot appear more than once in the filter."
            )));
        }
        if ![IP, USER, CLIENT_ID].contains(&entity_type.as_str()) {
            return Err(FilterError::UnsupportedType(format!(
                "Unsupported entity type {entity_type}"
            )));
        }
        let component = match (match_type, name) {
            (0, Some(name)) => ComponentMatch::Exact(name.clone()),
            (0, None) => {
                return Err(FilterError::Invalid(
                    "Request specified MATCH_TYPE_EXACT, but set match string to null.".into(),
                ));
            }
            (1, None) => ComponentMatch::Default,
            (1, Some(_)) => {
                return Err(FilterError::Invalid(
                    "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."
                        .into(),
                ));
            }
            (2, None) => ComponentMatch::Specified,
            (2, Some(_)) => {
                return Err(FilterError::Invalid(
                    "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."
                        .into(),
                ));
            }
            (other, _) => {
                return Err(FilterError::Invalid(format!("Unknown match type {other}")));
            }
        };
        filter.insert(entity_type.as_str(), component);
    }
    if filter.contains_key(IP) && (filter.contains_key(USER) || filter.contains_key(CLIENT_ID)) {
        return Err(FilterError::Invalid(
            "Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.".into(),
        ));
    }
    Ok(quotas
        .iter()
        .filter(|(entity, _)| matches(entity, &filter, strict))
        .collect())
}

fn matches(entity: &QuotaEntity, filter: &BTreeMap<&str, ComponentMatch>, strict: bool) -> bool {
    if strict && entity.0.len() != filter.len() {
        return false;
    }
    filter.iter().all(
        |(entity_type, component)| match (entity.get(entity_type), component) {
            (None, _) => false,
            (Some(name), ComponentMatch::Exact(wanted)) => name.as_deref() == Some(wanted),
            (Some(name), ComponentMatch::Default) => name.is_none(),
            (Some(_), ComponentMatch::Specified) => true,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quotas() -> ClientQuotas {
        let value = |v| BTreeMap::from([(PRODUCER_BYTE_RATE.to_string(), QuotaValue(v))]);
        BTreeMap::from([
            (
                QuotaEntity::user_client(Some(Some("alice")), None),
                value(1.0),
            ),
            (QuotaEntity::user_client(Some(None), None), value(2.0)),
            (
                QuotaEntity::user_client(Some(Some("alice")), Some(Some("app"))),
                value(3.0),
            ),
            (
                QuotaEntity::user_client(None, Some(Some("app"))),
                value(4.0),
            ),
            (QuotaEntity::ip(Some("10.0.0.1")), value(5.0)),
        ])
    }

    fn described(components: &[(&str, i8, Option<&str>)], strict: bool) -> Vec<f64> {
        let components: Vec<(String, i8, Option<String>)> = components
            .iter()
            .map(|(t, m, n)| (t.to_string(), *m, n.map(str::to_string)))
            .collect();
        let quotas = quotas();
        describe(&quotas, &components, strict)
            .unwrap()
            .into_iter()
            .map(|(_, values)| values[PRODUCER_BYTE_RATE].0)
            .collect()
    }

    #[test]
    fn filters_match_as_kafkas_image_does() {
        // Not strict: entities with the component and anything else.
        let mut alice = described(&[(USER, 0, Some("alice"))], false);
        alice.sort_by(f64::total_cmp);
        assert_eq!(alice, vec![1.0, 3.0]);
        assert_eq!(described(&[(USER, 0, Some("alice"))], true), vec![1.0]);
        assert_eq!(described(&[(USER, 1, None)], false), vec![2.0]);
        assert_eq!(described(&[(USER, 2, None)], false).len(), 3);
        assert_eq!(described(&[(IP, 2, None)], true), vec![5.0]);
        // No component, not strict: everything; strict: nothing.
        assert_eq!(described(&[], false).len(), 5);
        assert!(described(&[], true).is_empty());
    }

    #[test]
    fn bad_filters_are_refused_with_kafkas_messages() {
        let quotas = quotas();
        let refused = |components: Vec<(String, i8, Option<String>)>| {
            describe(&quotas, &components, false).unwrap_err()
        };
        assert_eq!(
            refused(vec![(USER.into(), 0, None)]),
            FilterError::Invalid(
                "Request specified MATCH_TYPE_EXACT, but set match string to null.".into()
            )
        );
        assert!(matches!(
            refused(vec![("group".into(), 2, None)]),
            FilterError::UnsupportedType(_)
        ));
        assert!(matches!(
            refused(vec![(IP.into(), 2, None), (USER.into(), 2, None)]),
            FilterError::Invalid(_)
        ));
        assert!(matches!(
            refused(vec![(USER.into(), 2, None), (USER.into(), 1, None)]),
            FilterError::Invalid(_)
        ));
    }

    #[test]
    fn entities_print_as_kafkas() {
        assert_eq!(
            QuotaEntity::user_client(Some(Some("alice")), Some(None)).to_string(),
            "ClientQuotaEntity(entries={client-id=null, user=alice})"
        );
    }
}
