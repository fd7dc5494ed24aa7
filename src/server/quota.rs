//! Connection quotas: `max.connections` across listeners (a permit is taken before `accept`,
//! so a full broker leaves new connections in the kernel's backlog) and
//! `max.connections.per.ip` (Kafka's `ConnectionQuotas`: a connection over its address's
//! limit is closed as soon as it is accepted, and one line is logged).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Connections per client address.
#[derive(Debug)]
pub struct PerIpQuota {
    limit: usize,
    counts: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection counted against its address; counted off when dropped.
#[derive(Debug)]
pub struct IpSlot {
    quota: Arc<PerIpQuota>,
    ip: IpAddr,
}

impl PerIpQuota {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            counts: Mutex::new(HashMap::new()),
        })
    }

    /// A slot for a new connection from `ip`, or `None` when it has `limit` already.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<IpSlot> {
        // No await while locked: a plain mutex.
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let count = counts.entry(ip).or_default();
        if *count >= self.limit {
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
        let quota = PerIpQuota::new(2);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let first = quota.admit(a).unwrap();
        let _second = quota.admit(a).unwrap();
        assert!(quota.admit(a).is_none());
        assert!(quota.admit(b).is_some());
        drop(first);
        assert!(quota.admit(a).is_some());
    }
}
