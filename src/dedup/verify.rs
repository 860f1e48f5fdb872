//! The verification of a SimHash candidate: a row within k of the new row's fingerprint is a
//! near-duplicate only when the two texts are, by [`simdup_core::similarity::Rule::verification`]
//! (Jaccard of character 5-shingles ≥ the threshold, or containment ≥ the containment
//! threshold, or the short-text rule). The decision is the core's, made here from the rows the
//! trigger reads and by `_simdup_verified` for the queries of the Citus checked write and of
//! `simdup_pairs` / `simdup_groups` with `verify => true`.
//!
//! Why: SimHash within k is a candidate, not a verdict. In a table of n rows a new text meets
//! about n · p unrelated rows within k (p the chance of a pair of unrelated texts), so the
//! share of unverified verdicts that are wrong grows with the table (docs/quality.md,
//! "Precision as the table grows"). The lock stripes still cover every pair within k, so the
//! concurrency argument (docs/dedup.md) is unchanged: the verification only narrows which of
//! the rows the search finds count.

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::args;

/// What confirms a SimHash candidate: the new row's text, read against the candidate's with
/// the table's verification rule ([`super::config::Verify`]). The new row's shingles are
/// computed at the first candidate, once.
pub(super) struct Verifier<'a> {
    rule: simdup_core::similarity::Rule,
    text: &'a str,
    /// The text column and its type.
    attnum: i32,
    typid: pg_sys::Oid,
    set: std::cell::OnceCell<Vec<u64>>,
}

impl<'a> Verifier<'a> {
    /// The verifier of a row with text `text`, for candidates whose text is column `attnum` of
    /// `rel`.
    ///
    /// # Safety
    /// `rel` is an open relation and `attnum` one of its columns.
    pub unsafe fn new(rel: pg_sys::Relation, verify: super::config::Verify, text: &'a str, attnum: i32) -> Self {
        // SAFETY: a catalog lookup of a column of an open relation.
        let typid = unsafe { pg_sys::get_atttype((*rel).rd_id, attnum as pg_sys::AttrNumber) };
        Verifier { rule: verify.rule(), text, attnum, typid, set: std::cell::OnceCell::new() }
    }

    /// Whether the row in `slot` is a near-duplicate of the new row by the rule.
    ///
    /// # Safety
    /// `slot` holds a row of the relation the verifier was made for.
    pub unsafe fn confirms(&self, slot: *mut pg_sys::TupleTableSlot) -> bool {
        // SAFETY: the caller guarantees the slot; its text column is read as its type says.
        let other = unsafe {
            match super::tuple::slot_value(slot, self.attnum) {
                Some(datum) => super::tuple::text_of(datum, self.typid),
                None => None,
            }
        };
        let Some(other) = other else { return false };
        let k = self.rule.k;
        let set = self.set.get_or_init(|| crate::shingles::char_set(self.text, k));
        let other_set = crate::shingles::char_set(&other, k);
        self.rule.near_duplicate(set, &other_set, &mut crate::shingles::pair(self.text, &other)).is_some()
    }
}

/// `_simdup_verified(a, b, threshold, containment)`: whether two texts are near-duplicates by
/// the verification rule of a SimHash dedup table (containment NULL: no containment rule);
/// false when either is NULL or has no shingles. 22023 for a threshold outside (0, 1] (22004
/// for a NULL one).
#[pg_extern(sql = "")]
fn _simdup_verified(a: Option<&str>, b: Option<&str>, threshold: Option<f64>, containment: Option<f64>) -> bool {
    let Some(threshold) = threshold else {
        crate::errors::null_not_allowed(
            "the verification's threshold must not be NULL",
            "Pass a Jaccard threshold in (0, 1]; 0.5 is the default.",
        )
    };
    let rule = simdup_core::similarity::Rule::verification(
        args::jaccard_threshold(threshold),
        containment.map(args::containment_threshold),
    );
    match (a, b) {
        (Some(a), Some(b)) => rule.texts(a, b, &mut crate::shingles::interrupt).is_some(),
        _ => false,
    }
}

/// `_simdup_unverified_risk(tbl, k)`: the WARNING of `simdup_enable` for a dedup trigger that
/// does not verify (an adopted fingerprint column, or `verify => false`), when the table already
/// holds enough rows for the distance alone to catch unrelated rows: the expected share of new
/// rows with an unrelated row within k ([`simdup_core::precision::unverified_false_share`], from
/// the rate measured on real news) is 1 % or more.
#[pg_extern(sql = "")]
fn _simdup_unverified_risk(tbl: pg_sys::Oid, k: i32) {
    let k = args::max_distance(k);
    // SAFETY: the relation is opened (42P01 if missing) and closed here.
    let rows = unsafe {
        let rel = crate::catalog::open_relation(tbl);
        let rows = crate::catalog::estimated_rows(rel);
        pg_sys::table_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        rows
    };
    let share = simdup_core::precision::unverified_false_share(rows, k);
    if share >= 0.01 {
        let safe = simdup_core::precision::unverified_safe_rows(k, 0.01);
        crate::errors::Error::new(
            crate::errors::Code::ERRCODE_WARNING,
            format!("max_distance {k} without verification catches unrelated rows in a table of this size"),
        )
        .detail(format!(
            "With {rows:.0} rows, about {:.1} % of new rows have an unrelated row within distance {k} (measured on real news; below 1 % up to about {safe:.0} rows).",
            share * 100.0
        ))
        .hint("Enable dedup with the text column (its candidates are verified), or choose a smaller max_distance.")
        .warn();
    }
}
