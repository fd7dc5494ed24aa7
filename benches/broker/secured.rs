//! The benchmark's secured listeners: certificates and users made at run time, and the
//! `connect` scenarios that open connection after connection over them.

use super::*;

/// The secured listeners of a broker the benchmark starts: a CA and a broker certificate made
/// with rcgen, SASL PLAIN users in the JAAS config and one SCRAM-SHA-256 user.
pub(super) struct Secured {
    pub(super) dir: tempfile::TempDir,
}

pub(super) const BENCH_USER: &str = "bench";
pub(super) const BENCH_PASSWORD: &str = "bench-secret";

impl Secured {
    pub(super) fn new() -> Self {
        use rcgen::{
            BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa,
            KeyPair,
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let mut name = DistinguishedName::new();
        name.push(DnType::CommonName, "sluice bench CA");
        ca_params.distinguished_name = name;
        let ca =
            CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("key")).expect("CA");
        let key = KeyPair::generate().expect("key");
        let server = CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])
            .expect("params")
            .signed_by(&key, &ca)
            .expect("certificate");
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).expect("write ca");
        std::fs::write(
            dir.path().join("broker.pem"),
            format!("{}{}", key.serialize_pem(), server.pem()),
        )
        .expect("write keystore");
        Self { dir }
    }

    pub(super) fn ca(&self) -> String {
        self.dir.path().join("ca.pem").display().to_string()
    }

    pub(super) fn overrides(&self) -> Vec<String> {
        let jaas = format!(
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_{BENCH_USER}="{BENCH_PASSWORD}";"#
        );
        vec![
            "listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0".into(),
            "ssl.keystore.type=PEM".into(),
            format!("ssl.keystore.location={}", self.dir.path().join("broker.pem").display()),
            "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256".into(),
            format!("listener.name.sasl_plaintext.plain.sasl.jaas.config={jaas}"),
            format!("listener.name.sasl_ssl.plain.sasl.jaas.config={jaas}"),
        ]
    }

    /// librdkafka's settings for a listener of this security protocol.
    pub(super) fn client_settings(&self, protocol: &str) -> ClientSettings {
        let mut settings = vec![("security.protocol".to_string(), protocol.to_lowercase())];
        if protocol.ends_with("SSL") {
            settings.push(("ssl.ca.location".into(), self.ca()));
        }
        if protocol.starts_with("SASL") {
            settings.extend([
                ("sasl.mechanism".to_string(), "PLAIN".to_string()),
                ("sasl.username".into(), BENCH_USER.into()),
                ("sasl.password".into(), BENCH_PASSWORD.into()),
            ]);
        }
        settings
    }

    /// The SCRAM-SHA-256 credential of the bench user, made over the PLAINTEXT listener.
    pub(super) fn create_scram_user(&self, plaintext: &str) {
        use kafka_protocol::messages::alter_user_scram_credentials_request::ScramCredentialUpsertion;
        use kafka_protocol::messages::{
            AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
        };
        let salt = b"bench salt".to_vec();
        let salted = sluice::auth::scram::ScramMechanism::Sha256.salted_password(
            BENCH_PASSWORD.as_bytes(),
            &salt,
            4096,
        );
        let request = AlterUserScramCredentialsRequest::default().with_upsertions(vec![
            ScramCredentialUpsertion::default()
                .with_name(kafka_protocol::protocol::StrBytes::from_static_str(
                    BENCH_USER,
                ))
                .with_mechanism(1)
                .with_iterations(4096)
                .with_salt(salt.into())
                .with_salted_password(salted.into()),
        ]);
        let mut stream = std::net::TcpStream::connect(plaintext).expect("connect");
        let response: AlterUserScramCredentialsResponse = raw::exchange(
            &mut stream,
            kafka_protocol::messages::ApiKey::AlterUserScramCredentials,
            0,
            &request,
        );
        assert_eq!(response.results[0].error_code, 0, "SCRAM user created");
    }

    pub(super) fn tls_client(&self) -> Arc<rustls::ClientConfig> {
        use rustls_pki_types::CertificateDer;
        use rustls_pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(self.ca()).expect("ca file") {
            roots.add(cert.expect("ca certificate")).expect("root");
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        Arc::new(
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("versions")
                .with_root_certificates(roots)
                .with_no_client_auth(),
        )
    }
}

/// Kafka request frames over a blocking stream, for the `connect` scenarios.
mod raw {
    use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
    use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
    use std::io::{Read, Write};

