//! SCRAM credentials (KIP-554) as Kafka's AdminClient handles them: AlterUserScramCredentials
//! with the salt made and the password salted here, on the client (the password never
//! travels), and DescribeUserScramCredentials.

use super::{AdminClient, AdminError, kafka_error};
use crate::auth::scram::{ScramMechanism, random_bytes};
use kafka_protocol::messages::alter_user_scram_credentials_request::{
    ScramCredentialDeletion, ScramCredentialUpsertion,
};
use kafka_protocol::messages::describe_user_scram_credentials_request::UserName;
use kafka_protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse, ApiKey,
    DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse,
};
use kafka_protocol::protocol::StrBytes;

/// A credential to set: its mechanism, iteration count and password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramUpsert {
    pub mechanism: ScramMechanism,
    pub iterations: i32,
    pub password: Vec<u8>,
}

/// One user's credentials as DescribeUserScramCredentials lists them: (mechanism, iterations),
/// or the error the broker answered for the user.
#[derive(Debug)]
pub struct UserCredentials {
    pub user: String,
    pub credentials: Result<Vec<(ScramMechanism, i32)>, AdminError>,
}

/// The salt length Kafka's `ScramFormatter.secureRandomBytes` gives (a random string's bytes;
/// any length works, the broker stores what it is sent).
const SALT_BYTES: usize = 32;

impl AdminClient {
    /// Sets and deletes `user`'s SCRAM credentials in one request.
    pub async fn alter_scram_credentials(
        &mut self,
        user: &str,
        upserts: &[ScramUpsert],
        deletions: &[ScramMechanism],
    ) -> Result<(), AdminError> {
        let name = StrBytes::from_string(user.to_string());
        let mut upsertions = Vec::new();
        for upsert in upserts {
            let salt = random_bytes(SALT_BYTES).map_err(|e| AdminError::Kafka {
                code: -1,
                message: e.to_string(),
            })?;
            let salted = upsert.mechanism.salted_password(
                &upsert.password,
                &salt,
                upsert.iterations.max(1) as u32,
            );
            upsertions.push(
                ScramCredentialUpsertion::default()
                    .with_name(name.clone())
                    .with_mechanism(upsert.mechanism.type_id())
                    .with_iterations(upsert.iterations)
                    .with_salt(salt.into())
                    .with_salted_password(salted.into()),
            );
        }
        let request = AlterUserScramCredentialsRequest::default()
            .with_deletions(
                deletions
                    .iter()
                    .map(|m| {
                        ScramCredentialDeletion::default()
                            .with_name(name.clone())
                            .with_mechanism(m.type_id())
                    })
                    .collect(),
            )
            .with_upsertions(upsertions);
        let response: AlterUserScramCredentialsResponse = self
            .call(
                ApiKey::AlterUserScramCredentials,
                "AlterUserScramCredentials",
                &request,
            )
            .await?;
        match response.results.iter().find(|r| r.error_code != 0) {
            Some(failed) => Err(kafka_error(
                failed.error_code,
                failed.error_message.as_ref(),
            )),
            None => Ok(()),
        }
    }

    /// The SCRAM credentials of `users` (every user that has some, when empty); named users
    /// without any are left out.
    pub async fn describe_scram_credentials(
        &mut self,
        users: &[String],
    ) -> Result<Vec<UserCredentials>, AdminError> {
        let request = DescribeUserScramCredentialsRequest::default().with_users(
            (!users.is_empty()).then(|| {
                users
                    .iter()
                    .map(|u| UserName::default().with_name(StrBytes::from_string(u.clone())))
                    .collect()
            }),
        );
        let response: DescribeUserScramCredentialsResponse = self
            .call(
                ApiKey::DescribeUserScramCredentials,
                "DescribeUserScramCredentials",
                &request,
            )
            .await?;
        if response.error_code != 0 {
            return Err(kafka_error(
                response.error_code,
                response.error_message.as_ref(),
            ));
        }
        // Users without credentials are left out, as Kafka's `users()` leaves them out.
        const RESOURCE_NOT_FOUND: i16 = 91;
        Ok(response
            .results
            .iter()
            .filter(|r| r.error_code != RESOURCE_NOT_FOUND)
            .map(|r| UserCredentials {
                user: r.user.to_string(),
                credentials: if r.error_code != 0 {
                    Err(kafka_error(r.error_code, r.error_message.as_ref()))
                } else {
                    Ok(r.credential_infos
                        .iter()
                        .filter_map(|c| {
                            ScramMechanism::from_type_id(c.mechanism).map(|m| (m, c.iterations))
                        })
                        .collect())
                },
            })
            .collect())
    }
}
