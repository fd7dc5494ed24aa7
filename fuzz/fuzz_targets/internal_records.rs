//! Keys and values of the internal topics' records, as the group, transaction and share
//! coordinators decode them when loading `__consumer_offsets`, `__transaction_state` and
//! `__share_group_state` (streams groups' values included).
//! The first byte picks the schema; refusing is fine, a panic or an abort is not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice::group::records::{
    ConsumerMemberValue, CurrentAssignmentValue, GroupValue, OffsetValue, RecordKey,
};

fuzz_target!(|input: &[u8]| {
    let Some((&which, bytes)) = input.split_first() else {
        return;
    };
    use sluice::group::streams::records as streams;
    match which % 14 {
        0 => drop(RecordKey::decode(bytes)),
        1 => drop(OffsetValue::decode(bytes)),
        2 => drop(GroupValue::decode(bytes)),
        3 => drop(ConsumerMemberValue::decode(bytes)),
        4 => drop(CurrentAssignmentValue::decode(bytes)),
        5 => drop(sluice::txn::records::decode_key(bytes)),
        6 => drop(sluice::txn::records::decode_value("id", bytes)),
        7 => drop(sluice::share::state::StateKey::decode(bytes)),
        8 => drop(sluice::share::state::Snapshot::decode(bytes)),
        9 => drop(streams::MemberValue::decode(bytes)),
        10 => drop(streams::CurrentAssignmentValue::decode(bytes)),
        11 => drop(streams::decode_target(bytes)),
        12 => drop(streams::decode_topology(bytes)),
        _ => drop(streams::GroupMetadataValue::decode(bytes)),
    }
});
