//! `COPY … FROM` into a dedup table, read with PostgreSQL's COPY reader and written by
//! `INSERT … SELECT` batches: checked writes on a Citus coordinator, or read ahead for the bulk check.

use std::ffi::{c_char, c_int, CStr};
use std::ptr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::catalog::{cells, qualified_name};
use crate::citus::checked::{array_insert, row_array};
use crate::citus::node::{memory_context, push_row};
use crate::citus::rules::{needs_check, not_supported, BATCH_BYTES, BATCH_ROWS};
use crate::errors::{Code, Error};

// PostgreSQL's own SPI entry points, called as C calls them: a near-duplicate's error raised by
// the batch's INSERT reaches the client with every field it carries (SQLSTATE, constraint),
// which pgrx's guarded wrappers would rebuild. The frames that call them hold nothing to drop.
unsafe extern "C-unwind" {
    #[link_name = "SPI_connect"]
    fn spi_connect_unguarded() -> c_int;
    #[link_name = "SPI_execute_with_args"]
    fn spi_execute_with_args_unguarded(
        src: *const c_char,
        nargs: c_int,
        argtypes: *mut pg_sys::Oid,
        values: *mut pg_sys::Datum,
        nulls: *const c_char,
        read_only: bool,
        tcount: std::ffi::c_long,
    ) -> c_int;
    #[link_name = "SPI_finish"]
    fn spi_finish_unguarded() -> c_int;
}

/// A COPY into a table that [`needs_check`], in progress (palloc'd: the hook's frame holds
/// nothing to drop).
pub(crate) struct CopyJob {
    cstate: pg_sys::CopyFromState,
    rel: pg_sys::Relation,
    estate: *mut pg_sys::EState,
    /// The rows of the batch being read, and its array; the batch before it, being written
    /// (read ahead).
    batch: pg_sys::MemoryContext,
    spare: pg_sys::MemoryContext,
    array: pg_sys::Datum,
    array_type: pg_sys::Oid,
    /// Read ahead, for a trigger that fingerprints a text column: the column (0: none) and its
    /// type, whose texts are fingerprinted ahead.
    text_attnum: i32,
    text_type: pg_sys::Oid,
    /// `INSERT INTO t (…) SELECT ($1[i]).… FROM generate_subscripts($1, 1) i ORDER BY i`
    /// (read ahead: `… FROM unnest($1) WITH ORDINALITY …`).
    insert: *mut c_char,
    /// The most rows, and bytes of rows, of a batch.
    batch_rows: usize,
    batch_bytes: usize,
    /// The reader has returned its end (it is not asked again).
    finished: bool,
}

/// Begins `COPY t FROM …` into a table that [`crate::citus::rules::needs_check`], or that
/// [`crate::dedup::readahead::copies_ahead`]; NULL for any other statement, which the utility
/// hook passes on.
///
/// # Safety
/// ProcessUtility's statement and text.
pub(crate) unsafe fn begin(pstmt: *mut pg_sys::PlannedStmt, query_string: *const c_char) -> *mut CopyJob {
    let mut job: *mut CopyJob = ptr::null_mut();
    // SAFETY: `copy_begin` is guarded; the statement is valid for the call.
    unsafe { copy_begin(pstmt, query_string, &mut job) };
    job
}

