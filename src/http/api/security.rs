//! ACLs and SCRAM users, as DescribeAcls/CreateAcls/DeleteAcls and
//! DescribeUserScramCredentials/AlterUserScramCredentials manage them (DESCRIBE on the
//! cluster to see, ALTER to change): `GET/POST/DELETE /api/v1/acls`,
//! `GET /api/v1/users`, `PUT/DELETE /api/v1/users/{user}`. Names are Kafka's (`TOPIC`,
//! `PREFIXED`, `DESCRIBE_CONFIGS`, `ALLOW`, `SCRAM-SHA-256`). A password set here is salted
//! and hashed by the broker (Kafka's tools do it on the client), never stored or shown.

use super::{ApiError, ApiResult};
use crate::auth::acl::{
    AclBinding, AclFilter, AclOperation, PatternType, PermissionType, ResourceType,
};
use crate::auth::scram::{ScramMechanism, ScramUpsertion, random_bytes};
use crate::broker::Broker;
use crate::http::access::Access;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// An ACL as the API shows and takes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AclView {
    pub resource_type: String,
    pub resource_name: String,
    pub pattern_type: String,
    pub principal: String,
    pub host: String,
    pub operation: String,
    pub permission: String,
}

impl From<&AclBinding> for AclView {
    fn from(acl: &AclBinding) -> Self {
        Self {
            resource_type: acl.resource_type.kafka_name(),
            resource_name: acl.resource_name.clone(),
            pattern_type: acl.pattern_type.kafka_name(),
            principal: acl.principal.clone(),
            host: acl.host.clone(),
            operation: acl.operation.kafka_name(),
            permission: acl.permission.kafka_name(),
        }
    }
}

fn parse<T>(what: &str, value: &str, from: fn(&str) -> Option<T>) -> Result<T, ApiError> {
    from(value).ok_or_else(|| ApiError::bad_request(format!("unknown {what} {value:?}")))
}

impl AclView {
    fn binding(&self) -> Result<AclBinding, ApiError> {
        let binding = AclBinding {
            resource_type: parse(
                "resource type",
                &self.resource_type,
                ResourceType::from_kafka_name,
            )?,
            resource_name: self.resource_name.clone(),
            pattern_type: parse(
                "pattern type",
                &self.pattern_type,
                PatternType::from_kafka_name,
            )?,
            principal: self.principal.clone(),
            host: self.host.clone(),
            operation: parse("operation", &self.operation, AclOperation::from_kafka_name)?,
            permission: parse(
                "permission",
                &self.permission,
                PermissionType::from_kafka_name,
            )?,
        };
        match binding.invalid_reason() {
            Some(reason) => Err(ApiError::bad_request(reason)),
            None => Ok(binding),
        }
    }
}

pub async fn list_acls(
    State(broker): State<Arc<Broker>>,
    access: Access,
) -> ApiResult<Vec<AclView>> {
    access.require_cluster(AclOperation::Describe)?;
    let image = broker.metadata().image();
    let mut acls: Vec<AclView> = image.acls.values().map(AclView::from).collect();
    acls.sort_by(|a, b| {
        (
            &a.resource_type,
            &a.resource_name,
            &a.principal,
            &a.operation,
        )
            .cmp(&(
                &b.resource_type,
                &b.resource_name,
                &b.principal,
                &b.operation,
            ))
    });
    Ok(Json(acls))
}

pub async fn create_acl(
    State(broker): State<Arc<Broker>>,
    access: Access,
    super::Body(acl): super::Body<AclView>,
) -> Result<(StatusCode, Json<AclView>), ApiError> {
    access.require_cluster(AclOperation::Alter)?;
    let binding = acl.binding()?;
    broker.create_acls(vec![binding.clone()]).await?;
    Ok((StatusCode::CREATED, Json(AclView::from(&binding))))
}

/// `DELETE /api/v1/acls?<the ACL's fields>`: removes that ACL; answers the ACLs removed.
pub async fn delete_acl(
    State(broker): State<Arc<Broker>>,
    access: Access,
    super::Params(acl): super::Params<AclView>,
) -> ApiResult<Vec<AclView>> {
    access.require_cluster(AclOperation::Alter)?;
    let binding = acl.binding()?;
    let filter = AclFilter {
        resource_type: binding.resource_type,
        resource_name: Some(binding.resource_name),
        pattern_type: binding.pattern_type,
        principal: Some(binding.principal),
        host: Some(binding.host),
        operation: binding.operation,
        permission: binding.permission,
    };
    let matched = broker.delete_acls(vec![filter]).await?;
    Ok(Json(matched.iter().flatten().map(AclView::from).collect()))
}

