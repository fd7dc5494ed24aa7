//! How this broker's own connections meet another node's listener: as a client of that
//! listener's security protocol, with Kafka's client-side settings from the same
//! `listener.name.<listener>.` properties — TLS checked against its truststore (the keystore
//! presented as the client certificate), SASL with the mechanism
//! `sasl.mechanism.inter.broker.protocol` (the inter-broker listener) or
//! `sasl.mechanism.controller.protocol` (the controller listener) names.

use super::RequestError;
use crate::auth::sasl_client::ClientCredentials;
use crate::auth::tls::TlsClient;
use crate::config::BrokerConfig;
use tokio::io::{AsyncRead, AsyncWrite};

/// A byte stream to another node: TCP, or TLS over TCP.
pub trait PeerStream: AsyncRead + AsyncWrite + Unpin + Send + Sync {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send + Sync> PeerStream for T {}

/// The client side of one listener's security protocol.
#[derive(Debug, Clone, Default)]
pub struct PeerSecurity {
    tls: Option<TlsClient>,
    pub(super) sasl: Option<ClientCredentials>,
}

impl PeerSecurity {
    /// PLAINTEXT.
    pub fn plaintext() -> Self {
        Self::default()
    }

    /// For connections to other nodes' `listener`, authenticating with the mechanism
    /// `mechanism_property` names on a SASL listener.
    pub fn for_listener(
        config: &BrokerConfig,
        listener: &str,
        mechanism_property: &str,
    ) -> Result<Self, String> {
        let protocol = config.protocol_of(listener);
        let tls = if protocol.uses_tls() {
            Some(TlsClient::for_listener(config, listener).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let sasl = if protocol.uses_sasl() {
            Some(
                ClientCredentials::for_listener(config, listener, mechanism_property)
                    .map_err(|e| e.to_string())?,
            )
        } else {
            None
        };
        Ok(Self { tls, sasl })
    }

    /// The connection's stream: `tcp` itself, or TLS over it to the host of `address`.
    pub(super) async fn wrap(
        &self,
        address: &str,
        tcp: tokio::net::TcpStream,
    ) -> Result<Box<dyn PeerStream>, RequestError> {
        let Some(tls) = &self.tls else {
            return Ok(Box::new(tcp));
        };
        let host = address
            .rsplit_once(':')
            .map_or(address, |(host, _)| host)
            .trim_start_matches('[')
            .trim_end_matches(']');
        let name = rustls_pki_types::ServerName::try_from(host.to_string()).map_err(|e| {
            RequestError::Connect(
                address.into(),
                std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()),
            )
        })?;
        let stream = tls.connector.connect(name, tcp).await.map_err(|e| {
            RequestError::Authentication(address.into(), format!("TLS handshake failed: {e}"))
        })?;
        Ok(Box::new(stream))
    }
}

/// The client side of both listeners this node connects to on other nodes.
#[derive(Debug, Clone, Default)]
pub struct NodeSecurity {
    /// Other brokers' inter-broker listener (replication, transaction markers).
    pub inter_broker: PeerSecurity,
    /// Controllers' controller listener (Raft, broker lifecycle, forwarding).
    pub controller: PeerSecurity,
}

impl NodeSecurity {
    /// From the configuration; a node that is the whole cluster never connects to another
    /// and needs no client settings.
    pub fn from_config(config: &BrokerConfig) -> Result<Self, String> {
        let cluster = &config.cluster;
        if cluster.is_single_node() {
            return Ok(Self::default());
        }
        let inter_broker = if cluster.broker_role {
            PeerSecurity::for_listener(
                config,
                &cluster.inter_broker_listener,
                "sasl.mechanism.inter.broker.protocol",
            )?
        } else {
            PeerSecurity::plaintext()
        };
        let controller = PeerSecurity::for_listener(
            config,
            &cluster.controller_listener,
            "sasl.mechanism.controller.protocol",
        )?;
        if let Some(credentials) = &controller.sasl
            && matches!(
                credentials.mechanism(),
                crate::auth::sasl::Mechanism::Scram(_)
            )
        {
            // The credentials live in the metadata the quorum is yet to replicate.
            return Err(format!(
                "sasl.mechanism.controller.protocol: {} is not supported on the controller listener (as in Kafka, KAFKA-15513): use PLAIN or OAUTHBEARER",
                credentials.mechanism().name()
            ));
        }
        Ok(Self {
            inter_broker,
            controller,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(extra: &[(&str, &str)]) -> Result<NodeSecurity, String> {
        let mut pairs = vec![
            ("node.id", "2"),
            ("process.roles", "broker,controller"),
            (
                "controller.quorum.voters",
                "1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103",
            ),
            (
                "listeners",
                "BROKER://127.0.0.1:9092,CONTROLLER://127.0.0.1:9102",
            ),
            ("inter.broker.listener.name", "BROKER"),
        ];
        pairs.extend_from_slice(extra);
        NodeSecurity::from_config(&BrokerConfig::with_overrides(&pairs).unwrap())
    }

    /// A CA, and a server certificate it signs for `names`, as PEM files in `dir`.
    fn certificates(dir: &std::path::Path, names: &[&str]) {
        use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "peer test CA");
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let server = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        std::fs::write(
            dir.join("server.pem"),
            format!("{}{}", key.serialize_pem(), server.pem()),
        )
        .unwrap();
    }

    /// `ssl.endpoint.identification.algorithm`: https (the default) refuses a peer whose
    /// certificate does not name the host connected to; empty accepts it when its chain is
    /// trusted; an untrusted chain is refused either way.
    #[tokio::test]
    async fn peers_host_names_are_checked_unless_identification_is_off() {
        let dir = tempfile::tempdir().unwrap();
        certificates(dir.path(), &["broker.example"]);
        let path = |name: &str| dir.path().join(name).display().to_string();
        let (server_pem, ca_pem) = (path("server.pem"), path("ca.pem"));
        let base = [
            ("listeners", "SSL://127.0.0.1:0"),
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.location", server_pem.as_str()),
            ("ssl.truststore.type", "PEM"),
            ("ssl.truststore.location", ca_pem.as_str()),
        ];
        let config = BrokerConfig::with_overrides(&base).unwrap();
        let acceptor = crate::auth::tls::TlsServer::for_listener(&config, "SSL")
            .unwrap()
            .acceptor;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // The client's verdict is what is tested; the server just shakes hands.
                    let _ = acceptor.accept(stream).await;
                });
            }
        });
        let connect = |extra: &[(&str, &str)]| {
            let mut pairs = base.to_vec();
            pairs.extend_from_slice(extra);
            let config = BrokerConfig::with_overrides(&pairs).unwrap();
            let security = PeerSecurity::for_listener(&config, "SSL", "unused").unwrap();
            let address = address.clone();
            async move {
                let tcp = tokio::net::TcpStream::connect(&address).await.unwrap();
                security.wrap(&address, tcp).await.map(drop)
            }
        };
        let checked = connect(&[]).await.unwrap_err();
        assert!(
            matches!(&checked, RequestError::Authentication(_, reason) if reason.contains("TLS handshake failed")),
            "{checked}"
        );
        connect(&[("ssl.endpoint.identification.algorithm", "")])
            .await
            .unwrap();
        // Another CA: refused even without the host name check.
        let other = tempfile::tempdir().unwrap();
        certificates(other.path(), &["127.0.0.1"]);
        let other_ca = other.path().join("ca.pem").display().to_string();
        assert!(
            connect(&[
                ("ssl.endpoint.identification.algorithm", ""),
                ("ssl.truststore.location", other_ca.as_str()),
            ])
            .await
            .is_err()
        );
    }

    const JAAS: &str = r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="p" user_admin="p";"#;

    #[test]
    fn a_cluster_says_what_its_own_connections_are_missing() {
        let plain = node(&[]).unwrap();
        assert!(plain.inter_broker.tls.is_none() && plain.controller.sasl.is_none());

        let sasl = node(&[
            (
                "listener.security.protocol.map",
                "BROKER:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
            ),
            ("sasl.mechanism.inter.broker.protocol", "PLAIN"),
            ("sasl.mechanism.controller.protocol", "PLAIN"),
            ("listener.name.broker.plain.sasl.jaas.config", JAAS),
            ("listener.name.controller.plain.sasl.jaas.config", JAAS),
        ])
        .unwrap();
        assert!(sasl.inter_broker.sasl.is_some() && sasl.controller.sasl.is_some());

        // Kafka's default mechanism (GSSAPI) is not available.
        let gssapi = node(&[(
            "listener.security.protocol.map",
            "BROKER:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
        )])
        .unwrap_err();
        assert!(
            gssapi.contains("sasl.mechanism.inter.broker.protocol"),
            "{gssapi}"
        );
        // SCRAM between controllers is refused, as Kafka does.
        let scram = node(&[
            ("listener.security.protocol.map", "CONTROLLER:SASL_PLAINTEXT"),
            ("sasl.mechanism.controller.protocol", "SCRAM-SHA-256"),
            (
                "listener.name.controller.scram-sha-256.sasl.jaas.config",
                r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="b";"#,
            ),
        ])
        .unwrap_err();
        assert!(scram.contains("KAFKA-15513"), "{scram}");
        // TLS to other nodes needs something to check them against.
        let no_truststore = node(&[("listener.security.protocol.map", "BROKER:SSL")]).unwrap_err();
        assert!(no_truststore.contains("truststore"), "{no_truststore}");
    }
}
