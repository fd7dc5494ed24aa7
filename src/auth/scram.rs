//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka speaks them (KIP-84): the
//! credential a password becomes (salt, iterations, stored key, server key — never the
//! password), the server's side of the exchange, and the client's side for this broker's own
//! connections to other nodes. Messages follow Kafka's `ScramMessages`: no channel binding
//! (`n,,` or `y,,`), an optional authorization id that must equal the user name, and
//! extensions after the nonce. The primitives are `sha2`, `hmac` and `pbkdf2`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{KeyInit, Mac};
use subtle::ConstantTimeEq;
use thiserror::Error;

/// Kafka's bounds on iterations (`ScramMechanism.minIterations`, and the most
/// AlterUserScramCredentials accepts).
pub const MIN_ITERATIONS: i32 = 4096;
pub const MAX_ITERATIONS: i32 = 16384;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScramMechanism {
    Sha256,
    Sha512,
}

impl ScramMechanism {
    pub const ALL: [ScramMechanism; 2] = [ScramMechanism::Sha256, ScramMechanism::Sha512];

    pub fn name(self) -> &'static str {
        match self {
            Self::Sha256 => "SCRAM-SHA-256",
            Self::Sha512 => "SCRAM-SHA-512",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Kafka's `ScramMechanism` type ids in DescribeUserScramCredentials and the metadata.
    pub fn type_id(self) -> i8 {
        match self {
            Self::Sha256 => 1,
            Self::Sha512 => 2,
        }
    }

    pub fn from_type_id(id: i8) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.type_id() == id)
    }

    fn hash(self, data: &[u8]) -> Vec<u8> {
        use sha2::Digest;
        match self {
            Self::Sha256 => sha2::Sha256::digest(data).to_vec(),
            Self::Sha512 => sha2::Sha512::digest(data).to_vec(),
        }
    }

    /// HMAC of this hash (also the HTTP listener's key for credentials it checked lately).
    pub fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        // Any key length is valid for HMAC: `new_from_slice` cannot fail here.
        match self {
            Self::Sha256 => match hmac::Hmac::<sha2::Sha256>::new_from_slice(key) {
                Ok(mut mac) => {
                    mac.update(data);
                    mac.finalize().into_bytes().to_vec()
                }
                Err(_) => Vec::new(),
            },
            Self::Sha512 => match hmac::Hmac::<sha2::Sha512>::new_from_slice(key) {
                Ok(mut mac) => {
                    mac.update(data);
                    mac.finalize().into_bytes().to_vec()
                }
                Err(_) => Vec::new(),
            },
        }
    }

    /// RFC 5802's `Hi()`: PBKDF2 with HMAC of this hash.
    pub fn salted_password(self, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        match self {
            Self::Sha256 => {
                let mut out = vec![0u8; 32];
                pbkdf2::pbkdf2_hmac::<sha2::Sha256>(password, salt, iterations, &mut out);
                out
            }
            Self::Sha512 => {
                let mut out = vec![0u8; 64];
                pbkdf2::pbkdf2_hmac::<sha2::Sha512>(password, salt, iterations, &mut out);
                out
            }
        }
    }
}

/// A credential to set, as AlterUserScramCredentials carries it (KIP-554: the client salts
/// and hashes the password; the controller derives the keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramUpsertion {
    pub user: String,
    pub mechanism: ScramMechanism,
    pub salt: Vec<u8>,
    pub salted_password: Vec<u8>,
    pub iterations: i32,
}

/// The credential an exchange is checked against: a user's own, or a delegation token's
/// (`tokenauth=true`; the session's principal is then the token's owner).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramLogin {
    pub credential: ScramCredential,
    pub token: Option<TokenLogin>,
}

impl ScramLogin {
    pub fn user(credential: ScramCredential) -> Self {
        Self {
            credential,
            token: None,
        }
    }
}

/// Who a delegation token stands for, and until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenLogin {
    pub owner: super::principal::KafkaPrincipal,
    pub expiry_timestamp_ms: i64,
}

/// What the broker keeps of a SCRAM password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramCredential {
    pub salt: Vec<u8>,
    pub stored_key: Vec<u8>,
    pub server_key: Vec<u8>,
    pub iterations: i32,
}

