//! Dedup on insert (issue #4): the row trigger `simdup_dedup_trigger` that
//! `simdup_enable(..., on_duplicate => 'reject' | 'skip' | 'mark')` installs as
//!
//! ```sql
//! CREATE TRIGGER simdup_dedup BEFORE INSERT OR UPDATE ON tbl FOR EACH ROW
//!     EXECUTE FUNCTION simdup_dedup_trigger(mode, k, text_column, fingerprint_column, key_column);
//! ```
//!
//! (`text_column` is '' when simdup_enable adopted an existing bigint fingerprint column.)
//! For each new row (or each UPDATE that changes the text or the adopted fingerprint):
//!
//! 1. compute `simhash(NEW.text_column)` itself (a BEFORE trigger runs before the generated
//!    fingerprint column is computed; the column gets the same value, from simhash's memo);
//!    NULL (text without words) is never a duplicate: the row passes unchecked;
//! 2. take the row's advisory lock stripes (below), in ascending order;
//! 3. look up the earliest existing near-duplicate (smallest primary key) through the block
//!    indexes (`simdup_match`'s block conditions as index-only scans, see [`lookup_query`]; a
//!    generic plan per table and backend), as the table owner and with a fresh snapshot
//!    (below), excluding the row being updated;
//! 4. reject (SQLSTATE 23505), skip (return NULL) or mark (`NEW.dup_of := key`).
//!
//! # Why two concurrent near-duplicates can never both land
//!
//! Locks: the row's fingerprint is cut into k + 1 pieces and the trigger takes
//! `pg_advisory_xact_lock(table oid, stripe)` — exclusive, held to the end of the transaction —
//! for the stripe of each piece (`simdup_core::locks`). If `hamming(a, b) <= k`, some piece is
//! identical in a and b (pigeonhole: k differing bits cannot touch all k + 1 pieces), so the two
//! rows' lock sets share a stripe.
//!
//! Claim: if transactions T1 and T2 write rows a and b with `hamming(a, b) <= k` and both
//! commit, the one that wrote later found the other's row (and so rejected, skipped or marked
//! its own). Proof: both requested the common stripe s exclusively and hold it to their ends,
//! so one of them, say T2, was granted s only after T1 ended; T1 committed, so it had released
//! s only after its commit became visible (PostgreSQL marks a transaction committed in the proc
//! array before it releases its locks). T2's lookup runs after T2 holds all its stripes,
//! s included, with a snapshot taken at that moment (GetLatestSnapshot), so it sees a — unless
//! a was deleted or changed by then, in which case there is no pair left. Within one transaction
//! (multi-row INSERT, INSERT ... SELECT, COPY, several statements), a transaction's own locks
//! never conflict and the lookup sees the rows the transaction wrote earlier, the same statement
//! included (SPI advances the command counter before the lookup; COPY inserts row by row when a
//! table has BEFORE ROW triggers).
//!
//! Why a fresh snapshot: under READ COMMITTED the SPI default would do, but under REPEATABLE
//! READ / SERIALIZABLE the transaction snapshot can predate T1's commit, and T2 would miss a.
//! Like a unique index (and like PostgreSQL's foreign-key checks), the lookup uses the latest
//! snapshot at every isolation level, plus the transaction's own rows.
//!
//! Deadlocks: stripes are taken in ascending order within a row, so transactions that write one
//! row each (autocommit INSERTs) never deadlock on them. A transaction that writes several rows
//! takes the stripes of its later rows after it already holds those of earlier rows; two such
//! transactions can deadlock, and PostgreSQL's deadlock detector then cancels one of them
//! (40P01) — as with two multi-row transactions inserting the same keys into a unique index in
//! different orders.
//!
//! Bounded: a transaction holds at most min(4096, key space) stripe locks per table (640 at
//! k = 10), however many rows it writes, so a 1M-row COPY cannot exhaust the shared lock table.
//!
//! Why as the table owner: the lookup must see every row, whoever inserts. It runs with the
//! owner's identity and without forced row-level security (SECURITY_LOCAL_USERID_CHANGE |
//! SECURITY_NOFORCE_RLS, as PostgreSQL's foreign-key checks do), so a role with only INSERT
//! privilege, or one that row-level security hides rows from, is still checked against all
//! rows. The error DETAIL names the existing row's key only when the inserting role may read it
//! (SELECT on the table or the key column and no row-level security), as for unique indexes.
//!
//! search_path: every name in the lookup is schema-qualified (the extension's schema, taken
//! from this function's own pg_proc row; `pg_catalog` for the operators), and the function is
//! declared with `SET search_path = pg_catalog, pg_temp` (sql/dedup.sql).
//!
//! Plans: the lookup is prepared once per table and backend as a generic plan, often while the
//! table is still empty or small; a plan that reads the whole table (or a whole index) is the
//! cheapest there, and would stay while the table grows: every insert would read every row, a
//! COPY into a new table would become quadratic. Two guards. The function is declared with
//! `SET enable_seqscan = off`, which holds while the lookup is planned and run (nothing else
//! runs inside the trigger). That does not stop a full *index* scan with the block conditions
//! as a filter, which the planner picks for a table it knows to be empty (ANALYZE or VACUUM of
//! an empty table; measured: 2,937 heap fetches per branch and 2.6 ms an insert at 2,937 rows,
//! growing with every row, until autovacuum's ANALYZE invalidated the plan). So the plan also
//! remembers the table's size in blocks when it was made, and is made again once the table has
//! doubled (and grown by at least [`REPLAN_MIN_GROWTH`] blocks): O(log n) plans while a table
//! grows, each for the size at hand; besides, the plan cache re-plans after DDL and ANALYZE.
//! A backend keeps at most [`MAX_PLANS`] plans, the most recently used.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, CStr, CString};

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::spi::{quote_identifier, quote_qualified_identifier};
use pgrx::{pg_sys, FromDatum, IntoDatum, PgLogLevel, PgSqlErrorCode};

