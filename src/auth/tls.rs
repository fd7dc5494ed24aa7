//! TLS for a listener with rustls (on ring): the keystore and truststore of Kafka's `ssl.*`
//! properties — PEM files (KIP-651: key and chain in one file, or inline
//! `ssl.keystore.certificate.chain` / `ssl.keystore.key`, an encrypted PKCS#8 key opened with
//! `ssl.key.password`) and PKCS12 files (a `JKS`-typed store is read when it is PKCS12, which
//! keytool writes since Java 9; a real JKS file is refused with how to convert it) —
//! `ssl.client.auth`, `ssl.enabled.protocols`, `ssl.cipher.suites`, and the principal of a
//! client certificate through `ssl.principal.mapping.rules`; and the client side of the
//! broker's own connections to other nodes ([`TlsClient`]).

use super::principal::{KafkaPrincipal, PrincipalMapper, rfc2253_name};
use crate::config::BrokerConfig;
use rustls::crypto::CryptoProvider;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs1KeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TlsError {
    #[error("listener {listener}: {property}: {reason}")]
    Config {
        listener: String,
        property: &'static str,
        reason: String,
    },
    #[error("listener {listener}: cannot build the TLS configuration: {reason}")]
    Build { listener: String, reason: String },
}

/// The magic number a JKS (not PKCS12) keystore starts with.
const JKS_MAGIC: [u8; 4] = [0xfe, 0xed, 0xfe, 0xed];

/// One listener's view of the `ssl.*` properties.
struct Settings<'a> {
    config: &'a BrokerConfig,
    listener: &'a str,
}

