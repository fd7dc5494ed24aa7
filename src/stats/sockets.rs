//! Kafka's socket-server measurements: connections per listener (open now, opened, closed),
//! and the request memory pool and connection accept rates, whose owner (the server)
//! registers them here to be read at scrape time.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

/// One listener's connections.
#[derive(Debug)]
pub struct ListenerStats {
    pub name: String,
    open: AtomicI64,
    created: AtomicU64,
    closed: AtomicU64,
}

impl ListenerStats {
    /// Counts a connection accepted; it counts as closed when the guard is dropped.
    pub fn connection(self: &Arc<Self>) -> ConnectionGuard {
        self.open.fetch_add(1, Ordering::Relaxed);
        self.created.fetch_add(1, Ordering::Relaxed);
        ConnectionGuard(self.clone())
    }

    pub fn open(&self) -> i64 {
        self.open.load(Ordering::Relaxed)
    }

    pub fn created(&self) -> u64 {
        self.created.load(Ordering::Relaxed)
    }

    pub fn closed(&self) -> u64 {
        self.closed.load(Ordering::Relaxed)
    }
}

/// A connection open on a listener.
#[derive(Debug)]
pub struct ConnectionGuard(Arc<ListenerStats>);

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
        self.0.closed.fetch_add(1, Ordering::Relaxed);
    }
}

/// The request memory pool, as its owner reports it.
pub trait MemoryGauge: Send + Sync + std::fmt::Debug {
    /// Bytes not taken by requests now.
    fn available(&self) -> u64;
    fn capacity(&self) -> u64;
}

/// Connection accept rates and throttles (Kafka's `ConnectionQuotas` sensors), as the server
/// measures them.
pub trait AcceptGauge: Send + Sync + std::fmt::Debug {
    fn snapshot(&self) -> AcceptSnapshot;
}

/// The accept sensors at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptSnapshot {
    /// New connections per second across the listeners the broker-wide rate covers.
    pub broker_rate: f64,
    pub listeners: Vec<ListenerAccepts>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ListenerAccepts {
    pub listener: String,
    /// New connections per second.
    pub accept_rate: f64,
    /// Average throttle time (ms) for the listener's or the broker's rate; NaN with none.
    pub throttle_time: f64,
    /// Average throttle time (ms) for an address's rate; NaN with none.
    pub ip_throttle_time: f64,
    /// Total time the listener's acceptor waited.
    pub blocked_ns: u64,
}

#[derive(Debug, Default)]
pub struct SocketStats {
    listeners: RwLock<Vec<Arc<ListenerStats>>>,
    memory_pool: OnceLock<Arc<dyn MemoryGauge>>,
    accepts: OnceLock<Arc<dyn AcceptGauge>>,
}

impl SocketStats {
    /// The counters of listener `name` (one per name, made when it is bound).
    pub fn listener(&self, name: &str) -> Arc<ListenerStats> {
        let mut listeners = self.listeners.write().unwrap_or_else(|p| p.into_inner());
        if let Some(existing) = listeners.iter().find(|l| l.name == name) {
            return existing.clone();
        }
        let stats = Arc::new(ListenerStats {
            name: name.to_string(),
            open: AtomicI64::new(0),
            created: AtomicU64::new(0),
            closed: AtomicU64::new(0),
        });
        listeners.push(stats.clone());
        stats
    }

    pub fn listeners(&self) -> Vec<Arc<ListenerStats>> {
        self.listeners
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set_accept_gauge(&self, gauge: Arc<dyn AcceptGauge>) {
        let _ = self.accepts.set(gauge);
    }

    /// The accept sensors, once the server has registered them.
    pub fn accepts(&self) -> Option<AcceptSnapshot> {
        self.accepts.get().map(|gauge| gauge.snapshot())
    }

    pub fn set_memory_pool(&self, pool: Arc<dyn MemoryGauge>) {
        let _ = self.memory_pool.set(pool);
    }

    /// (available, used) bytes of the request memory pool; `None` when requests are not
    /// bounded (`queued.max.request.bytes=-1`).
    pub fn memory_pool(&self) -> Option<(u64, u64)> {
        self.memory_pool.get().map(|pool| {
            let available = pool.available();
            (available, pool.capacity().saturating_sub(available))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_counted_open_created_and_closed_per_listener() {
        let stats = SocketStats::default();
        let plain = stats.listener("PLAINTEXT");
        let first = plain.connection();
        let second = stats.listener("PLAINTEXT").connection();
        drop(first);
        assert_eq!((plain.open(), plain.created(), plain.closed()), (1, 2, 1));
        drop(second);
        assert_eq!(plain.open(), 0);
        assert_eq!(stats.listeners().len(), 1);
        assert!(stats.memory_pool().is_none());
    }
}
