//! The HTTP listener secured as a Kafka listener: HTTPS with the listener's certificates, HTTP
//! Basic credentials checked as PLAIN and SCRAM passwords, and with an authorizer every view
//! of the JSON API (and `/metrics`) showing only what the principal's ACLs allow — ACLs and
//! SCRAM users managed through the API itself. Certificates are made at run time.
#![allow(clippy::unwrap_used)]

mod common;

use base64::Engine;
use common::Broker;
use common::pki::Pki;
use serde_json::{Value, json};
use std::sync::Arc;

const HTTP_JAAS: &str = r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";"#;

/// An HTTPS client trusting the test CA that answers every status (no error for 4xx).
struct Client {
    agent: ureq::Agent,
    base: String,
}

/// (status, body, WWW-Authenticate headers)
type Answer = (u16, Value, Vec<String>);

impl Client {
    fn new(pki: &Pki, address: &str) -> Self {
        use ureq::tls::{Certificate, RootCerts, TlsConfig};
        let ca = std::fs::read(pki.path("ca.pem")).unwrap();
        let roots = RootCerts::Specific(Arc::new(vec![Certificate::from_pem(&ca).unwrap()]));
        let agent = ureq::Agent::config_builder()
            .tls_config(TlsConfig::builder().root_certs(roots).build())
            .http_status_as_error(false)
            .build()
            .new_agent();
        Self {
            agent,
            base: format!("https://{address}"),
        }
    }

    fn call(
        &self,
        method: &str,
        path: &str,
        user: Option<(&str, &str)>,
        body: Option<Value>,
    ) -> Answer {
        let url = format!("{}{path}", self.base);
        let authorization = user.map(|(user, password)| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
            )
        });
        let response = match (method, body) {
            ("GET", _) => {
                let mut request = self.agent.get(&url);
                if let Some(a) = &authorization {
                    request = request.header("Authorization", a);
                }
                request.call()
            }
            ("DELETE", _) => {
                let mut request = self.agent.delete(&url);
                if let Some(a) = &authorization {
                    request = request.header("Authorization", a);
                }
                request.call()
            }
            (method, body) => {
                let mut request = if method == "PUT" {
                    self.agent.put(&url)
                } else {
                    self.agent.post(&url)
                };
                if let Some(a) = &authorization {
                    request = request.header("Authorization", a);
                }
                request
                    .header("content-type", "application/json")
                    .send(body.unwrap_or(Value::Null).to_string())
            }
        };
        let mut response = response.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = response.status().as_u16();
        let challenges = response
            .headers()
            .get_all("www-authenticate")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, body, challenges)
    }

    fn get(&self, path: &str, user: (&str, &str)) -> Answer {
        self.call("GET", path, Some(user), None)
    }
}

const ADMIN: (&str, &str) = ("admin", "admin-secret");
const ALICE: (&str, &str) = ("alice", "alice-secret");

