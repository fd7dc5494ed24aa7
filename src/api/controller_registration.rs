//! ControllerRegistration (KIP-919, controller listener): a controller node, voter or
//! observer, registers its listeners with the active controller, as Kafka's
//! `ControllerRegistrationManager` does at start and whenever its registration is missing
//! from the metadata. The same file builds the request a controller sends.

use super::unregister_broker::controller_command;
use super::{ApiContext, wire_str};
use crate::controller::control::ControllerRegistrationRequest as Registration;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::metadata::records::Endpoint;
use kafka_protocol::messages::controller_registration_request::Listener;
use kafka_protocol::messages::{ControllerRegistrationRequest, ControllerRegistrationResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: ControllerRegistrationRequest,
    _version: i16,
) -> Option<ControllerRegistrationResponse> {
    let op = ControllerOp::RegisterController(Registration {
        controller_id: request.controller_id,
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
    });
    let response = ControllerRegistrationResponse::default();
    Some(match controller_command(ctx, op).await {
        Ok(()) => response,
        Err(e) => response
            .with_error_code(e.code())
            .with_error_message(Some(wire_str(&e.message()))),
    })
}

/// The request a controller sends to register.
pub fn request_for(registration: &Registration) -> ControllerRegistrationRequest {
    ControllerRegistrationRequest::default()
        .with_controller_id(registration.controller_id)
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
}

pub fn reply_from(response: ControllerRegistrationResponse) -> Result<ControllerReply, Error> {
    match Error::from_code(response.error_code, response.error_message.as_deref()) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::Done),
    }
}