impl ScramCredential {
    /// From the salted password an AlterUserScramCredentials upsertion carries (KIP-554).
    pub fn from_salted_password(
        mechanism: ScramMechanism,
        salt: Vec<u8>,
        salted_password: &[u8],
        iterations: i32,
    ) -> Self {
        let client_key = mechanism.hmac(salted_password, b"Client Key");
        Self {
            salt,
            stored_key: mechanism.hash(&client_key),
            server_key: mechanism.hmac(salted_password, b"Server Key"),
            iterations,
        }
    }

    /// Whether `password` is the one this credential was made from: for a password presented
    /// outside a SCRAM exchange (HTTP Basic on the HTTP listener).
    pub fn matches_password(&self, mechanism: ScramMechanism, password: &str) -> bool {
        let Ok(iterations) = u32::try_from(self.iterations) else {
            return false;
        };
        let salted = mechanism.salted_password(password.as_bytes(), &self.salt, iterations.max(1));
        let client_key = mechanism.hmac(&salted, b"Client Key");
        bool::from(mechanism.hash(&client_key).ct_eq(&self.stored_key))
    }

    /// From a password, with a fresh random salt (bootstrap users).
    pub fn from_password(
        mechanism: ScramMechanism,
        password: &str,
        iterations: i32,
    ) -> Result<Self, ScramError> {
        let salt = random_bytes(32)?;
        let salted =
            mechanism.salted_password(password.as_bytes(), &salt, iterations.max(1) as u32);
        Ok(Self::from_salted_password(
            mechanism, salt, &salted, iterations,
        ))
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ScramError {
    /// The message does not parse (the text says which part, never the values).
    #[error("invalid SCRAM message: {0}")]
    Malformed(&'static str),
    /// A wrong password, an unknown user, a nonce or channel binding that does not match.
    #[error(
        "authentication failed during authentication due to invalid credentials with SASL mechanism {0}"
    )]
    InvalidCredentials(&'static str),
    #[error("authentication failed: {0}")]
    Refused(&'static str),
    #[error("no randomness available for a nonce")]
    Random,
}

pub fn random_bytes(count: usize) -> Result<Vec<u8>, ScramError> {
    let mut bytes = vec![0u8; count];
    getrandom::fill(&mut bytes).map_err(|_| ScramError::Random)?;
    Ok(bytes)
}

/// A nonce of letters and digits, as Kafka's `ScramFormatter.secureRandomString()` makes
/// them: RFC 5802 allows any printable character but `,`, yet some clients (librdkafka 2.0)
/// fail on a server nonce holding base64's `+` or `/`.
fn nonce() -> Result<String, ScramError> {
    const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    Ok(random_bytes(32)?
        .into_iter()
        .map(|b| ALPHABET[b as usize % ALPHABET.len()] as char)
        .collect())
}

/// RFC 5802's saslname decoding: `=2C` is `,`, `=3D` is `=`, any other `=` is an error.
fn decode_sasl_name(name: &str) -> Result<String, ScramError> {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find('=') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 3);
        match code {
            Some("2C") => out.push(','),
            Some("3D") => out.push('='),
            _ => return Err(ScramError::Malformed("invalid escape in the user name")),
        }
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    Ok(out)
}

fn encode_sasl_name(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

/// The parsed client-first message.
struct ClientFirst {
    gs2_header: String,
    bare: String,
    user: String,
    nonce: String,
    /// Kafka's extensions (`tokenauth=true` for delegation tokens).
    token_auth: bool,
}

fn parse_client_first(message: &str) -> Result<ClientFirst, ScramError> {
    let malformed = ScramError::Malformed;
    let (cb_flag, rest) = message
        .split_once(',')
        .ok_or(malformed("missing GS2 header"))?;
    if cb_flag != "n" && cb_flag != "y" {
        return Err(malformed("channel binding is not supported"));
    }
    let (authzid, bare) = rest
        .split_once(',')
        .ok_or(malformed("missing GS2 header"))?;
    let gs2_header = format!("{cb_flag},{authzid},");
    let mut fields = bare.split(',');
    let user = fields
        .next()
        .and_then(|f| f.strip_prefix("n="))
        .ok_or(malformed("missing user name"))?;
    let user = decode_sasl_name(user)?;
    let nonce = fields
        .next()
        .and_then(|f| f.strip_prefix("r="))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| (0x21..=0x7e).contains(&b)))
        .ok_or(malformed("missing or invalid nonce"))?
        .to_string();
    let mut token_auth = false;
    for extension in fields {
        let (key, value) = extension
            .split_once('=')
            .ok_or(malformed("invalid extension"))?;
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_lowercase()) {
            return Err(malformed("invalid extension"));
        }
        if key == "tokenauth" {
            token_auth = value.eq_ignore_ascii_case("true");
        }
    }
    if !authzid.is_empty() {
        let authzid = authzid
            .strip_prefix("a=")
            .ok_or(malformed("invalid authorization id"))?;
        if decode_sasl_name(authzid)? != user {
            return Err(ScramError::Refused(
                "authorization id must equal the user name",
            ));
        }
    }
    Ok(ClientFirst {
        gs2_header,
        bare: bare.to_string(),
        user,
        nonce,
        token_auth,
    })
}

