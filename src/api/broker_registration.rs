//! BrokerRegistration (controller listener): a broker announces itself to the active
//! controller and gets its broker epoch. The same file builds the request a broker sends.

use super::{ApiContext, wire_str};
use crate::controller::control::BrokerRegistrationRequest as Registration;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::metadata::records::Endpoint;
use kafka_protocol::messages::broker_registration_request::Listener;
use kafka_protocol::messages::{BrokerId, BrokerRegistrationRequest, BrokerRegistrationResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: BrokerRegistrationRequest,
    _version: i16,
) -> Option<BrokerRegistrationResponse> {
    let op = ControllerOp::RegisterBroker(Registration {
        broker_id: request.broker_id.0,
        cluster_id: request.cluster_id.to_string(),
        incarnation_id: request.incarnation_id,
        endpoints: request
            .listeners
            .iter()
            .map(|l| Endpoint {
                name: l.name.to_string(),
                host: l.host.to_string(),
                port: l.port,
                security_protocol: l.security_protocol,
            })
            .collect(),
        rack: request.rack.map(|r| r.to_string()),
        log_dirs: request.log_dirs,
    });
    let response = BrokerRegistrationResponse::default();
    Some(match ctx.broker.controller().call(op).await {
        Ok(ControllerReply::BrokerEpoch(epoch)) => response.with_broker_epoch(epoch),
        Ok(other) => response.with_error_code(unexpected(&other).code()),
        Err(e) => response.with_error_code(e.code()).with_broker_epoch(-1),
    })
}

pub(crate) fn unexpected(reply: &ControllerReply) -> Error {
    Error::InvalidRequest(format!("unexpected controller reply {reply:?}"))
}

/// The request a broker sends to register.
pub fn request_for(registration: &Registration) -> BrokerRegistrationRequest {
    BrokerRegistrationRequest::default()
        .with_broker_id(BrokerId(registration.broker_id))
        .with_cluster_id(wire_str(&registration.cluster_id))
        .with_incarnation_id(registration.incarnation_id)
        .with_listeners(
            registration
                .endpoints
                .iter()
                .map(|e| {
                    Listener::default()
                        .with_name(wire_str(&e.name))
                        .with_host(wire_str(&e.host))
                        .with_port(e.port)
                        .with_security_protocol(e.security_protocol)
                })
                .collect(),
        )
        .with_rack(registration.rack.as_deref().map(wire_str))
        .with_log_dirs(registration.log_dirs.clone())
        .with_previous_broker_epoch(-1)
}

pub fn reply_from(response: BrokerRegistrationResponse) -> Result<ControllerReply, Error> {
    match Error::from_code(response.error_code, None) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::BrokerEpoch(response.broker_epoch)),
    }
}
