//! Keys and values of the internal topics' records, as the group, transaction and share
//! coordinators decode them when loading `__consumer_offsets`, `__transaction_state` and
//! `__share_group_state`.
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
    match which % 9 {
        0 => drop(RecordKey::decode(bytes)),
        1 => drop(OffsetValue::decode(bytes)),
        2 => drop(GroupValue::decode(bytes)),
        3 => drop(ConsumerMemberValue::decode(bytes)),
        4 => drop(CurrentAssignmentValue::decode(bytes)),
        5 => drop(sluice::txn::records::decode_key(bytes)),
        6 => drop(sluice::txn::records::decode_value("id", bytes)),
        7 => drop(sluice::share::state::StateKey::decode(bytes)),
        _ => drop(sluice::share::state::Snapshot::decode(bytes)),
    }
});
