//! Security records the active controller writes: SCRAM credentials (KIP-554, validated per
//! user as Kafka's `ScramControlManager` does) and ACLs (KRaft's `AclControlManager`).

use super::{Changes, ClusterControl, Outcome};
use crate::error::Error;
use crate::metadata::records::MetadataRecord;
use std::collections::BTreeSet;
use uuid::Uuid;

impl ClusterControl {
    /// SCRAM credentials set and deleted, all of a user's changes or none (Kafka's
    /// `ScramControlManager`). Returns the users left unchanged because a deletion named a
    /// credential they do not have.
    pub fn alter_scram_credentials(
        &mut self,
        offset: u64,
        upsertions: &[crate::auth::scram::ScramUpsertion],
        deletions: &[(String, crate::auth::scram::ScramMechanism)],
    ) -> Result<Outcome<Vec<String>>, Error> {
        use crate::auth::scram::ScramCredential;
        use crate::metadata::records::ScramCredentialRecord;
        let mut changes = Changes::new(&self.image);
        let has = |user: &str, mechanism: crate::auth::scram::ScramMechanism| {
            self.image
                .scram_credentials
                .get(user)
                .is_some_and(|m| m.contains_key(&mechanism.type_id()))
        };
        let missing: BTreeSet<String> = deletions
            .iter()
            .filter(|(user, mechanism)| !has(user, *mechanism))
            .map(|(user, _)| user.clone())
            .collect();
        let mut records = Vec::new();
        for (user, mechanism) in deletions.iter().filter(|(u, _)| !missing.contains(u)) {
            records.push(MetadataRecord::RemoveUserScramCredential {
                name: user.clone(),
                mechanism: mechanism.type_id(),
            });
        }
        for upsertion in upsertions.iter().filter(|u| !missing.contains(&u.user)) {
            let credential = ScramCredential::from_salted_password(
                upsertion.mechanism,
                upsertion.salt.clone(),
                &upsertion.salted_password,
                upsertion.iterations,
            );
            records.push(MetadataRecord::UserScramCredential {
                name: upsertion.user.clone(),
                mechanism: upsertion.mechanism.type_id(),
                credential: ScramCredentialRecord {
                    salt: credential.salt,
                    stored_key: credential.stored_key,
                    server_key: credential.server_key,
                    iterations: credential.iterations,
                },
            });
        }
        if !records.is_empty() {
            changes.push(records)?;
        }
        Ok(self.finish(offset, changes, missing.into_iter().collect()))
    }

    /// ACLs added under fresh ids; one identical to an existing ACL (or named twice) is
    /// added once (Kafka's `AclControlManager`).
    pub fn create_acls(
        &mut self,
        offset: u64,
        acls: &[crate::metadata::acl::AclBinding],
    ) -> Result<Outcome<()>, Error> {
        let mut changes = Changes::new(&self.image);
        let mut known: BTreeSet<&crate::metadata::acl::AclBinding> =
            self.image.acls.values().collect();
        let mut records = Vec::new();
        for acl in acls {
            if known.insert(acl) {
                records.push(MetadataRecord::AccessControlEntry {
                    id: Uuid::new_v4(),
                    acl: acl.clone(),
                });
            }
        }
        if !records.is_empty() {
            changes.push(records)?;
        }
        Ok(self.finish(offset, changes, ()))
    }

    /// Every ACL matching a filter removed; returns what each filter matched.
    pub fn delete_acls(
        &mut self,
        offset: u64,
        filters: &[crate::auth::acl::AclFilter],
    ) -> Result<Outcome<Vec<Vec<crate::metadata::acl::AclBinding>>>, Error> {
        let mut changes = Changes::new(&self.image);
        let mut removed = BTreeSet::new();
        let mut matched = Vec::with_capacity(filters.len());
        for filter in filters {
            let mut of_filter = Vec::new();
            for (id, acl) in &self.image.acls {
                if filter.matches(acl) {
                    of_filter.push(acl.clone());
                    removed.insert(*id);
                }
            }
            matched.push(of_filter);
        }
        let records: Vec<MetadataRecord> = removed
            .into_iter()
            .map(|id| MetadataRecord::RemoveAccessControlEntry { id })
            .collect();
        if !records.is_empty() {
            changes.push(records)?;
        }
        Ok(self.finish(offset, changes, matched))
    }
}
