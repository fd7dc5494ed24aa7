//! What a request on the HTTP listener may see and do: for each view, the decision Kafka's
//! authorizer makes for the Kafka API behind it (Metadata's DESCRIBE to see a topic, Fetch's
//! READ to browse its records, DescribeConfigs' DESCRIBE_CONFIGS, ListGroups' DESCRIBE on the
//! cluster or the group, ...), for the principal [`super::security`] authenticated. Without an
//! authorizer everything is allowed, as on a Kafka listener.

use super::error::ApiError;
use super::security::Identity;
use crate::auth::KafkaPrincipal;
use crate::auth::acl::{AclOperation, ResourceType};
use crate::auth::authorizer::{Authorizer, Requester};
use crate::metadata::image::MetadataImage;
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use std::sync::Arc;

const CLUSTER_NAME: &str = "kafka-cluster";

/// One request's view for checks: the authorizer, the ACLs now, who asks from where.
pub struct Access {
    authorizer: Option<Arc<Authorizer>>,
    image: Arc<MetadataImage>,
    identity: Identity,
}

impl FromRequestParts<super::HttpState> for Access {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &super::HttpState,
    ) -> Result<Self, Self::Rejection> {
        // Set by the authentication layer in front of every route.
        let identity = parts.extensions.get::<Identity>().cloned().ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "SASL_AUTHENTICATION_FAILED",
                "the request is not authenticated",
            )
        })?;
        Ok(Self {
            authorizer: state.authorizer.clone(),
            image: state.broker.metadata().image(),
            identity,
        })
    }
}

impl Access {
    pub fn principal(&self) -> &KafkaPrincipal {
        &self.identity.principal
    }

    /// Whether an authorizer decides (otherwise everything is allowed).
    pub fn checked(&self) -> bool {
        self.authorizer.is_some()
    }

    pub fn allowed(
        &self,
        operation: AclOperation,
        resource_type: ResourceType,
        name: &str,
    ) -> bool {
        let Some(authorizer) = &self.authorizer else {
            return true;
        };
        let who = Requester {
            principal: &self.identity.principal,
            host: &self.identity.host,
        };
        authorizer.authorize(
            self.image.acls.values(),
            who,
            operation,
            resource_type,
            name,
        )
    }

    pub fn cluster(&self, operation: AclOperation) -> bool {
        self.allowed(operation, ResourceType::Cluster, CLUSTER_NAME)
    }

    pub fn topic(&self, operation: AclOperation, name: &str) -> bool {
        self.allowed(operation, ResourceType::Topic, name)
    }

    pub fn group(&self, operation: AclOperation, name: &str) -> bool {
        self.allowed(operation, ResourceType::Group, name)
    }

    pub fn transactional_id(&self, operation: AclOperation, id: &str) -> bool {
        self.allowed(operation, ResourceType::TransactionalId, id)
    }

    /// DESCRIBE on a topic, as Metadata asks it: the topic is invisible otherwise.
    pub fn sees_topic(&self, name: &str) -> bool {
        self.topic(AclOperation::Describe, name)
    }

    /// Refuses unless `allowed`, with Kafka's authorization error `error` (403).
    pub fn require(
        &self,
        allowed: bool,
        error: &str,
        message: impl Into<String>,
    ) -> Result<(), ApiError> {
        if allowed {
            Ok(())
        } else {
            Err(ApiError::new(StatusCode::FORBIDDEN, error, message))
        }
    }

    /// `operation` on a topic, or TOPIC_AUTHORIZATION_FAILED.
    pub fn require_topic(&self, operation: AclOperation, name: &str) -> Result<(), ApiError> {
        self.require(
            self.topic(operation, name),
            "TOPIC_AUTHORIZATION_FAILED",
            format!(
                "{} may not {} topic {name}",
                self.principal(),
                operation_name(operation)
            ),
        )
    }

    /// `operation` on a group, or GROUP_AUTHORIZATION_FAILED.
    pub fn require_group(&self, operation: AclOperation, name: &str) -> Result<(), ApiError> {
        self.require(
            self.group(operation, name),
            "GROUP_AUTHORIZATION_FAILED",
            format!(
                "{} may not {} group {name}",
                self.principal(),
                operation_name(operation)
            ),
        )
    }

    /// `operation` on the cluster, or CLUSTER_AUTHORIZATION_FAILED.
    pub fn require_cluster(&self, operation: AclOperation) -> Result<(), ApiError> {
        self.require(
            self.cluster(operation),
            "CLUSTER_AUTHORIZATION_FAILED",
            format!(
                "{} may not {} the cluster",
                self.principal(),
                operation_name(operation)
            ),
        )
    }
}

fn operation_name(operation: AclOperation) -> String {
    operation.kafka_name()
}
