//! Authorization, in one place: for each API the checks Kafka's `KafkaApis` makes, with its
//! error codes. The dispatch table runs an API's gate on the decoded request before the
//! handler: a gate refuses the whole request (a response with the API's authorization
//! error, or a closed connection where no response may be sent), or lets through what is
//! authorized — resources the principal may not touch are taken out of the request — and
//! merges their errors back into the handler's response; read-only APIs filter the response
//! instead (Fetch, ListOffsets, Metadata's topic list). Without an authorizer every gate lets
//! everything through. An API without checks here is `uncovered`: while an authorizer is
//! configured it is left out of ApiVersions and refused, never served unchecked.
//!
//! Every gate is one of a few shapes, each a helper here (as Kafka's `AuthHelper` serves all
//! of `KafkaApis`): [`require`] refuses the whole request unless a permission holds;
//! [`take_refused`] and [`pass_merging`] take refused resources out of the request and merge
//! their errors back into the answer; [`check_answer`] filters or marks what the answer shows.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | `Gate`, the request's view of the authorizer (`Authz`), the gate helpers |
//! | `topics.rs` | topic, record and config APIs |
//! | `groups.rs` | group and offset APIs |
//! | `txn.rs` | producer and transaction APIs |
//! | `cluster.rs` | cluster administration, ACLs, SCRAM, the controller listener |
//! | `share.rs` | share-group APIs (KIP-932) |
//! | `tokens.rs` | delegation-token APIs (KIP-48) |

mod cluster;
mod groups;
mod share;
mod tokens;
mod topics;
mod txn;

pub use cluster::*;
pub use groups::*;
pub use share::*;
pub use tokens::*;
pub use topics::*;
pub use txn::*;

use super::ApiContext;
use crate::auth::KafkaPrincipal;
use crate::auth::acl::{AclOperation, ResourceType};
use crate::auth::authorizer::{Authorizer, Requester};
use crate::metadata::image::MetadataImage;
use std::sync::Arc;
use uuid::Uuid;

/// What a gate decided.
pub enum Gate<Req, Resp> {
    /// Handle (what is left of) the request, then apply `merge` to the response.
    Pass(Req, Option<Merge<Resp>>),
    /// Answer with this response, without handling the request.
    Refuse(Resp),
    /// Close the connection (a request that gets no response was refused).
    Close(String),
}

pub type Merge<Resp> = Box<dyn FnOnce(Resp) -> Resp + Send>;

fn pass<Req, Resp>(request: Req) -> Gate<Req, Resp> {
    Gate::Pass(request, None)
}

/// Refuses the whole request with `refused(&request)` unless the principal passes `allowed`
/// (a cluster permission for an admin API, READ on a group, ...).
fn require<Req, Resp>(
    ctx: &ApiContext,
    request: Req,
    allowed: impl FnOnce(&Authz, &Req) -> bool,
    refused: impl FnOnce(&Req) -> Resp,
) -> Gate<Req, Resp> {
    match Authz::of(ctx) {
        Some(authz) if !allowed(&authz, &request) => Gate::Refuse(refused(&request)),
        _ => pass(request),
    }
}

/// Passes the request; `check` then filters or marks the answer (read-only APIs show only
/// what the principal may see).
fn check_answer<Req, Resp: 'static>(
    ctx: &ApiContext,
    request: Req,
    check: impl FnOnce(&Authz, &mut Resp) + Send + 'static,
) -> Gate<Req, Resp> {
    match Authz::of(ctx) {
        Some(authz) => authz.check_answer(request, check),
        None => pass(request),
    }
}

/// Takes the entries `refusal` refuses out of `items`, keeping each refusal's answer entry.
fn take_refused<T, R>(items: &mut Vec<T>, mut refusal: impl FnMut(&T) -> Option<R>) -> Vec<R> {
    let mut refused = Vec::new();
    items.retain(|item| match refusal(item) {
        Some(answer) => {
            refused.push(answer);
            false
        }
        None => true,
    });
    refused
}

