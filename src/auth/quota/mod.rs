//! Client quotas, enforced (KIP-13, KIP-55, KIP-124, KIP-599, KIP-612): what a request costs
//! is recorded against the quota that applies to its user and client id, and a client over
//! its quota is told how long to wait (`throttle_time_ms`) while its connection is not read
//! for that long — Kafka's `ClientQuotaManager`, `ClientRequestQuotaManager`,
//! `ControllerMutationQuotaManager` and the IP connection rate of `ConnectionQuotas`.
//!
//! Which quota applies is Kafka's `DefaultQuotaCallback` order: user and client id, user and
//! default client id, user, default user and client id, default user and default client id,
//! default user, client id, default client id. The quotas come from the metadata image
//! ([`ClientQuotas::update`]); with none of a kind configured, checking costs one atomic load.
//! Sensors (one measure per user/client-id pair, or per IP) idle for an hour are dropped, as
//! Kafka drops them (`InactiveSensorExpirationTimeSeconds`), so an idle client's metrics stay
//! until then; past [`MAX_IDLE_SENSORS`] sensors, those idle for a whole quota span go at once
//! (a span without events measures nothing, so nothing is lost), so that client ids a client
//! makes up cannot grow memory without bound.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the quota tables, sensors, recording and throttle times |
//!

/// Kafka's `Rate` and `TokenBucket` arithmetic (in `stats`, below the replica layer's
/// replication throttles, which measure with it too).
pub use crate::stats::rate;

use crate::metadata::quota::{
    CLIENT_ID, CONNECTION_CREATION_RATE, CONSUMER_BYTE_RATE, CONTROLLER_MUTATION_RATE, IP,
    PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE, USER,
};
use rate::{Rate, TokenBucket, Windows};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// What a user/client-id quota limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuotaType {
    /// Bytes produced per second (`producer_byte_rate`).
    Produce,
    /// Bytes fetched per second (`consumer_byte_rate`).
    Fetch,
    /// Percentage of one request handler's time (`request_percentage`).
    Request,
    /// Partitions created or deleted per second (`controller_mutation_rate`).
    ControllerMutation,
}

impl QuotaType {
    const ALL: [QuotaType; 4] = [
        QuotaType::Produce,
        QuotaType::Fetch,
        QuotaType::Request,
        QuotaType::ControllerMutation,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// The `type` of its sensors' MBeans in Kafka's metrics.
    pub fn mbean_type(self) -> &'static str {
        match self {
            QuotaType::Produce => "Produce",
            QuotaType::Fetch => "Fetch",
            QuotaType::Request => "Request",
            QuotaType::ControllerMutation => "ControllerMutation",
        }
    }

    /// The quota key that configures it.
    pub fn key(self) -> &'static str {
        match self {
            QuotaType::Produce => PRODUCER_BYTE_RATE,
            QuotaType::Fetch => CONSUMER_BYTE_RATE,
            QuotaType::Request => REQUEST_PERCENTAGE,
            QuotaType::ControllerMutation => CONTROLLER_MUTATION_RATE,
        }
    }
}

/// The quotas of one kind: user/client-id entity (`None` parts: absent) to the limit.
type Table = HashMap<(Option<Option<String>>, Option<Option<String>>), f64>;

#[derive(Debug, Default)]
struct Tables {
    by_type: [Table; 4],
    /// IP quotas: an address (as written in the entity) or `None` for the default.
    ip: HashMap<Option<String>, f64>,
}

/// Which sensor a recording goes to: Kafka's metric tags.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum SensorKey {
    Client {
        kind: QuotaType,
        user: String,
        client_id: String,
    },
    Ip(String),
}

#[derive(Debug)]
enum Measure {
    Rate(Rate),
    Bucket(TokenBucket),
}

/// One sensor: the measure its quota is checked against, and what Kafka's quota metrics
/// report beside it (`throttle-time`, an average; a mutation quota's `mutation-rate`).
#[derive(Debug)]
struct SensorState {
    measure: Measure,
    /// The throttle times this sensor's quota gave, averaged over the quota's samples.
    throttle_times: Rate,
    /// Partitions created or deleted (mutation quotas only; the bucket holds credits).
    mutations: Rate,
    /// The mutation quota the bucket was last measured against.
    mutation_limit: f64,
}

