//! Where the OAUTHBEARER validator's keys come from (`sasl.oauthbearer.jwks.endpoint.url`): a
//! `file:` JWKS read at startup, or an `https:` (or `http:`) endpoint fetched at startup — a
//! broker that cannot fetch it does not start, as Kafka's — and refetched on a thread of its
//! own every `sasl.oauthbearer.jwks.endpoint.refresh.ms`, and sooner when a token names a key
//! id the set does not hold (no more often than `sasl.oauthbearer.jwks.endpoint.retry.backoff.ms`
//! apart), as Kafka's RefreshingHttpsJwks. A failed refetch keeps the keys it had and is
//! retried with backoff doubling up to `sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms`.
//! HTTPS endpoints are checked against the login module's `ssl.truststore.location` (PEM) when
//! its JAAS config names one, else against Mozilla's roots (webpki-roots).

use jsonwebtoken::jwk::JwkSet;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// The largest JWKS document read (a few keys are a few KiB).
const MAX_DOCUMENT: u64 = 1 << 20;

/// How an endpoint is fetched and refreshed.
#[derive(Debug, Clone)]
pub struct EndpointSettings {
    pub refresh: Duration,
    pub backoff: Duration,
    pub max_backoff: Duration,
    /// PEM CA certificates for an HTTPS endpoint (None: Mozilla's roots).
    pub trusted_pem: Option<Vec<u8>>,
}

/// The current key set, and a way to ask for a fresh one.
#[derive(Clone)]
pub struct JwksSource {
    keys: Arc<RwLock<Arc<JwkSet>>>,
    refresh_now: Option<Arc<Mutex<mpsc::Sender<()>>>>,
}

impl std::fmt::Debug for JwksSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwksSource")
            .field("refreshing", &self.refresh_now.is_some())
            .finish_non_exhaustive()
    }
}

fn parse(document: &str) -> Result<JwkSet, String> {
    serde_json::from_str(document).map_err(|e| format!("not a JWKS document: {e}"))
}

impl JwksSource {
    /// A fixed key set.
    pub fn document(document: &str) -> Result<Self, String> {
        Ok(Self {
            keys: Arc::new(RwLock::new(Arc::new(parse(document)?))),
            refresh_now: None,
        })
    }

    /// From `sasl.oauthbearer.jwks.endpoint.url`.
    pub fn from_url(url: &str, settings: EndpointSettings) -> Result<Self, String> {
        if let Some(path) = url.strip_prefix("file:") {
            let path = path.trim_start_matches("//");
            let document =
                std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
            return Self::document(&document);
        }
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err("the URL must be file:, https: or http:".into());
        }
        let agent = agent(&settings)?;
        let keys = Arc::new(RwLock::new(Arc::new(fetch(&agent, url)?)));
        let (sender, requests) = mpsc::channel();
        let refreshed = keys.clone();
        let url = url.to_string();
        std::thread::Builder::new()
            .name("jwks-refresh".into())
            .spawn(move || refresh_loop(agent, url, settings, refreshed, requests))
            .map_err(|e| format!("cannot start the JWKS refresh thread: {e}"))?;
        Ok(Self {
            keys,
            refresh_now: Some(Arc::new(Mutex::new(sender))),
        })
    }

    pub fn keys(&self) -> Arc<JwkSet> {
        match self.keys.read() {
            Ok(keys) => keys.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// A token named a key the set does not hold: the endpoint may have rotated its keys.
    pub fn unknown_key(&self) {
        if let Some(sender) = &self.refresh_now
            && let Ok(sender) = sender.lock()
        {
            let _ = sender.send(());
        }
    }
}

fn agent(settings: &EndpointSettings) -> Result<ureq::Agent, String> {
    use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};
    let roots = match &settings.trusted_pem {
        Some(pem) => {
            let mut certificates = Vec::new();
            for item in ureq::tls::parse_pem(pem) {
                if let PemItem::Certificate(certificate) =
                    item.map_err(|e| format!("unreadable truststore: {e}"))?
                {
                    certificates.push(Certificate::to_owned(&certificate));
                }
            }
            if certificates.is_empty() {
                return Err("the truststore holds no certificate".into());
            }
            RootCerts::Specific(Arc::new(certificates))
        }
        None => RootCerts::WebPki,
    };
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .tls_config(TlsConfig::builder().root_certs(roots).build())
        .build();
    Ok(config.into())
}

fn fetch(agent: &ureq::Agent, url: &str) -> Result<JwkSet, String> {
    let mut response = agent
        .get(url)
        .call()
        .map_err(|e| format!("cannot fetch the JWKS from {url}: {e}"))?;
    let document = response
        .body_mut()
        .with_config()
        .limit(MAX_DOCUMENT)
        .read_to_string()
        .map_err(|e| format!("cannot read the JWKS from {url}: {e}"))?;
    parse(&document)
}

fn refresh_loop(
    agent: ureq::Agent,
    url: String,
    settings: EndpointSettings,
    keys: Arc<RwLock<Arc<JwkSet>>>,
    requests: mpsc::Receiver<()>,
) {
    let mut wait = settings.refresh;
    let mut last = Instant::now();
    loop {
        match requests.recv_timeout(wait) {
            // Asked because of an unknown key id: not more often than the backoff allows.
            Ok(()) => {
                let since = last.elapsed();
                if since < settings.backoff {
                    std::thread::sleep(settings.backoff - since);
                }
                while requests.try_recv().is_ok() {}
            }
            Err(RecvTimeoutError::Timeout) => {}
            // The listener is gone.
            Err(RecvTimeoutError::Disconnected) => return,
        }
        last = Instant::now();
        match fetch(&agent, &url) {
            Ok(fresh) => {
                if let Ok(mut current) = keys.write() {
                    *current = Arc::new(fresh);
                }
                wait = settings.refresh;
            }
            Err(e) => {
                tracing::warn!(error = %e, "JWKS refresh failed; keeping the keys held");
                wait = if wait >= settings.refresh {
                    settings.backoff
                } else {
                    (wait * 2).min(settings.max_backoff)
                };
            }
        }
    }
}