fn topic_names(body: &Value) -> Vec<String> {
    body.as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn https_with_basic_credentials_and_acls_show_each_principal_what_it_may_describe() {
    let pki = Pki::new();
    let server_pem = pki.path("server.pem");
    let broker = Broker::start(&[
        ("http.listener", "127.0.0.1:0"),
        ("http.listener.security.protocol", "SASL_SSL"),
        ("listener.name.http.ssl.keystore.type", "PEM"),
        ("listener.name.http.ssl.keystore.location", &server_pem),
        (
            "listener.name.http.sasl.enabled.mechanisms",
            "PLAIN,SCRAM-SHA-256",
        ),
        ("listener.name.http.plain.sasl.jaas.config", HTTP_JAAS),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:admin"),
    ]);
    let address = broker.http_address();
    assert!(
        broker
            .log_text()
            .contains(&format!("HTTP at https://{address}")),
        "{}",
        broker.log_text()
    );
    let client = Client::new(&pki, &address);

    // Without credentials, or with wrong ones: 401 with the challenge a browser answers.
    let (status, body, challenges) = client.call("GET", "/api/v1/topics", None, None);
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"], "SASL_AUTHENTICATION_FAILED");
    assert!(
        challenges.iter().any(|c| c.starts_with("Basic ")),
        "{challenges:?}"
    );
    let (status, ..) = client.get("/api/v1/topics", ("alice", "wrong"));
    assert_eq!(status, 401);
    let (status, ..) = client.get("/metrics", ("nobody", "alice-secret"));
    assert_eq!(status, 401);
    // Plain HTTP to the HTTPS port gets no answer.
    assert!(
        ureq::get(format!("http://{address}/api/v1/topics"))
            .call()
            .is_err()
    );

    // The super user creates two topics; alice, with no ACL yet, sees neither.
    for name in ["visible", "hidden"] {
        let (status, body, _) = client.call(
            "POST",
            "/api/v1/topics",
            Some(ADMIN),
            Some(json!({"name": name, "partitions": 2})),
        );
        assert_eq!(status, 201, "{body}");
    }
    let (status, body, _) = client.get("/api/v1/topics", ADMIN);
    assert_eq!(status, 200);
    assert_eq!(topic_names(&body), ["hidden", "visible"]);
    let (status, body, _) = client.get("/api/v1/topics", ALICE);
    assert_eq!(status, 200, "{body}");
    assert_eq!(topic_names(&body), Vec::<String>::new());
    let (_, body, _) = client.get("/api/v1/cluster", ALICE);
    assert_eq!(body["principal"], "User:alice");
    assert_eq!(body["topics"], 0);
    let (status, body, _) = client.get("/api/v1/cluster", ADMIN);
    assert_eq!((status, body["topics"].as_u64()), (200, Some(2)));

    // ACLs through the API: alice may DESCRIBE "visible".
    let (status, body, _) = client.call(
        "POST",
        "/api/v1/acls",
        Some(ALICE),
        Some(json!({"resource_type": "TOPIC", "resource_name": "visible", "pattern_type": "LITERAL", "principal": "User:alice", "host": "*", "operation": "DESCRIBE", "permission": "ALLOW"})),
    );
    assert_eq!(
        (status, body["error"].as_str()),
        (403, Some("CLUSTER_AUTHORIZATION_FAILED"))
    );
    let acl = json!({"resource_type": "TOPIC", "resource_name": "visible", "pattern_type": "LITERAL", "principal": "User:alice", "host": "*", "operation": "DESCRIBE", "permission": "ALLOW"});
    let (status, body, _) = client.call("POST", "/api/v1/acls", Some(ADMIN), Some(acl.clone()));
    assert_eq!(status, 201, "{body}");
    let (status, body, _) = client.get("/api/v1/acls", ADMIN);
    assert_eq!(status, 200);
    assert_eq!(body.as_array().unwrap().len(), 1, "{body}");
    assert_eq!(body[0]["operation"], "DESCRIBE");
    let (status, ..) = client.get("/api/v1/acls", ALICE);
    assert_eq!(status, 403);

    let (_, body, _) = client.get("/api/v1/topics", ALICE);
    assert_eq!(topic_names(&body), ["visible"]);
    let (status, body, _) = client.get("/api/v1/topics/visible", ALICE);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["partitions"].as_array().unwrap().len(), 2);
    assert!(body["configs"].is_null(), "no DESCRIBE_CONFIGS: {body}");
    // Not said to exist or not: the same answer for a hidden topic and a missing one.
    for name in ["hidden", "no-such-topic"] {
        let (status, body, _) = client.get(&format!("/api/v1/topics/{name}"), ALICE);
        assert_eq!(
            (status, body["error"].as_str()),
            (403, Some("TOPIC_AUTHORIZATION_FAILED")),
            "{name}"
        );
    }
    let (status, ..) = client.get("/api/v1/topics/visible/messages", ALICE);
    assert_eq!(status, 403, "browsing records needs READ");
    let (status, ..) = client.call("DELETE", "/api/v1/topics/visible", Some(ALICE), None);
    assert_eq!(status, 403);
    let (status, ..) = client.get("/metrics", ALICE);
    assert_eq!(status, 403, "metrics need DESCRIBE on the cluster");
    let (status, body, _) = client.get("/metrics", ADMIN);
    assert_eq!(status, 200);
    assert!(
        body.as_str()
            .unwrap()
            .contains("kafka_server_replicamanager_partitioncount")
    );

    // SCRAM users made through the API log in at once, and no longer once deleted.
    let (status, body, _) = client.call(
        "PUT",
        "/api/v1/users/bob",
        Some(ADMIN),
        Some(json!({"mechanism": "SCRAM-SHA-256", "password": "bob-secret"})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["credentials"][0]["mechanism"], "SCRAM-SHA-256");
    assert_eq!(body["credentials"][0]["iterations"], 4096);
    let (status, body, _) = client.get("/api/v1/cluster", ("bob", "bob-secret"));
    assert_eq!(
        (status, body["principal"].as_str()),
        (200, Some("User:bob"))
    );
    let (status, ..) = client.get("/api/v1/cluster", ("bob", "wrong"));
    assert_eq!(status, 401);
    let (_, body, _) = client.get("/api/v1/users", ADMIN);
    assert_eq!(body[0]["user"], "bob");
    let (status, ..) = client.call(
        "DELETE",
        "/api/v1/users/bob?mechanism=SCRAM-SHA-256",
        Some(ADMIN),
        None,
    );
    assert_eq!(status, 204);
    let (status, ..) = client.get("/api/v1/cluster", ("bob", "bob-secret"));
    assert_eq!(
        status, 401,
        "a deleted credential is not trusted from the cache"
    );

    // Deleting the ACL hides the topic again.
    let query: Vec<String> = acl
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            format!(
                "{k}={}",
                v.as_str().unwrap().replace('*', "%2A").replace(':', "%3A")
            )
        })
        .collect();
    let (status, body, _) = client.call(
        "DELETE",
        &format!("/api/v1/acls?{}", query.join("&")),
        Some(ADMIN),
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.as_array().unwrap().len(), 1);
    let (_, body, _) = client.get("/api/v1/topics", ALICE);
    assert_eq!(topic_names(&body), Vec::<String>::new());
}

#[test]
fn an_unusable_http_security_setting_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args([
            "--override",
            &format!("log.dirs={}", dir.path().display()),
            "--override",
            "listeners=PLAINTEXT://127.0.0.1:0",
            "--override",
            "http.listener=127.0.0.1:0",
            "--override",
            "http.listener.security.protocol=SSL",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("HTTP listener"), "{stderr}");
}
