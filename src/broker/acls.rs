//! ACLs (CreateAcls, DeleteAcls): changed through the active controller, read from the
//! metadata image every broker holds, so every broker enforces the same set.

use super::Broker;
use crate::auth::acl::AclFilter;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::metadata::acl::AclBinding;

impl Broker {
    /// Adds ACLs; answers once this broker enforces them.
    pub async fn create_acls(&self, acls: Vec<AclBinding>) -> Result<(), Error> {
        self.call_active_controller(ControllerOp::CreateAcls(acls.clone()))
            .await?;
        self.await_visible(|image| acls.iter().all(|acl| image.acls.values().any(|a| a == acl)))
            .await;
        Ok(())
    }

    /// Removes every ACL matching a filter; returns what each filter matched, once this
    /// broker no longer enforces them.
    pub async fn delete_acls(
        &self,
        filters: Vec<AclFilter>,
    ) -> Result<Vec<Vec<AclBinding>>, Error> {
        let matched = match self
            .call_active_controller(ControllerOp::DeleteAcls(filters))
            .await?
        {
            ControllerReply::AclsDeleted(matched) => matched,
            other => {
                return Err(Error::Internal(format!(
                    "unexpected controller reply {other:?}"
                )));
            }
        };
        self.await_visible(|image| {
            matched
                .iter()
                .flatten()
                .all(|acl| !image.acls.values().any(|a| a == acl))
        })
        .await;
        Ok(matched)
    }
}