impl SensorState {
    fn new(measure: Measure) -> Self {
        Self {
            measure,
            throttle_times: Rate::default(),
            mutations: Rate::default(),
            mutation_limit: 0.0,
        }
    }

    fn last_active_ms(&self) -> i64 {
        match &self.measure {
            Measure::Rate(rate) => rate.last_event_ms().unwrap_or(0),
            Measure::Bucket(bucket) => bucket.last_update_ms(),
        }
    }
}

type Sensor = Arc<Mutex<SensorState>>;

/// How long an idle sensor is kept (Kafka's `ClientQuotaManager.InactiveSensorExpirationTimeSeconds`).
const SENSOR_IDLE_EXPIRY_MS: i64 = 3_600_000;

/// Beyond this many sensors, the idle ones are dropped after one quota span instead.
pub const MAX_IDLE_SENSORS: usize = 10_000;

/// One user/client-id sensor as Kafka's quota metrics show it: the MBean
/// `kafka.server:type=<kind>,user=<user>,client-id=<client_id>` (an empty tag left out) and
/// its attributes, e.g. `byte-rate` and `throttle-time`.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaMetrics {
    pub kind: QuotaType,
    pub user: String,
    pub client_id: String,
    pub attributes: Vec<(&'static str, f64)>,
}

#[derive(Debug, Default)]
struct Sensors {
    by_key: HashMap<SensorKey, Sensor>,
    last_sweep_ms: i64,
}

/// The broker's client quotas: the limits from the metadata and the measures against them.
#[derive(Debug)]
pub struct ClientQuotas {
    windows: Windows,
    controller_windows: Windows,
    origin: Instant,
    enabled: [AtomicBool; 4],
    ip_enabled: AtomicBool,
    tables: RwLock<Arc<Tables>>,
    sensors: Mutex<Sensors>,
}

/// The limit that applies to a request and the sensor it is measured by.
struct Applied {
    key: SensorKey,
    limit: Option<f64>,
}

impl ClientQuotas {
    pub fn new(windows: Windows, controller_windows: Windows) -> Self {
        Self {
            windows,
            controller_windows,
            origin: Instant::now(),
            enabled: Default::default(),
            ip_enabled: AtomicBool::new(false),
            tables: RwLock::new(Arc::default()),
            sensors: Mutex::new(Sensors::default()),
        }
    }

    fn now_ms(&self) -> i64 {
        i64::try_from(self.origin.elapsed().as_millis()).unwrap_or(i64::MAX)
    }

    /// Takes the quotas of a new metadata image.
    pub fn update(&self, quotas: &crate::metadata::quota::ClientQuotas) {
        let mut tables = Tables::default();
        for (entity, values) in quotas {
            if let Some(ip) = entity.get(IP) {
                if let Some(rate) = values.get(CONNECTION_CREATION_RATE) {
                    tables.ip.insert(ip.clone(), rate.0);
                }
                continue;
            }
            let parts = (entity.get(USER).cloned(), entity.get(CLIENT_ID).cloned());
            for kind in QuotaType::ALL {
                if let Some(value) = values.get(kind.key()) {
                    tables.by_type[kind.index()].insert(parts.clone(), value.0);
                }
            }
        }
        for kind in QuotaType::ALL {
            self.enabled[kind.index()]
                .store(!tables.by_type[kind.index()].is_empty(), Ordering::Release);
        }
        self.ip_enabled
            .store(!tables.ip.is_empty(), Ordering::Release);
        if let Ok(mut current) = self.tables.write() {
            *current = Arc::new(tables);
        }
    }

    /// Whether any quota of this kind is configured (when not, nothing is measured).
    pub fn enabled(&self, kind: QuotaType) -> bool {
        self.enabled[kind.index()].load(Ordering::Acquire)
    }

