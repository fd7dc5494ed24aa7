//! Connection quotas: `max.connections` across listeners (a slot is taken before `accept`,
//! so a full broker leaves new connections in the kernel's backlog) and
//! `max.connections.per.ip` (Kafka's `ConnectionQuotas`: a connection over its address's
//! limit is closed as soon as it is accepted, and one line is logged). Both limits are
//! dynamic broker configs: a new limit holds for connections accepted from then on (a lower
//! one closes none that are open, as on Kafka). The per-address limit is read from the
//! configuration in effect at each accept, so it holds once AlterConfigs has answered.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// Connections across all listeners (`max.connections`).
#[derive(Debug)]
pub struct TotalQuota {
    limit: AtomicUsize,
    open: Mutex<usize>,
    /// Woken when a connection closes or the limit rises.
    room: Notify,
}

/// One open connection counted against [`TotalQuota`]; counted off when dropped.
#[derive(Debug)]
pub struct TotalSlot {
    quota: Arc<TotalQuota>,
}

impl TotalQuota {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit: AtomicUsize::new(limit),
            open: Mutex::new(0),
            room: Notify::new(),
        })
    }

    /// Whether a new connection would wait for room now.
    pub fn is_full(&self) -> bool {
        *self.open.lock().unwrap_or_else(|p| p.into_inner()) >= self.limit.load(Ordering::SeqCst)
    }

    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::SeqCst);
        self.room.notify_waiters();
    }

    /// A slot for one more connection, once there is room.
    pub async fn acquire(self: &Arc<Self>) -> TotalSlot {
        loop {
            // Registered before the check, so a slot freed in between is not missed.
            let room = self.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            {
                let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
                if *open < self.limit.load(Ordering::SeqCst) {
                    *open += 1;
                    return TotalSlot {
                        quota: self.clone(),
                    };
                }
            }
            room.await;
        }
    }
}

impl Drop for TotalSlot {
    fn drop(&mut self) {
        let mut open = self.quota.open.lock().unwrap_or_else(|p| p.into_inner());
        *open = open.saturating_sub(1);
        drop(open);
        self.quota.room.notify_waiters();
    }
}

/// Connections per client address.
#[derive(Debug)]
pub struct PerIpQuota {
    counts: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection counted against its address; counted off when dropped.
#[derive(Debug)]
pub struct IpSlot {
    quota: Arc<PerIpQuota>,
    ip: IpAddr,
}

impl PerIpQuota {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            counts: Mutex::new(HashMap::new()),
        })
    }

    /// A slot for a new connection from `ip`, or `None` when it has `limit` already.
    pub fn admit(self: &Arc<Self>, ip: IpAddr, limit: usize) -> Option<IpSlot> {
        // No await while locked: a plain mutex.
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let count = counts.entry(ip).or_default();
        if *count >= limit {
            return None;
        }
        *count += 1;
        Some(IpSlot {
            quota: self.clone(),
            ip,
        })
    }
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        let mut counts = self.quota.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = counts.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_gets_its_limit_and_slots_come_back() {
        let quota = PerIpQuota::new();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let first = quota.admit(a, 2).unwrap();
        let second = quota.admit(a, 2).unwrap();
        assert!(quota.admit(a, 2).is_none());
        assert!(quota.admit(b, 2).is_some());
        drop(first);
        let third = quota.admit(a, 2).unwrap();
        assert!(quota.admit(a, 3).is_some(), "a raised limit admits more");
        assert!(quota.admit(a, 1).is_none(), "a lowered one closes none");
        drop((second, third));
    }

    #[tokio::test]
    async fn the_total_limit_waits_for_room_and_follows_changes() {
        let quota = TotalQuota::new(1);
        let first = quota.acquire().await;
        let waiting = tokio::spawn({
            let quota = quota.clone();
            async move { quota.acquire().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        quota.set_limit(2);
        let second = tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .unwrap()
            .unwrap();
        quota.set_limit(1);
        drop(first);
        let third = tokio::spawn({
            let quota = quota.clone();
            async move { quota.acquire().await }
        });
        tokio::task::yield_now().await;
        assert!(
            !third.is_finished(),
            "two open over a limit of one: no room yet"
        );
        drop(second);
        tokio::time::timeout(std::time::Duration::from_secs(5), third)
            .await
            .unwrap()
            .unwrap();
    }
}
