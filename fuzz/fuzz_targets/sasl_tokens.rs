//! What clients send before they are authenticated, and what other nodes answer this broker's
//! own SASL: SASL tokens for each server mechanism (PLAIN; SCRAM's client-first and
//! client-final messages for a known user; OAUTHBEARER's initial response, unsecured), the
//! SCRAM client's view of a server-first message, and the text formats security settings are
//! written in (JAAS configs and files, principal mapping rules and the DNs they map, `--add-scram`
//! arguments). The first byte picks the parser; refusing is fine, a panic or an abort is not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice::auth::sasl::{Mechanism, SaslExchange, SaslListener, ScramCredentials};
use sluice::auth::scram::{ScramClient, ScramCredential, ScramMechanism};
use sluice::config::BrokerConfig;
use std::sync::OnceLock;

struct OneUser(ScramCredential);

impl ScramCredentials for OneUser {
    fn scram_credential(&self, user: &str, _: ScramMechanism) -> Option<ScramCredential> {
        (user == "alice").then(|| self.0.clone())
    }
}

fn listener() -> &'static (SaslListener, OneUser) {
    static LISTENER: OnceLock<(SaslListener, OneUser)> = OnceLock::new();
    LISTENER.get_or_init(|| {
        let config = BrokerConfig::with_overrides(&[
            ("listeners", "SASL_PLAINTEXT://127.0.0.1:0"),
            ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,OAUTHBEARER"),
            (
                "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";"#,
            ),
            (
                "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config",
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            ),
        ])
        .expect("the fuzz listener's config");
        let listener = SaslListener::for_listener(&config, "SASL_PLAINTEXT").expect("listener");
        let credential =
            ScramCredential::from_password(ScramMechanism::Sha256, "alice-secret", 4096)
                .expect("credential");
        (listener, OneUser(credential))
    })
}

fuzz_target!(|input: &[u8]| {
    let Some((&which, bytes)) = input.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(bytes);
    let (listener, users) = listener();
    match which % 8 {
        0 => drop(SaslExchange::new(Mechanism::Plain).step(bytes, listener, users)),
        1 | 2 => {
            // Client-first, then (split at the first NUL) client-final for the same exchange.
            let mut exchange = SaslExchange::new(Mechanism::Scram(ScramMechanism::Sha256));
            let (first, last) = match bytes.iter().position(|b| *b == 0) {
                Some(at) => (&bytes[..at], &bytes[at + 1..]),
                None => (bytes, &b""[..]),
            };
            let first = if which % 8 == 2 {
                // Past the first step with a well-formed first message.
                b"n,,n=alice,r=fuzznonce".as_slice()
            } else {
                first
            };
            if exchange.step(first, listener, users).is_ok() {
                let _ = exchange.step(last, listener, users);
            }
        }
        3 => drop(SaslExchange::new(Mechanism::OAuthBearer).step(bytes, listener, users)),
        4 => {
            let mut client =
                ScramClient::new(ScramMechanism::Sha512, "alice", "secret").expect("client");
            let _ = client.first();
            if let Ok(Some(_)) = client.step(bytes) {
                let _ = client.step(bytes);
            }
        }
        5 => {
            drop(sluice::config::jaas::parse(&text));
            drop(sluice::config::jaas::parse_file(&text));
        }
        6 => {
            let (rules, dn) = text.split_once('\n').unwrap_or((&text, "CN=alice,O=fuzz"));
            if let Ok(mapper) = sluice::auth::principal::PrincipalMapper::parse(rules) {
                let _ = mapper.map(dn);
            }
        }
        _ => drop(sluice::cli::format::scram_record(&text)),
    }
});
