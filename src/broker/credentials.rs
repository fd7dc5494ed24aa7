//! SCRAM credentials (KIP-554): changed through the active controller, read from the
//! metadata image every broker holds.

use super::Broker;
use crate::auth::scram::{ScramMechanism, ScramUpsertion};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;

impl Broker {
    /// Sets and deletes SCRAM credentials; returns the users left unchanged because a
    /// deletion named a credential they do not have. Answers once this broker's image shows
    /// the change, so a client may authenticate with a new credential at once.
    pub async fn alter_scram_credentials(
        &self,
        upsertions: Vec<ScramUpsertion>,
        deletions: Vec<(String, ScramMechanism)>,
    ) -> Result<Vec<String>, Error> {
        let op = ControllerOp::AlterScramCredentials {
            upsertions: upsertions.clone(),
            deletions: deletions.clone(),
        };
        let missing = match self.call_active_controller(op).await? {
            ControllerReply::ScramAltered { missing } => missing,
            other => {
                return Err(Error::Internal(format!(
                    "unexpected controller reply {other:?}"
                )));
            }
        };
        self.await_visible(|image| {
            let has = |user: &str, mechanism: ScramMechanism| {
                image
                    .scram_credentials
                    .get(user)
                    .and_then(|m| m.get(&mechanism.type_id()))
            };
            upsertions
                .iter()
                .filter(|u| !missing.contains(&u.user))
                .all(|u| has(&u.user, u.mechanism).is_some_and(|c| c.iterations == u.iterations))
                && deletions
                    .iter()
                    .filter(|(user, _)| !missing.contains(user))
                    .all(|(user, mechanism)| has(user, *mechanism).is_none())
        })
        .await;
        Ok(missing)
    }
}
