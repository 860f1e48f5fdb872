//! Which writes into a Citus distributed dedup table go through the checked write, what they
//! refuse, and how many rows they check together.

use std::ffi::c_char;

use pgrx::pg_sys;

use crate::catalog::qualified_name;
use crate::dedup::config::trigger_args_named;
use crate::dedup::config::TRIGGER;
use crate::errors::{Code, Error};
use crate::similarity::config::TRIGGER_SIMILAR;

/// Whether writes into table `relid` must go through the checked write here: it has a dedup
/// trigger, Citus distributes it over shards that each hold part of its rows, this is the
/// coordinator, and the write is not the checked write's own.
///
/// # Safety
/// In a transaction; `relid` is locked by the statement.
pub(crate) unsafe fn needs_check(relid: pg_sys::Oid) -> bool {
    // SAFETY: the statement holds a lock on the relation; it is closed before returning.
    unsafe {
        let rel = pg_sys::RelationIdGetRelation(relid);
        if rel.is_null() {
            return false;
        }
        let checked = (*(*rel).rd_rel).relkind == pg_sys::RELKIND_RELATION as c_char
            && (trigger_args_named(rel, TRIGGER).is_some() || trigger_args_named(rel, TRIGGER_SIMILAR).is_some())
            && crate::citus::shard::is_distributed(relid)
            && crate::citus::shard::is_coordinator()
            && !crate::citus::shard::is_checked_write(rel, &qualified_name(rel));
        pg_sys::RelationClose(rel);
        checked
    }
}

pub(crate) fn not_supported(what: &str, table: &str, hint: &str) -> ! {
    Error::new(
        Code::ERRCODE_FEATURE_NOT_SUPPORTED,
        format!("{what} is not supported on distributed dedup table {table}"),
    )
    .detail("Each row is checked against every shard and written by simdup on the coordinator.")
    .hint(hint)
    .raise()
}

/// Rows checked and written together, at most (and at most [`BATCH_BYTES`] of them): the
/// batches of `SimdupCheckedInsert`, and the rows a COPY sends to one INSERT.
pub(crate) const BATCH_ROWS: usize = 1000;

pub(crate) const BATCH_BYTES: usize = 16 << 20;
