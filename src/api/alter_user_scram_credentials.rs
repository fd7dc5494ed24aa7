//! AlterUserScramCredentials (v0, KIP-554): SCRAM credentials set (from the salt and salted
//! password the client computed) and deleted, through the active controller. Checked per user
//! as Kafka's `ScramControlManager` does — a mechanism it does not know is
//! UNSUPPORTED_SASL_MECHANISM, an empty name or an iteration count outside 4096–16384
//! UNACCEPTABLE_CREDENTIAL, a user and mechanism named twice DUPLICATE_RESOURCE, deleting a
//! credential that does not exist RESOURCE_NOT_FOUND — and a user with any such error is left
//! unchanged. The answer comes once this broker can authenticate with the new credentials.

use super::{ApiContext, wire_str};
use crate::auth::scram::{MAX_ITERATIONS, MIN_ITERATIONS, ScramMechanism, ScramUpsertion};
use crate::error::code;
use kafka_protocol::messages::alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
use kafka_protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
};
use std::collections::{BTreeMap, BTreeSet};

pub async fn handle(
    ctx: &ApiContext,
    request: AlterUserScramCredentialsRequest,
    _version: i16,
) -> Option<AlterUserScramCredentialsResponse> {
    // The first error of each user, in Kafka's words.
    let mut errors: BTreeMap<String, (i16, &'static str)> = BTreeMap::new();
    let mut users = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut fail = |user: &str, error: (i16, &'static str)| {
        errors.entry(user.to_string()).or_insert(error);
    };
    let mut deletions = Vec::new();
    let mut upsertions = Vec::new();
    let alterations = request
        .deletions
        .iter()
        .map(|d| (d.name.as_str(), d.mechanism, None))
        .chain(
            request
                .upsertions
                .iter()
                .map(|u| (u.name.as_str(), u.mechanism, Some(u))),
        );
    for (user, mechanism_id, upsertion) in alterations {
        users.insert(user.to_string());
        if !seen.insert((user.to_string(), mechanism_id)) {
            fail(
                user,
                (
                    code::DUPLICATE_RESOURCE,
                    "A user credential cannot be altered twice in the same request",
                ),
            );
            continue;
        }
        if user.is_empty() {
            fail(
                user,
                (code::UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
            );
            continue;
        }
        let Some(mechanism) = ScramMechanism::from_type_id(mechanism_id) else {
            fail(
                user,
                (code::UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
            );
            continue;
        };
        match upsertion {
            None => deletions.push((user.to_string(), mechanism)),
            Some(u) if u.iterations < MIN_ITERATIONS => {
                fail(user, (code::UNACCEPTABLE_CREDENTIAL, "Too few iterations"))
            }
            Some(u) if u.iterations > MAX_ITERATIONS => {
                fail(user, (code::UNACCEPTABLE_CREDENTIAL, "Too many iterations"))
            }
            Some(u) => upsertions.push(ScramUpsertion {
                user: user.to_string(),
                mechanism,
                salt: u.salt.to_vec(),
                salted_password: u.salted_password.to_vec(),
                iterations: u.iterations,
            }),
        }
    }
    deletions.retain(|(user, _)| !errors.contains_key(user));
    upsertions.retain(|u| !errors.contains_key(&u.user));
    let mut failure = None;
    if !deletions.is_empty() || !upsertions.is_empty() {
        match ctx
            .broker
            .alter_scram_credentials(upsertions, deletions)
            .await
        {
            Ok(missing) => {
                for user in missing {
                    errors.entry(user).or_insert((
                        code::RESOURCE_NOT_FOUND,
                        "Attempt to delete a user credential that does not exist",
                    ));
                }
            }
            Err(e) => failure = Some(e),
        }
    }
    let results = users
        .into_iter()
        .map(|user| {
            let (error_code, message) = match (&failure, errors.get(&user)) {
                (_, Some((code, message))) => (*code, Some(message.to_string())),
                (Some(e), None) => (e.code(), Some(e.message())),
                (None, None) => (code::NONE, None),
            };
            AlterUserScramCredentialsResult::default()
                .with_user(wire_str(&user))
                .with_error_code(error_code)
                .with_error_message(message.map(|m| wire_str(&m)))
        })
        .collect();
    Some(AlterUserScramCredentialsResponse::default().with_results(results))
}
