//! The Kafka APIs: one file per API translating between `kafka-protocol` wire types and the
//! broker core. This file is the dispatch table: each supported API with its version range,
//! in one list. ApiVersions is generated from the same list, so it cannot advertise an API or
//! version that is not dispatched here.

pub mod alter_configs;
pub mod api_versions;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_records;
pub mod delete_topics;
pub mod describe_cluster;
pub mod describe_configs;
pub mod fetch;
pub mod incremental_alter_configs;
pub mod list_offsets;
pub mod metadata;
pub mod produce;

use crate::broker::Broker;
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::ApiKey;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message, StrBytes};
use std::sync::Arc;
use thiserror::Error;

/// What a handler needs besides its request.
#[derive(Debug, Clone)]
pub struct ApiContext {
    pub broker: Arc<Broker>,
    /// The address clients are told to connect to (port resolved after binding).
    pub advertised_host: String,
    pub advertised_port: i32,
}

/// A request that cannot be answered: the connection is closed with one log line.
#[derive(Debug, Error)]
pub enum DispatchError {
    #[error("unknown API key {0}")]
    UnknownApiKey(i16),
    #[error("unsupported version {version} of {api:?}")]
    UnsupportedVersion { api: ApiKey, version: i16 },
    #[error("cannot decode {api:?} v{version}: {reason}")]
    Decode {
        api: ApiKey,
        version: i16,
        reason: String,
    },
    #[error("cannot encode response to {api:?} v{version}: {reason}")]
    Encode {
        api: ApiKey,
        version: i16,
        reason: String,
    },
}

/// Declares the supported APIs once: the version table and the dispatcher come from it.
macro_rules! api_table {
    ($( $key:ident => $module:ident, $request:ty ),* $(,)?) => {
        /// Every supported API with the versions `kafka-protocol` decodes for it.
        pub fn supported_apis() -> Vec<(ApiKey, i16, i16)> {
            vec![$( (ApiKey::$key, <$request as Message>::VERSIONS.min, <$request as Message>::VERSIONS.max) ),*]
        }

        /// Decodes the body, runs the handler and encodes the response body. `Ok(None)` means
        /// the API sends no response (produce with acks=0).
        pub async fn dispatch(ctx: &ApiContext, api: ApiKey, version: i16, mut body: Bytes) -> Result<Option<(BytesMut, i16)>, DispatchError> {
            match api {
                $(
                    ApiKey::$key => {
                        let range = <$request as Message>::VERSIONS;
                        if version < range.min || version > range.max {
                            return Err(DispatchError::UnsupportedVersion { api, version });
                        }
                        let request = <$request as Decodable>::decode(&mut body, version)
                            .map_err(|e| DispatchError::Decode { api, version, reason: e.to_string() })?;
                        let Some(response) = $module::handle(ctx, request, version).await else {
                            return Ok(None);
                        };
                        encode_body(&response, api, version).map(Some)
                    }
                )*
                other => Err(DispatchError::UnknownApiKey(other as i16)),
            }
        }
    };
}

use kafka_protocol::messages as m;

api_table! {
    Produce => produce, m::ProduceRequest,
    Fetch => fetch, m::FetchRequest,
    ListOffsets => list_offsets, m::ListOffsetsRequest,
    Metadata => metadata, m::MetadataRequest,
    ApiVersions => api_versions, m::ApiVersionsRequest,
    CreateTopics => create_topics, m::CreateTopicsRequest,
    DeleteTopics => delete_topics, m::DeleteTopicsRequest,
    DeleteRecords => delete_records, m::DeleteRecordsRequest,
    DescribeConfigs => describe_configs, m::DescribeConfigsRequest,
    AlterConfigs => alter_configs, m::AlterConfigsRequest,
    CreatePartitions => create_partitions, m::CreatePartitionsRequest,
    IncrementalAlterConfigs => incremental_alter_configs, m::IncrementalAlterConfigsRequest,
    DescribeCluster => describe_cluster, m::DescribeClusterRequest,
}

/// Encodes a response body and returns it with its response header version.
fn encode_body<R: Encodable + HeaderVersion>(
    response: &R,
    api: ApiKey,
    version: i16,
) -> Result<(BytesMut, i16), DispatchError> {
    let mut buf = BytesMut::new();
    response
        .encode(&mut buf, version)
        .map_err(|e| DispatchError::Encode {
            api,
            version,
            reason: e.to_string(),
        })?;
    Ok((buf, R::header_version(version)))
}

/// `&str` to the wire's string type.
pub(crate) fn wire_str(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// Kafka's ACL operation codes, for the authorized-operations bitfields (no authorizer: all
/// operations are allowed).
pub(crate) fn authorized_operations(ops: &[i8]) -> i32 {
    ops.iter().fold(0, |acc, op| acc | (1 << op))
}

/// READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS.
pub(crate) const TOPIC_OPERATIONS: &[i8] = &[3, 4, 5, 6, 7, 8, 10, 11];
/// CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE,
/// CREATE_TOKENS, DESCRIBE_TOKENS.
pub(crate) const CLUSTER_OPERATIONS: &[i8] = &[5, 7, 8, 9, 10, 11, 12, 13, 14];
/// The "not requested" value of an authorized-operations field.
pub(crate) const OPERATIONS_NOT_REQUESTED: i32 = i32::MIN;