use simdup_core::locks::lock_stripes;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Reject,
    Skip,
    Mark,
}

/// The trigger's arguments, as simdup_enable writes them.
struct Config {
    mode: Mode,
    k: u32,
    /// None: the fingerprint column is a plain bigint column filled by the application.
    text_column: Option<String>,
    fp_column: String,
    key_column: String,
}

/// The column simdup_enable(..., on_duplicate => 'mark') adds.
const DUP_OF: &CStr = c"dup_of";

fn protocol_error(message: String) -> ! {
    ErrorReport::new(PgSqlErrorCode::ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED, message, "")
        .set_hint("simdup_dedup_trigger is installed by simdup_enable(tbl, text_column, on_duplicate => ...).")
        .report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}

unsafe fn parse_args(trigger: &pg_sys::Trigger) -> Config {
    let args: Vec<String> = (0..trigger.tgnargs as usize)
        .map(|i| CStr::from_ptr(*trigger.tgargs.add(i)).to_string_lossy().into_owned())
        .collect();
    if args.len() != 5 {
        protocol_error(format!(
            "simdup_dedup_trigger needs 5 arguments (mode, max_distance, text_column, fingerprint_column, key_column), got {}",
            args.len()
        ));
    }
    let mode = match args[0].as_str() {
        "reject" => Mode::Reject,
        "skip" => Mode::Skip,
        "mark" => Mode::Mark,
        other => protocol_error(format!("unknown on_duplicate mode \"{other}\"")),
    };
    let k = match args[1].parse::<u32>() {
        Ok(k) if k <= 64 => k,
        _ => protocol_error(format!("max_distance \"{}\" is not in 0..64", args[1])),
    };
    Config {
        mode,
        k,
        text_column: (!args[2].is_empty()).then(|| args[2].clone()),
        fp_column: args[3].clone(),
        key_column: args[4].clone(),
    }
}

/// Attribute number of a user column of `tupdesc`; an error naming the table otherwise.
unsafe fn column(tupdesc: pg_sys::TupleDesc, rel: pg_sys::Relation, name: &str) -> c_int {
    let cname = CString::new(name).expect("column name contains NUL");
    let attnum = pg_sys::SPI_fnumber(tupdesc, cname.as_ptr());
    if attnum <= 0 {
        ErrorReport::new(
            PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
            format!("column \"{name}\" of relation \"{}\" does not exist", relation_name(rel)),
            "",
        )
        .set_hint("Columns used by the simdup_dedup trigger were renamed or dropped: call simdup_disable and simdup_enable again.")
        .report(PgLogLevel::ERROR);
    }
    attnum
}

