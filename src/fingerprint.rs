//! SimHash fingerprints of text (format 1), what went into them, and the 16-bit blocks of the
//! 0.1.0 block indexes. Their SQL declarations, each with its COMMENT, are in sql/functions.sql.

use std::cell::RefCell;

use pgrx::prelude::*;

use crate::errors::{invalid_parameter, null_not_allowed};
use simdup_core::features::{features, Feature};
use simdup_core::scheme::{features_with, Scheme};

/// Lets statement_timeout and cancel interrupt a long computation (checked between chunks).
fn interrupt() {
    pgrx::check_for_interrupts!();
}

/// Texts up to this size are remembered with their fingerprint (one per backend), so that a
/// query repeating `simhash($1)` per row, as an inlined `simdup_match(fp, simhash($1), k)`
/// does in a generic plan, computes it once.
pub(crate) const MEMO_MAX_BYTES: usize = 64 * 1024;

thread_local! {
    static LAST: RefCell<(String, Option<i64>)> = const { RefCell::new((String::new(), None)) };
}

/// 64-bit SimHash of `body`; NULL when the text has no word or number (empty, whitespace,
/// punctuation or symbols only).
///
/// Declared with the default cost so that SQL functions taking `simhash(...)` as an argument
/// are still inlined by the planner (see `simdup_match`); repeated calls are memoized.
#[pg_extern(sql = "")]
pub(crate) fn simhash(body: &str) -> Option<i64> {
    if body.len() <= MEMO_MAX_BYTES {
        if let Some(hit) = LAST.with_borrow(|(text, fp)| (!text.is_empty() && text == body).then_some(*fp)) {
            return hit;
        }
    }
    let fp = simdup_core::simhash_with(body, &mut interrupt).map(|fp| fp as i64);
    remember(body, fp);
    fp
}

/// Makes `fp` the memo's answer for `body` (up to [`MEMO_MAX_BYTES`]): the next `simhash(body)`
/// in this backend returns it without computing. `fp` must be `simdup_core::simhash(body)`: the
/// read-ahead of a dedup table's `INSERT` computes a batch's fingerprints on several threads
/// and remembers each row's just before the row is written (src/dedup/readahead.rs).
pub(crate) fn remember(body: &str, fp: Option<i64>) {
    if body.len() <= MEMO_MAX_BYTES {
        LAST.with_borrow_mut(|(text, last)| {
            text.clear();
            text.push_str(body);
            *last = fp;
        });
    }
}

/// What went into `simhash(body)`: one row per distinct token, in order of first occurrence.
#[pg_extern(sql = "")]
fn simhash_features(
    body: &str,
) -> TableIterator<
    'static,
    (name!(token, String), name!(weight, f64), name!(hash, i64), name!(count, i32), name!(idf, f64)),
> {
    TableIterator::new(feature_rows(features(body, true, &mut interrupt)))
}

/// The rows of `simhash_features`: token, weight, hash, count, idf.
fn feature_rows(feats: Vec<Feature>) -> impl Iterator<Item = (String, f64, i64, i32, f64)> {
    feats.into_iter().map(|f| (f.token, f.weight, f.hash as i64, f.count.min(i32::MAX as u32) as i32, f64::from(f.idf)))
}

// ---------------------------------------------------------------------------------------------
// Titles and schemes (docs/quality.md)
// ---------------------------------------------------------------------------------------------

const SCHEME_HINT: &str = "Known schemes: default (format 1; a title is fingerprinted together with the body), \
     title (body words that also occur in the title weigh 5 times as much), improved (Zhang & He 2020: \
     part of speech, word length, cue words and title words). See docs/quality.md.";

/// The scheme named `scheme`: 22004 for NULL, 22023 for an unknown name.
fn scheme_arg(scheme: Option<&str>) -> Scheme {
    let Some(name) = scheme else {
        null_not_allowed("simhash scheme must not be NULL", SCHEME_HINT);
    };
    name.parse().unwrap_or_else(|e: simdup_core::scheme::UnknownScheme| invalid_parameter(e.to_string(), SCHEME_HINT))
}

/// SimHash of a document with a title: format 1 of `title || E'\n' || body`, the title-aware
/// choice measured best (docs/quality.md). A NULL or empty title gives `simhash(body)`; a NULL
/// body gives NULL. Not STRICT, so that a NULL title does not null the fingerprint.
#[pg_extern(sql = "")]
fn simhash_title(body: Option<&str>, title: Option<&str>) -> Option<i64> {
    let body = body?;
    simdup_core::simhash_scheme(body, title, Scheme::Default, &mut interrupt).map(|fp| fp as i64)
}

/// SimHash of a document with a title under a named scheme (`default`, `title`, `improved`).
/// A NULL body gives NULL, a NULL title means no title; a NULL scheme raises 22004, an unknown
/// one 22023.
#[pg_extern(sql = "")]
fn simhash_title_scheme(body: Option<&str>, title: Option<&str>, scheme: Option<&str>) -> Option<i64> {
    let scheme = scheme_arg(scheme);
    let body = body?;
    simdup_core::simhash_scheme(body, title, scheme, &mut interrupt).map(|fp| fp as i64)
}

/// What went into `simhash(body, title, scheme)`: one row per distinct token.
#[pg_extern(sql = "")]
fn simhash_features_scheme(
    body: Option<&str>,
    title: Option<&str>,
    scheme: Option<&str>,
) -> TableIterator<
    'static,
    (name!(token, String), name!(weight, f64), name!(hash, i64), name!(count, i32), name!(idf, f64)),
> {
    let scheme = scheme_arg(scheme);
    let feats = match body {
        Some(body) => features_with(body, title, &scheme.options(), true, &mut interrupt),
        None => Vec::new(),
    };
    TableIterator::new(feature_rows(feats))
}

/// 16-bit block `i` of a fingerprint (0 = most significant), as 0..65535: the key of the 0.1.0
/// block indexes, which tables enabled before 0.2.0 keep until `simdup_reindex`.
#[pg_extern(sql = "")]
fn simhash_block(fp: i64, i: i32) -> i32 {
    i32::from(simdup_core::blocks::block(fp as u64, crate::args::block_index(i)))
}

/// Version of the fingerprint format computed by this build of simdup.
#[pg_extern(sql = "")]
fn simdup_fingerprint_version() -> i32 {
    simdup_core::FORMAT_VERSION
}