    pub fn exchange<
        S: Read + Write + ?Sized,
        Req: Encodable + HeaderVersion,
        Resp: Decodable + HeaderVersion,
    >(
        stream: &mut S,
        api: ApiKey,
        version: i16,
        request: &Req,
    ) -> Resp {
        let header = RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(1)
            .with_client_id(Some(StrBytes::from_static_str("sluice-bench")));
        let mut frame = bytes::BytesMut::new();
        header
            .encode(&mut frame, Req::header_version(version))
            .expect("header");
        request.encode(&mut frame, version).expect("request");
        stream
            .write_all(&(frame.len() as i32).to_be_bytes())
            .expect("write");
        stream.write_all(&frame).expect("write");
        stream.flush().expect("flush");
        let mut size = [0u8; 4];
        stream.read_exact(&mut size).expect("response size");
        let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
        stream.read_exact(&mut body).expect("response");
        let mut body = bytes::Bytes::from(body);
        ResponseHeader::decode(&mut body, Resp::header_version(version)).expect("header");
        Resp::decode(&mut body, version).expect("response body")
    }
}

/// `--connections` connections one after the other: TCP, TLS on SSL listeners, SASL (PLAIN,
/// or SCRAM-SHA-256 with `scram`) on SASL listeners, then ApiVersions, then close.
pub(super) fn connect(
    options: &Options,
    address: &str,
    protocol: &str,
    scram: bool,
    secured: Option<&Secured>,
) -> Outcome {
    use kafka_protocol::messages::*;
    use kafka_protocol::protocol::StrBytes;
    let tls = protocol.ends_with("SSL").then(|| {
        secured
            .expect("TLS listeners come with their certificates")
            .tls_client()
    });
    let one = |stream: &mut dyn ReadWrite| {
        if protocol.starts_with("SASL") {
            let mechanism = if scram { "SCRAM-SHA-256" } else { "PLAIN" };
            let handshake: SaslHandshakeResponse = raw::exchange(
                stream,
                ApiKey::SaslHandshake,
                1,
                &SaslHandshakeRequest::default()
                    .with_mechanism(StrBytes::from_static_str(mechanism)),
            );
            assert_eq!(handshake.error_code, 0, "handshake");
            let authenticate = |stream: &mut dyn ReadWrite, token: Vec<u8>| -> Vec<u8> {
                let response: SaslAuthenticateResponse = raw::exchange(
                    stream,
                    ApiKey::SaslAuthenticate,
                    2,
                    &SaslAuthenticateRequest::default().with_auth_bytes(token.into()),
                );
                assert_eq!(response.error_code, 0, "{:?}", response.error_message);
                response.auth_bytes.to_vec()
            };
            if scram {
                let mut client = sluice::auth::scram::ScramClient::new(
                    sluice::auth::scram::ScramMechanism::Sha256,
                    BENCH_USER,
                    BENCH_PASSWORD,
                )
                .expect("nonce");
                let server_first = authenticate(stream, client.first());
                let client_final = client
                    .step(&server_first)
                    .expect("server-first")
                    .expect("final");
                let server_final = authenticate(stream, client_final);
                assert_eq!(client.step(&server_final).expect("server-final"), None);
            } else {
                authenticate(
                    stream,
                    format!("\0{BENCH_USER}\0{BENCH_PASSWORD}").into_bytes(),
                );
            }
        }
        let versions: ApiVersionsResponse = raw::exchange(
            stream,
            ApiKey::ApiVersions,
            3,
            &ApiVersionsRequest::default()
                .with_client_software_name(StrBytes::from_static_str("sluice-bench"))
                .with_client_software_version(StrBytes::from_static_str("1")),
        );
        assert_eq!(versions.error_code, 0);
    };
    let started = Instant::now();
    for _ in 0..options.connections {
        let tcp = std::net::TcpStream::connect(address).expect("connect");
        let _ = tcp.set_nodelay(true);
        match &tls {
            Some(config) => {
                let name = rustls_pki_types::ServerName::try_from("127.0.0.1").expect("name");
                let connection =
                    rustls::ClientConnection::new(config.clone(), name).expect("tls client");
                let mut stream = rustls::StreamOwned::new(connection, tcp);
                one(&mut stream);
            }
            None => {
                let mut stream = tcp;
                one(&mut stream);
            }
        }
    }
    Outcome {
        messages: options.connections,
        seconds: started.elapsed().as_secs_f64(),
        ..Outcome::default()
    }
}

pub(super) trait ReadWrite: std::io::Read + std::io::Write {}
impl<T: std::io::Read + std::io::Write> ReadWrite for T {}
