//! Connection creation rates (KIP-612, Kafka's `ConnectionQuotas`): every connection accepted
//! is counted against the broker-wide `max.connection.creation.rate` (the inter-broker
//! listener exempt when there are others) and its listener's
//! `listener.name.<listener>.max.connection.creation.rate`; over either, the listener waits
//! the throttle time (at most one quota window) before serving it and accepting more, as
//! Kafka's acceptor blocks. A connection then refused for its address's
//! `connection_creation_rate` is counted off again and its throttle time noted. The same
//! sensors are Kafka's socket-server metrics: accept rates, the average throttle times and the
//! time acceptors were blocked.

use crate::auth::quota::rate::{Rate, Windows};
use crate::stats::sockets::{AcceptGauge, AcceptSnapshot, ListenerAccepts};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One listener's sensors.
#[derive(Debug, Default)]
struct ListenerRates {
    accepted: Rate,
    /// Throttle times given for the listener's or the broker's rate.
    throttle_times: Rate,
    /// Throttle times given for an address's rate.
    ip_throttle_times: Rate,
    blocked: Duration,
}

#[derive(Debug)]
struct Sensors {
    broker: Rate,
    listeners: BTreeMap<String, ListenerRates>,
}

/// The broker's connection rate sensors and limits.
#[derive(Debug)]
pub struct ConnectionRates {
    windows: Windows,
    origin: Instant,
    sensors: Mutex<Sensors>,
}

/// How a listener's connections are limited, read from the configuration in effect.
#[derive(Debug, Clone, Copy)]
pub struct RateLimits {
    /// `max.connection.creation.rate`; `None` for a listener exempt from it.
    pub broker: Option<f64>,
    /// The listener's own `max.connection.creation.rate`.
    pub listener: f64,
}

impl ConnectionRates {
    pub fn new(windows: Windows) -> Self {
        Self {
            windows,
            origin: Instant::now(),
            sensors: Mutex::new(Sensors {
                broker: Rate::default(),
                listeners: BTreeMap::new(),
            }),
        }
    }

    fn now_ms(&self) -> i64 {
        i64::try_from(self.origin.elapsed().as_millis()).unwrap_or(i64::MAX)
    }