    fn tables(&self) -> Arc<Tables> {
        self.tables.read().map(|t| t.clone()).unwrap_or_default()
    }

    /// Kafka's `quotaMetricTags` and `quotaLimit` for a user and client id.
    fn applied(&self, kind: QuotaType, user: &str, client_id: &str) -> Applied {
        let tables = self.tables();
        let table = &tables.by_type[kind.index()];
        let named = |s: &str| Some(Some(s.to_string()));
        let default = Some(None);
        let has =
            |u: Option<Option<String>>, c: Option<Option<String>>| table.contains_key(&(u, c));
        let (user_tag, client_tag) = if has(named(user), named(client_id))
            || has(named(user), default.clone())
        {
            (user, client_id)
        } else if has(named(user), None) {
            (user, "")
        } else if has(default.clone(), named(client_id)) || has(default.clone(), default.clone()) {
            (user, client_id)
        } else if has(default.clone(), None) {
            (user, "")
        } else {
            ("", client_id)
        };
        let get =
            |u: Option<Option<String>>, c: Option<Option<String>>| table.get(&(u, c)).copied();
        let limit = match (user_tag.is_empty(), client_tag.is_empty()) {
            (false, false) => get(named(user_tag), named(client_tag))
                .or_else(|| get(named(user_tag), default.clone()))
                .or_else(|| get(default.clone(), named(client_tag)))
                .or_else(|| get(default.clone(), default.clone())),
            (false, true) => get(named(user_tag), None).or_else(|| get(default.clone(), None)),
            (true, false) => get(None, named(client_tag)).or_else(|| get(None, default.clone())),
            (true, true) => None,
        };
        Applied {
            key: SensorKey::Client {
                kind,
                user: user_tag.to_string(),
                client_id: client_tag.to_string(),
            },
            limit,
        }
    }

    fn sensor(&self, key: SensorKey, now_ms: i64) -> Sensor {
        let Ok(mut sensors) = self.sensors.lock() else {
            // A poisoned map (a panic elsewhere): measure on a fresh sensor rather than fail.
            return Arc::new(Mutex::new(SensorState::new(Measure::Rate(Rate::default()))));
        };
        let span = self
            .windows
            .span_ms()
            .max(self.controller_windows.span_ms());
        if now_ms - sensors.last_sweep_ms >= span {
            sensors.last_sweep_ms = now_ms;
            let idle_expiry = if sensors.by_key.len() > MAX_IDLE_SENSORS {
                span
            } else {
                SENSOR_IDLE_EXPIRY_MS.max(span)
            };
            // A sensor in use (held by a request, or locked now) is kept.
            sensors.by_key.retain(|_, s| {
                Arc::strong_count(s) > 1
                    || s.try_lock()
                        .map_or(true, |m| now_ms - m.last_active_ms() < idle_expiry)
            });
        }
        sensors
            .by_key
            .entry(key.clone())
            .or_insert_with(|| {
                let measure = match key {
                    SensorKey::Client {
                        kind: QuotaType::ControllerMutation,
                        ..
                    } => Measure::Bucket(TokenBucket::default()),
                    _ => Measure::Rate(Rate::default()),
                };
                Arc::new(Mutex::new(SensorState::new(measure)))
            })
            .clone()
    }

    /// Records `value` for a request of `user` (the principal's name) and `client_id`, and
    /// gives the throttle time in ms (0 within the quota; Kafka's
    /// `maybeRecordAndGetThrottleTimeMs`).
    pub fn record(&self, kind: QuotaType, user: &str, client_id: &str, value: f64) -> u32 {
        self.record_at(kind, user, client_id, value, self.now_ms())
    }