impl Settings<'_> {
    fn get(&self, property: &str) -> Option<String> {
        self.config
            .listener_value(self.listener, property)
            .filter(|v| !v.trim().is_empty())
    }

    fn error(&self, property: &'static str, reason: impl Into<String>) -> TlsError {
        TlsError::Config {
            listener: self.listener.to_string(),
            property,
            reason: reason.into(),
        }
    }

    fn read(&self, property: &'static str, path: &str) -> Result<Vec<u8>, TlsError> {
        std::fs::read(path).map_err(|e| self.error(property, format!("cannot read {path}: {e}")))
    }

    /// The certificate chain and private key this listener presents.
    fn keystore(&self) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TlsError> {
        let kind = self
            .get("ssl.keystore.type")
            .unwrap_or_else(|| "JKS".into());
        let key_password = self.get("ssl.key.password");
        if kind == "PEM" {
            let (chain_pem, key_pem) = match self.get("ssl.keystore.location") {
                Some(path) => {
                    let text = self.read("ssl.keystore.location", &path)?;
                    (text.clone(), text)
                }
                None => {
                    let chain = self.get("ssl.keystore.certificate.chain").ok_or_else(|| {
                        self.error(
                            "ssl.keystore.location",
                            "a TLS listener needs ssl.keystore.location, or ssl.keystore.certificate.chain and ssl.keystore.key",
                        )
                    })?;
                    let key = self.get("ssl.keystore.key").ok_or_else(|| {
                        self.error(
                            "ssl.keystore.key",
                            "not set beside ssl.keystore.certificate.chain",
                        )
                    })?;
                    (chain.into_bytes(), key.into_bytes())
                }
            };
            let chain = pem_certificates(&chain_pem)
                .map_err(|reason| self.error("ssl.keystore.certificate.chain", reason))?;
            let key = pem_private_key(&key_pem, key_password.as_deref())
                .map_err(|reason| self.error("ssl.keystore.key", reason))?;
            if chain.is_empty() {
                return Err(self.error(
                    "ssl.keystore.certificate.chain",
                    "no CERTIFICATE in the keystore",
                ));
            }
            return Ok((chain, key));
        }
        let path = self.get("ssl.keystore.location").ok_or_else(|| {
            self.error("ssl.keystore.location", "a TLS listener needs a keystore")
        })?;
        let data = self.read("ssl.keystore.location", &path)?;
        let password = self
            .get("ssl.keystore.password")
            .or(key_password)
            .unwrap_or_default();
        let store = self.pkcs12(&data, &password, "ssl.keystore.location")?;
        let (_, chain) = store.private_key_chain().ok_or_else(|| {
            self.error("ssl.keystore.location", "the keystore holds no private key")
        })?;
        let certs = chain
            .certs()
            .iter()
            .map(|c| CertificateDer::from(c.as_der().to_vec()))
            .collect::<Vec<_>>();
        if certs.is_empty() {
            return Err(self.error(
                "ssl.keystore.location",
                "the keystore's private key has no certificate",
            ));
        }
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(chain.key().as_der().to_vec()));
        Ok((certs, key))
    }

    fn pkcs12(
        &self,
        data: &[u8],
        password: &str,
        property: &'static str,
    ) -> Result<p12_keystore::KeyStore, TlsError> {
        if data.starts_with(&JKS_MAGIC) {
            return Err(self.error(
                property,
                "JKS keystores are not supported: convert it with `keytool -importkeystore -srckeystore FILE -destkeystore FILE.p12 -deststoretype PKCS12` and set the type to PKCS12",
            ));
        }
        p12_keystore::KeyStore::from_pkcs12(
            data,
            password,
            p12_keystore::Pkcs12ImportPolicy::Relaxed,
        )
        .map_err(|e| {
            self.error(
                property,
                format!("not a PKCS12 store or a wrong password ({e})"),
            )
        })
    }

    /// The certificates peers are checked against, if any are configured.
    fn truststore(&self) -> Result<Option<rustls::RootCertStore>, TlsError> {
        let kind = self
            .get("ssl.truststore.type")
            .unwrap_or_else(|| "JKS".into());
        let certs = if kind == "PEM" {
            let text = match (
                self.get("ssl.truststore.location"),
                self.get("ssl.truststore.certificates"),
            ) {
                (Some(path), _) => self.read("ssl.truststore.location", &path)?,
                (None, Some(inline)) => inline.into_bytes(),
                (None, None) => return Ok(None),
            };
            pem_certificates(&text)
                .map_err(|reason| self.error("ssl.truststore.location", reason))?
        } else {
            let Some(path) = self.get("ssl.truststore.location") else {
                return Ok(None);
            };
            let data = self.read("ssl.truststore.location", &path)?;
            let password = self.get("ssl.truststore.password").unwrap_or_default();
            let store = self.pkcs12(&data, &password, "ssl.truststore.location")?;
            let mut certs = Vec::new();
            for (_, entry) in store.entries() {
                match entry {
                    p12_keystore::KeyStoreEntry::Certificate(cert) => {
                        certs.push(CertificateDer::from(cert.as_der().to_vec()));
                    }
                    p12_keystore::KeyStoreEntry::PrivateKeyChain(chain) => certs.extend(
                        chain
                            .certs()
                            .iter()
                            .map(|c| CertificateDer::from(c.as_der().to_vec())),
                    ),
                    p12_keystore::KeyStoreEntry::Secret(_) => {}
                }
            }
            certs
        };
        let mut roots = rustls::RootCertStore::empty();
        for cert in certs {
            roots.add(cert).map_err(|e| {
                self.error(
                    "ssl.truststore.location",
                    format!("unusable certificate: {e}"),
                )
            })?;
        }
        if roots.is_empty() {
            return Err(self.error(
                "ssl.truststore.location",
                "the truststore holds no certificate",
            ));
        }
        Ok(Some(roots))
    }

    /// ring's provider limited to `ssl.cipher.suites`.
    fn provider(&self) -> Result<Arc<CryptoProvider>, TlsError> {
        let mut provider = rustls::crypto::ring::default_provider();
        if let Some(list) = self.get("ssl.cipher.suites") {
            let wanted: Vec<String> = list
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            provider
                .cipher_suites
                .retain(|suite| wanted.iter().any(|w| *w == iana_name(suite)));
            if provider.cipher_suites.is_empty() {
                let offered: Vec<String> = rustls::crypto::ring::default_provider()
                    .cipher_suites
                    .iter()
                    .map(iana_name)
                    .collect();
                return Err(self.error(
                    "ssl.cipher.suites",
                    format!(
                        "none of these is supported; supported: {}",
                        offered.join(",")
                    ),
                ));
            }
        }
        Ok(Arc::new(provider))
    }

    fn versions(&self) -> Result<Vec<&'static rustls::SupportedProtocolVersion>, TlsError> {
        let list = self
            .get("ssl.enabled.protocols")
            .unwrap_or_else(|| "TLSv1.2,TLSv1.3".into());
        let mut versions = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "TLSv1.3" => versions.push(&rustls::version::TLS13),
                "TLSv1.2" => versions.push(&rustls::version::TLS12),
                other => tracing::warn!(
                    listener = self.listener,
                    protocol = other,
                    "ssl.enabled.protocols: only TLSv1.2 and TLSv1.3 are offered; ignoring this one"
                ),
            }
        }
        if versions.is_empty() {
            return Err(self.error(
                "ssl.enabled.protocols",
                "neither TLSv1.2 nor TLSv1.3 is enabled",
            ));
        }
        Ok(versions)
    }
}