unsafe fn relation_name(rel: pg_sys::Relation) -> String {
    CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr()).to_string_lossy().into_owned()
}

unsafe fn namespace_name(nsp: pg_sys::Oid) -> String {
    let p = pg_sys::get_namespace_name(nsp);
    if p.is_null() {
        error!("schema with OID {} does not exist", u32::from(nsp));
    }
    CStr::from_ptr(p).to_string_lossy().into_owned()
}

/// The value of column `attnum` as the text simhash() sees in the generated column
/// `simhash(text_column)`: the column cast to text. text and varchar are already text; the
/// bpchar-to-text cast drops trailing spaces; other string types (name, citext, domains over
/// them) are cast to text through their output function.
unsafe fn text_value(tuple: pg_sys::HeapTuple, tupdesc: pg_sys::TupleDesc, attnum: c_int) -> Option<String> {
    let mut isnull = false;
    let datum = pg_sys::SPI_getbinval(tuple, tupdesc, attnum, &mut isnull);
    if isnull {
        return None;
    }
    let typid = pg_sys::getBaseType(pg_sys::SPI_gettypeid(tupdesc, attnum));
    if typid == pg_sys::TEXTOID || typid == pg_sys::VARCHAROID {
        <&str>::from_datum(datum, false).map(str::to_owned)
    } else if typid == pg_sys::BPCHAROID {
        <&str>::from_datum(datum, false).map(|s| s.trim_end_matches(' ').to_owned())
    } else {
        let mut out: pg_sys::Oid = pg_sys::InvalidOid;
        let mut varlena = false;
        pg_sys::getTypeOutputInfo(typid, &mut out, &mut varlena);
        let p = pg_sys::OidOutputFunctionCall(out, datum);
        Some(CStr::from_ptr(p).to_str().expect("text is not valid UTF-8").to_owned())
    }
}

unsafe fn bigint_value(tuple: pg_sys::HeapTuple, tupdesc: pg_sys::TupleDesc, attnum: c_int) -> Option<i64> {
    let mut isnull = false;
    let datum = pg_sys::SPI_getbinval(tuple, tupdesc, attnum, &mut isnull);
    i64::from_datum(datum, isnull)
}

/// A prepared lookup (SPI_keepplan), the size of its table, in blocks, when it was planned,
/// and when it was last used (a count of lookups in this backend).
#[derive(Clone, Copy)]
struct Prepared {
    plan: usize,
    blocks: u32,
    used: u64,
}

thread_local! {
    /// Prepared lookups by query text: one per table, columns and k, per backend. The plan
    /// cache re-plans them after DDL or ANALYZE; [`prepared`] after the table has doubled; a
    /// renamed table gets a new text.
    static PLANS: RefCell<HashMap<String, Prepared>> = RefCell::new(HashMap::new());
    /// Lookups so far in this backend: the clock of [`Prepared::used`].
    static LOOKUPS: Cell<u64> = const { Cell::new(0) };
    /// Lookups running now in this backend (more than one only if SQL run by a lookup — say a
    /// user-defined comparison of the key type — inserts into a dedup-enabled table).
    static RUNNING: Cell<u32> = const { Cell::new(0) };
}

/// Counts a running lookup for as long as it lives (also when an error unwinds through it).
struct Running;

impl Running {
    fn start() -> Running {
        RUNNING.set(RUNNING.get() + 1);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.set(RUNNING.get() - 1);
    }
}

/// Lookup plans a backend keeps at most. One plan holds about 130 KB of the backend's memory
/// (measured in `pg_backend_memory_contexts`) and stays after its table is dropped, so a
/// long-lived backend that writes into many tables (one per tenant, per day, tests) would
/// otherwise grow without bound; the least recently used plan goes first.
const MAX_PLANS: usize = 64;

