//! Client quotas (KIP-546): changed through the active controller; the image's quotas are
//! handed to the enforcement tables ([`crate::auth::quota`]) by the publisher.

use super::Broker;
use crate::controller::control::QuotaAlteration;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::metadata::quota::QuotaValue;

impl Broker {
    /// Applies AlterClientQuotas: one result per alteration (`Err`: INVALID_REQUEST's
    /// message). Answers once this broker's image shows the change, so the next request is
    /// already measured against it.
    pub async fn alter_client_quotas(
        &self,
        alterations: Vec<QuotaAlteration>,
        validate_only: bool,
    ) -> Result<Vec<Result<(), String>>, Error> {
        let op = ControllerOp::AlterClientQuotas {
            alterations: alterations.clone(),
            validate_only,
        };
        let results = match self.call_active_controller(op).await? {
            ControllerReply::QuotasAltered(results) => results,
            other => {
                return Err(Error::Internal(format!(
                    "unexpected controller reply {other:?}"
                )));
            }
        };
        if !validate_only {
            self.await_visible(|image| {
                alterations
                    .iter()
                    .zip(&results)
                    .filter(|(_, result)| result.is_ok())
                    .all(|(alteration, _)| {
                        let current = image.client_quotas.get(&alteration.entity_key());
                        alteration.ops.iter().all(|(key, value)| {
                            current.and_then(|c| c.get(key)) == value.map(QuotaValue).as_ref()
                        })
                    })
            })
            .await;
        }
        Ok(results)
    }
}