/// The chain and key a listener presents, checked to belong together. rustls' own check
/// parses the certificate with webpki, which refuses X.509 v1 certificates (what `openssl x509
/// -req` signs without extensions, and Java accepts): those are checked with x509-parser.
fn certified_key(
    provider: &CryptoProvider,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<rustls::sign::CertifiedKey, rustls::Error> {
    use rustls::{Error, InconsistentKeys};
    let signing_key = provider.key_provider.load_private_key(key)?;
    let certified = rustls::sign::CertifiedKey::new(chain, signing_key);
    match certified.keys_match() {
        Ok(()) | Err(Error::InconsistentKeys(InconsistentKeys::Unknown)) => Ok(certified),
        Err(Error::InvalidCertificate(_)) => {
            let leaf = certified.end_entity_cert()?;
            let (_, parsed) = x509_parser::parse_x509_certificate(leaf.as_ref())
                .map_err(|e| Error::General(format!("unreadable certificate: {e}")))?;
            match certified.key.public_key() {
                Some(spki) if spki.as_ref() != parsed.tbs_certificate.subject_pki.raw => {
                    Err(Error::InconsistentKeys(InconsistentKeys::KeyMismatch))
                }
                _ => Ok(certified),
            }
        }
        Err(other) => Err(other),
    }
}

/// The IANA name of a suite (what Java and Kafka configs use).
fn iana_name(suite: &rustls::SupportedCipherSuite) -> String {
    format!("{:?}", suite.suite()).replacen("TLS13_", "TLS_", 1)
}

fn pem_certificates(text: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let blocks = pem::parse_many(text).map_err(|e| format!("malformed PEM: {e}"))?;
    Ok(blocks
        .into_iter()
        .filter(|b| b.tag() == "CERTIFICATE")
        .map(|b| CertificateDer::from(b.into_contents()))
        .collect())
}

fn pem_private_key(text: &[u8], password: Option<&str>) -> Result<PrivateKeyDer<'static>, String> {
    let blocks = pem::parse_many(text).map_err(|e| format!("malformed PEM: {e}"))?;
    for block in blocks {
        match block.tag() {
            "ENCRYPTED PRIVATE KEY" => {
                let password =
                    password.ok_or("the private key is encrypted: set ssl.key.password")?;
                let info = pkcs8::EncryptedPrivateKeyInfoRef::try_from(block.contents())
                    .map_err(|e| format!("malformed encrypted private key: {e}"))?;
                let document = info.decrypt(password).map_err(|_| {
                    "cannot decrypt the private key: wrong ssl.key.password?".to_string()
                })?;
                return Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
                    document.as_bytes().to_vec(),
                )));
            }
            "PRIVATE KEY" => {
                return Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
                    block.into_contents(),
                )));
            }
            "RSA PRIVATE KEY" => {
                return Ok(PrivateKeyDer::Pkcs1(PrivatePkcs1KeyDer::from(
                    block.into_contents(),
                )));
            }
            "EC PRIVATE KEY" => {
                return Ok(PrivateKeyDer::Sec1(block.into_contents().into()));
            }
            _ => {}
        }
    }
    Err("no PRIVATE KEY in the keystore".into())
}

/// A TLS listener's server side.
#[derive(Clone)]
pub struct TlsServer {
    pub acceptor: tokio_rustls::TlsAcceptor,
    pub mapper: Arc<PrincipalMapper>,
    /// Who the keystore's certificate says this broker is, for Kafka's checks when a
    /// dynamic config replaces it.
    pub identity: CertificateIdentity,
    /// Whether a truststore is configured.
    pub has_truststore: bool,
}

/// The subject and subject alternative names of a keystore's certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateIdentity {
    /// RFC 2253 form.
    pub subject: String,
    /// As `[type, value]` pairs, Java's `getSubjectAlternativeNames` numbering (2 DNS, 7 IP).
    pub alt_names: Vec<(u8, String)>,
}