/// Growth, in blocks, below which a lookup is not planned again (see the module comment).
const REPLAN_MIN_GROWTH: u32 = 8;

/// Whether a lookup planned when its table had `planned` blocks is to be planned again now
/// that it has `now`: once it has doubled and grown by [`REPLAN_MIN_GROWTH`] blocks or more.
fn needs_replan(planned: u32, now: u32) -> bool {
    now > planned.saturating_mul(2).max(planned.saturating_add(REPLAN_MIN_GROWTH - 1))
}

/// The lookup: the near-duplicate with the smallest key, and its distance.
///
/// `simdup_match(fp, $1, k)`'s conditions split by block: for each block i, an index-only scan
/// of the block index `(simhash_block(fp, i)) INCLUDE (fp)` over the probe values
/// `simdup_probe($1, i, k)`, filtered by `hamming(fp, $1) <= k` on the included fingerprint —
/// no heap access for the ~N × 548 / 65536 candidates at k = 10 (BitmapOr over the same four
/// indexes, as simdup_match plans, rechecks each on the heap: 20–27 ms against 2–4 ms a lookup
/// at 1M rows). Then the rows with the fingerprints found (usually none), through the block-0
/// index. Both steps are MATERIALIZED CTEs, planned on their own, so that ORDER BY key LIMIT 1
/// cannot turn the search into a walk of the primary key index. $1 is the new fingerprint, $2
/// the tid of the row being updated ((0,0), which no row has, on INSERT). Every function and
/// operator is schema-qualified.
pub(crate) fn lookup_query(ext: &str, table: &str, fp_column: &str, key_column: &str, k: u32) -> String {
    let fp = quote_identifier(fp_column);
    let key = quote_identifier(key_column);
    let branches: Vec<String> = (0..4)
        .map(|i| {
            format!(
                "SELECT t.{fp} AS fp FROM {table} t \
                 WHERE {ext}.simhash_block(t.{fp}, {i}) OPERATOR(pg_catalog.=) ANY ({ext}.simdup_probe($1, {i}, {k})) \
                 AND {ext}.hamming(t.{fp}, $1) OPERATOR(pg_catalog.<=) {k}"
            )
        })
        .collect();
    format!(
        "WITH f AS MATERIALIZED ({}), \
         c AS MATERIALIZED (SELECT t.{key} AS key, t.{fp} AS fp FROM {table} t \
           WHERE {ext}.simhash_block(t.{fp}, 0) OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT {ext}.simhash_block(f.fp, 0) FROM f)) \
           AND t.{fp} OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT f.fp FROM f)) \
           AND t.ctid OPERATOR(pg_catalog.<>) $2) \
         SELECT c.key, {ext}.hamming(c.fp, $1) FROM c ORDER BY c.key LIMIT 1",
        branches.join(" UNION ")
    )
}

/// The prepared lookup `query` on `rel`, planned now if it was not yet or if the table has
/// doubled since ([`needs_replan`]).
unsafe fn prepared(query: &str, rel: pg_sys::Relation) -> pg_sys::SPIPlanPtr {
    let blocks = pg_sys::RelationGetNumberOfBlocksInFork(rel, pg_sys::ForkNumber::MAIN_FORKNUM);
    let now = LOOKUPS.get() + 1;
    LOOKUPS.set(now);
    // The kept plan of `query` (Ok), unless its table has doubled since; otherwise the plans to
    // free first (Err): that stale one, and the least recently used ones beyond MAX_PLANS − 1
    // (more than one only after nested lookups went past the bound). Nothing is freed while
    // another lookup runs: it could be running that plan.
    let nested = RUNNING.get() > 0;
    let found = PLANS.with_borrow_mut(|m| {
        let mut free = Vec::new();
        if let Some(p) = m.get_mut(query) {
            if nested || !needs_replan(p.blocks, blocks) {
                p.used = now;
                return Ok(p.plan);
            }
            free.extend(m.remove(query).map(|p| p.plan));
        }
        while !nested && m.len() >= MAX_PLANS {
            let oldest = m.iter().min_by_key(|(_, p)| p.used).map(|(k, _)| k.clone());
            free.extend(oldest.and_then(|k| m.remove(&k)).map(|p| p.plan));
        }
        Err(free)
    });
    match found {
        Ok(plan) => return plan as pg_sys::SPIPlanPtr,
        Err(free) => {
            for old in free {
                pg_sys::SPI_freeplan(old as pg_sys::SPIPlanPtr);
            }
        }
    }
    let cquery = CString::new(query).expect("query contains NUL");
    let mut argtypes = [pg_sys::INT8OID, pg_sys::TIDOID];
    // A generic plan: its shape does not depend on the fingerprint (custom plans would only
    // re-plan the same thing with 548 probe constants folded in).
    let plan = pg_sys::SPI_prepare_cursor(
        cquery.as_ptr(),
        2,
        argtypes.as_mut_ptr(),
        pg_sys::CURSOR_OPT_GENERIC_PLAN as c_int,
    );
    if plan.is_null() {
        let r = pg_sys::SPI_result;
        error!("simdup: could not prepare the near-duplicate lookup (SPI error {r})");
    }
    if pg_sys::SPI_keepplan(plan) != 0 {
        error!("simdup: could not keep the near-duplicate lookup plan");
    }
    PLANS.with_borrow_mut(|m| m.insert(query.to_owned(), Prepared { plan: plan as usize, blocks, used: now }));
    plan
}