    /// [`record`](Self::record) at `now` (ms since this manager began).
    fn record_at(&self, kind: QuotaType, user: &str, client_id: &str, value: f64, now: i64) -> u32 {
        if !self.enabled(kind) {
            return 0;
        }
        let applied = self.applied(kind, user, client_id);
        let sensor = self.sensor(applied.key, now);
        let Ok(mut state) = sensor.lock() else {
            return 0;
        };
        let Measure::Rate(rate) = &mut state.measure else {
            return 0;
        };
        rate.record(self.windows, value, now);
        let mut throttle_ms = match applied.limit {
            Some(limit) => rate.throttle_ms(self.windows, limit, now),
            None => 0,
        };
        if kind == QuotaType::Request {
            // Kafka bounds a request-time throttle by one window.
            let window = u32::try_from(self.windows.window_ms).unwrap_or(u32::MAX);
            throttle_ms = throttle_ms.min(window);
        }
        if throttle_ms > 0 {
            state
                .throttle_times
                .record(self.windows, f64::from(throttle_ms), now);
        }
        throttle_ms
    }

    /// Takes back what [`record`](Self::record) counted for a response that is not sent
    /// (a throttled fetch answers empty; Kafka's `unrecordQuotaSensor`).
    pub fn unrecord(&self, kind: QuotaType, user: &str, client_id: &str, value: f64) {
        self.unrecord_at(kind, user, client_id, value, self.now_ms());
    }

    /// [`unrecord`](Self::unrecord) at `now` (ms since this manager began).
    fn unrecord_at(&self, kind: QuotaType, user: &str, client_id: &str, value: f64, now: i64) {
        if !self.enabled(kind) {
            return;
        }
        let applied = self.applied(kind, user, client_id);
        let sensor = self.sensor(applied.key, now);
        if let Ok(mut state) = sensor.lock()
            && let Measure::Rate(rate) = &mut state.measure
        {
            rate.record(self.windows, -value, now);
        }
    }

    /// The most that can be recorded at once without being throttled for certain (a fetch
    /// asks for no more bytes than this; Kafka's `getMaxValueInQuotaWindow`).
    pub fn max_value_in_window(&self, kind: QuotaType, user: &str, client_id: &str) -> f64 {
        if !self.enabled(kind) {
            return f64::MAX;
        }
        match self.applied(kind, user, client_id).limit {
            Some(limit) => {
                limit
                    * f64::from(self.windows.samples.saturating_sub(1))
                    * (self.windows.window_ms as f64 / 1000.0)
            }
            None => f64::MAX,
        }
    }

    /// The controller mutation quota of one request: strict (requests new enough to be
    /// told THROTTLING_QUOTA_EXCEEDED) or permissive (older ones are only throttled).
    pub fn mutation_quota(&self, user: &str, client_id: &str, strict: bool) -> MutationQuota {
        let kind = QuotaType::ControllerMutation;
        let bounded = if self.enabled(kind) {
            let applied = self.applied(kind, user, client_id);
            applied.limit.map(|limit| {
                let sensor = self.sensor(applied.key, self.now_ms());
                (sensor, limit)
            })
        } else {
            None
        };
        MutationQuota {
            bounded,
            windows: self.controller_windows,
            origin: self.origin,
            strict,
            throttle: None,
        }
    }

    /// Every user/client-id sensor as Kafka's quota metrics report it, sorted by kind, user
    /// and client id: `byte-rate` (produce, fetch), `request-time` (request), `mutation-rate`
    /// and `tokens` (controller mutations), and `throttle-time` for all (NaN until throttled).
    pub fn metrics(&self) -> Vec<QuotaMetrics> {
        self.metrics_at(self.now_ms())
    }

