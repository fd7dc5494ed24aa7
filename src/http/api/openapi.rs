//! `GET /api/v1/openapi.json`: the JSON API described in OpenAPI 3.0, kept beside the handlers
//! it describes; `compat/openapi` checks the API's answers against it with schemathesis (every
//! operation, valid and invalid input, links followed).

use axum::Json;
use serde_json::{Value, json};

fn error_response(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

fn ok(schema: Value) -> Value {
    json!({"description": "OK", "content": {"application/json": {"schema": schema}}})
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn path_parameter(name: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "schema": {"type": "string", "minLength": 1}})
}

const RESOURCE_TYPES: [&str; 5] = ["TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "USER"];
const PATTERN_TYPES: [&str; 2] = ["LITERAL", "PREFIXED"];
const OPERATIONS: [&str; 14] = [
    "ALL",
    "READ",
    "WRITE",
    "CREATE",
    "DELETE",
    "ALTER",
    "DESCRIBE",
    "CLUSTER_ACTION",
    "DESCRIBE_CONFIGS",
    "ALTER_CONFIGS",
    "IDEMPOTENT_WRITE",
    "CREATE_TOKENS",
    "DESCRIBE_TOKENS",
    "TWO_PHASE_COMMIT",
];
const PERMISSIONS: [&str; 2] = ["ALLOW", "DENY"];

fn acl_fields() -> Vec<(&'static str, Value)> {
    vec![
        (
            "resource_type",
            json!({"type": "string", "enum": RESOURCE_TYPES}),
        ),
        ("resource_name", json!({"type": "string", "minLength": 1})),
        (
            "pattern_type",
            json!({"type": "string", "enum": PATTERN_TYPES}),
        ),
        (
            "principal",
            json!({"type": "string", "pattern": "^[A-Za-z]+:.+$", "example": "User:alice"}),
        ),
        (
            "host",
            json!({"type": "string", "minLength": 1, "example": "*"}),
        ),
        ("operation", json!({"type": "string", "enum": OPERATIONS})),
        ("permission", json!({"type": "string", "enum": PERMISSIONS})),
    ]
}

fn acl_schema() -> Value {
    let fields = acl_fields();
    json!({
        "type": "object",
        "required": fields.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        "properties": fields.into_iter().map(|(name, schema)| (name.to_string(), schema)).collect::<serde_json::Map<_, _>>()
    })
}

fn acl_query_parameters() -> Value {
    Value::Array(
        acl_fields()
            .into_iter()
            .map(|(name, schema)| json!({"name": name, "in": "query", "required": true, "schema": schema}))
            .collect(),
    )
}

/// The document: [`paths_and_schemas`] with the listener's security on every operation.
pub fn describe() -> Value {
    let mut document = paths_and_schemas();
    if let Some(paths) = document["paths"].as_object_mut() {
        for operation in paths.values_mut().filter_map(Value::as_object_mut) {
            for (method, operation) in operation.iter_mut() {
                if method == "parameters" {
                    continue;
                }
                if let Some(responses) = operation["responses"].as_object_mut() {
                    responses.entry("401").or_insert_with(|| {
                        error_response("No or wrong credentials, on a SASL_PLAINTEXT or SASL_SSL HTTP listener")
                    });
                    responses.entry("403").or_insert_with(|| {
                        error_response("The ACLs do not allow it (with an authorizer configured)")
                    });
                }
            }
        }
    }
    document["components"]["securitySchemes"] = json!({
        "basic": {"type": "http", "scheme": "basic", "description": "A PLAIN or SCRAM user's name and password"},
        "bearer": {"type": "http", "scheme": "bearer", "description": "An OAUTHBEARER token"}
    });
    // Without credentials too: a PLAINTEXT or SSL listener takes none.
    document["security"] = json!([{}, {"basic": []}, {"bearer": []}]);
    document
}

fn paths_and_schemas() -> Value {
    let nullable_int = json!({"type": "integer", "format": "int64", "nullable": true});
    let int_array = json!({"type": "array", "items": {"type": "integer", "format": "int32"}});
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "Sluice",
            "version": "1",
            "description": "The broker's JSON API: what its web console shows and does."
        },
        "paths": {
            "/api/v1/cluster": {"get": {
                "summary": "The cluster as this broker sees it",
                "responses": {"200": ok(reference("Cluster"))}
            }},
            "/api/v1/topics": {
                "get": {
                    "summary": "Every topic",
                    "responses": {"200": ok(json!({"type": "array", "items": reference("TopicSummary")}))}
                },
                "post": {
                    "summary": "Create a topic",
                    "requestBody": {"required": true, "content": {"application/json": {"schema": reference("NewTopic")}}},
                    "responses": {
                        "201": {"description": "Created", "content": {"application/json": {"schema": reference("Topic")}}, "links": {
                            "GetTopic": {"operationId": "getTopic", "parameters": {"topic": "$response.body#/name"}},
                            "DeleteTopic": {"operationId": "deleteTopic", "parameters": {"topic": "$response.body#/name"}},
                            "ReadMessages": {"operationId": "readMessages", "parameters": {"topic": "$response.body#/name"}},
                            "AlterTopicConfigs": {"operationId": "alterTopicConfigs", "parameters": {"topic": "$response.body#/name"}},
                            "GetTopicProducers": {"operationId": "getTopicProducers", "parameters": {"topic": "$response.body#/name"}}
                        }},
                        "400": error_response("Invalid topic, partitions, replication factor or config"),
                        "409": error_response("The topic exists"),
                        "503": error_response("No active controller")
                    }
                }
            },
            "/api/v1/topics/{topic}": {
                "parameters": [path_parameter("topic")],
                "get": {
                    "operationId": "getTopic",
                    "summary": "A topic: partitions and configs",
                    "responses": {"200": ok(reference("Topic")), "404": error_response("No such topic")}
                },
                "delete": {
                    "operationId": "deleteTopic",
                    "summary": "Delete a topic",
                    "responses": {
                        "204": {"description": "Deleted"},
                        "400": error_response("Deletion is disabled, or the topic cannot be deleted"),
                        "404": error_response("No such topic"),
                        "503": error_response("No active controller")
                    }
                }
            },
            "/api/v1/topics/{topic}/configs": {
                "parameters": [path_parameter("topic")],
                "put": {
                    "operationId": "alterTopicConfigs",
                    "summary": "Set (a value) or remove (null) topic config overrides",
                    "requestBody": {"required": true, "content": {"application/json": {"schema": reference("AlterConfigs")}}},
                    "responses": {
                        "200": ok(reference("Topic")),
                        "400": error_response("An unknown config or an invalid value"),
                        "404": error_response("No such topic"),
                        "503": error_response("No active controller")
                    }
                }
            },
            "/api/v1/topics/{topic}/messages": {
                "parameters": [
                    path_parameter("topic"),
                    {"name": "partition", "in": "query", "schema": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 2147483647, "default": 0}},
                    {"name": "offset", "in": "query", "schema": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 9223372036854775807_i64}},
                    {"name": "timestamp", "in": "query", "schema": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 9223372036854775807_i64}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}}
                ],
                "get": {
                    "operationId": "readMessages",
                    "summary": "Records of a partition from an offset or a timestamp",
                    "responses": {
                        "200": ok(reference("Messages")),
                        "400": error_response("Both an offset and a timestamp, or a limit out of range"),
                        "404": error_response("No such topic, or no replica of the partition here"),
                        "500": error_response("A stored batch could not be read")
                    }
                }
            },
            "/api/v1/groups": {"get": {
                "summary": "Every consumer group this broker coordinates",
                "responses": {"200": ok(json!({"type": "array", "items": reference("GroupSummary")}))}
            }},
            "/api/v1/groups/{group}": {
                "parameters": [path_parameter("group")],
                "get": {
                    "summary": "A group: members, assignments, offsets and lag",
                    "responses": {"200": ok(reference("Group")), "404": error_response("No such group")}
                },
                "delete": {
                    "summary": "Delete an empty group",
                    "responses": {
                        "204": {"description": "Deleted"},
                        "400": error_response("The group cannot be deleted"),
                        "404": error_response("No such group"),
                        "409": error_response("The group has members"),
                        "503": error_response("The coordinator is not ready")
                    }
                }
            },
            "/api/v1/groups/{group}/offsets": {
                "parameters": [path_parameter("group")],
                "post": {
                    "summary": "Reset an empty group's committed offsets on a topic",
                    "requestBody": {"required": true, "content": {"application/json": {"schema": reference("ResetOffsets")}}},
                    "responses": {
                        "200": ok(reference("Group")),
                        "400": error_response("An invalid target"),
                        "404": error_response("No such topic"),
                        "409": error_response("The group has members"),
                        "503": error_response("The coordinator or a partition leader is not ready")
                    }
                }
            },
            "/api/v1/topics/{topic}/producers": {
                "parameters": [path_parameter("topic")],
                "get": {
                    "operationId": "getTopicProducers",
                    "summary": "The idempotent and transactional producers of each partition led here",
                    "responses": {"200": ok(json!({"type": "array", "items": reference("PartitionProducers")})), "404": error_response("No such topic")}
                }
            },
            "/api/v1/share-groups": {"get": {
                "summary": "Every share group this broker coordinates",
                "responses": {"200": ok(json!({"type": "array", "items": reference("ShareGroupSummary")}))}
            }},
            "/api/v1/share-groups/{group}": {
                "parameters": [path_parameter("group")],
                "get": {
                    "summary": "A share group: members, assignments, start offsets and lag",
                    "responses": {"200": ok(reference("ShareGroup")), "404": error_response("No such share group")}
                },
                "delete": {
                    "summary": "Delete an empty share group",
                    "responses": {
                        "204": {"description": "Deleted"},
                        "404": error_response("No such share group"),
                        "409": error_response("The group has members"),
                        "503": error_response("The coordinator is not ready")
                    }
                }
            },
            "/api/v1/transactions": {"get": {
                "summary": "Every transactional id this broker coordinates",
                "responses": {"200": ok(json!({"type": "array", "items": reference("Transaction")})), "503": error_response("The coordinator is loading")}
            }},
            "/api/v1/transactions/{transactional_id}": {
                "parameters": [path_parameter("transactional_id")],
                "get": {
                    "summary": "A transactional id: state, producer, open transaction",
                    "responses": {
                        "200": ok(reference("Transaction")),
                        "404": error_response("No such transactional id"),
                        "503": error_response("Another broker coordinates it, or it is loading")
                    }
                }
            },
            "/api/v1/acls": {
                "get": {
                    "summary": "Every ACL",
                    "responses": {"200": ok(json!({"type": "array", "items": reference("Acl")}))}
                },
                "post": {
                    "summary": "Create an ACL",
                    "requestBody": {"required": true, "content": {"application/json": {"schema": reference("Acl")}}},
                    "responses": {
                        "201": {"description": "Created", "content": {"application/json": {"schema": reference("Acl")}}},
                        "400": error_response("An invalid ACL"),
                        "503": error_response("No active controller")
                    }
                },
                "delete": {
                    "summary": "Delete the ACL its fields name",
                    "parameters": acl_query_parameters(),
                    "responses": {
                        "200": ok(json!({"type": "array", "items": reference("Acl")})),
                        "400": error_response("An invalid ACL"),
                        "503": error_response("No active controller")
                    }
                }
            },
            "/api/v1/users": {"get": {
                "summary": "Every user with SCRAM credentials",
                "responses": {"200": ok(json!({"type": "array", "items": reference("User")}))}
            }},
            "/api/v1/users/{user}": {
                "parameters": [path_parameter("user")],
                "put": {
                    "summary": "Set a user's SCRAM credential for a mechanism",
                    "requestBody": {"required": true, "content": {"application/json": {"schema": reference("SetCredential")}}},
                    "responses": {
                        "200": ok(reference("User")),
                        "400": error_response("An unknown mechanism, an empty password or iterations out of range"),
                        "503": error_response("No active controller")
                    }
                },
                "delete": {
                    "summary": "Delete a user's SCRAM credential for a mechanism",
                    "parameters": [{"name": "mechanism", "in": "query", "required": true, "schema": {"type": "string", "enum": ["SCRAM-SHA-256", "SCRAM-SHA-512"]}}],
                    "responses": {
                        "204": {"description": "Deleted"},
                        "400": error_response("An unknown mechanism"),
                        "404": error_response("The user has no such credential"),
                        "503": error_response("No active controller")
                    }
                }
            },
            "/api/v1/throughput": {"get": {
                "summary": "Messages and bytes in and out per topic over the last five minutes (\"\" is all topics)",
                "responses": {"200": ok(reference("Throughput"))}
            }},
            "/api/v1/openapi.json": {"get": {
                "summary": "This document",
                "responses": {"200": ok(json!({"type": "object"}))}
            }}
        },
        "components": {"schemas": {
            "Error": {"type": "object", "required": ["error", "message"], "properties": {
                "error": {"type": "string", "description": "Kafka's error name"},
                "message": {"type": "string"}
            }},
            "Cluster": {"type": "object", "required": ["cluster_id", "principal", "node_id", "controller_id", "version", "uptime_seconds", "brokers", "topics", "partitions", "under_replicated_partitions", "offline_partitions"], "properties": {
                "cluster_id": {"type": "string"},
                "principal": {"type": "string", "description": "Who the request is, as ACLs name principals"},
                "node_id": {"type": "integer"},
                "controller_id": {"type": "integer"},
                "version": {"type": "string"},
                "uptime_seconds": {"type": "integer"},
                "brokers": {"type": "array", "items": reference("Broker")},
                "topics": {"type": "integer"},
                "partitions": {"type": "integer"},
                "under_replicated_partitions": {"type": "integer"},
                "offline_partitions": {"type": "integer"}
            }},
            "Broker": {"type": "object", "required": ["id", "endpoints", "rack", "fenced", "in_controlled_shutdown"], "properties": {
                "id": {"type": "integer"},
                "endpoints": {"type": "array", "items": {"type": "string"}},
                "rack": {"type": "string", "nullable": true},
                "fenced": {"type": "boolean"},
                "in_controlled_shutdown": {"type": "boolean"}
            }},
            "TopicSummary": {"type": "object", "required": ["name", "id", "internal", "partitions", "replication_factor", "under_replicated_partitions", "size_bytes", "messages"], "properties": {
                "name": {"type": "string"},
                "id": {"type": "string"},
                "internal": {"type": "boolean"},
                "partitions": {"type": "integer"},
                "replication_factor": {"type": "integer"},
                "under_replicated_partitions": {"type": "integer"},
                "size_bytes": {"type": "integer"},
                "messages": {"type": "integer"}
            }},
            "Topic": {"type": "object", "required": ["name", "id", "internal", "partitions", "configs"], "properties": {
                "name": {"type": "string"},
                "id": {"type": "string"},
                "internal": {"type": "boolean"},
                "partitions": {"type": "array", "items": reference("Partition")},
                "configs": {"type": "array", "items": reference("Config"), "nullable": true, "description": "null without DESCRIBE_CONFIGS on the topic"}
            }},
            "Partition": {"type": "object", "required": ["partition", "leader", "leader_epoch", "replicas", "isr", "log_start_offset", "high_watermark", "log_end_offset", "size_bytes"], "properties": {
                "partition": {"type": "integer"},
                "leader": {"type": "integer"},
                "leader_epoch": {"type": "integer"},
                "replicas": int_array,
                "isr": int_array,
                "log_start_offset": nullable_int,
                "high_watermark": nullable_int,
                "log_end_offset": nullable_int,
                "size_bytes": nullable_int
            }},
            "Config": {"type": "object", "required": ["name", "value", "source"], "properties": {
                "name": {"type": "string"},
                "value": {"type": "string", "nullable": true},
                "source": {"type": "string", "enum": ["topic", "broker", "default"]}
            }},
            "NewTopic": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "pattern": "^[a-zA-Z0-9._-]{1,249}$"},
                "partitions": {"type": "integer", "format": "int32", "minimum": -1, "maximum": 2147483647, "default": -1},
                "replication_factor": {"type": "integer", "format": "int16", "minimum": -1, "maximum": 32767, "default": -1},
                "configs": {"type": "object", "additionalProperties": {"type": "string"}}
            }},
            "AlterConfigs": {"type": "object", "required": ["configs"], "properties": {
                "configs": {"type": "object", "additionalProperties": {"type": "string", "nullable": true}}
            }},
            "Messages": {"type": "object", "required": ["topic", "partition", "records", "next_offset", "high_watermark"], "properties": {
                "topic": {"type": "string"},
                "partition": {"type": "integer"},
                "records": {"type": "array", "items": reference("Message")},
                "next_offset": {"type": "integer"},
                "high_watermark": {"type": "integer"}
            }},
            "Message": {"type": "object", "required": ["offset", "timestamp", "timestamp_type", "key", "value", "headers"], "properties": {
                "offset": {"type": "integer"},
                "timestamp": {"type": "integer"},
                "timestamp_type": {"type": "string", "enum": ["CreateTime", "LogAppendTime"]},
                "key": {"allOf": [reference("Bytes")], "nullable": true},
                "value": {"allOf": [reference("Bytes")], "nullable": true},
                "headers": {"type": "array", "items": {"type": "object", "required": ["key", "value"], "properties": {
                    "key": {"type": "string"},
                    "value": {"allOf": [reference("Bytes")], "nullable": true}
                }}}
            }},
            "Bytes": {"type": "object", "required": ["base64", "text", "size"], "properties": {
                "base64": {"type": "string", "format": "byte"},
                "text": {"type": "string", "nullable": true, "description": "The bytes as text when they are UTF-8"},
                "size": {"type": "integer"}
            }},
            "GroupSummary": {"type": "object", "required": ["group_id", "group_type", "protocol_type", "state", "members", "lag"], "properties": {
                "group_id": {"type": "string"},
                "group_type": {"type": "string", "enum": ["classic", "consumer"]},
                "protocol_type": {"type": "string"},
                "state": {"type": "string"},
                "members": {"type": "integer"},
                "lag": {"type": "integer"}
            }},
            "Group": {"type": "object", "required": ["group_id", "group_type", "state", "members", "offsets"], "properties": {
                "group_id": {"type": "string"},
                "group_type": {"type": "string", "enum": ["classic", "consumer"]},
                "state": {"type": "string"},
                "members": {"type": "array", "items": {"type": "object", "required": ["member_id", "instance_id", "client_id", "client_host", "assignment"], "properties": {
                    "member_id": {"type": "string"},
                    "instance_id": {"type": "string", "nullable": true},
                    "client_id": {"type": "string"},
                    "client_host": {"type": "string"},
                    "assignment": {"type": "object", "additionalProperties": int_array}
                }}},
                "offsets": {"type": "array", "items": {"type": "object", "required": ["topic", "partition", "committed", "high_watermark", "lag"], "properties": {
                    "topic": {"type": "string"},
                    "partition": {"type": "integer"},
                    "committed": {"type": "integer"},
                    "high_watermark": nullable_int,
                    "lag": nullable_int
                }}}
            }},
            "Throughput": {"type": "object", "required": ["interval_seconds", "topics"], "properties": {
                "interval_seconds": {"type": "integer"},
                "topics": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "object", "required": ["at", "messages_in_per_sec", "bytes_in_per_sec", "bytes_out_per_sec"], "properties": {
                    "at": {"type": "integer"},
                    "messages_in_per_sec": {"type": "number"},
                    "bytes_in_per_sec": {"type": "number"},
                    "bytes_out_per_sec": {"type": "number"}
                }}}}
            }},
            "PartitionProducers": {"type": "object", "required": ["partition", "producers"], "properties": {
                "partition": {"type": "integer"},
                "producers": {"type": "array", "nullable": true, "items": {"type": "object", "required": ["producer_id", "producer_epoch", "last_sequence", "last_timestamp", "coordinator_epoch", "current_txn_start_offset"], "properties": {
                    "producer_id": {"type": "integer"},
                    "producer_epoch": {"type": "integer"},
                    "last_sequence": {"type": "integer"},
                    "last_timestamp": {"type": "integer"},
                    "coordinator_epoch": {"type": "integer"},
                    "current_txn_start_offset": {"type": "integer"}
                }}}
            }},
            "ShareGroupSummary": {"type": "object", "required": ["group_id", "state", "members", "lag"], "properties": {
                "group_id": {"type": "string"},
                "state": {"type": "string"},
                "members": {"type": "integer"},
                "lag": {"type": "integer"}
            }},
            "ShareGroup": {"type": "object", "required": ["group_id", "state", "group_epoch", "assignment_epoch", "members", "offsets"], "properties": {
                "group_id": {"type": "string"},
                "state": {"type": "string"},
                "group_epoch": {"type": "integer"},
                "assignment_epoch": {"type": "integer"},
                "members": {"type": "array", "items": {"type": "object", "required": ["member_id", "client_id", "client_host", "member_epoch", "subscribed_topics", "assignment"], "properties": {
                    "member_id": {"type": "string"},
                    "client_id": {"type": "string"},
                    "client_host": {"type": "string"},
                    "member_epoch": {"type": "integer"},
                    "subscribed_topics": {"type": "array", "items": {"type": "string"}},
                    "assignment": {"type": "object", "additionalProperties": int_array}
                }}},
                "offsets": {"type": "array", "items": {"type": "object", "required": ["topic", "partition", "start_offset", "lag"], "properties": {
                    "topic": {"type": "string"},
                    "partition": {"type": "integer"},
                    "start_offset": {"type": "integer"},
                    "lag": {"type": "integer"}
                }}}
            }},
            "Transaction": {"type": "object", "required": ["transactional_id", "producer_id", "producer_epoch", "state", "timeout_ms", "start_ms", "last_update_ms", "partitions"], "properties": {
                "transactional_id": {"type": "string"},
                "producer_id": {"type": "integer"},
                "producer_epoch": {"type": "integer"},
                "state": {"type": "string"},
                "timeout_ms": {"type": "integer"},
                "start_ms": {"type": "integer"},
                "last_update_ms": {"type": "integer"},
                "partitions": {"type": "object", "additionalProperties": int_array}
            }},
            "Acl": acl_schema(),
            "User": {"type": "object", "required": ["user", "credentials"], "properties": {
                "user": {"type": "string"},
                "credentials": {"type": "array", "items": {"type": "object", "required": ["mechanism", "iterations"], "properties": {
                    "mechanism": {"type": "string", "enum": ["SCRAM-SHA-256", "SCRAM-SHA-512"]},
                    "iterations": {"type": "integer"}
                }}}
            }},
            "SetCredential": {"type": "object", "required": ["mechanism", "password"], "properties": {
                "mechanism": {"type": "string", "enum": ["SCRAM-SHA-256", "SCRAM-SHA-512"]},
                "password": {"type": "string", "minLength": 1},
                "iterations": {"type": "integer", "format": "int32", "minimum": 4096, "maximum": 16384, "default": 4096}
            }},
            "ResetOffsets": {"type": "object", "required": ["topic", "to"], "properties": {
                "topic": {"type": "string"},
                "partitions": {"type": "array", "items": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 2147483647}},
                "to": {"type": "string", "enum": ["earliest", "latest", "offset", "timestamp"]},
                "offset": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 9223372036854775807_i64},
                "timestamp": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 9223372036854775807_i64}
            }}
        }}
    })
}

pub async fn document() -> Json<Value> {
    Json(describe())
}
