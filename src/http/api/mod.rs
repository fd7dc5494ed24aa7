//! The JSON API under `/api/v1` (described by `/api/v1/openapi.json`): what the web console
//! shows and does, for any other tool too. Handlers read the broker's state and call the same
//! core operations the Kafka APIs call; errors carry Kafka's error name.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | routes, the error body |
//! | `cluster.rs` | the cluster overview: brokers, controller, health |
//! | `topics.rs` | topics: list, describe, create, alter configs, delete |
//! | `messages.rs` | records of a partition from an offset or a timestamp |
//! | `groups.rs` | groups: list, describe with lag, reset offsets, delete |
//! | `openapi.rs` | the OpenAPI description |

mod cluster;
mod groups;
mod messages;
pub mod openapi;
mod topics;

use crate::api::request_names::error_name;
use crate::error::{Error, GroupError};
use axum::Json;
use axum::Router;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;

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
        .route("/api/v1/groups", get(groups::list))
        .route(
            "/api/v1/groups/{group}",
            get(groups::describe).delete(groups::delete),
        )
        .route(
            "/api/v1/groups/{group}/offsets",
            post(groups::reset_offsets),
        )
}

/// An error as the API answers it: an HTTP status and Kafka's error name and message.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    error: String,
    message: String,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    message: &'a str,
}

impl ApiError {
    pub fn new(status: StatusCode, error: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            error: error.to_string(),
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_REQUEST", message)
    }

    pub fn not_found(error: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, error, message)
    }
}

impl ApiError {
    /// A Kafka error code as an HTTP status, with the code's name.
    fn of_code(code: i16, message: String) -> Self {
        let name = error_name(code);
        let status = match name.as_str() {
            "UNKNOWN_TOPIC_OR_PARTITION" | "UNKNOWN_TOPIC_ID" | "GROUP_ID_NOT_FOUND" => {
                StatusCode::NOT_FOUND
            }
            "TOPIC_ALREADY_EXISTS" | "NON_EMPTY_GROUP" => StatusCode::CONFLICT,
            "NOT_CONTROLLER"
            | "REQUEST_TIMED_OUT"
            | "NOT_LEADER_OR_FOLLOWER"
            | "COORDINATOR_NOT_AVAILABLE"
            | "COORDINATOR_LOAD_IN_PROGRESS"
            | "NOT_COORDINATOR"
            | "LEADER_NOT_AVAILABLE" => StatusCode::SERVICE_UNAVAILABLE,
            "TOPIC_AUTHORIZATION_FAILED"
            | "GROUP_AUTHORIZATION_FAILED"
            | "CLUSTER_AUTHORIZATION_FAILED" => StatusCode::FORBIDDEN,
            "UNKNOWN_SERVER_ERROR" | "KAFKA_STORAGE_ERROR" => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        };
        Self::new(status, &name, message)
    }
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        Self::of_code(error.code(), error.to_string())
    }
}

impl From<GroupError> for ApiError {
    fn from(error: GroupError) -> Self {
        Self::of_code(error.code(), error.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: &self.error,
            message: &self.message,
        };
        (self.status, Json(body)).into_response()
    }
}

pub type ApiResult<T> = Result<Json<T>, ApiError>;

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