/// Reads the rows of the COPY begun by [`begin`] in batches and writes each batch by its
/// `INSERT … SELECT`; sets the command tag and row count in `qc`.
///
/// # Safety
/// `job` is the job [`begin`] returned; `qc` is ProcessUtility's completion record (or NULL).
/// Called from the utility hook's frame, which holds nothing to drop: errors of the INSERTs
/// pass through as C raises them.
pub(crate) unsafe fn run(job: *mut CopyJob, qc: *mut pg_sys::QueryCompletion) {
    let mut stored: u64 = 0;
    // A COPY read ahead reads each batch before the one before it is written; `copy_batch`
    // begins fingerprinting its texts on threads of their own, so that the batch's INSERT finds
    // them computed while the backend wrote the one before (src/dedup/readahead.rs).
    // SAFETY: the job begun by `copy_begin`.
    let pipelined = unsafe { (*job).text_attnum > 0 };
    let mut rows: u64 = 0;
    // SAFETY: the job begun by `copy_begin`; `copy_batch` is guarded.
    unsafe { copy_batch(job, &mut rows) };
    while rows > 0 {
        // SAFETY: the job begun by `copy_begin`: the batch just read stays valid while the
        // next one is read into the other context.
        let (mut array, mut array_type) = unsafe { ((*job).array, (*job).array_type) };
        let mut next: u64 = 0;
        if pipelined {
            // SAFETY: the job begun by `copy_begin`; after the swap copy_batch resets and fills
            // only the other context, so the batch in `array` stays valid; `copy_batch` is guarded.
            unsafe {
                std::mem::swap(&mut (*job).batch, &mut (*job).spare);
                copy_batch(job, &mut next);
            }
        }
        // SAFETY: SPI as C calls it: a near-duplicate's 23505, raised by the checked insert,
        // reaches the client with its constraint fields; this frame holds nothing to drop (the
        // work begun ahead is kept by src/dedup/readahead.rs and freed with the transaction),
        // and an error's abort closes the SPI connection.
        unsafe {
            spi_connect_unguarded();
            spi_execute_with_args_unguarded((*job).insert, 1, &mut array_type, &mut array, ptr::null(), false, 0);
            stored += pg_sys::SPI_processed;
            spi_finish_unguarded();
        }
        if !pipelined {
            // SAFETY: the job begun by `copy_begin`; `copy_batch` is guarded.
            unsafe { copy_batch(job, &mut next) };
        }
        rows = next;
    }
    // SAFETY: the job begun by `copy_begin`; `copy_end` is guarded.
    unsafe { copy_end(job) };
    if !qc.is_null() {
        // SAFETY: `qc` is ProcessUtility's completion record (this hook's contract), checked
        // non-NULL, which a COPY fills with its tag and row count.
        unsafe {
            (*qc).commandTag = pg_sys::CommandTag::CMDTAG_COPY;
            (*qc).nprocessed = stored;
        }
    }
}

