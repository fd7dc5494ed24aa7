//! A TLS listener whose keystore and truststore dynamic broker configs may replace (Kafka's
//! reconfigurable `SslFactory`): new connections handshake with the current [`TlsServer`];
//! a replacement is checked as Kafka checks it — the keystore's certificate keeps its
//! subject and subject alternative names unless `ssl.allow.dn.changes` /
//! `ssl.allow.san.changes` say otherwise, a truststore is not added to a listener without
//! one — and open connections keep the one they started with.

use super::tls::TlsServer;
use std::sync::{Arc, RwLock};

pub struct ListenerTls {
    listener: String,
    current: RwLock<TlsServer>,
}

impl std::fmt::Debug for ListenerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenerTls")
            .field("listener", &self.listener)
            .finish_non_exhaustive()
    }
}

impl ListenerTls {
    pub fn new(listener: &str, server: TlsServer) -> Arc<Self> {
        Arc::new(Self {
            listener: listener.to_string(),
            current: RwLock::new(server),
        })
    }

    pub fn listener(&self) -> &str {
        &self.listener
    }

    /// The TLS side a new connection handshakes with.
    pub fn current(&self) -> TlsServer {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether `next` may replace the current TLS side, in Kafka's words
    /// (`SslFactory.validateReconfiguration`).
    pub fn check_replacement(
        &self,
        next: &TlsServer,
        allow_dn_changes: bool,
        allow_san_changes: bool,
    ) -> Result<(), String> {
        let current = self.current();
        let (old, new) = (&current.identity, &next.identity);
        if !allow_dn_changes && !old.subject.eq_ignore_ascii_case(&new.subject) {
            return Err(format!(
                "Keystore DistinguishedName does not match:  existing={{DN={}}}, new={{DN={}}}",
                old.subject, new.subject
            ));
        }
        if !allow_san_changes && !old.alt_names.iter().all(|n| new.alt_names.contains(n)) {
            let show = |names: &[(u8, String)]| {
                let items: Vec<String> = names.iter().map(|(t, v)| format!("[{t}, {v}]")).collect();
                format!("[{}]", items.join(", "))
            };
            return Err(format!(
                "Keystore SubjectAltNames do not match:  existing={{SAN={}}}, new={{SAN={}}}",
                show(&old.alt_names),
                show(&new.alt_names)
            ));
        }
        if !current.has_truststore && next.has_truststore {
            return Err(
                "Cannot add SSL truststore to an existing listener for which no truststore was configured."
                    .into(),
            );
        }
        Ok(())
    }

    /// New connections use `next` from now on.
    pub fn replace(&self, next: TlsServer) {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = next;
    }
}