#[derive(Debug, Serialize)]
pub struct UserView {
    pub user: String,
    pub credentials: Vec<CredentialView>,
}

#[derive(Debug, Serialize)]
pub struct CredentialView {
    pub mechanism: &'static str,
    pub iterations: i32,
}

pub async fn list_users(
    State(broker): State<Arc<Broker>>,
    access: Access,
) -> ApiResult<Vec<UserView>> {
    access.require_cluster(AclOperation::Describe)?;
    let image = broker.metadata().image();
    Ok(Json(
        image
            .scram_credentials
            .iter()
            .map(|(user, by_mechanism)| UserView {
                user: user.clone(),
                credentials: credentials(by_mechanism),
            })
            .collect(),
    ))
}

/// Kafka's bounds on SCRAM iterations (`ScramMechanism.minIterations`, and the most
/// AlterUserScramCredentials accepts).
const MIN_ITERATIONS: i32 = 4096;
const MAX_ITERATIONS: i32 = 16384;

#[derive(Debug, Deserialize)]
pub struct SetCredential {
    pub mechanism: String,
    pub password: String,
    /// Absent: 4096 (null is not a number of iterations).
    #[serde(default = "default_iterations")]
    pub iterations: i32,
}

fn default_iterations() -> i32 {
    MIN_ITERATIONS
}

pub async fn set_user(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(user): Path<String>,
    super::Body(request): super::Body<SetCredential>,
) -> ApiResult<UserView> {
    access.require_cluster(AclOperation::Alter)?;
    let mechanism = ScramMechanism::from_name(&request.mechanism).ok_or_else(|| {
        ApiError::bad_request(format!(
            "unknown mechanism {:?} (SCRAM-SHA-256 or SCRAM-SHA-512)",
            request.mechanism
        ))
    })?;
    let iterations = request.iterations;
    if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
        return Err(ApiError::bad_request(format!(
            "iterations must be from {MIN_ITERATIONS} to {MAX_ITERATIONS}"
        )));
    }
    if user.is_empty() || request.password.is_empty() {
        return Err(ApiError::bad_request(
            "a user name and a password are needed",
        ));
    }
    let salt = random_bytes(32)
        .map_err(|e| ApiError::of_code(crate::error::code::UNKNOWN_SERVER_ERROR, e.to_string()))?;
    let password = request.password;
    let salted_password = {
        let salt = salt.clone();
        tokio::task::spawn_blocking(move || {
            mechanism.salted_password(password.as_bytes(), &salt, iterations as u32)
        })
        .await
        .map_err(|e| ApiError::of_code(crate::error::code::UNKNOWN_SERVER_ERROR, e.to_string()))?
    };
    broker
        .alter_scram_credentials(
            vec![ScramUpsertion {
                user: user.clone(),
                mechanism,
                salt,
                salted_password,
                iterations,
            }],
            Vec::new(),
        )
        .await?;
    user_view(&broker, &user).map(Json)
}

fn user_view(broker: &Broker, user: &str) -> Result<UserView, ApiError> {
    let image = broker.metadata().image();
    let by_mechanism = image.scram_credentials.get(user).ok_or_else(|| {
        ApiError::not_found(
            "RESOURCE_NOT_FOUND",
            format!("no SCRAM credential for {user}"),
        )
    })?;
    Ok(UserView {
        user: user.to_string(),
        credentials: credentials(by_mechanism),
    })
}

/// A user's credentials as shown: mechanism and iterations (never salt or keys).
fn credentials(
    by_mechanism: &std::collections::BTreeMap<i8, crate::metadata::records::ScramCredentialRecord>,
) -> Vec<CredentialView> {
    by_mechanism
        .iter()
        .filter_map(|(id, record)| {
            Some(CredentialView {
                mechanism: ScramMechanism::from_type_id(*id)?.name(),
                iterations: record.iterations,
            })
        })
        .collect()
}

#[derive(Debug, Deserialize)]
pub struct DeleteCredential {
    pub mechanism: String,
}

pub async fn delete_user(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(user): Path<String>,
    super::Params(request): super::Params<DeleteCredential>,
) -> Result<StatusCode, ApiError> {
    access.require_cluster(AclOperation::Alter)?;
    let mechanism = ScramMechanism::from_name(&request.mechanism).ok_or_else(|| {
        ApiError::bad_request(format!("unknown mechanism {:?}", request.mechanism))
    })?;
    let missing = broker
        .alter_scram_credentials(Vec::new(), vec![(user.clone(), mechanism)])
        .await?;
    if missing.contains(&user) {
        return Err(ApiError::not_found(
            "RESOURCE_NOT_FOUND",
            format!("{user} has no {} credential", mechanism.name()),
        ));
    }
    Ok(StatusCode::NO_CONTENT)
}