    /// [`metrics`](Self::metrics) at `now` (ms since this manager began).
    fn metrics_at(&self, now: i64) -> Vec<QuotaMetrics> {
        let sensors: Vec<(SensorKey, Sensor)> = match self.sensors.lock() {
            Ok(sensors) => sensors
                .by_key
                .iter()
                .map(|(k, s)| (k.clone(), s.clone()))
                .collect(),
            Err(_) => return Vec::new(),
        };
        let mut out: Vec<QuotaMetrics> = sensors
            .into_iter()
            .filter_map(|(key, sensor)| {
                let SensorKey::Client {
                    kind,
                    user,
                    client_id,
                } = key
                else {
                    return None;
                };
                let mut state = sensor.lock().ok()?;
                let state = &mut *state;
                let windows = match kind {
                    QuotaType::ControllerMutation => self.controller_windows,
                    _ => self.windows,
                };
                let throttle = state.throttle_times.average(windows, now);
                let attributes = match &mut state.measure {
                    Measure::Rate(rate) => {
                        let name = if kind == QuotaType::Request {
                            "request-time"
                        } else {
                            "byte-rate"
                        };
                        vec![
                            (name, rate.measure(windows, now)),
                            ("throttle-time", throttle),
                        ]
                    }
                    Measure::Bucket(bucket) => vec![
                        ("mutation-rate", state.mutations.measure(windows, now)),
                        ("throttle-time", throttle),
                        ("tokens", bucket.measure(windows, state.mutation_limit, now)),
                    ],
                };
                Some(QuotaMetrics {
                    kind,
                    user,
                    client_id,
                    attributes,
                })
            })
            .collect();
        out.sort_by(|a, b| {
            (a.kind.index(), &a.user, &a.client_id).cmp(&(b.kind.index(), &b.user, &b.client_id))
        });
        out
    }

    /// Counts a new connection from `address` against its `connection_creation_rate`; over
    /// the rate, the time to hold the connection before closing it (Kafka's
    /// `ConnectionThrottledException`: the connection is not counted then).
    pub fn connection_throttle(&self, address: std::net::IpAddr) -> Option<Duration> {
        if !self.ip_enabled.load(Ordering::Acquire) {
            return None;
        }
        let tables = self.tables();
        let name = address.to_string();
        let limit = tables
            .ip
            .get(&Some(name.clone()))
            .or_else(|| tables.ip.get(&None))
            .copied()?;
        let now = self.now_ms();
        let sensor = self.sensor(SensorKey::Ip(name), now);
        let mut state = sensor.lock().ok()?;
        let Measure::Rate(rate) = &mut state.measure else {
            return None;
        };
        rate.record(self.windows, 1.0, now);
        let throttle = rate.throttle_ms(self.windows, limit, now);
        if throttle == 0 {
            return None;
        }
        rate.record(self.windows, -1.0, now);
        Some(Duration::from_millis(u64::from(throttle)))
    }
}

/// One request's controller mutation quota (Kafka's `StrictControllerMutationQuota` and
/// `PermissiveControllerMutationQuota`; unbounded when no quota applies).
#[derive(Debug)]
pub struct MutationQuota {
    bounded: Option<(Sensor, f64)>,
    windows: Windows,
    origin: Instant,
    strict: bool,
    /// The last throttle time and when it was measured.
    throttle: Option<(u32, Instant)>,
}

impl MutationQuota {
    /// Takes `permits` (partitions created or deleted). A strict quota already exceeded
    /// refuses them (`Err`: the throttle time); a permissive one takes them and notes the
    /// throttle time.
    pub fn record(&mut self, permits: f64) -> Result<(), u32> {
        let Some((sensor, quota)) = &self.bounded else {
            return Ok(());
        };
        let now = i64::try_from(self.origin.elapsed().as_millis()).unwrap_or(i64::MAX);
        let Ok(mut state) = sensor.lock() else {
            return Ok(());
        };
        let state = &mut *state;
        state.mutation_limit = *quota;
        let Measure::Bucket(bucket) = &mut state.measure else {
            return Ok(());
        };
        if self.strict {
            let tokens = bucket.measure(self.windows, *quota, now);
            if tokens < 0.0 {
                let throttle = TokenBucket::throttle_ms(tokens, *quota);
                self.throttle = Some((throttle, Instant::now()));
                state
                    .throttle_times
                    .record(self.windows, f64::from(throttle), now);
                return Err(throttle);
            }
            bucket.record(self.windows, *quota, permits, now);
        } else {
            bucket.record(self.windows, *quota, permits, now);
            let tokens = bucket.measure(self.windows, *quota, now);
            if tokens < 0.0 {
                let throttle = TokenBucket::throttle_ms(tokens, *quota);
                self.throttle = Some((throttle, Instant::now()));
                state
                    .throttle_times
                    .record(self.windows, f64::from(throttle), now);
            }
        }
        state.mutations.record(self.windows, permits, now);
        Ok(())
    }

