//! The KRaft-style controller: the decisions of the active controller over the metadata
//! image ([`control`]). The Raft quorum that replicates its records comes next.

pub mod control;
