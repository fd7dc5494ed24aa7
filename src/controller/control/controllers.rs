//! Controller registrations as the active controller keeps them (KRaft's
//! `ClusterControlManager.registerController` / `unregisterController`, KIP-919 and KIP-1312):
//! every controller node, voter or observer, registers its listeners; UnregisterController
//! forgets a decommissioned one. A controller still running registers again, as Kafka's
//! `ControllerRegistrationManager` does, so an unregistration sticks only once it is stopped.

use super::{ClusterControl, Outcome};
use crate::error::Error;
use crate::metadata::records::{Endpoint, MetadataRecord};
use uuid::Uuid;

/// ControllerRegistration's request: who registers, which process, where it listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerRegistrationRequest {
    pub controller_id: i32,
    pub incarnation_id: Uuid,
    pub endpoints: Vec<Endpoint>,
}

impl ClusterControl {
    /// ControllerRegistration: records the registration unless the same incarnation is
    /// registered with the same listeners already (a retry).
    pub fn register_controller(
        &mut self,
        offset: u64,
        request: ControllerRegistrationRequest,
    ) -> Result<Outcome<()>, Error> {
        if request.controller_id < 0 {
            return Err(Error::InvalidRequest(format!(
                "Invalid controller id {}",
                request.controller_id
            )));
        }
        let current = self.image.controllers.get(&request.controller_id);
        if current.is_some_and(|c| {
            c.incarnation_id == request.incarnation_id && c.endpoints == request.endpoints
        }) {
            return Ok(Outcome::new(Vec::new(), ()));
        }
        let mut changes = super::Changes::new(&self.image);
        changes.push(vec![MetadataRecord::RegisterController {
            controller_id: request.controller_id,
            incarnation_id: request.incarnation_id,
            endpoints: request.endpoints,
        }])?;
        Ok(self.finish(offset, changes, ()))
    }

    /// UnregisterController: forgets controller `controller`'s registration. The active
    /// controller cannot unregister itself (Kafka's `QuorumController` refuses it).
    pub fn unregister_controller(
        &mut self,
        offset: u64,
        controller: i32,
    ) -> Result<Outcome<()>, Error> {
        if controller == self.config.own_node {
            return Err(Error::InvalidRequest(
                "Controller cannot unregister itself while it is active.".into(),
            ));
        }
        if !self.image.controllers.contains_key(&controller) {
            return Err(Error::ControllerIdNotRegistered(controller));
        }
        let mut changes = super::Changes::new(&self.image);
        changes.push(vec![MetadataRecord::UnregisterController {
            controller_id: controller,
        }])?;
        Ok(self.finish(offset, changes, ()))
    }
}
