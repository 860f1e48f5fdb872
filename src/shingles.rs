//! A text's shingle sets as the SQL layer computes them: the core's sets, interruptible by
//! `statement_timeout` and cancel, with a bad shingle size as SQLSTATE 22023. Shared by the
//! SimHash trigger's verification (src/dedup/verify.rs) and by everything similarity
//! (src/similarity/).

use simdup_core::similarity::minhash as mh;

use crate::errors::invalid_parameter;

/// Lets statement_timeout and cancel interrupt a long computation (the core calls it between
/// pieces of about 64 KiB of text and every 16 Ki shingles).
pub(crate) fn interrupt() {
    pgrx::check_for_interrupts!();
}

/// The set of character `k`-shingle hashes of a text (sorted, as `shingles()` gives them;
/// empty for text without shingles): what `jaccard()` compares and `minhash()` signs.
pub(crate) fn char_set(body: &str, k: usize) -> Vec<u64> {
    match mh::shingles(body, k, &mut interrupt) {
        Ok(s) => s,
        Err(e) => invalid_parameter(e.to_string(), "k must be between 1 and 256."),
    }
}

/// A pair's two texts as the similarity rules read them beyond their shingle sets
/// ([`simdup_core::similarity::Texts`]: short sets, the footer test), interruptible.
pub(crate) fn pair<'t>(a: &'t str, b: &'t str) -> simdup_core::similarity::Texts<'t, fn()> {
    simdup_core::similarity::Texts::new(a, b, interrupt)
}

/// The 3-shingle set of a text the similarity dedup trigger's short-text rule covers
/// ([`simdup_core::similarity::short_set`]), None for any other.
pub(crate) fn short_set_of(body: &str) -> Option<Vec<u64>> {
    simdup_core::similarity::short_set(body, &mut interrupt)
}
