//! The group coordinator's timers: join deadlines of classic groups, and the session and
//! revocation deadlines of every member (classic, KIP-848 and streams), each a task on the
//! coordinator's runtime that sleeps until the deadline the state machine gives and fences
//! the member if its heartbeats did not move it.

use super::{ConsumerGroup, GroupCoordinator, lock_group};
use crate::types::now_ms;
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// A group whose members' sessions the coordinator times (KIP-848 and streams groups).
pub(super) trait SessionTimed {
    /// The member's earliest deadline, `None` once it is gone.
    fn deadline_of(&self, member_id: &str) -> Option<Instant>;
    /// The member is no longer timed.
    fn unwatch(&mut self, member_id: &str);
    /// Fences the members whose deadline passed.
    fn expire(&mut self, now: Instant, now_ms: i64) -> Vec<String>;
    /// Writes what the expiry changed, for groups whose state is kept in records this way.
    fn persist(&mut self, _coordinator: &GroupCoordinator) {}
}

impl SessionTimed for ConsumerGroup {
    fn deadline_of(&self, member_id: &str) -> Option<Instant> {
        ConsumerGroup::deadline_of(self, member_id)
    }
    fn unwatch(&mut self, member_id: &str) {
        self.watched.remove(member_id);
    }
    fn expire(&mut self, now: Instant, now_ms: i64) -> Vec<String> {
        ConsumerGroup::expire(self, now, now_ms)
    }
}

impl GroupCoordinator {
    /// Spawns a timer task on the coordinator's runtime (its `runtime` field),
    /// whichever thread asks. Before `start` there is no runtime yet: loaded members wait in
    /// `loaded_members` until then, and requests come only after it.
    pub(super) fn spawn_timer(
        &self,
        timer: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        match self
            .runtime
            .get()
            .cloned()
            .or_else(|| tokio::runtime::Handle::try_current().ok())
        {
            Some(runtime) => {
                runtime.spawn(timer);
            }
            None => {
                tracing::error!("group timer asked for before the coordinator started; dropped")
            }
        }
    }

    pub(super) fn arm_join_timer(
        self: &Arc<Self>,
        group_id: String,
        rebalance_id: u64,
        deadline: Instant,
    ) {
        let this = self.clone();
        self.spawn_timer(async move {
            tokio::time::sleep_until(deadline).await;
            let Some(group) = this.group(&group_id) else {
                return;
            };
            let mut g = lock_group(&group);
            let effects =
                g.on_join_timer(rebalance_id, &this.config.group, Instant::now(), now_ms());
            this.apply(&g, effects);
        });
    }

    /// Evicts `member_id` when its session runs out (checked at its current deadline, which
    /// heartbeats keep moving), then stops.
    pub(super) fn watch_member(self: &Arc<Self>, group_id: String, member_id: String) {
        let this = self.clone();
        self.spawn_timer(async move {
            loop {
                let deadline = {
                    let Some(group) = this.group(&group_id) else {
                        return;
                    };
                    let g = lock_group(&group);
                    match g.deadline_of(&member_id) {
                        Some(deadline) => deadline,
                        None => return,
                    }
                };
                tokio::time::sleep_until(deadline).await;
                let Some(group) = this.group(&group_id) else {
                    return;
                };
                let mut g = lock_group(&group);
                if let Some(effects) =
                    g.expire_member(&member_id, &this.config.group, Instant::now(), now_ms())
                {
                    this.apply(&g, effects);
                }
            }
        });
    }

    pub(super) fn watch_consumer_member(self: &Arc<Self>, group_id: String, member_id: String) {
        self.watch_session(Self::consumer_group, group_id, member_id);
    }

    /// Fences `member_id` of a KIP-848 or streams group when its session or revocation
    /// deadline passes (checked at its current deadline, which heartbeats keep moving), then
    /// stops.
    pub(super) fn watch_session<G: SessionTimed + Send + 'static>(
        self: &Arc<Self>,
        lookup: fn(&Self, &str) -> Option<Arc<Mutex<G>>>,
        group_id: String,
        member_id: String,
    ) {
        let this = self.clone();
        self.spawn_timer(async move {
            loop {
                let deadline = {
                    let Some(group) = lookup(&this, &group_id) else {
                        return;
                    };
                    let mut g = group.lock().unwrap_or_else(|p| p.into_inner());
                    match g.deadline_of(&member_id) {
                        Some(deadline) => deadline,
                        None => {
                            g.unwatch(&member_id);
                            return;
                        }
                    }
                };
                tokio::time::sleep_until(deadline).await;
                let Some(group) = lookup(&this, &group_id) else {
                    return;
                };
                let mut g = group.lock().unwrap_or_else(|p| p.into_inner());
                if !g.expire(Instant::now(), now_ms()).is_empty() {
                    g.persist(&this);
                }
            }
        });
    }
}