impl CertificateIdentity {
    fn of(leaf: &CertificateDer<'_>) -> Result<Self, String> {
        let (_, parsed) = x509_parser::parse_x509_certificate(leaf.as_ref())
            .map_err(|e| format!("unreadable keystore certificate: {e}"))?;
        let mut alt_names = Vec::new();
        if let Ok(Some(extension)) = parsed.subject_alternative_name() {
            use x509_parser::extensions::GeneralName;
            for name in &extension.value.general_names {
                match name {
                    GeneralName::DNSName(dns) => alt_names.push((2, dns.to_string())),
                    GeneralName::IPAddress(bytes) => {
                        let ip = match bytes.len() {
                            4 => <[u8; 4]>::try_from(*bytes)
                                .map(|b| std::net::IpAddr::from(b).to_string())
                                .ok(),
                            16 => <[u8; 16]>::try_from(*bytes)
                                .map(|b| std::net::IpAddr::from(b).to_string())
                                .ok(),
                            _ => None,
                        };
                        if let Some(ip) = ip {
                            alt_names.push((7, ip));
                        }
                    }
                    GeneralName::RFC822Name(mail) => alt_names.push((1, mail.to_string())),
                    GeneralName::URI(uri) => alt_names.push((6, uri.to_string())),
                    _ => {}
                }
            }
        }
        Ok(Self {
            subject: rfc2253_name(parsed.subject()),
            alt_names,
        })
    }
}

impl std::fmt::Debug for TlsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsServer").finish_non_exhaustive()
    }
}

impl TlsServer {
    /// Builds the TLS side of `listener` from its `ssl.*` properties.
    pub fn for_listener(config: &BrokerConfig, listener: &str) -> Result<Self, TlsError> {
        let settings = Settings { config, listener };
        let provider = settings.provider()?;
        let versions = settings.versions()?;
        let (chain, key) = settings.keystore()?;
        let client_auth = settings
            .get("ssl.client.auth")
            .unwrap_or_else(|| "none".into());
        let verifier = match client_auth.as_str() {
            "required" | "requested" => {
                let roots = settings.truststore()?.ok_or_else(|| {
                    settings.error(
                        "ssl.truststore.location",
                        format!("ssl.client.auth={client_auth} needs a truststore to check client certificates against"),
                    )
                })?;
                let builder = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider.clone(),
                );
                let builder = if client_auth == "requested" {
                    builder.allow_unauthenticated()
                } else {
                    builder
                };
                builder.build().map_err(|e| TlsError::Build {
                    listener: listener.to_string(),
                    reason: e.to_string(),
                })?
            }
            _ => rustls::server::WebPkiClientVerifier::no_client_auth(),
        };
        let build = |e: rustls::Error| TlsError::Build {
            listener: listener.to_string(),
            reason: e.to_string(),
        };
        let identity = chain
            .first()
            .ok_or_else(|| {
                settings.error("ssl.keystore.location", "no certificate in the keystore")
            })
            .and_then(|leaf| {
                CertificateIdentity::of(leaf)
                    .map_err(|reason| settings.error("ssl.keystore.location", reason))
            })?;
        let has_truststore = settings.get("ssl.truststore.location").is_some()
            || settings.get("ssl.truststore.certificates").is_some();
        let certified = certified_key(&provider, chain, key).map_err(build)?;
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)
            .map_err(build)?
            .with_client_cert_verifier(verifier)
            .with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)));
        let rules = settings
            .get("ssl.principal.mapping.rules")
            .unwrap_or_else(|| "DEFAULT".into());
        let mapper = PrincipalMapper::parse(&rules)
            .map_err(|e| settings.error("ssl.principal.mapping.rules", e.to_string()))?;
        Ok(Self {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(server)),
            mapper: Arc::new(mapper),
            identity,
            has_truststore,
        })
    }

    /// The principal of a client that presented `certificates` (none: `User:ANONYMOUS`).
    pub fn principal(
        &self,
        certificates: Option<&[CertificateDer<'_>]>,
    ) -> Result<KafkaPrincipal, String> {
        let Some(leaf) = certificates.and_then(|c| c.first()) else {
            return Ok(KafkaPrincipal::anonymous());
        };
        let (_, parsed) = x509_parser::parse_x509_certificate(leaf.as_ref())
            .map_err(|e| format!("unreadable client certificate: {e}"))?;
        let name = rfc2253_name(parsed.subject());
        self.mapper
            .map(&name)
            .map(KafkaPrincipal::user)
            .map_err(|e| e.to_string())
    }
}