    /// Makes `listener`'s sensors (at bind time, so its metrics exist before a connection).
    pub fn add_listener(&self, listener: &str) {
        self.lock()
            .listeners
            .entry(listener.to_string())
            .or_default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Sensors> {
        self.sensors.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a connection accepted on `listener`; the time it must wait before it is served
    /// (zero within the limits). Kafka's `recordConnectionAndGetThrottleTimeMs`: the longer of
    /// the broker's and the listener's throttle, each bounded by one quota window.
    pub fn record(&self, listener: &str, limits: RateLimits) -> Duration {
        self.record_at(listener, limits, self.now_ms())
    }

    fn record_at(&self, listener: &str, limits: RateLimits, now_ms: i64) -> Duration {
        let windows = self.windows;
        let bounded = |throttle: u32| i64::from(throttle).min(windows.window_ms);
        let mut sensors = self.lock();
        let broker_throttle = match limits.broker {
            Some(limit) => {
                sensors.broker.record(windows, 1.0, now_ms);
                bounded(sensors.broker.throttle_ms(windows, limit, now_ms))
            }
            None => 0,
        };
        let rates = sensors.listeners.entry(listener.to_string()).or_default();
        rates.accepted.record(windows, 1.0, now_ms);
        let listener_throttle =
            bounded(rates.accepted.throttle_ms(windows, limits.listener, now_ms));
        let throttle = broker_throttle.max(listener_throttle);
        if throttle > 0 {
            rates
                .throttle_times
                .record(windows, throttle as f64, now_ms);
        }
        Duration::from_millis(u64::try_from(throttle).unwrap_or(0))
    }

    /// A connection refused for its address's rate after [`ConnectionRates::record`]: it is
    /// counted off the broker's and the listener's rates, and its throttle time noted (Kafka's
    /// `updateListenerMetrics`).
    pub fn ip_throttled(&self, listener: &str, exempt: bool, throttle: Duration) {
        self.ip_throttled_at(listener, exempt, throttle, self.now_ms());
    }

    fn ip_throttled_at(&self, listener: &str, exempt: bool, throttle: Duration, now_ms: i64) {
        let windows = self.windows;
        let mut sensors = self.lock();
        if !exempt {
            sensors.broker.record(windows, -1.0, now_ms);
        }
        let rates = sensors.listeners.entry(listener.to_string()).or_default();
        rates.accepted.record(windows, -1.0, now_ms);
        rates
            .ip_throttle_times
            .record(windows, throttle.as_millis() as f64, now_ms);
    }

    /// Time `listener`'s acceptor spent waiting (Kafka's `AcceptorBlockedPercent` meter).
    pub fn blocked(&self, listener: &str, waited: Duration) {
        let mut sensors = self.lock();
        let rates = sensors.listeners.entry(listener.to_string()).or_default();
        rates.blocked += waited;
    }
}

impl AcceptGauge for ConnectionRates {
    fn snapshot(&self) -> AcceptSnapshot {
        self.snapshot_at(self.now_ms())
    }
}

impl ConnectionRates {
    fn snapshot_at(&self, now_ms: i64) -> AcceptSnapshot {
        let windows = self.windows;
        let mut sensors = self.lock();
        let broker_rate = sensors.broker.measure(windows, now_ms);
        let listeners = sensors
            .listeners
            .iter_mut()
            .map(|(name, rates)| ListenerAccepts {
                listener: name.clone(),
                accept_rate: rates.accepted.measure(windows, now_ms),
                throttle_time: rates.throttle_times.average(windows, now_ms),
                ip_throttle_time: rates.ip_throttle_times.average(windows, now_ms),
                blocked_ns: u64::try_from(rates.blocked.as_nanos()).unwrap_or(u64::MAX),
            })
            .collect();
        AcceptSnapshot {
            broker_rate,
            listeners,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOWS: Windows = Windows {
        samples: 11,
        window_ms: 1000,
    };

    #[test]
    fn connections_over_the_listener_or_broker_rate_wait_at_most_a_window() {
        let rates = ConnectionRates::new(WINDOWS);
        let limits = RateLimits {
            broker: Some(f64::from(i32::MAX)),
            listener: 5.0,
        };
        // Kafka judges a new sensor over samples - 1 windows: 50 connections in the first
        // second are within 5/s; the 51st is over it.
        for _ in 0..50 {
            assert_eq!(rates.record_at("PLAINTEXT", limits, 0), Duration::ZERO);
        }
        let throttle = rates.record_at("PLAINTEXT", limits, 0);
        assert!(throttle > Duration::ZERO && throttle <= Duration::from_secs(1));
        // Another listener is not held by this one's rate.
        assert_eq!(rates.record_at("OTHER", limits, 0), Duration::ZERO);
        // The broker-wide rate holds every listener but an exempt one.
        let broker = RateLimits {
            broker: Some(1.0),
            listener: f64::from(i32::MAX),
        };
        for _ in 0..20 {
            rates.record_at("OTHER", broker, 0);
        }
        assert!(rates.record_at("OTHER", broker, 0) > Duration::ZERO);
        let exempt = RateLimits {
            broker: None,
            ..broker
        };
        assert_eq!(rates.record_at("REPLICATION", exempt, 0), Duration::ZERO);
        let snapshot = rates.snapshot_at(0);
        let plaintext = &snapshot.listeners[1];
        assert_eq!(plaintext.listener, "PLAINTEXT");
        assert!(plaintext.throttle_time > 0.0);
        assert!(plaintext.ip_throttle_time.is_nan(), "no address throttled");
        assert!(snapshot.broker_rate > 0.0);
    }

    #[test]
    fn an_address_throttled_is_counted_off_and_noted() {
        let rates = ConnectionRates::new(WINDOWS);
        let limits = RateLimits {
            broker: Some(f64::from(i32::MAX)),
            listener: f64::from(i32::MAX),
        };
        rates.record_at("PLAINTEXT", limits, 0);
        rates.record_at("PLAINTEXT", limits, 0);
        rates.ip_throttled_at("PLAINTEXT", false, Duration::from_millis(300), 0);
        rates.blocked("PLAINTEXT", Duration::from_millis(2));
        let snapshot = rates.snapshot_at(0);
        let listener = &snapshot.listeners[0];
        assert_eq!(listener.ip_throttle_time, 300.0);
        assert_eq!(listener.blocked_ns, 2_000_000);
        // One of the two connections counts, over the 10 s a new sensor is judged on.
        assert!(
            (listener.accept_rate - 0.1).abs() < 1e-9,
            "{}",
            listener.accept_rate
        );
        assert!((snapshot.broker_rate - 0.1).abs() < 1e-9);
    }
}