/// May the current role see the key of a row of `rel` (as for a unique index's DETAIL)?
unsafe fn may_see_key(relid: pg_sys::Oid, key_attnum: c_int) -> bool {
    if pg_sys::check_enable_rls(relid, pg_sys::InvalidOid, true) == pg_sys::CheckEnableRlsResult::RLS_ENABLED as c_int {
        return false;
    }
    let user = pg_sys::GetUserId();
    pg_sys::pg_class_aclcheck(relid, user, pg_sys::ACL_SELECT as pg_sys::AclMode) == pg_sys::AclResult::ACLCHECK_OK
        || pg_sys::pg_attribute_aclcheck(relid, key_attnum as pg_sys::AttrNumber, user, pg_sys::ACL_SELECT as pg_sys::AclMode)
            == pg_sys::AclResult::ACLCHECK_OK
}

unsafe fn lock_exclusive(classid: i32, stripe: i32) {
    unsafe fn f(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
        pg_sys::pg_advisory_xact_lock_int4(fcinfo)
    }
    pgrx::direct_function_call_as_datum(f, &[classid.into_datum(), stripe.into_datum()]);
}

/// What the lookup found.
struct Found {
    key_text: String,
    distance: i32,
}

/// Takes the locks, runs the lookup, and in mark mode builds the new tuple with dup_of set.
/// Returns the near-duplicate found (if any) and, in mark mode, the modified tuple.
unsafe fn check(
    td: &pg_sys::TriggerData,
    cfg: &Config,
    fp: i64,
    new: pg_sys::HeapTuple,
    exclude: pg_sys::ItemPointerData,
    ext_schema: &str,
) -> (Option<Found>, pg_sys::HeapTuple) {
    let rel = td.tg_relation;
    let relid = (*rel).rd_id;

    // 1. Lock stripes, ascending. The classid is the table's OID (as int4).
    for stripe in lock_stripes(fp as u64, cfg.k) {
        lock_exclusive(u32::from(relid) as i32, stripe as i32);
    }

    // 2. The lookup, as the table owner, without forced RLS.
    let table = quote_qualified_identifier(namespace_name((*(*rel).rd_rel).relnamespace), relation_name(rel));
    let query = lookup_query(ext_schema, &table, &cfg.fp_column, &cfg.key_column, cfg.k);
    let mut save_user = pg_sys::InvalidOid;
    let mut save_sec: c_int = 0;
    pg_sys::GetUserIdAndSecContext(&mut save_user, &mut save_sec);
    pg_sys::SetUserIdAndSecContext(
        (*(*rel).rd_rel).relowner,
        save_sec | (pg_sys::SECURITY_LOCAL_USERID_CHANGE | pg_sys::SECURITY_NOFORCE_RLS) as c_int,
    );
    if pg_sys::SPI_connect() != pg_sys::SPI_OK_CONNECT as c_int {
        error!("simdup: SPI_connect failed");
    }
    let plan = prepared(&query, rel);
    let mut tid = exclude;
    let mut values = [fp.into_datum().unwrap(), pg_sys::Datum::from(&mut tid as *mut pg_sys::ItemPointerData)];
    let nulls = [b' ' as c_char, b' ' as c_char];
    // CommandCounterIncrement + a copy of the latest snapshot with the current command id:
    // committed rows of every transaction, and this transaction's own rows so far.
    let running = Running::start();
    let rc = pg_sys::SPI_execute_snapshot(
        plan,
        values.as_mut_ptr(),
        nulls.as_ptr(),
        pg_sys::GetLatestSnapshot(),
        std::ptr::null_mut(),
        false,
        false,
        1,
    );
    drop(running);
    if rc != pg_sys::SPI_OK_SELECT as c_int {
        error!("simdup: near-duplicate lookup failed (SPI result {rc})");
    }
    let mut found = None;
    let mut key = pg_sys::Datum::from(0);
    let mut key_null = true;
    if pg_sys::SPI_processed > 0 {
        let tt = &*pg_sys::SPI_tuptable;
        let row = *tt.vals;
        key = pg_sys::SPI_getbinval(row, tt.tupdesc, 1, &mut key_null);
        let mut dnull = false;
        let distance = i32::from_datum(pg_sys::SPI_getbinval(row, tt.tupdesc, 2, &mut dnull), dnull).unwrap_or(-1);
        let kt = pg_sys::SPI_getvalue(row, tt.tupdesc, 1);
        let key_text = if kt.is_null() { "NULL".to_owned() } else { CStr::from_ptr(kt).to_string_lossy().into_owned() };
        found = Some(Found { key_text, distance });
    }
    let mut result = new;
    if cfg.mode == Mode::Mark {
        // SPI_modifytuple copies the datums into a tuple in the caller's memory context, so the
        // key survives SPI_finish.
        let mut attnum = column((*rel).rd_att, rel, "dup_of");
        let nulls = [if found.is_some() && !key_null { b' ' } else { b'n' } as c_char];
        let mut values = [key];
        result = pg_sys::SPI_modifytuple(rel, new, 1, &mut attnum, values.as_mut_ptr(), nulls.as_ptr());
        if result.is_null() {
            let r = pg_sys::SPI_result;
            error!("simdup: could not set dup_of (SPI error {r})");
        }
    }
    pg_sys::SPI_finish();
    pg_sys::SetUserIdAndSecContext(save_user, save_sec);
    (found, result)
}