/// The client side of TLS for this broker's own connections to another node's listener
/// (replication, forwarding, transaction markers, Raft): that listener's truststore checks the
/// peer; its keystore, when set, is presented as the client certificate (as Kafka's
/// inter-broker clients do); `ssl.endpoint.identification.algorithm=https` (the default) also
/// checks the peer's host name, an empty value does not.
#[derive(Clone)]
pub struct TlsClient {
    pub connector: tokio_rustls::TlsConnector,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient").finish_non_exhaustive()
    }
}

impl TlsClient {
    pub fn for_listener(config: &BrokerConfig, listener: &str) -> Result<Self, TlsError> {
        let settings = Settings { config, listener };
        let provider = settings.provider()?;
        let versions = settings.versions()?;
        let roots = settings.truststore()?.ok_or_else(|| {
            settings.error(
                "ssl.truststore.location",
                "this broker connects to other nodes over this TLS listener and needs a truststore to check them against",
            )
        })?;
        let build = |reason: String| TlsError::Build {
            listener: listener.to_string(),
            reason,
        };
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .build()
        .map_err(|e| build(e.to_string()))?;
        // Set empty, it turns the check off (Settings::get reads an empty value as unset).
        let check_host = config
            .listener_value(listener, "ssl.endpoint.identification.algorithm")
            .unwrap_or_else(|| "https".into());
        let verifier: Arc<dyn rustls::client::danger::ServerCertVerifier> =
            match check_host.to_ascii_lowercase().as_str() {
                "https" => verifier,
                _ => Arc::new(AnyHostName(verifier)),
            };
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&versions)
            .map_err(|e| build(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let has_keystore = settings.get("ssl.keystore.location").is_some()
            || settings.get("ssl.keystore.certificate.chain").is_some();
        let client = if has_keystore {
            let (chain, key) = settings.keystore()?;
            let certified =
                certified_key(&provider, chain, key).map_err(|e| build(e.to_string()))?;
            builder.with_client_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(
                certified,
            )))
        } else {
            builder.with_no_client_auth()
        };
        Ok(Self {
            connector: tokio_rustls::TlsConnector::from(Arc::new(client)),
        })
    }
}

/// A peer certificate check without the host name (`ssl.endpoint.identification.algorithm`
/// empty): the chain must still lead to the truststore.
#[derive(Debug)]
struct AnyHostName(Arc<rustls::client::WebPkiServerVerifier>);

impl rustls::client::danger::ServerCertVerifier for AnyHostName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &rustls_pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls_pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForName
                | rustls::CertificateError::NotValidForNameContext { .. },
            )) => Ok(rustls::client::danger::ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key encrypted as `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes it (PBES2 with
    /// PBKDF2-SHA256 and AES-256-CBC) opens with `ssl.key.password` and only with it.
    #[test]
    fn an_encrypted_pkcs8_key_needs_its_password() {
        let key = rcgen::KeyPair::generate().unwrap();
        let plain = key.serialize_der();
        let info = pkcs8::PrivateKeyInfoRef::try_from(plain.as_slice()).unwrap();
        let parameters = pkcs8::pkcs5::pbes2::Parameters::generate_pbkdf2_sha256_aes256cbc(
            2048,
            b"salty salt",
            [7; 16],
        )
        .unwrap();
        let encrypted = info.encrypt_with_params(parameters, "key-secret").unwrap();
        let text = pem::encode(&pem::Pem::new(
            "ENCRYPTED PRIVATE KEY",
            encrypted.as_bytes(),
        ));
        match pem_private_key(text.as_bytes(), Some("key-secret")).unwrap() {
            PrivateKeyDer::Pkcs8(der) => assert_eq!(der.secret_pkcs8_der(), plain.as_slice()),
            other => panic!("unexpected key kind {other:?}"),
        }
        let wrong = pem_private_key(text.as_bytes(), Some("nope")).unwrap_err();
        assert!(wrong.contains("wrong ssl.key.password"), "{wrong}");
        let missing = pem_private_key(text.as_bytes(), None).unwrap_err();
        assert!(missing.contains("ssl.key.password"), "{missing}");
        assert!(pem_private_key(b"no pem here", None).is_err());
    }
}
