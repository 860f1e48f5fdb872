//! Hamming distance between fingerprints: `hamming(a, b)` and the operator `<~>`.

use pgrx::prelude::*;

/// Number of bits in which two 64-bit fingerprints differ (0..64).
#[pg_operator(immutable, strict, parallel_safe)]
#[opname(<~>)]
#[commutator(<~>)]
fn hamming(a: i64, b: i64) -> i32 {
    simdup_core::hamming(a as u64, b as u64) as i32
}