    /// The throttle time left now (Kafka deducts the time since it was measured).
    pub fn throttle_ms(&self) -> u32 {
        match self.throttle {
            Some((ms, at)) => {
                let elapsed = u32::try_from(at.elapsed().as_millis()).unwrap_or(u32::MAX);
                ms.saturating_sub(elapsed)
            }
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::quota::{QuotaEntity, QuotaValue};
    use std::collections::BTreeMap;

    const WINDOWS: Windows = Windows {
        samples: 11,
        window_ms: 1000,
    };

    fn entity(user: Option<Option<&str>>, client_id: Option<Option<&str>>) -> QuotaEntity {
        QuotaEntity::user_client(user, client_id)
    }

    fn quotas(entries: &[(QuotaEntity, &str, f64)]) -> ClientQuotas {
        let manager = ClientQuotas::new(WINDOWS, WINDOWS);
        let mut image: crate::metadata::quota::ClientQuotas = BTreeMap::new();
        for (entity, key, value) in entries {
            image
                .entry(entity.clone())
                .or_default()
                .insert(key.to_string(), QuotaValue(*value));
        }
        manager.update(&image);
        manager
    }

    #[test]
    fn idle_sensors_stay_an_hour_unless_there_are_too_many() {
        let manager = quotas(&[]);
        let ip = |n: usize| SensorKey::Ip(format!("10.0.{}.{}", n / 256, n % 256));
        let count = |m: &ClientQuotas| m.sensors.lock().unwrap().by_key.len();
        // A connection from `n` at `now_ms`.
        let connect = |n: usize, now_ms: i64| {
            let sensor = manager.sensor(ip(n), now_ms);
            if let Measure::Rate(rate) = &mut sensor.lock().unwrap().measure {
                rate.record(WINDOWS, 1.0, now_ms);
            }
        };
        connect(0, 0);
        // Idle past a quota span (11 s) but not an hour: kept, as Kafka keeps it.
        connect(1, 20_000);
        assert_eq!(count(&manager), 2);
        connect(2, 3_610_000);
        assert_eq!(count(&manager), 2, "ip 0 went after an hour");
        // Made-up keys beyond the cap: the idle ones go after one span.
        for n in 3..MAX_IDLE_SENSORS + 10 {
            connect(n, 3_630_000);
        }
        assert!(count(&manager) > MAX_IDLE_SENSORS);
        connect(0, 3_650_000);
        assert_eq!(count(&manager), 1);
    }

    #[test]
    fn the_most_specific_quota_applies_in_kafkas_order() {
        let manager = quotas(&[
            (entity(Some(None), None), PRODUCER_BYTE_RATE, 1.0),
            (entity(Some(Some("alice")), None), PRODUCER_BYTE_RATE, 2.0),
            (
                entity(Some(Some("alice")), Some(Some("app"))),
                PRODUCER_BYTE_RATE,
                3.0,
            ),
            (entity(None, Some(Some("tool"))), PRODUCER_BYTE_RATE, 4.0),
        ]);
        let limit = |user, client| manager.applied(QuotaType::Produce, user, client).limit;
        assert_eq!(limit("alice", "app"), Some(3.0));
        assert_eq!(limit("alice", "other"), Some(2.0));
        assert_eq!(limit("bob", "app"), Some(1.0));
        // A user quota (the default user's) comes before a client-id quota.
        assert_eq!(limit("bob", "tool"), Some(1.0));
        assert_eq!(limit("alice", "app"), Some(3.0));
        assert_eq!(
            manager.applied(QuotaType::Fetch, "alice", "app").limit,
            None
        );
        assert!(!manager.enabled(QuotaType::Fetch));

        let clients = quotas(&[(entity(None, Some(Some("tool"))), CONSUMER_BYTE_RATE, 4.0)]);
        let limit = |user, client| clients.applied(QuotaType::Fetch, user, client).limit;
        assert_eq!(limit("anyone", "tool"), Some(4.0));
        assert_eq!(limit("anyone", "other"), None);
    }

    #[test]
    fn a_client_over_its_rate_is_throttled_for_kafkas_time() {
        let manager = quotas(&[(entity(Some(None), None), PRODUCER_BYTE_RATE, 1000.0)]);
        // All at one instant: the throttle divides by the time since the first sample began
        // (at least 10 s), so each millisecond between the records takes one off it.
        let record = |user, value| manager.record_at(QuotaType::Produce, user, "c", value, 5);
        // 10 s of minimum window: 10,000 bytes are within 1000 B/s, 20,000 are twice over.
        assert_eq!(record("u", 10_000.0), 0);
        assert_eq!(record("u", 10_000.0), 10_000);
        // Another user has a sensor of their own.
        assert_eq!(record("v", 5_000.0), 0);
        manager.unrecord_at(QuotaType::Produce, "u", "c", 10_000.0, 5);
        assert_eq!(record("u", 0.0), 0);
        // Kafka's arithmetic: 20,000 bytes 3 ms after the first sample began are over 10.003 s.
        assert_eq!(
            manager.record_at(QuotaType::Produce, "w", "c", 20_000.0, 5),
            10_000
        );
        assert_eq!(
            manager.record_at(QuotaType::Produce, "w", "c", 0.0, 8),
            9_997
        );
        assert_eq!(
            manager.max_value_in_window(QuotaType::Produce, "u", "c"),
            10_000.0
        );
    }

    #[test]
    fn sensors_report_their_rate_and_average_throttle_time_under_kafkas_tags() {
        let manager = quotas(&[(entity(Some(None), None), PRODUCER_BYTE_RATE, 1000.0)]);
        // At one instant (see a_client_over_its_rate_is_throttled_for_kafkas_time).
        let record = |value| manager.record_at(QuotaType::Produce, "u", "c", value, 5);
        assert_eq!(record(10_000.0), 0);
        assert_eq!(record(10_000.0), 10_000);
        let metrics = manager.metrics_at(5);
        assert_eq!(metrics.len(), 1);
        // A default-user quota: the user tag, no client id (Kafka's `quotaMetricTags`).
        assert_eq!(
            (metrics[0].user.as_str(), metrics[0].client_id.as_str()),
            ("u", "")
        );
        let attribute = |name: &str| {
            metrics[0]
                .attributes
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| *v)
                .unwrap()
        };
        assert_eq!(attribute("byte-rate"), 2000.0);
        // One throttled response of 10 s: the average of the throttled ones.
        assert_eq!(attribute("throttle-time"), 10_000.0);
    }

    #[test]
    fn strict_mutation_quotas_refuse_once_exceeded_and_permissive_ones_throttle() {
        let manager = quotas(&[(entity(Some(None), None), CONTROLLER_MUTATION_RATE, 1.0)]);
        let mut strict = manager.mutation_quota("u", "c", true);
        // The burst (11) is taken, going below zero; the next is refused.
        assert_eq!(strict.record(20.0), Ok(()));
        let refused = strict.record(1.0).unwrap_err();
        assert!((8_900..=9_000).contains(&refused), "{refused}");
        let mut permissive = manager.mutation_quota("u", "c", false);
        assert_eq!(permissive.record(1.0), Ok(()));
        assert!(permissive.throttle_ms() > 9_000);
        let mut free = manager.mutation_quota("", "c", true);
        assert_eq!(free.record(1000.0), Ok(()));
    }

    #[test]
    fn connections_over_an_ips_rate_are_refused() {
        let manager = quotas(&[(QuotaEntity::ip(None), CONNECTION_CREATION_RATE, 1.0)]);
        let address: std::net::IpAddr = "10.0.0.1".parse().unwrap();
        // 10 connections fit the minimum 10 s window at 1/s.
        for _ in 0..10 {
            assert_eq!(manager.connection_throttle(address), None);
        }
        assert!(manager.connection_throttle(address).is_some());
        assert_eq!(
            manager.connection_throttle("10.0.0.2".parse().unwrap()),
            None
        );
    }
}