/// Begins `COPY t FROM …` into a table that [`needs_check`], or that
/// [`crate::dedup::readahead::copies_ahead`] (`*job` stays NULL for any other statement).
///
/// # Safety
/// ProcessUtility's statement and text.
#[pg_guard]
unsafe extern "C-unwind" fn copy_begin(
    pstmt: *mut pg_sys::PlannedStmt,
    query_string: *const c_char,
    job: *mut *mut CopyJob,
) {
    // SAFETY: a CopyStmt of a valid statement; the relation is locked as COPY FROM locks it
    // before anything else; the COPY reader is PostgreSQL's, used as CopyFrom uses it.
    unsafe {
        let stmt = (*pstmt).utilityStmt as *mut pg_sys::CopyStmt;
        if stmt.is_null()
            || (*stmt).type_ != pg_sys::NodeTag::T_CopyStmt
            || !(*stmt).is_from
            || (*stmt).relation.is_null()
        {
            return;
        }
        // (Missing is not an error here: Citus's own COPY of intermediate results names no
        // relation.)
        let relid = pg_sys::RangeVarGetRelidExtended(
            (*stmt).relation,
            pg_sys::RowExclusiveLock as pg_sys::LOCKMODE,
            pg_sys::RVROption::RVR_MISSING_OK,
            None,
            ptr::null_mut(),
        );
        if relid == pg_sys::InvalidOid {
            return;
        }
        let checked = needs_check(relid);
        let rel = pg_sys::table_open(relid, pg_sys::NoLock as pg_sys::LOCKMODE);
        // A plain table's COPY, read ahead for its dedup trigger's bulk check (written by
        // INSERTs of large batches that src/dedup/readahead.rs reads ahead), where that INSERT
        // does what the COPY would.
        // The read-ahead's source: where that INSERT's hint comes from.
        let source = if checked { None } else { crate::dedup::readahead::copies_ahead(rel, stmt) };
        let ahead = source.is_some();
        if !checked && !ahead {
            pg_sys::table_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE);
            return;
        }
        let table = qualified_name(rel);
        if !(*stmt).whereClause.is_null() {
            not_supported(
                "COPY … FROM … WHERE",
                &table,
                "COPY into a staging table, then INSERT INTO … SELECT … WHERE.",
            );
        }
        // ON_ERROR / REJECT_LIMIT (PostgreSQL 17+): the reader would hand back a bad row's
        // values for the caller to skip, which the batches here do not.
        for cell in cells((*stmt).options) {
            let option = CStr::from_ptr((*(cell.ptr_value as *mut pg_sys::DefElem)).defname).to_bytes();
            if option == b"on_error" || option == b"reject_limit" {
                not_supported(
                    "COPY … FROM … (ON_ERROR)",
                    &table,
                    "COPY into a staging table with ON_ERROR, then INSERT INTO … SELECT from it.",
                );
            }
        }
        // As DoCopy: a server-side file or program needs the predefined role.
        if !(*stmt).filename.is_null() {
            let (role, what) = if (*stmt).is_program {
                (pg_sys::ROLE_PG_EXECUTE_SERVER_PROGRAM, "pg_execute_server_program")
            } else {
                (pg_sys::ROLE_PG_READ_SERVER_FILES, "pg_read_server_files")
            };
            if !pg_sys::has_privs_of_role(pg_sys::GetUserId(), pg_sys::Oid::from(role)) {
                Error::new(Code::ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied to COPY from a file or program")
                    .detail(format!(
                        "Only roles with privileges of the \"{what}\" role may COPY from a file or program."
                    ))
                    .hint("Anyone can COPY from stdin.")
                    .raise();
            }
        }
        // Every column but dropped and generated ones: the COPY's own and the rest, whose
        // defaults the reader evaluates (as the writer).
        let desc = (*rel).rd_att;
        let tupdesc = pgrx::PgTupleDesc::from_pg_unchecked(desc);
        let columns: Vec<String> = tupdesc
            .iter()
            .filter(|att| !att.attisdropped && att.attgenerated == 0)
            .map(|att| pgrx::spi::quote_identifier(CStr::from_ptr(att.attname.data.as_ptr()).to_string_lossy()))
            .collect();
        let insert = if ahead {
            // Not by subscript: `$1[i]` walks a large array of rows from its start. COPY writes
            // the values it has into identity columns too (as OVERRIDING SYSTEM VALUE).
            let values: Vec<String> = columns.iter().map(|c| format!("u.{c}")).collect();
            format!(
                "INSERT INTO {table} ({}) OVERRIDING SYSTEM VALUE SELECT {} FROM pg_catalog.unnest($1) WITH ORDINALITY AS u ORDER BY u.ordinality",
                columns.join(", "),
                values.join(", ")
            )
        } else {
            let values: Vec<String> = columns.iter().map(|c| format!("($1[s.i]).{c}")).collect();
            array_insert(&table, &columns.join(", "), &values)
        };
        let pstate = pg_sys::make_parsestate(ptr::null_mut());
        (*pstate).p_sourcetext = query_string;
        let cstate = pg_sys::BeginCopyFrom(
            pstate,
            rel,
            ptr::null_mut(),
            (*stmt).filename,
            (*stmt).is_program,
            None,
            (*stmt).attlist,
            (*stmt).options,
        );
        let estate = pg_sys::CreateExecutorState();
        pg_sys::MakePerTupleExprContext(estate);
        let batch = memory_context(c"simdup COPY batch");
        let spare = memory_context(c"simdup COPY batch");
        // The text column whose texts are fingerprinted a batch ahead; work left from a COPY
        // that failed in a subtransaction is dropped, so that this COPY's batches find their own.
        crate::dedup::readahead::clear_ahead();
        let text_attnum = match source {
            Some(crate::dedup::bulk::HintSource::Text(attnum)) => attnum,
            _ => 0,
        };
        let text_type = if text_attnum > 0 {
            pgrx::PgTupleDesc::from_pg_unchecked((*rel).rd_att)
                .get(text_attnum as usize - 1)
                .map_or(pg_sys::InvalidOid, |a| a.atttypid)
        } else {
            pg_sys::InvalidOid
        };
        let sql = std::ffi::CString::new(insert).unwrap_or_default();
        let j = pg_sys::palloc0(std::mem::size_of::<CopyJob>()) as *mut CopyJob;
        (*j).cstate = cstate;
        (*j).rel = rel;
        (*j).estate = estate;
        (*j).batch = batch;
        (*j).spare = spare;
        (*j).text_attnum = text_attnum;
        (*j).text_type = text_type;
        (*j).insert = pg_sys::pstrdup(sql.as_ptr());
        ((*j).batch_rows, (*j).batch_bytes) =
            if ahead { (usize::MAX, crate::gucs::copy_batch_memory()) } else { (BATCH_ROWS, BATCH_BYTES) };
        *job = j;
    }
}

