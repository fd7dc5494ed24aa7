//! Raft messages between the controller quorum's voters, over TCP to each voter's controller
//! listener (`controller.quorum.voters`). One connection per peer, messages one-way: Raft
//! needs no transport acknowledgement (a lost message is retried by Raft itself), so a peer
//! that cannot be reached has its messages dropped and is reported unreachable.
//!
//! A message travels as a request frame with Sluice's own API key
//! [`RAFT_MESSAGE_API_KEY`] and a v1 request header, which the controller listener
//! recognises before any Kafka API decoding, and gets no response. Departure from KRaft,
//! whose voters talk with Kafka's Vote/BeginQuorumEpoch/Fetch APIs: those carry KRaft's own
//! protocol, and the quorum here is raft-rs, whose messages are its own (protobuf).
//!
//! Connections are secured as the controller listener requires (TLS, SASL with
//! `sasl.mechanism.controller.protocol`: `net::PeerSecurity`); with an authorizer only a
//! principal allowed CLUSTER_ACTION may send Raft messages. Without SASL on that listener, as
//! in Kafka, anyone who can connect can speak to the quorum. Messages addressed to another
//! node are dropped, as are those from a node that is not a voter of a static quorum; a
//! dynamic quorum's voters change (KIP-853), and a controller waiting to be added must hear
//! from a leader it has never been told of.
//!
//! The peers of a static quorum are `controller.quorum.voters`; a dynamic quorum's are found
//! when a message first goes to one, at the controller listener its image names for it.

use super::quorum::{decode_message, encode_message, node_of};
use super::service::ControllerHandle;
use crate::net::{PeerConnection, PeerSecurity, RequestError};
use bytes::{BufMut, Bytes, BytesMut};
use raft::prelude::Message;
use std::collections::HashMap;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Sluice's private API key for a Raft message (never a Kafka API key).
pub const RAFT_MESSAGE_API_KEY: i16 = 10_000;

/// Messages queued for one peer before newer ones are dropped.
const PEER_QUEUE: usize = 4096;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Builds the frame (size prefix included) carrying one Raft message. The client id names
/// the sending node, as every connection between nodes does (`sluice-controller-<node>`):
/// it shows up in logs and lets a test's fault-injecting proxy tell nodes apart. A dynamic
/// quorum's voter adds its controller listener (`sluice-controller-<node>@host:port`): a
/// controller being added learns from it where to answer a leader it was never told of.
pub fn message_frame(message: &Message, correlation_id: i32, reply_to: &str) -> Option<Bytes> {
    let body = encode_message(message).ok()?;
    let mut client_id = format!("sluice-controller-{}", node_of(message.from));
    if !reply_to.is_empty() {
        client_id.push('@');
        client_id.push_str(reply_to);
    }
    let header_len = 10 + client_id.len();
    let mut frame = BytesMut::with_capacity(4 + header_len + body.len());
    frame.put_i32((header_len + body.len()) as i32);
    frame.put_i16(RAFT_MESSAGE_API_KEY);
    frame.put_i16(0);
    frame.put_i32(correlation_id);
    frame.put_i16(client_id.len() as i16);
    frame.put_slice(client_id.as_bytes());
    frame.put_slice(&body);
    Some(frame.freeze())
}

/// Whether a request frame (without its size prefix) carries a Raft message.
pub fn is_message_frame(frame: &[u8]) -> bool {
    frame.len() >= 2 && i16::from_be_bytes([frame[0], frame[1]]) == RAFT_MESSAGE_API_KEY
}

