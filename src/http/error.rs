//! How the HTTP listener refuses: an HTTP status with Kafka's error name and a message, as
//! JSON — the one error body of the JSON API, its authentication and its access checks.

use crate::api::request_names::error_name;
use crate::error::{Error, GroupError, ShareError};
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

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
    pub fn of_code(code: i16, message: String) -> Self {
        let name = error_name(code);
        let status = match name.as_str() {
            "UNKNOWN_TOPIC_OR_PARTITION"
            | "UNKNOWN_TOPIC_ID"
            | "GROUP_ID_NOT_FOUND"
            | "RESOURCE_NOT_FOUND"
            | "TRANSACTIONAL_ID_NOT_FOUND" => StatusCode::NOT_FOUND,
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
            | "CLUSTER_AUTHORIZATION_FAILED"
            | "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" => StatusCode::FORBIDDEN,
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

impl From<ShareError> for ApiError {
    fn from(error: ShareError) -> Self {
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
