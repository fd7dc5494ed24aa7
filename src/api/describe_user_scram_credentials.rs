//! DescribeUserScramCredentials (v0, KIP-554): each user's SCRAM mechanisms and iteration
//! counts (never salts or keys), all users when none are named; RESOURCE_NOT_FOUND for a
//! user without credentials and DUPLICATE_RESOURCE for one named twice, as Kafka answers.

use super::{ApiContext, wire_str};
use crate::error::code;
use crate::metadata::records::ScramCredentialRecord;
use kafka_protocol::messages::describe_user_scram_credentials_response::{
    CredentialInfo, DescribeUserScramCredentialsResult,
};
use kafka_protocol::messages::{
    DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse,
};
use std::collections::BTreeMap;

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeUserScramCredentialsRequest,
    _version: i16,
) -> Option<DescribeUserScramCredentialsResponse> {
    let image = ctx.broker.metadata().image();
    let described = |user: &str, credentials: &BTreeMap<i8, ScramCredentialRecord>| {
        DescribeUserScramCredentialsResult::default()
            .with_user(wire_str(user))
            .with_credential_infos(
                credentials
                    .iter()
                    .map(|(mechanism, credential)| {
                        CredentialInfo::default()
                            .with_mechanism(*mechanism)
                            .with_iterations(credential.iterations)
                    })
                    .collect(),
            )
    };
    // No list, or an empty one: every user.
    let results = match request.users.filter(|users| !users.is_empty()) {
        None => image
            .scram_credentials
            .iter()
            .map(|(user, credentials)| described(user, credentials))
            .collect(),
        Some(users) => {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for user in &users {
                *counts.entry(user.name.as_str()).or_default() += 1;
            }
            let mut results = Vec::new();
            for (user, count) in counts {
                let result = if count > 1 {
                    DescribeUserScramCredentialsResult::default()
                        .with_user(wire_str(user))
                        .with_error_code(code::DUPLICATE_RESOURCE)
                        .with_error_message(Some(wire_str(
                            "Cannot describe SCRAM credentials for the same user twice in a single request",
                        )))
                } else {
                    match image.scram_credentials.get(user) {
                        Some(credentials) => described(user, credentials),
                        None => DescribeUserScramCredentialsResult::default()
                            .with_user(wire_str(user))
                            .with_error_code(code::RESOURCE_NOT_FOUND)
                            .with_error_message(Some(wire_str(
                                "Attempt to describe a user credential that does not exist",
                            ))),
                    }
                };
                results.push(result);
            }
            results
        }
    };
    Some(DescribeUserScramCredentialsResponse::default().with_results(results))
}