/// Where the server is in one exchange.
enum ServerState {
    /// Waiting for the client-first message.
    Start,
    /// Server-first sent; waiting for the client-final message.
    Challenged {
        client_first_bare: String,
        server_first: String,
        gs2_header: String,
        nonce: String,
        user: String,
        login: Box<ScramLogin>,
    },
    Done,
}

/// The server's side of one SCRAM exchange: client-first → server-first, client-final →
/// server-final. Any error ends it.
pub struct ScramServer {
    mechanism: ScramMechanism,
    state: ServerState,
}

/// What one step of the server produced.
#[derive(Debug, PartialEq, Eq)]
pub enum ServerStep {
    /// Send these bytes and wait for the client's next message.
    Challenge(Vec<u8>),
    /// Authenticated as `user` (with a delegation token: as its owner, `token`); send the
    /// server-final message.
    Authenticated {
        user: String,
        final_message: Vec<u8>,
        token: Option<TokenLogin>,
    },
}

impl ScramServer {
    pub fn new(mechanism: ScramMechanism) -> Self {
        Self {
            mechanism,
            state: ServerState::Start,
        }
    }

    /// One client message. `lookup` gives the credential of a user, or with `tokenauth`
    /// (its second argument) of a delegation token by id, if there is one.
    pub fn step(
        &mut self,
        message: &[u8],
        lookup: impl FnOnce(&str, bool) -> Option<ScramLogin>,
    ) -> Result<ServerStep, ScramError> {
        let message = std::str::from_utf8(message)
            .map_err(|_| ScramError::Malformed("message is not UTF-8"))?;
        let invalid = ScramError::InvalidCredentials(self.mechanism.name());
        match std::mem::replace(&mut self.state, ServerState::Done) {
            ServerState::Start => {
                let first = parse_client_first(message)?;
                let login = lookup(&first.user, first.token_auth).ok_or(invalid)?;
                let credential = &login.credential;
                let nonce = format!("{}{}", first.nonce, nonce()?);
                let server_first = format!(
                    "r={nonce},s={},i={}",
                    BASE64.encode(&credential.salt),
                    credential.iterations
                );
                let challenge = server_first.clone().into_bytes();
                self.state = ServerState::Challenged {
                    client_first_bare: first.bare,
                    server_first,
                    gs2_header: first.gs2_header,
                    nonce,
                    user: first.user,
                    login: Box::new(login),
                };
                Ok(ServerStep::Challenge(challenge))
            }
            ServerState::Challenged {
                client_first_bare,
                server_first,
                gs2_header,
                nonce,
                user,
                login,
            } => {
                let credential = &login.credential;
                let (without_proof, proof) = message
                    .rsplit_once(",p=")
                    .ok_or(ScramError::Malformed("missing proof"))?;
                let mut fields = without_proof.split(',');
                let channel = fields
                    .next()
                    .and_then(|f| f.strip_prefix("c="))
                    .ok_or(ScramError::Malformed("missing channel binding"))?;
                let final_nonce = fields
                    .next()
                    .and_then(|f| f.strip_prefix("r="))
                    .ok_or(ScramError::Malformed("missing nonce"))?;
                let proof = BASE64
                    .decode(proof)
                    .map_err(|_| ScramError::Malformed("proof is not base64"))?;
                let channel = BASE64
                    .decode(channel)
                    .map_err(|_| ScramError::Malformed("channel binding is not base64"))?;
                // Kafka's check is `endsWith`, not equality: librdkafka (2.0 at least) sends
                // its own nonce before the whole server nonce, which already starts with it.
                if channel != gs2_header.as_bytes() || !final_nonce.ends_with(&nonce) {
                    return Err(invalid);
                }
                let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
                let client_signature = self
                    .mechanism
                    .hmac(&credential.stored_key, auth_message.as_bytes());
                if proof.len() != client_signature.len() {
                    return Err(invalid);
                }
                let client_key: Vec<u8> = proof
                    .iter()
                    .zip(&client_signature)
                    .map(|(p, s)| p ^ s)
                    .collect();
                let computed = self.mechanism.hash(&client_key);
                if !bool::from(computed.ct_eq(&credential.stored_key)) {
                    return Err(invalid);
                }
                let server_signature = self
                    .mechanism
                    .hmac(&credential.server_key, auth_message.as_bytes());
                Ok(ServerStep::Authenticated {
                    user,
                    final_message: format!("v={}", BASE64.encode(server_signature)).into_bytes(),
                    token: login.token,
                })
            }
            ServerState::Done => Err(ScramError::Malformed("exchange already finished")),
        }
    }
}

