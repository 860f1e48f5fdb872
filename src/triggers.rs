//! A table's dedup triggers, either kind (SimHash, src/dedup/; similarity, src/similarity/):
//! their configurations, for `simdup_explain` and `simdup_calibrate`, and
//! `_simdup_check_dedup(tbl)`, the columns a table's dedup trigger reads and writes, checked once
//! when `simdup_enable` or `simdup_enable_similar` installs it.

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::catalog::relation_name;
use crate::errors::{Code, Error};

use crate::dedup::config::{dedup_config, Config, TRIGGER};
use crate::dedup::tuple::columns;
use crate::similarity::config::{check_columns, similar_config, SimilarConfig, TRIGGER_SIMILAR};

/// The qualified name of table `tbl` and the configurations of its SimHash and similarity dedup
/// triggers (None where it has none); 42P01 for a missing relation. For `simdup_explain` and
/// `simdup_calibrate`.
pub(crate) fn trigger_configs(tbl: pg_sys::Oid) -> (String, Option<Config>, Option<SimilarConfig>) {
    // SAFETY: the relation is opened (42P01 if missing) and closed here; its trigger descriptor
    // is valid while it is open.
    unsafe {
        let rel = crate::catalog::open_relation(tbl);
        let found = (crate::catalog::qualified_name(rel), dedup_config(rel), similar_config(rel));
        pg_sys::table_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        found
    }
}

/// `_simdup_check_dedup(tbl)` (42P01 for a missing relation): the check of the columns that the dedup trigger makes on every
/// row ([`columns`]), made once by `simdup_enable` right after it installs the trigger, so that
/// a configuration the trigger would refuse is refused at once.
#[pg_extern(sql = "")]
fn _simdup_check_dedup(tbl: pg_sys::Oid) {
    // SAFETY: the relation is opened (42P01 if missing) and closed here; its trigger
    // descriptor is valid while it is open.
    unsafe {
        let rel = crate::catalog::open_relation(tbl);
        let simhash = dedup_config(rel);
        let similar = similar_config(rel);
        if simhash.is_some() && similar.is_some() {
            Error::new(
                Code::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("table \"{}\" cannot have both dedup triggers", relation_name(rel)),
            )
            .detail(format!(
                "Its rows would be checked twice, by SimHash distance ({TRIGGER}) and by Jaccard similarity ({}), and both would write dup_of.",
                TRIGGER_SIMILAR
            ))
            .hint("Dedup a table by one of them: simdup_disable(table) or simdup_disable_similar(table) removes the other.")
            .raise();
        }
        if let Some(cfg) = simhash {
            columns(rel, &cfg);
        }
        if let Some(cfg) = similar {
            check_columns(rel, &cfg);
        }
        pg_sys::table_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
    }
}
