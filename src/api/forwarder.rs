//! The broker's connections to other nodes' controller listeners ([`Forwarder`], the
//! [`ControllerForwarder`] the server installs): a bounded set per controller, each carrying
//! one command at a time as [`forward`] encodes it.

use super::forward::{forward, unreachable};
use crate::broker::ControllerForwarder;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::net::{PeerConnection, PeerSecurity};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// Calls to one controller at once, each on its own connection: commands arrive from many
/// tasks (a thousand clients creating topics are forwarded a thousand commands), and a
/// connection per concurrent call once ran a controller out of descriptors. Further calls
/// wait for one of these to finish.
const CALLS_PER_CONTROLLER: usize = 8;

/// The broker's way to other nodes' controller listeners: up to [`CALLS_PER_CONTROLLER`]
/// connections per address, one request at a time on each, kept for the next call.
#[derive(Debug)]
pub struct Forwarder {
    client_id: String,
    controllers: std::sync::Mutex<HashMap<String, Arc<ControllerConnections>>>,
    security: PeerSecurity,
}

/// One controller's connections: idle ones, and the permits that bound them.
#[derive(Debug)]
struct ControllerConnections {
    idle: std::sync::Mutex<Vec<PeerConnection>>,
    calls: tokio::sync::Semaphore,
}

impl Forwarder {
    pub fn new(node_id: i32, security: PeerSecurity) -> Self {
        Self {
            client_id: format!("sluice-broker-{node_id}"),
            controllers: std::sync::Mutex::default(),
            security,
        }
    }

    fn connections_to(&self, address: &str) -> Arc<ControllerConnections> {
        let mut controllers = self.controllers.lock().unwrap_or_else(|p| p.into_inner());
        controllers
            .entry(address.to_string())
            .or_insert_with(|| {
                Arc::new(ControllerConnections {
                    idle: std::sync::Mutex::default(),
                    calls: tokio::sync::Semaphore::new(CALLS_PER_CONTROLLER),
                })
            })
            .clone()
    }

    async fn call(
        &self,
        address: &str,
        op: &ControllerOp,
        timeout: Duration,
    ) -> Result<ControllerReply, Error> {
        let controller = self.connections_to(address);
        // Waiting for a turn counts against the call's timeout, as a slow answer would: a
        // controller that answers nobody must not hold callers forever.
        let Ok(Ok(_turn)) = tokio::time::timeout(timeout, controller.calls.acquire()).await else {
            return Err(Error::RequestTimedOut);
        };
        let kept = controller
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop();
        let mut connection = match kept {
            Some(connection) => connection,
            None => PeerConnection::connect(address, &self.client_id, timeout, &self.security)
                .await
                .map_err(unreachable)?,
        };
        let outcome = crate::stats::requests::remote(forward(&mut connection, op, timeout)).await;
        // A connection that failed mid-exchange is not reused.
        if !matches!(outcome, Err(Error::NotController | Error::RequestTimedOut)) {
            controller
                .idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(connection);
        }
        outcome
    }
}

impl ControllerForwarder for Forwarder {
    fn forward<'a>(
        &'a self,
        address: &'a str,
        op: &'a ControllerOp,
        timeout: Duration,
    ) -> Pin<Box<dyn Future<Output = Result<ControllerReply, Error>> + Send + 'a>> {
        Box::pin(self.call(address, op, timeout))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Forty commands at once to a controller that does not answer: never more than
    /// [`CALLS_PER_CONTROLLER`] connections to it at a time (a connection per concurrent
    /// call once ran a controller out of descriptors), and every call ends by its timeout.
    #[tokio::test]
    async fn concurrent_calls_share_a_bounded_set_of_connections() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let open = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let (open_seen, most_seen) = (open.clone(), most.clone());
        let server = tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let now = open_seen.fetch_add(1, Ordering::SeqCst) + 1;
                most_seen.fetch_max(now, Ordering::SeqCst);
                let open = open_seen.clone();
                tokio::spawn(async move {
                    // Read whatever comes until the caller hangs up; never answer.
                    let mut sink = [0u8; 1024];
                    while let Ok(n) = tokio::io::AsyncReadExt::read(&mut socket, &mut sink).await {
                        if n == 0 {
                            break;
                        }
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        let forwarder = Arc::new(Forwarder::new(1, PeerSecurity::plaintext()));
        let calls: Vec<_> = (0..40)
            .map(|_| {
                let (forwarder, address) = (forwarder.clone(), address.clone());
                tokio::spawn(async move {
                    forwarder
                        .call(
                            &address,
                            &ControllerOp::DescribeQuorum,
                            Duration::from_millis(300),
                        )
                        .await
                })
            })
            .collect();
        for call in calls {
            assert!(call.await.unwrap().is_err(), "nobody answers");
        }
        let most = most.load(Ordering::SeqCst);
        assert!(
            (1..=CALLS_PER_CONTROLLER).contains(&most),
            "{most} connections at once"
        );
        server.abort();
    }
}