/// Reads the next batch of rows into `job.array` (the table's row type); `*rows` is how many
/// (0 at the end). With a text column to fingerprint ahead, the batch's texts that the
/// read-ahead remembers (not NULL, at most [`crate::fingerprint::MEMO_MAX_BYTES`]) are given to
/// [`crate::dedup::readahead::fingerprint_ahead`] for the batch's INSERT.
///
/// # Safety
/// The job begun by `copy_begin`.
#[pg_guard]
unsafe extern "C-unwind" fn copy_batch(job: *mut CopyJob, rows: *mut u64) {
    // SAFETY: the reader as CopyFrom drives it (per-row memory reset before each row); the
    // rows are formed with the relation's own descriptor and copied into the batch context.
    unsafe {
        let rel = (*job).rel;
        let desc = (*rel).rd_att;
        let natts = (*desc).natts as usize;
        let econtext = (*(*job).estate).es_per_tuple_exprcontext;
        *rows = 0;
        if (*job).finished {
            return;
        }
        pg_sys::MemoryContextReset((*job).batch);
        let mut values = vec![pg_sys::Datum::from(0); natts];
        let mut nulls = vec![true; natts];
        let mut datums: Vec<pg_sys::Datum> = Vec::new();
        let mut bytes = 0usize;
        let mut texts: Vec<(usize, String)> = Vec::new();
        while datums.len() < (*job).batch_rows && bytes < (*job).batch_bytes {
            pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
            let old = pg_sys::CurrentMemoryContext;
            pg_sys::CurrentMemoryContext = (*econtext).ecxt_per_tuple_memory;
            let more = pg_sys::NextCopyFrom((*job).cstate, econtext, values.as_mut_ptr(), nulls.as_mut_ptr());
            pg_sys::CurrentMemoryContext = old;
            if !more {
                (*job).finished = true;
                break;
            }
            let attnum = (*job).text_attnum;
            if attnum > 0 && !nulls[attnum as usize - 1] {
                if let Some(text) = crate::dedup::tuple::text_of(values[attnum as usize - 1], (*job).text_type) {
                    if text.len() <= crate::fingerprint::MEMO_MAX_BYTES {
                        texts.push((datums.len(), text));
                    }
                }
            }
            bytes += push_row((*job).batch, desc, &mut values, &mut nulls, &mut datums);
        }
        *rows = datums.len() as u64;
        if datums.is_empty() {
            return;
        }
        crate::dedup::readahead::fingerprint_ahead((*rel).rd_id, texts);
        let old = pg_sys::CurrentMemoryContext;
        pg_sys::CurrentMemoryContext = (*job).batch;
        ((*job).array, (*job).array_type) = row_array(rel, &datums);
        pg_sys::CurrentMemoryContext = old;
    }
}

/// Ends the COPY begun by `copy_begin`.
///
/// # Safety
/// The job begun by `copy_begin`.
#[pg_guard]
unsafe extern "C-unwind" fn copy_end(job: *mut CopyJob) {
    // SAFETY: the reader, executor state and relation opened by `copy_begin`.
    unsafe {
        crate::dedup::readahead::clear_ahead();
        pg_sys::EndCopyFrom((*job).cstate);
        pg_sys::FreeExecutorState((*job).estate);
        pg_sys::MemoryContextDelete((*job).batch);
        pg_sys::MemoryContextDelete((*job).spare);
        pg_sys::table_close((*job).rel, pg_sys::NoLock as pg_sys::LOCKMODE);
    }
}
