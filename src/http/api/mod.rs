//! The JSON API under `/api/v1` (described by `/api/v1/openapi.json`): what the web console
//! shows and does, for any other tool too. Handlers read the broker's state and call the same
//! core operations the Kafka APIs call; errors carry Kafka's error name.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | routes, the request body and query extractors |
//! | `cluster.rs` | the cluster overview: brokers, controller, health |
//! | `topics.rs` | topics: list, describe, create, alter configs, delete |
//! | `messages.rs` | records of a partition from an offset or a timestamp |
//! | `groups.rs` | groups: list, describe with lag, reset offsets, delete |
//! | `share_groups.rs` | share groups: list, describe with lag, delete |
//! | `transactions.rs` | transactions, and the producers of a topic's partitions |
//! | `security.rs` | ACLs and SCRAM users |
//! | `openapi.rs` | the OpenAPI description |

mod cluster;
mod groups;
mod messages;
pub mod openapi;
mod security;
mod share_groups;
mod topics;
mod transactions;

pub use super::error::{ApiError, ApiResult};
use axum::Json;
use axum::Router;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::routing::{get, post};

/// The `/api/v1` routes.
pub fn routes() -> Router<super::HttpState> {
    Router::new()
        .route("/api/v1/openapi.json", get(openapi::document))
        .route("/api/v1/cluster", get(cluster::overview))
        .route("/api/v1/topics", get(topics::list).post(topics::create))
        .route(
            "/api/v1/topics/{topic}",
            get(topics::describe).delete(topics::delete),
        )
        .route(
            "/api/v1/topics/{topic}/configs",
            axum::routing::put(topics::alter_configs),
        )
        .route("/api/v1/topics/{topic}/messages", get(messages::read))
        .route(
            "/api/v1/topics/{topic}/producers",
            get(transactions::producers),
        )
        .route("/api/v1/groups", get(groups::list))
        .route(
            "/api/v1/groups/{group}",
            get(groups::describe).delete(groups::delete),
        )
        .route(
            "/api/v1/groups/{group}/offsets",
            post(groups::reset_offsets),
        )
        .route("/api/v1/share-groups", get(share_groups::list))
        .route(
            "/api/v1/share-groups/{group}",
            get(share_groups::describe).delete(share_groups::delete),
        )
        .route("/api/v1/transactions", get(transactions::list))
        .route(
            "/api/v1/transactions/{transactional_id}",
            get(transactions::describe),
        )
        .route(
            "/api/v1/acls",
            get(security::list_acls)
                .post(security::create_acl)
                .delete(security::delete_acl),
        )
        .route("/api/v1/users", get(security::list_users))
        .route(
            "/api/v1/users/{user}",
            axum::routing::put(security::set_user).delete(security::delete_user),
        )
}

/// A JSON request body; one that is not JSON of the expected shape (or not sent as JSON) is a
/// 400 with the error body, like every other refusal.
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        Json::<T>::from_request(request, state)
            .await
            .map(|Json(value)| Body(value))
            .map_err(|rejection| ApiError::bad_request(rejection.body_text()))
    }
}

/// Query parameters; ones that do not parse are a 400 with the error body.
pub struct Params<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| Params(value))
            .map_err(|rejection| ApiError::bad_request(rejection.body_text()))
    }
}