/// Decodes a Raft message frame (without its size prefix) and checks who sent it to whom
/// (`node_id` and `voters` are node ids, `voters` none for a dynamic quorum; the message
/// carries Raft ids). Returns the message and the sender's controller listener when the frame
/// names it.
pub fn decode_message_frame(
    frame: &[u8],
    node_id: u64,
    voters: Option<&[u64]>,
) -> Result<(Message, Option<String>), String> {
    if frame.len() < 10 {
        return Err("raft message frame shorter than its header".into());
    }
    let client_id_len = i16::from_be_bytes([frame[8], frame[9]]);
    let body_start = 10 + client_id_len.max(0) as usize;
    let body = frame
        .get(body_start..)
        .ok_or("raft message frame shorter than its client id")?;
    let reply_to = std::str::from_utf8(&frame[10..body_start])
        .ok()
        .and_then(|client_id| client_id.split_once('@'))
        .map(|(_, address)| address.to_string())
        .filter(|address| address.len() <= 300 && address.contains(':'));
    let message = decode_message(body).map_err(|e| e.to_string())?;
    if node_of(message.to) != node_id {
        return Err(format!(
            "raft message for node {} arrived at node {node_id}",
            node_of(message.to)
        ));
    }
    if voters.is_some_and(|voters| !voters.contains(&node_of(message.from))) {
        return Err(format!(
            "raft message from node {}, which is not a voter",
            node_of(message.from)
        ));
    }
    Ok((message, reply_to))
}

/// Where a dynamic quorum's peers are: the listener name its image gives their endpoints
/// under, the addresses learned from their messages, and this node's own (`reply_to`,
/// named in every frame; empty for a static quorum).
#[derive(Debug, Clone)]
pub struct DynamicPeers {
    pub listener: String,
    pub learned: super::observer::ControllerEndpoints,
    pub reply_to: String,
}

/// Sends the controller's outbound messages (this is node `node_id`) to the other voters
/// until `shutdown`: to the `peers` given, and to those a dynamic quorum's image names or
/// whose messages named their address, as messages first go to them.
pub fn spawn_outbound(
    node_id: u64,
    peers: HashMap<u64, String>,
    dynamic: DynamicPeers,
    mut outbound: mpsc::UnboundedReceiver<Message>,
    handle: ControllerHandle,
    shutdown: CancellationToken,
    security: PeerSecurity,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut queues: HashMap<u64, (String, mpsc::Sender<Message>)> = HashMap::new();
        let start = |peer: u64, address: String| {
            let (queue, messages) = mpsc::channel(PEER_QUEUE);
            tokio::spawn(send_to_peer(
                peer,
                address.clone(),
                messages,
                handle.clone(),
                shutdown.clone(),
                security.clone(),
                Sender {
                    client_id: format!("sluice-controller-{node_id}"),
                    reply_to: dynamic.reply_to.clone(),
                },
            ));
            (address, queue)
        };
        for (peer, address) in peers {
            queues.insert(peer, start(peer, address));
        }
        loop {
            let message = tokio::select! {
                message = outbound.recv() => match message {
                    Some(message) => message,
                    None => return,
                },
                _ = shutdown.cancelled() => return,
            };
            let peer = node_of(message.to);
            // A voter that moved (restarted with another listener, re-added at another
            // address) gets a new sender. Where its own messages said it listens comes first:
            // that is newer than the metadata, which records the move only once the voter
            // reached the leader (UpdateRaftVoter) — through the leader's messages to it.
            let learned = dynamic
                .learned
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(&peer)
                .cloned();
            let named = learned.or_else(|| voter_address(&handle, peer, &dynamic.listener));
            let stale =
                matches!((queues.get(&peer), &named), (Some((at, _)), Some(now)) if at != now);
            if stale || !queues.contains_key(&peer) {
                match named {
                    Some(address) => {
                        queues.insert(peer, start(peer, address));
                    }
                    None => {
                        tracing::debug!(peer, "raft message for an unknown voter dropped");
                        continue;
                    }
                }
            }
            if let Some((_, queue)) = queues.get(&peer)
                && queue.try_send(message).is_err()
            {
                handle.unreachable(peer);
            }
        }
    })
}

/// Where the image says a dynamic quorum's voter (or learner) `peer` listens.
fn voter_address(handle: &ControllerHandle, peer: u64, listener: &str) -> Option<String> {
    let image = handle.image();
    let image = image.borrow();
    image
        .quorum_voters
        .get(&i32::try_from(peer).ok()?)?
        .address(listener)
}

