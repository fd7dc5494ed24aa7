//! A bounded set of per-segment resources with CLOCK (second chance) eviction, shared by the
//! open segment files (`open_files`, RocksDB's table cache) and the index mappings
//! (`index::maps`, against `vm.max_map_count`): a member takes its resource (a descriptor, a
//! map) when used and gives it back, oldest use first, once the set holds more than its
//! capacity.
//!
//! A use sets the member's reference bit without taking any shared lock; only taking a
//! resource that is not held walks the ring, releasing the first member whose bit is clear
//! and clearing the bits it passes. A member busy in another thread (its own lock taken) is
//! passed over, so the set may be over its bound for as long as that use lasts.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// What a set has done, for the metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClockStats {
    pub capacity: usize,
    /// Resources held now.
    pub open: usize,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
}

/// A member's state in the ring.
#[derive(Debug)]
pub struct ClockBits {
    referenced: AtomicBool,
    in_ring: AtomicBool,
}

impl Default for ClockBits {
    fn default() -> Self {
        Self {
            referenced: AtomicBool::new(true),
            in_ring: AtomicBool::new(false),
        }
    }
}

/// Something a set can take a resource back from.
pub trait Member: Send + Sync {
    fn clock(&self) -> &ClockBits;
    /// Gives the resource back unless the member is in use right now: `None` then, else
    /// whether it held one. The set does the counting.
    fn release_if_idle(&self) -> Option<bool>;
}

/// A counter bumped on every use from any thread: one cache line per shard, each thread on
/// its own shard, so the hot path does not bounce a shared line between cores.
#[derive(Debug, Default)]
struct UseCounter {
    shards: [PaddedCount; 8],
}

#[derive(Debug, Default)]
#[repr(align(64))]
struct PaddedCount(AtomicU64);

impl UseCounter {
    fn bump(&self) {
        thread_local! {
            static SHARD: usize = {
                static NEXT: AtomicUsize = AtomicUsize::new(0);
                NEXT.fetch_add(1, Ordering::Relaxed)
            };
        }
        let shard = SHARD.with(|s| *s) % self.shards.len();
        self.shards[shard].0.fetch_add(1, Ordering::Relaxed);
    }

    fn total(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .sum()
    }
}

#[derive(Debug)]
pub struct ClockSet<T: Member> {
    capacity: AtomicUsize,
    open: AtomicUsize,
    hits: UseCounter,
    misses: AtomicU64,
    evictions: AtomicU64,
    ring: Mutex<Ring<T>>,
}

/// The members holding a resource, in CLOCK order (and members dropped while holding one,
/// until the hand or a compaction passes them).
#[derive(Debug)]
struct Ring<T> {
    entries: Vec<Weak<T>>,
    hand: usize,
}