/// Sets NEW.dup_of to NULL (mark mode, for a row that is checked against nothing).
unsafe fn clear_dup_of(rel: pg_sys::Relation, new: pg_sys::HeapTuple) -> pg_sys::HeapTuple {
    let tupdesc = (*rel).rd_att;
    let attnum = pg_sys::SPI_fnumber(tupdesc, DUP_OF.as_ptr());
    if attnum <= 0 {
        column(tupdesc, rel, "dup_of");
    }
    let mut cols = [attnum];
    let mut values = [pg_sys::Datum::from(0)];
    let mut isnull = [true];
    pg_sys::heap_modify_tuple_by_cols(new, tupdesc, 1, cols.as_mut_ptr(), values.as_mut_ptr(), isnull.as_mut_ptr())
}

unsafe fn dedup(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    if !pgrx::trigger_support::called_as_trigger(fcinfo) {
        protocol_error("simdup_dedup_trigger: not called by the trigger manager".into());
    }
    let td = &*((*fcinfo).context as *const pg_sys::TriggerData);
    let event = td.tg_event;
    let op = event & pg_sys::TRIGGER_EVENT_OPMASK;
    if event & pg_sys::TRIGGER_EVENT_ROW == 0
        || event & pg_sys::TRIGGER_EVENT_TIMINGMASK != pg_sys::TRIGGER_EVENT_BEFORE
        || !(op == pg_sys::TRIGGER_EVENT_INSERT || op == pg_sys::TRIGGER_EVENT_UPDATE)
    {
        protocol_error("simdup_dedup_trigger must be fired BEFORE INSERT OR UPDATE FOR EACH ROW".into());
    }
    let cfg = parse_args(&*td.tg_trigger);
    let rel = td.tg_relation;
    let tupdesc = (*rel).rd_att;
    let is_update = op == pg_sys::TRIGGER_EVENT_UPDATE;
    let (new, old) = if is_update { (td.tg_newtuple, td.tg_trigtuple) } else { (td.tg_trigtuple, std::ptr::null_mut()) };
    let unchanged = pg_sys::Datum::from(new);

    // The fingerprint of NEW, and whether an UPDATE changed it.
    let fp = match &cfg.text_column {
        Some(col) => {
            let attnum = column(tupdesc, rel, col);
            let text = text_value(new, tupdesc, attnum);
            if is_update && text == text_value(old, tupdesc, attnum) {
                return unchanged;
            }
            text.and_then(|t| crate::functions::simhash(&t))
        }
        None => {
            let attnum = column(tupdesc, rel, &cfg.fp_column);
            let fp = bigint_value(new, tupdesc, attnum);
            if is_update && fp == bigint_value(old, tupdesc, attnum) {
                return unchanged;
            }
            fp
        }
    };
    let Some(fp) = fp else {
        // Featureless text: never a duplicate.
        return if cfg.mode == Mode::Mark { pg_sys::Datum::from(clear_dup_of(rel, new)) } else { unchanged };
    };

    let key_attnum = column(tupdesc, rel, &cfg.key_column);
    let exclude = if is_update {
        (*old).t_self
    } else {
        pg_sys::ItemPointerData::default() // (0,0): offset numbers start at 1
    };
    let ext_schema = quote_identifier(namespace_name(pg_sys::get_func_namespace((*(*fcinfo).flinfo).fn_oid)));
    let (found, tuple) = check(td, &cfg, fp, new, exclude, &ext_schema);

    match (cfg.mode, found) {
        (Mode::Mark, _) => pg_sys::Datum::from(tuple),
        (_, None) => unchanged,
        (Mode::Skip, Some(_)) => pg_sys::Datum::from(0),
        (Mode::Reject, Some(f)) => {
            let table = relation_name(rel);
            let detail = if may_see_key((*rel).rd_id, key_attnum) {
                format!(
                    "Key ({})=({}) is at Hamming distance {} (max_distance {}).",
                    quote_identifier(&cfg.key_column),
                    f.key_text,
                    f.distance,
                    cfg.k
                )
            } else {
                format!("An existing row is at Hamming distance {} (max_distance {}).", f.distance, cfg.k)
            };
            ErrorReport::new(
                PgSqlErrorCode::ERRCODE_UNIQUE_VIOLATION,
                format!("near-duplicate row violates simdup_dedup on relation \"{table}\""),
                "",
            )
            .set_detail(detail)
            .report(PgLogLevel::ERROR);
            unreachable!("ERROR does not return")
        }
    }
}

/// `RETURNS trigger` function, declared in sql/dedup.sql (pgrx's #[pg_trigger] hides the raw
/// TriggerData this needs: arbitrary key types, SPI_modifytuple, the tid of OLD).
#[unsafe(no_mangle)]
#[doc(hidden)]
pub extern "C" fn pg_finfo_simdup_dedup_trigger() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

#[unsafe(no_mangle)]
#[doc(hidden)]
#[pg_guard]
pub unsafe extern "C-unwind" fn simdup_dedup_trigger(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    dedup(fcinfo)
}

/// The lock stripes (advisory lock keys (table OID, stripe)) the dedup trigger takes for a
/// fingerprint at maximum distance k, ascending. For tests and for looking at pg_locks.
#[pg_extern(immutable, strict, parallel_safe)]
fn simdup_lock_stripes(fp: i64, k: i32) -> Vec<i32> {
    if !(0..=64).contains(&k) {
        crate::errors::invalid_parameter(
            format!("maximum distance {k} is out of range"),
            "The maximum distance k is a Hamming distance between 64-bit fingerprints: 0 to 64.",
        );
    }
    lock_stripes(fp as u64, k as u32).into_iter().map(|s| s as i32).collect()
}