/// The client's side, for this broker's connections to other nodes.
pub struct ScramClient {
    mechanism: ScramMechanism,
    user: String,
    password: String,
    client_nonce: String,
    state: ClientState,
}

enum ClientState {
    Start,
    SentFirst,
    SentFinal { server_signature: Vec<u8> },
    Done,
}

impl ScramClient {
    pub fn new(mechanism: ScramMechanism, user: &str, password: &str) -> Result<Self, ScramError> {
        Ok(Self {
            mechanism,
            user: user.to_string(),
            password: password.to_string(),
            client_nonce: nonce()?,
            state: ClientState::Start,
        })
    }

    fn client_first_bare(&self) -> String {
        format!("n={},r={}", encode_sasl_name(&self.user), self.client_nonce)
    }

    /// The client-first message.
    pub fn first(&mut self) -> Vec<u8> {
        self.state = ClientState::SentFirst;
        format!("n,,{}", self.client_first_bare()).into_bytes()
    }

    /// The answer to a server message: the client-final message, then (for the server-final
    /// message) `None` once the server's signature checks out.
    pub fn step(&mut self, message: &[u8]) -> Result<Option<Vec<u8>>, ScramError> {
        let message = std::str::from_utf8(message)
            .map_err(|_| ScramError::Malformed("message is not UTF-8"))?;
        match std::mem::replace(&mut self.state, ClientState::Done) {
            ClientState::SentFirst => {
                let mut nonce = None;
                let mut salt = None;
                let mut iterations = None;
                for field in message.split(',') {
                    if let Some(v) = field.strip_prefix("r=") {
                        nonce = Some(v);
                    } else if let Some(v) = field.strip_prefix("s=") {
                        salt = BASE64.decode(v).ok();
                    } else if let Some(v) = field.strip_prefix("i=") {
                        iterations = v.parse::<u32>().ok();
                    }
                }
                let (Some(nonce), Some(salt), Some(iterations)) = (nonce, salt, iterations) else {
                    return Err(ScramError::Malformed("incomplete server-first message"));
                };
                if !nonce.starts_with(&self.client_nonce)
                    || !(MIN_ITERATIONS as u32..=1 << 20).contains(&iterations)
                {
                    return Err(ScramError::Malformed("unacceptable server-first message"));
                }
                let salted =
                    self.mechanism
                        .salted_password(self.password.as_bytes(), &salt, iterations);
                let without_proof = format!("c={},r={nonce}", BASE64.encode("n,,"));
                let auth_message =
                    format!("{},{message},{without_proof}", self.client_first_bare());
                let client_key = self.mechanism.hmac(&salted, b"Client Key");
                let stored_key = self.mechanism.hash(&client_key);
                let signature = self.mechanism.hmac(&stored_key, auth_message.as_bytes());
                let proof: Vec<u8> = client_key
                    .iter()
                    .zip(&signature)
                    .map(|(k, s)| k ^ s)
                    .collect();
                let server_key = self.mechanism.hmac(&salted, b"Server Key");
                self.state = ClientState::SentFinal {
                    server_signature: self.mechanism.hmac(&server_key, auth_message.as_bytes()),
                };
                Ok(Some(
                    format!("{without_proof},p={}", BASE64.encode(proof)).into_bytes(),
                ))
            }
            ClientState::SentFinal { server_signature } => {
                let verifier = message
                    .strip_prefix("v=")
                    .and_then(|v| BASE64.decode(v).ok())
                    .ok_or(ScramError::Malformed(
                        "server-final message without verifier",
                    ))?;
                if !bool::from(verifier.ct_eq(&server_signature)) {
                    return Err(ScramError::Refused("the server's signature does not match"));
                }
                Ok(None)
            }
            ClientState::Start | ClientState::Done => {
                Err(ScramError::Malformed("no message expected"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's test vector for SCRAM-SHA-256 (user, password, salt, nonces and proof).
    #[test]
    fn the_rfc_7677_exchange_verifies() {
        let mechanism = ScramMechanism::Sha256;
        let salt = BASE64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let salted = mechanism.salted_password(b"pencil", &salt, 4096);
        let credential = ScramCredential::from_salted_password(mechanism, salt, &salted, 4096);
        let mut server = ScramServer::new(mechanism);
        // The server nonce is random here, so the RFC's proof cannot be replayed; check the
        // client and server against each other and the key derivation against the RFC.
        let client_first = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
        let ServerStep::Challenge(challenge) = server
            .step(client_first, |user, _| {
                (user == "user").then(|| ScramLogin::user(credential.clone()))
            })
            .unwrap()
        else {
            panic!("expected a challenge");
        };
        let challenge = String::from_utf8(challenge).unwrap();
        assert!(challenge.starts_with("r=rOprNGfwEbeRWgbNEkqO"));
        assert!(challenge.ends_with(",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"));
        // RFC 7677: with the server nonce %hvYDpWUa2RaTCAfuxFIlj)hNlF$k0 the proof is
        // dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ= and the verifier
        // 6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=.
        let auth_message = "n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        let signature = mechanism.hmac(&credential.server_key, auth_message.as_bytes());
        assert_eq!(
            BASE64.encode(signature),
            "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
        let client_signature = mechanism.hmac(&credential.stored_key, auth_message.as_bytes());
        let client_key = mechanism.hmac(&salted, b"Client Key");
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&client_signature)
            .map(|(a, b)| a ^ b)
            .collect();
        assert_eq!(
            BASE64.encode(proof),
            "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
    }

    fn exchange(
        mechanism: ScramMechanism,
        password: &str,
        stored: &ScramCredential,
    ) -> Result<String, ScramError> {
        let mut client = ScramClient::new(mechanism, "al,i=ce", password).unwrap();
        let mut server = ScramServer::new(mechanism);
        let first = client.first();
        let ServerStep::Challenge(challenge) = server.step(&first, |user, token_auth| {
            assert_eq!(user, "al,i=ce");
            assert!(!token_auth);
            Some(ScramLogin::user(stored.clone()))
        })?
        else {
            panic!("expected a challenge");
        };
        let client_final = client.step(&challenge)?.unwrap();
        match server.step(&client_final, |_, _| None)? {
            ServerStep::Authenticated {
                user,
                final_message,
                token: None,
            } => {
                assert_eq!(client.step(&final_message)?, None);
                Ok(user)
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn client_and_server_agree_and_a_wrong_password_fails() {
        for mechanism in ScramMechanism::ALL {
            let stored = ScramCredential::from_password(mechanism, "s3cret", 4096).unwrap();
            assert_eq!(exchange(mechanism, "s3cret", &stored).unwrap(), "al,i=ce");
            assert_eq!(
                exchange(mechanism, "wrong", &stored),
                Err(ScramError::InvalidCredentials(mechanism.name()))
            );
        }
    }

    /// librdkafka 2.0's client-final message repeats the client nonce before the server's
    /// (which starts with it); Kafka accepts it, and so must this server.
    #[test]
    fn a_client_nonce_repeated_before_the_server_nonce_is_accepted_as_kafka_does() {
        let mechanism = ScramMechanism::Sha256;
        let stored = ScramCredential::from_password(mechanism, "pw", 4096).unwrap();
        let mut server = ScramServer::new(mechanism);
        let client_first_bare = "n=u,r=abc";
        let ServerStep::Challenge(challenge) = server
            .step(format!("n,,{client_first_bare}").as_bytes(), |_, _| {
                Some(ScramLogin::user(stored.clone()))
            })
            .unwrap()
        else {
            panic!("expected a challenge")
        };
        let server_first = String::from_utf8(challenge).unwrap();
        let nonce = server_first
            .split(',')
            .next()
            .unwrap()
            .strip_prefix("r=")
            .unwrap();
        let without_proof = format!("c=biws,r=abc{nonce}");
        let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
        let salted = mechanism.salted_password(b"pw", &stored.salt, 4096);
        let client_key = mechanism.hmac(&salted, b"Client Key");
        let signature = mechanism.hmac(&stored.stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let client_final = format!("{without_proof},p={}", BASE64.encode(proof));
        assert!(matches!(
            server.step(client_final.as_bytes(), |_, _| None),
            Ok(ServerStep::Authenticated { .. })
        ));
    }

    /// A delegation token's exchange as Kafka's client runs it: the token id as user name,
    /// `tokenauth=true` after the nonce (part of the signed message), the base64 hmac as
    /// password; the server looks the id up as a token and names its owner.
    #[test]
    fn a_token_exchange_authenticates_as_its_owner() {
        let mechanism = ScramMechanism::Sha512;
        let password = "aG1hYw==";
        let stored = ScramCredential::from_password(mechanism, password, 4096).unwrap();
        let owner = super::super::principal::KafkaPrincipal::user("alice");
        let login = ScramLogin {
            credential: stored.clone(),
            token: Some(TokenLogin {
                owner: owner.clone(),
                expiry_timestamp_ms: 99,
            }),
        };
        let mut server = ScramServer::new(mechanism);
        let bare = "n=token-id,r=abc,tokenauth=true";
        let ServerStep::Challenge(challenge) = server
            .step(format!("n,,{bare}").as_bytes(), |user, token_auth| {
                assert_eq!((user, token_auth), ("token-id", true));
                Some(login.clone())
            })
            .unwrap()
        else {
            panic!("expected a challenge")
        };
        let server_first = String::from_utf8(challenge).unwrap();
        let nonce = server_first
            .split(',')
            .next()
            .unwrap()
            .strip_prefix("r=")
            .unwrap();
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{bare},{server_first},{without_proof}");
        let salted = mechanism.salted_password(password.as_bytes(), &stored.salt, 4096);
        let client_key = mechanism.hmac(&salted, b"Client Key");
        let signature = mechanism.hmac(&mechanism.hash(&client_key), auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let client_final = format!("{without_proof},p={}", BASE64.encode(proof));
        match server.step(client_final.as_bytes(), |_, _| None).unwrap() {
            ServerStep::Authenticated { user, token, .. } => {
                assert_eq!(user, "token-id");
                assert_eq!(token.unwrap().owner, owner);
            }
            other => panic!("unexpected {other:?}"),
        }
        // An unknown token fails as a wrong password does.
        let mut server = ScramServer::new(mechanism);
        assert!(matches!(
            server.step(format!("n,,{bare}").as_bytes(), |_, _| None),
            Err(ScramError::InvalidCredentials(_))
        ));
    }

    #[test]
    fn wrong_nonce_binding_or_user_fail_and_garbage_is_malformed() {
        let mechanism = ScramMechanism::Sha256;
        let stored = ScramCredential::from_password(mechanism, "pw", 4096).unwrap();
        let challenge = |server: &mut ScramServer| {
            let ServerStep::Challenge(c) = server
                .step(b"n,,n=u,r=abc", |_, _| {
                    Some(ScramLogin::user(stored.clone()))
                })
                .unwrap()
            else {
                panic!()
            };
            String::from_utf8(c).unwrap()
        };
        let mut server = ScramServer::new(mechanism);
        let c = challenge(&mut server);
        let nonce = c.split(',').next().unwrap().strip_prefix("r=").unwrap();
        let tampered = format!("c=biws,r={nonce}x,p=AAAA");
        assert_eq!(
            server.step(tampered.as_bytes(), |_, _| None),
            Err(ScramError::InvalidCredentials("SCRAM-SHA-256"))
        );
        let mut server = ScramServer::new(mechanism);
        challenge(&mut server);
        assert!(matches!(
            server.step(b"c=eSws,r=abc,p=AAAA", |_, _| None),
            Err(ScramError::InvalidCredentials(_))
        ));
        let mut server = ScramServer::new(mechanism);
        assert_eq!(
            server.step(b"n,,n=nobody,r=abc", |_, _| None),
            Err(ScramError::InvalidCredentials("SCRAM-SHA-256"))
        );
        for garbage in [
            &b""[..],
            b"p=tls-unique,,n=u,r=a",
            b"n,,r=a",
            b"n,,n=u",
            b"n,,n=u=zz,r=a",
            b"n,,n=u,r=a,Bad=1",
            &[0xff, 0xfe],
        ] {
            let mut server = ScramServer::new(mechanism);
            assert!(
                matches!(
                    server.step(garbage, |_, _| Some(ScramLogin::user(stored.clone()))),
                    Err(ScramError::Malformed(_))
                ),
                "{garbage:?}"
            );
        }
        let mut server = ScramServer::new(mechanism);
        assert_eq!(
            server.step(b"n,a=other,n=u,r=a", |_, _| Some(ScramLogin::user(
                stored.clone()
            ))),
            Err(ScramError::Refused(
                "authorization id must equal the user name"
            ))
        );
    }
}
