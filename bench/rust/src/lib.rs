//! simdup's benchmarks (examples/) and what they share: seeded realistic edits and corpus
//! loading ([`edits`]), and the fingerprint settings measured and not adopted ([`experiment`]).
//! Not shipped: the extension depends on `simdup-core` only.

pub mod edits;
pub mod experiment;
