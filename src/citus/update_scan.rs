//! The writes of the custom scan `SimdupCheckedUpdate`: each changed row checked against every
//! shard but itself and written by key and ctid, read again when another transaction changed it
//! (its methods and the callbacks it shares with `SimdupCheckedInsert` are in scan.rs).

use super::node::{pinned_if_sent, private, private_text, pull_batch, push_row, State};
use super::returning::{returned, write_all};
use super::rules::BATCH_ROWS;
use std::collections::HashSet;
use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::citus::checked::{batchable, checked_columns, update_batch, update_row, OldRow, Outcome};
use crate::dedup::tuple::text_of;
use crate::errors::{ConstraintError, OrRaise};

/// How a checked UPDATE takes the rows of its rows' query — each row's ctid, key and checked
/// value as it is, then the new values of the columns written — for the checked update: a datum
/// of the table's row type holding the key and the new values, and the row as the query read it
/// ([`OldRow`]).
pub(super) struct UpdateRows<'a> {
    desc: pg_sys::TupleDesc,
    /// The key and the checked column.
    key: i32,
    key_type: pg_sys::Oid,
    source_type: pg_sys::Oid,
    written: &'a [i32],
    values: Vec<pg_sys::Datum>,
    nulls: Vec<bool>,
}

impl<'a> UpdateRows<'a> {
    /// # Safety
    /// `rel` is the UPDATE's open target, `written` the columns it assigns.
    unsafe fn new(rel: pg_sys::Relation, written: &'a [i32]) -> Option<UpdateRows<'a>> {
        // SAFETY: the caller guarantees `rel` is the UPDATE's open target, so rd_id and rd_att
        // are valid; catalog lookups of its columns.
        unsafe {
            let relid = (*rel).rd_id;
            let (source, key) = checked_columns(rel)?;
            let key_type = pg_sys::get_atttype(relid, key as pg_sys::AttrNumber);
            let natts = (*(*rel).rd_att).natts as usize;
            Some(UpdateRows {
                desc: (*rel).rd_att,
                key,
                key_type,
                source_type: pg_sys::get_atttype(relid, source as pg_sys::AttrNumber),
                written,
                values: vec![pg_sys::Datum::from(0); natts],
                nulls: vec![true; natts],
            })
        }
    }

    /// The key of a row of the query (`datums` / `isnull`: its columns in order), as text.
    ///
    /// # Safety
    /// The datums are the query's.
    unsafe fn key_text(&self, datums: &[pg_sys::Datum], isnull: &[bool]) -> Option<String> {
        // SAFETY: column 2 is of the key's type.
        (!isnull[1]).then(|| unsafe { text_of(datums[1], self.key_type) }).flatten()
    }

    /// Forms a row of the query (`datums` / `isnull`: its columns in order) in memory context
    /// `cx` and adds it to `rows` and `olds` (its key read from the row formed there); returns
    /// its size in bytes, None (nothing added) for a row without ctid or key.
    ///
    /// # Safety
    /// The datums are the query's, valid for the call.
    unsafe fn take(
        &mut self,
        cx: pg_sys::MemoryContext,
        datums: &[pg_sys::Datum],
        isnull: &[bool],
        rows: &mut Vec<pg_sys::Datum>,
        olds: &mut Vec<OldRow>,
    ) -> Option<usize> {
        if isnull[0] || isnull[1] {
            return None;
        }
        // SAFETY: the caller guarantees the query's datums (ctid, key, checked value, then the
        // written columns' new values, of their columns' types), valid for the call; the row is
        // formed (copied) in `cx`, and the key read back from it points there.
        unsafe {
            self.values.fill(pg_sys::Datum::from(0));
            self.nulls.fill(true);
            self.values[self.key as usize - 1] = datums[1];
            self.nulls[self.key as usize - 1] = false;
            for (i, &attnum) in self.written.iter().enumerate() {
                self.values[attnum as usize - 1] = datums[3 + i];
                self.nulls[attnum as usize - 1] = isnull[3 + i];
            }
            let size = push_row(cx, self.desc, &mut self.values, &mut self.nulls, rows);
            let mut key_null = false;
            let key = pg_sys::GetAttributeByNum(
                rows[rows.len() - 1].cast_mut_ptr::<pg_sys::HeapTupleHeaderData>(),
                self.key as pg_sys::AttrNumber,
                &mut key_null,
            );
            olds.push(OldRow {
                ctid: *datums[0].cast_mut_ptr::<pg_sys::ItemPointerData>(),
                key,
                source: (!isnull[2]).then(|| text_of(datums[2], self.source_type)).flatten(),
            });
            Some(size)
        }
    }

    /// The row of key `key` as the rows' query `again` (SQL, of [`plan_checked_update`]) gives
    /// it now — None when it gives none (the row was deleted, or no longer qualifies) — formed
    /// in memory context `cx`: what READ COMMITTED re-reads of a row another transaction
    /// changed after the statement read it. Run as the writer, with the statement's
    /// parameters `params` (the key the parameter after them).
    ///
    /// # Safety
    /// In the statement's transaction; `key` is of the key's type; `params` the executor's.
    unsafe fn read_again(
        &mut self,
        again: &str,
        params: pg_sys::ParamListInfo,
        key: pg_sys::Datum,
        cx: pg_sys::MemoryContext,
    ) -> Option<(pg_sys::Datum, OldRow)> {
        // SAFETY: the statement's parameters, fetched as the executor fetches them; SPI's
        // result read before the connection ends, the row formed in `cx`.
        unsafe {
            let mut args: Vec<pgrx::datum::DatumWithOid> = Vec::new();
            let n = if params.is_null() { 0 } else { (*params).numParams };
            for i in 1..=n {
                let mut workspace = pg_sys::ParamExternData::default();
                let param = match (*params).paramFetch {
                    Some(fetch) => fetch(params, i, false, &mut workspace),
                    None => (*params).params.as_mut_ptr().add(i as usize - 1),
                };
                args.push(match (*param).isnull {
                    true => pgrx::datum::DatumWithOid::null_oid((*param).ptype),
                    false => pgrx::datum::DatumWithOid::new((*param).value, (*param).ptype),
                });
            }
            args.push(pgrx::datum::DatumWithOid::new(key, self.key_type));
            let sql = format!(
                "SELECT * FROM ({again}) AS r(\"simdup ctid\", \"simdup key\") WHERE r.\"simdup key\" {} ${} LIMIT 1",
                crate::citus::checked::key_equality(self.key_type),
                n + 1
            );
            let (mut rows, mut olds) = (Vec::new(), Vec::new());
            // (Read-write: a snapshot of its own, taken now, as READ COMMITTED re-reads.)
            Spi::connect_mut(|client| {
                let what = "reading the row again";
                let _result = client.update(&sql, None, &args).or_raise(what);
                let table = pg_sys::SPI_tuptable;
                if table.is_null() || pg_sys::SPI_processed == 0 {
                    return;
                }
                let natts = (*(*table).tupdesc).natts as usize;
                let (mut datums, mut isnull) = (vec![pg_sys::Datum::from(0); natts], vec![true; natts]);
                pg_sys::heap_deform_tuple(*(*table).vals, (*table).tupdesc, datums.as_mut_ptr(), isnull.as_mut_ptr());
                self.take(cx, &datums, &isnull, &mut rows, &mut olds);
            });
            Some((rows.pop()?, olds.pop()?))
        }
    }
}

/// Writes every row of the child plan through the checked update on the first call; returns the
/// RETURNING list of each row written, if the statement has one, else no tuple.
pub(super) unsafe extern "C-unwind" fn exec_update(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: the executor's node; `exec_update_rows` is guarded.
    unsafe { write_all(node, exec_update_rows) }
}

/// # Safety
/// The executor's node.
#[pg_guard]
pub(super) unsafe extern "C-unwind" fn exec_update_rows(
    node: *mut pg_sys::CustomScanState,
    duplicate: *mut Option<ConstraintError>,
) {
    // SAFETY: the caller guarantees the executor's node; #[pg_guard] puts this frame inside
    // pgrx's guard, as pinned_if_sent and write_update_rows ask; `duplicate` is write_all's local.
    unsafe { pinned_if_sent(node, || write_update_rows(node, duplicate)) }
}

/// The writes of `exec_update_rows`.
///
/// # Safety
/// The executor's node, inside pgrx's guard.
pub(super) unsafe fn write_update_rows(node: *mut pg_sys::CustomScanState, duplicate: *mut Option<ConstraintError>) {
    // SAFETY: each row is formed with the relation's own descriptor (the target list's types are
    // the columns' types), its key copied, in memory reset for each batch; the old value is read
    // into a String at once.
    unsafe {
        let state = node as *mut State;
        let child = pg_sys::list_nth((*node).custom_ps, 0) as *mut pg_sys::PlanState;
        let (relid, _, written) = private(node);
        let again = private_text((*node).ss.ps.plan as *mut pg_sys::CustomScan).unwrap_or_default();
        let ext_schema = CStr::from_ptr((*state).ext_schema).to_string_lossy().into_owned();
        let rel = (*state).rel;
        let Some(mut form) = UpdateRows::new(rel, &written) else { return };
        let per_batch = (*(*node).ss.ps.ps_ExprContext).ecxt_per_tuple_memory;
        let estate = (*node).ss.ps.state;
        // A batch at a time where the check allows it (src/citus/checked, update_batch),
        // else a row at a time.
        let batch_rows = if batchable(rel) { BATCH_ROWS } else { 1 };
        let width = 3 + written.len();
        // Keys written by this statement: a row its joins produce more than once is updated
        // once, as PostgreSQL does.
        let mut seen: HashSet<String> = HashSet::new();
        let mut done = false;
        while !done {
            pg_sys::MemoryContextReset((*state).rows);
            let (mut rows, mut olds) = (Vec::new(), Vec::new());
            done = !pull_batch(child, batch_rows, |slot| {
                let datums = std::slice::from_raw_parts((*slot).tts_values, width);
                let isnull = std::slice::from_raw_parts((*slot).tts_isnull, width);
                if !seen.insert(form.key_text(datums, isnull)?) {
                    return None;
                }
                form.take((*state).rows, datums, isnull, &mut rows, &mut olds)
            });
            if rows.is_empty() {
                break;
            }
            pg_sys::MemoryContextReset(per_batch);
            let previous = pg_sys::CurrentMemoryContext;
            pg_sys::CurrentMemoryContext = per_batch;
            let returned = returned(state);
            let mut outcome = if rows.len() == 1 {
                update_row(relid, rows[0], &written, &olds[0], &ext_schema, returned.as_ref())
            } else {
                update_batch(relid, &rows, &olds, &written, &ext_schema, returned.as_ref())
            };
            // The row (of a statement a row at a time) was changed by another transaction after
            // the statement read it: read again as it is now, as READ COMMITTED re-reads it, and
            // checked and written again — or left out if the statement no longer gives it.
            let mut tries = 0;
            while matches!(outcome, Outcome::Changed) {
                tries += 1;
                if tries > REREADS {
                    crate::citus::checked::concurrent_update(format!(
                        "A row was changed by other transactions {REREADS} times while the UPDATE wrote it."
                    ));
                }
                let params = (*estate).es_param_list_info;
                outcome = match form.read_again(&again, params, olds[0].key, (*state).rows) {
                    Some((row, old)) => update_row(relid, row, &written, &old, &ext_schema, returned.as_ref()),
                    None => Outcome::Stored(0),
                };
            }
            pg_sys::CurrentMemoryContext = previous;
            match outcome {
                Outcome::Stored(n) => (*estate).es_processed += n,
                Outcome::Duplicate(error) => {
                    *duplicate = Some(error);
                    return;
                }
                Outcome::Changed => {}
            }
        }
    }
}

/// The times a checked UPDATE reads a row again that other transactions keep changing before it
/// is written, at most; then 40001.
pub(super) const REREADS: usize = 100;
