//! Dynamic broker configs on this broker (Kafka's `DynamicConfigPublisher` and the
//! `Reconfigurable`s it calls): a change asked for is checked and sent to the controller; a
//! change in the metadata becomes the configuration in effect, and what reads a dynamic
//! config takes the new value — the topic defaults every hosted log inherits, producer-id
//! expiry, transaction verification, the TLS listeners' keystores and truststores (checked
//! before the change is stored, as Kafka checks them); the connection limits follow through
//! [`Broker::watch_config`].

use super::Broker;
use crate::auth::tls::TlsServer;
use crate::auth::tls_reload::ListenerTls;
use crate::config::{BrokerConfig, DynamicLayers, validate_dynamic_configs};
use crate::controller::service::ControllerOp;
use crate::error::Error;
use crate::metadata::image::MetadataImage;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl Broker {
    /// The configuration in effect, now and at every change (for what keeps its own copy of
    /// a dynamic value: the listeners' connection limits).
    pub fn watch_config(&self) -> tokio::sync::watch::Receiver<Arc<BrokerConfig>> {
        self.effective.subscribe()
    }

    /// The dynamic configs of a broker resource (`""`: the cluster-wide defaults, else a
    /// broker id) become exactly `configs`, checked as Kafka checks them (each failure is
    /// INVALID_REQUEST, as Kafka answers for broker resources).
    pub async fn set_broker_configs(
        &self,
        resource: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<(), Error> {
        validate_dynamic_configs(&configs, !resource.is_empty())
            .map_err(|e| Error::InvalidRequest(e.to_string()))?;
        // This broker's TLS listeners the change names: their new keystores and truststores
        // must load and may replace the current ones before the change is stored.
        let reconfigured = if resource == self.config.node_id.to_string() {
            self.tls_listeners_named(configs.keys())
        } else {
            Vec::new()
        };
        if !reconfigured.is_empty() {
            let layers = DynamicLayers {
                per_broker: configs.clone(),
                cluster_default: self.config().dynamic.cluster_default.clone(),
            };
            let candidate = self
                .config
                .with_dynamic(layers)
                .map_err(|e| Error::InvalidRequest(e.to_string()))?;
            prepare_tls(&candidate, &reconfigured).map_err(|e| {
                Error::InvalidRequest(format!(
                    "Validation of dynamic config update of SSLFactory failed: {e}"
                ))
            })?;
        }
        let op = ControllerOp::SetBrokerConfigs {
            resource: resource.to_string(),
            configs: configs.clone(),
            validate_only,
        };
        self.call_active_controller(op).await?;
        if !validate_only {
            self.await_visible(|image| {
                image
                    .broker_configs
                    .get(resource)
                    .cloned()
                    .unwrap_or_default()
                    == configs
            })
            .await;
            // Also when nothing changed: a keystore location set again reads its files again
            // (a certificate renewed in place), as on Kafka.
            if !reconfigured.is_empty() {
                reload_tls(&self.config(), &reconfigured);
            }
        }
        Ok(())
    }

    /// A TLS listener the server built, reconfigured by dynamic SSL configs from now on.
    pub fn register_tls_listener(&self, tls: Arc<ListenerTls>) {
        self.tls_listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(tls);
    }

    /// The registered TLS listeners with a `listener.name.<listener>.ssl.*` config among
    /// `names`.
    fn tls_listeners_named<'a>(
        &self,
        names: impl Iterator<Item = &'a String>,
    ) -> Vec<Arc<ListenerTls>> {
        let names: Vec<String> = names.map(|n| n.to_ascii_lowercase()).collect();
        self.tls_listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|tls| {
                let prefix = format!("listener.name.{}.ssl.", tls.listener().to_ascii_lowercase());
                names.iter().any(|n| n.starts_with(&prefix))
            })
            .cloned()
            .collect()
    }

    /// The dynamic configs stored for a broker resource.
    pub fn broker_configs(&self, resource: &str) -> BTreeMap<String, String> {
        self.metadata
            .image()
            .broker_configs
            .get(resource)
            .cloned()
            .unwrap_or_default()
    }

    /// Makes the dynamic broker configs of `image` the configuration in effect and
    /// reconfigures what reads them; true when the topic defaults changed, so every hosted
    /// log takes its settings again.
    pub(super) fn apply_dynamic_configs(&self, image: &MetadataImage) -> bool {
        let current = self.config();
        let layers = super::dynamic_layers(image, self.config.node_id);
        if layers == current.dynamic {
            return false;
        }
        let next = match self.config.with_dynamic(layers) {
            Ok(next) => Arc::new(next),
            Err(e) => {
                tracing::error!(error = %e, "cannot apply the dynamic broker configs; those in effect stay");
                return false;
            }
        };
        let changed: Vec<&str> = next
            .values
            .iter()
            .filter(|(name, value)| current.values.get(*name) != Some(value))
            .map(|(name, _)| *name)
            .collect();
        tracing::info!(changed = ?changed, "dynamic broker configs applied");
        let defaults_changed = next.topic_defaults != current.topic_defaults;
        if next.listener_overrides != current.listener_overrides {
            let listeners = self
                .tls_listeners
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            reload_tls(&next, &listeners);
        }
        self.producer_id_expiration_ms
            .store(next.producer_id_expiration_ms, Ordering::Relaxed);
        self.groups
            .set_consumer_assignment_interval(next.consumer_assignment_interval_ms);
        self.replicas
            .set_transaction_verification(next.transaction_partition_verification);
        super::replication::configure_throttles(&self.replicas, &next);
        self.effective.send_replace(next);
        defaults_changed
    }
}

/// Each listener's TLS side built from `config`, once every one is checked to be a valid
/// replacement of its current one.
fn prepare_tls(
    config: &BrokerConfig,
    listeners: &[Arc<ListenerTls>],
) -> Result<Vec<(Arc<ListenerTls>, TlsServer)>, String> {
    listeners
        .iter()
        .map(|tls| {
            let next =
                TlsServer::for_listener(config, tls.listener()).map_err(|e| e.to_string())?;
            let allowed = |property: &str| {
                config
                    .listener_value(tls.listener(), property)
                    .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            };
            tls.check_replacement(
                &next,
                allowed("ssl.allow.dn.changes"),
                allowed("ssl.allow.san.changes"),
            )?;
            Ok((tls.clone(), next))
        })
        .collect()
}

/// Replaces the listeners' TLS sides with ones built from `config`; one that cannot be
/// (a file gone since it was checked) keeps its current one, with an error logged.
fn reload_tls(config: &BrokerConfig, listeners: &[Arc<ListenerTls>]) {
    match prepare_tls(config, listeners) {
        Ok(prepared) => {
            for (tls, next) in prepared {
                tls.replace(next);
                tracing::info!(
                    listener = tls.listener(),
                    "TLS keystore and truststore reloaded"
                );
            }
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot reload the TLS listeners; they keep their keystores")
        }
    }
}