/// Passes what is left of the request; the `refused` answer entries join the list `entries`
/// selects in the handler's answer.
fn pass_merging<Req, Resp: 'static, R: Send + 'static>(
    request: Req,
    refused: Vec<R>,
    entries: fn(&mut Resp) -> &mut Vec<R>,
) -> Gate<Req, Resp> {
    Gate::Pass(
        request,
        Some(Box::new(move |mut response: Resp| {
            entries(&mut response).extend(refused);
            response
        })),
    )
}

/// APIs Kafka never authorizes (ApiVersions, the SASL exchange).
pub fn none<Req, Resp>(_: &ApiContext, request: Req, _: i16) -> Gate<Req, Resp> {
    pass(request)
}

/// APIs whose checks are not built yet: with an authorizer they are refused by the
/// dispatcher before this runs (and left out of ApiVersions).
pub fn uncovered<Req, Resp>(_: &ApiContext, request: Req, _: i16) -> Gate<Req, Resp> {
    pass(request)
}

const CLUSTER_NAME: &str = "kafka-cluster";

/// One request's view for checks: the authorizer, the ACLs, who asks from where.
#[derive(Clone)]
struct Authz {
    authorizer: Arc<Authorizer>,
    image: Arc<MetadataImage>,
    principal: Arc<KafkaPrincipal>,
    host: String,
}

impl Authz {
    fn of(ctx: &ApiContext) -> Option<Self> {
        let authorizer = ctx.authorizer.clone()?;
        Some(Self {
            authorizer,
            image: ctx.broker.metadata().image(),
            principal: ctx.principal.clone(),
            host: ctx.client_host.trim_start_matches('/').to_string(),
        })
    }

    fn allowed(&self, operation: AclOperation, resource_type: ResourceType, name: &str) -> bool {
        let who = Requester {
            principal: &self.principal,
            host: &self.host,
        };
        self.authorizer.authorize(
            self.image.acls.values(),
            who,
            operation,
            resource_type,
            name,
        )
    }

    fn cluster(&self, operation: AclOperation) -> bool {
        self.allowed(operation, ResourceType::Cluster, CLUSTER_NAME)
    }

    fn topic(&self, operation: AclOperation, name: &str) -> bool {
        self.allowed(operation, ResourceType::Topic, name)
    }

    fn group(&self, operation: AclOperation, name: &str) -> bool {
        self.allowed(operation, ResourceType::Group, name)
    }

    /// A topic's name from a request naming it by name or (newer versions) id; `None` for an
    /// unknown id (the handler answers UNKNOWN_TOPIC_ID, which says nothing of any topic).
    fn topic_name(&self, name: &str, id: Uuid) -> Option<String> {
        if !name.is_empty() || id.is_nil() {
            return Some(name.to_string());
        }
        self.image.topic_names.get(&id).map(|n| n.to_string())
    }

    /// [`check_answer`] for a gate that looked at the request with this view already.
    fn check_answer<Req, Resp: 'static>(
        self,
        request: Req,
        check: impl FnOnce(&Authz, &mut Resp) + Send + 'static,
    ) -> Gate<Req, Resp> {
        Gate::Pass(
            request,
            Some(Box::new(move |mut response: Resp| {
                check(&self, &mut response);
                response
            })),
        )
    }

    /// The authorized-operations bit field of a resource (KIP-430).
    fn operations(&self, resource_type: ResourceType, name: &str, ops: &[i8]) -> i32 {
        ops.iter()
            .filter(|op| {
                AclOperation::from_id(**op).is_some_and(|op| self.allowed(op, resource_type, name))
            })
            .fold(0, |acc, op| acc | (1 << op))
    }
}

// --- Transactions ---

// --- Groups ---

// --- Topics and configs ---

// --- Cluster administration ---

// The controller listener. Brokers and voters connect to it as their own principal (the
// inter-broker principal Kafka expects in `super.users` or granted CLUSTER_ACTION), never as
// a client: its APIs need CLUSTER_ACTION on the cluster, as Kafka's `ControllerApis`, and
// UnregisterBroker ALTER. Forwarded administration is the exception Kafka handles with
// Envelope (the client's principal, checked again by the controller): here the forwarding
// broker has already run the client-facing gate above, and the controller checks that the
// forwarding connection is a broker's (CLUSTER_ACTION).