/// Who sends: the client id of its connections, and where it is answered (see
/// [`message_frame`]).
struct Sender {
    client_id: String,
    reply_to: String,
}

async fn send_to_peer(
    peer: u64,
    address: String,
    mut messages: mpsc::Receiver<Message>,
    handle: ControllerHandle,
    shutdown: CancellationToken,
    security: PeerSecurity,
    sender: Sender,
) {
    let Sender {
        client_id,
        reply_to,
    } = sender;
    let mut backoff = Duration::from_millis(50);
    let mut correlation_id = 0i32;
    let mut reported = false;
    loop {
        let connected = tokio::select! {
            c = PeerConnection::connect(&address, &client_id, CONNECT_TIMEOUT, &security) => c,
            _ = shutdown.cancelled() => return,
        };
        let mut connection = match connected {
            Ok(connection) => connection,
            Err(e) => {
                if !reported {
                    match e {
                        RequestError::Authentication(..) => {
                            tracing::warn!(peer, %address, error = %e, "cannot authenticate with controller quorum voter; retrying")
                        }
                        _ => {
                            tracing::info!(peer, %address, error = %e, "cannot reach controller quorum voter; retrying")
                        }
                    }
                    reported = true;
                }
                // Raft resends what matters; what queued meanwhile is stale.
                while messages.try_recv().is_ok() {}
                handle.unreachable(peer);
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = shutdown.cancelled() => return,
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        if reported {
            tracing::info!(peer, %address, "reached controller quorum voter");
            reported = false;
        }
        backoff = Duration::from_millis(50);
        loop {
            let message = tokio::select! {
                message = messages.recv() => match message {
                    Some(message) => message,
                    None => return,
                },
                _ = shutdown.cancelled() => return,
            };
            // Everything queued goes out in one write.
            let mut batch = BytesMut::new();
            let mut next = Some(message);
            while let Some(message) = next.take() {
                correlation_id = correlation_id.wrapping_add(1);
                if let Some(frame) = message_frame(&message, correlation_id, &reply_to) {
                    batch.extend_from_slice(&frame);
                }
                if batch.len() < 1 << 20 {
                    next = messages.try_recv().ok();
                }
            }
            // A session about to end is replaced rather than renewed: what is written here
            // gets no response, so a re-authentication's answers could not be told apart.
            if connection.session_ending() {
                break;
            }
            if let Err(e) = connection.stream_mut().write_all(&batch).await {
                tracing::debug!(peer, error = %e, "lost the connection to a controller quorum voter");
                handle.unreachable(peer);
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_misaddressed_messages_are_refused() {
        // Raft ids 3 -> 2 are nodes 2 -> 1 (node 0 is Raft id 1).
        let message = Message {
            from: 3,
            to: 2,
            term: 7,
            ..Default::default()
        };
        let frame = message_frame(&message, 9, "").unwrap();
        let body = &frame[4..];
        assert_eq!(&body[10..29], b"sluice-controller-2");
        assert!(is_message_frame(body));
        let (decoded, reply_to) = decode_message_frame(body, 1, Some(&[0, 1, 2])).unwrap();
        assert_eq!((decoded.term, reply_to), (7, None));
        // A dynamic quorum's voter says where to answer it.
        let named = message_frame(&message, 9, "127.0.0.1:9093").unwrap();
        let (_, reply_to) = decode_message_frame(&named[4..], 1, None).unwrap();
        assert_eq!(reply_to.as_deref(), Some("127.0.0.1:9093"));
        assert!(decode_message_frame(body, 2, Some(&[0, 1, 2])).is_err());
        assert!(decode_message_frame(body, 1, Some(&[0, 1])).is_err());
        // A dynamic quorum takes messages from nodes it does not know yet.
        assert!(decode_message_frame(body, 1, None).is_ok());
        assert!(decode_message_frame(&body[..8], 1, Some(&[1, 2])).is_err());
        assert!(
            decode_message_frame(&[0x27, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0xff], 1, Some(&[1]))
                .is_err()
        );
    }
}