impl<T: Member> ClockSet<T> {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: AtomicUsize::new(capacity.max(1)),
            open: AtomicUsize::new(0),
            hits: UseCounter::default(),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            ring: Mutex::new(Ring {
                entries: Vec::new(),
                hand: 0,
            }),
        }
    }

    pub fn set_capacity(&self, capacity: usize) {
        self.capacity.store(capacity.max(1), Ordering::Relaxed);
    }

    pub fn stats(&self) -> ClockStats {
        ClockStats {
            capacity: self.capacity.load(Ordering::Relaxed),
            open: self.open.load(Ordering::Relaxed),
            hits: self.hits.total(),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }

    /// A use that found the member's resource held.
    pub fn hit(&self, member: &T) {
        member.clock().referenced.store(true, Ordering::Relaxed);
        self.hits.bump();
    }

    /// A use that must take the resource again.
    pub fn miss(&self, member: &T) {
        member.clock().referenced.store(true, Ordering::Relaxed);
        self.misses.fetch_add(1, Ordering::Relaxed);
    }

    /// The member took a resource: counted, put in the ring, and others released until
    /// the set is within its bound.
    pub fn acquired(&self, member: &Arc<T>) {
        self.open.fetch_add(1, Ordering::Relaxed);
        self.admit(member);
    }

    /// A member gave its resource back by itself (dropped, or released to change it).
    pub fn released(&self) {
        let _ = self
            .open
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    fn admit(&self, member: &Arc<T>) {
        let mut ring = self.ring.lock().unwrap_or_else(|p| p.into_inner());
        if !member.clock().in_ring.swap(true, Ordering::Relaxed) {
            ring.entries.push(Arc::downgrade(member));
        }
        // Members dropped while holding a resource leave a dead entry behind; past twice the
        // live ones they are swept out, so the ring stays the size of the set.
        if ring.entries.len() > 2 * self.open.load(Ordering::Relaxed) + 64 {
            ring.entries.retain(|entry| entry.strong_count() > 0);
            ring.hand = 0;
        }
        let capacity = self.capacity.load(Ordering::Relaxed);
        // Two sweeps clear every reference bit; members busy in another thread are passed over.
        let mut budget = ring.entries.len() * 2 + 1;
        while self.open.load(Ordering::Relaxed) > capacity && budget > 0 && !ring.entries.is_empty()
        {
            budget -= 1;
            let at = ring.hand % ring.entries.len();
            let Some(candidate) = ring.entries[at].upgrade() else {
                // Dropped (its resource with it).
                ring.entries.swap_remove(at);
                continue;
            };
            if Arc::ptr_eq(&candidate, member)
                || candidate.clock().referenced.swap(false, Ordering::Relaxed)
            {
                ring.hand = at + 1;
                continue;
            }
            match candidate.release_if_idle() {
                Some(held) => {
                    if held {
                        self.evictions.fetch_add(1, Ordering::Relaxed);
                        self.released();
                    }
                    candidate.clock().in_ring.store(false, Ordering::Relaxed);
                    ring.entries.swap_remove(at);
                }
                // In use by another thread right now: it stays.
                None => ring.hand = at + 1,
            }
        }
    }

    /// Releases others until at least one more resource can be taken (the system ran out:
    /// no descriptor, no map): true if one was released.
    pub fn make_room(&self, member: &Arc<T>) -> bool {
        let open = self.open.load(Ordering::Relaxed);
        let previous = self.capacity.load(Ordering::Relaxed);
        self.capacity
            .store(open.saturating_sub(1).max(1), Ordering::Relaxed);
        self.admit(member);
        self.capacity.store(previous, Ordering::Relaxed);
        self.open.load(Ordering::Relaxed) < open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member whose resource is a flag.
    #[derive(Default)]
    struct Flag {
        clock: ClockBits,
        held: Mutex<bool>,
    }

    impl Member for Flag {
        fn clock(&self) -> &ClockBits {
            &self.clock
        }
        fn release_if_idle(&self) -> Option<bool> {
            let mut held = self.held.try_lock().ok()?;
            Some(std::mem::take(&mut *held))
        }
    }

    fn take(set: &ClockSet<Flag>, member: &Arc<Flag>) {
        let mut held = member.held.lock().unwrap();
        if *held {
            set.hit(member);
        } else {
            set.miss(member);
            *held = true;
            set.acquired(member);
        }
    }

    #[test]
    fn dead_members_do_not_pile_up_in_the_ring() {
        let set = ClockSet::new(1_000);
        for _ in 0..10_000 {
            let member = Arc::new(Flag::default());
            take(&set, &member);
            drop(member);
            set.released();
        }
        let ring = set.ring.lock().unwrap();
        assert!(ring.entries.len() <= 64 + 1, "{}", ring.entries.len());
    }

    #[test]
    fn a_member_in_use_elsewhere_is_passed_over() {
        let set = ClockSet::new(1);
        let busy = Arc::new(Flag::default());
        take(&set, &busy);
        let guard = busy.held.lock().unwrap();
        busy.clock().referenced.store(false, Ordering::Relaxed);
        let other = Arc::new(Flag::default());
        take(&set, &other);
        assert!(*guard, "not released while in use");
        assert_eq!(set.stats().open, 2, "over the bound while the use lasts");
        drop(guard);
        let third = Arc::new(Flag::default());
        take(&set, &third);
        assert_eq!(set.stats().open, 1);
        assert!(set.stats().evictions >= 2);
    }
}
