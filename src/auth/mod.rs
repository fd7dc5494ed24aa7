//! Security: who a connection is and how it proved it. TLS listeners (`tls`, rustls), SASL
//! mechanisms (`sasl` with PLAIN, `scram` for SCRAM-SHA-256/512, `oauthbearer` with `jwks`),
//! the principal a connection acts as and Kafka's certificate mapping rules (`principal`), ACLs
//! (`acl`) and the decision over them that Kafka's StandardAuthorizer makes (`authorizer`); the
//! client side of TLS and SASL for the broker's own connections (`tls::TlsClient`,
//! `sasl_client`). The JAAS syntax of the SASL properties is read by `config::jaas`; the
//! connection loop in `server` drives these; SCRAM credentials live in the cluster metadata.
//! Beside them, the client quotas a principal's requests are measured against (`quota`).
//!
//! | file | owns |
//! |---|---|
//! | `tls.rs` | rustls listeners and client, keystores and truststores |
//! | `tls_reload.rs` | a listener's TLS side that dynamic configs replace |
//! | `sasl.rs` | a SASL listener's mechanisms, PLAIN, session lifetimes |
//! | `scram.rs` | SCRAM-SHA-256/512 server and client |
//! | `delegation_token.rs` | delegation tokens: hmacs, settings, the SCRAM credentials of live tokens |
//! | `oauthbearer.rs` | OAUTHBEARER: unsecured and signed tokens |
//! | `jwks.rs` | the OAUTHBEARER validator's keys from a file or an endpoint |
//! | `principal.rs` | `KafkaPrincipal`, SSL principal mapping rules |
//! | `acl.rs` | ACL bindings and filters as clients send them |
//! | `authorizer.rs` | `StandardAuthorizer`'s decision |
//! | `sasl_client.rs` | SASL for this broker's own connections |
//! | `quota/` | client quotas enforced: byte rates, request time, mutations, connection rate |

pub mod acl;
pub mod authorizer;
pub mod delegation_token;
pub mod jwks;
pub mod oauthbearer;
pub mod principal;
pub mod quota;
pub mod sasl;
pub mod sasl_client;
pub mod scram;
pub mod tls;
pub mod tls_reload;

pub use principal::KafkaPrincipal;
