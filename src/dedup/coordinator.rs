//! Plain writes into a Citus distributed dedup table, on its coordinator: `INSERT` (one row,
//! many rows, `INSERT … SELECT`, prepared or from a function), `COPY … FROM` and `UPDATE`s that
//! change the checked column, each row checked across shards by the checked write
//! ([`super::checked`]), in the statement's row order, with the answers of the single-node
//! trigger.
//!
//! * **`INSERT`.** A planner hook (installed after Citus's, so it runs first and chains it)
//!   plans the statement's rows as a query of their own — the INSERT's target list after the
//!   rewriter filled in the defaults of omitted columns, so defaults are evaluated as the writer
//!   — and puts a custom scan, `SimdupCheckedInsert`, on top: it pulls the rows and writes them
//!   through the checked write, up to [`BATCH_ROWS`] at a time where the table allows it
//!   ([`super::checked::write_batch`]), else one by one; the command tag counts the rows stored
//!   (`INSERT 0 n`).
//! * **`COPY … FROM`.** A `ProcessUtility` hook (also before Citus's) reads the rows with
//!   PostgreSQL's own COPY reader (`BeginCopyFrom` / `NextCopyFrom`: every format and option,
//!   defaults of the columns left out) and writes them by `INSERT … SELECT`, [`BATCH_ROWS`] at
//!   a time, which the planner hook plans as above (`COPY n`). The same hook writes a COPY into
//!   a plain dedup table that [`super::readahead::copies_ahead`] by `INSERT … SELECT`s of large
//!   batches, which [`super::readahead`] reads ahead for the bulk check.
//! * **`UPDATE`** that assigns the checked column (the text, or an adopted fingerprint). The
//!   planner hook plans the rows it changes as a SELECT, as the writer — each row's ctid, key
//!   and checked value as they are, then the new values — under the custom scan
//!   `SimdupCheckedUpdate`, which checks them up to [`BATCH_ROWS`] at a time where the table
//!   allows it ([`super::checked::update_batch`]), else one by one
//!   ([`super::checked::update_row`]): each row checked against every shard but itself (and,
//!   in a batch, against the batch's earlier new texts instead of their old ones), then
//!   written by key *and* ctid, so that a row another transaction changed meanwhile is not
//!   overwritten: a row at a time, it is read again as it is now (the rows' query, deparsed at
//!   planning, for its key: [`UpdateRows::read_again`]) and checked and written again, as READ
//!   COMMITTED re-reads a row; in a batch the statement raises 40001. A row a join yields twice
//!   is updated once (`UPDATE n`). UPDATEs of other columns are Citus's: the shards' triggers
//!   let them through.
//! * **`RETURNING`** (of an INSERT or such an UPDATE): the checked write's own statement returns
//!   the rows as the shards stored them; the custom scan keeps them ([`Returned`]: a tuplestore)
//!   and then scans them as rows of the target — appended to the plan's relations for it — with
//!   the RETURNING list as its target list, after checking the writer's SELECT on the columns
//!   it reads. Refused with 0A000: a sub-SELECT, a system column, a column of another relation,
//!   (PostgreSQL 18) `old` values.
//! * **`INSERT … ON CONFLICT … DO NOTHING`**: the clause is appended to the checked write's
//!   INSERT, each row checked first, as a BEFORE trigger runs before the conflict check. A row
//!   it leaves out must be no earlier row to the rows after it: a batch is written in runs, each
//!   ending before a row its rows would decide ([`super::checked::write_batch`]).
//!
//! The writer's INSERT and UPDATE privileges are checked by the checked write, per column
//! written, as the executor would. Refused with 0A000: `ON CONFLICT … DO UPDATE`, `COPY …
//! WHERE`, `COPY … (ON_ERROR)`, a data-modifying `WITH` around an UPDATE, and an UPDATE
//! assigning several columns from one sub-SELECT. Writes through a worker the shards' triggers
//! refuse ([`super::citus`]). The checked write's own INSERT or UPDATE (`simdup.checked_write`
//! naming the table, as its owner) is left to Citus: it is what the shards' triggers let
//! through.
//!
//! **Settings.** The rows' values are made by the writer's statement with the writer's settings
//! (its literals, parameters, defaults and COPY's reader). Where they then cross to the workers
//! as text — the checked write's statements, and the query of the rows itself when it reads
//! Citus tables (an UPDATE's always: Citus writes its constants into the shard queries, at
//! planning or when the scan begins, and reads the shards' rows back as text) — the settings
//! that decide that text are pinned ([`super::checked::pin_transfer`]).

use std::collections::HashSet;
use std::ffi::{c_char, c_int, CStr};
use std::ptr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::catalog::{cells, qualified_name};
use crate::errors::{Code, ConstraintError, Error, OrRaise};

use super::checked::{
    array_insert, batchable, checked_columns, pin_coordinator, pin_transfer, row_array, update_batch, update_row,
    write_batch, write_row, OldRow, Outcome, Returned, Row,
};
use super::config::TRIGGER;
use super::similar::TRIGGER_SIMILAR;
use super::trigger::trigger_args_named;
use super::tuple::text_of;

static mut PREVIOUS_PLANNER: pg_sys::planner_hook_type = None;
static mut PREVIOUS_UTILITY: pg_sys::ProcessUtility_hook_type = None;

const NAME: &CStr = c"SimdupCheckedInsert";

static mut SCAN_METHODS: pg_sys::CustomScanMethods =
    pg_sys::CustomScanMethods { CustomName: NAME.as_ptr(), CreateCustomScanState: Some(create_state) };

static mut EXEC_METHODS: pg_sys::CustomExecMethods = pg_sys::CustomExecMethods {
    CustomName: NAME.as_ptr(),
    BeginCustomScan: Some(begin),
    ExecCustomScan: Some(exec),
    EndCustomScan: Some(end),
    ReScanCustomScan: Some(rescan),
    ExplainCustomScan: Some(explain),
    // SAFETY: the remaining callbacks are optional (NULL): no mark/restore, no parallel scan.
    ..unsafe { std::mem::zeroed() }
};

const NAME_UPDATE: &CStr = c"SimdupCheckedUpdate";

static mut SCAN_METHODS_UPDATE: pg_sys::CustomScanMethods =
    pg_sys::CustomScanMethods { CustomName: NAME_UPDATE.as_ptr(), CreateCustomScanState: Some(create_update_state) };

static mut EXEC_METHODS_UPDATE: pg_sys::CustomExecMethods = pg_sys::CustomExecMethods {
    CustomName: NAME_UPDATE.as_ptr(),
    BeginCustomScan: Some(begin),
    ExecCustomScan: Some(exec_update),
    EndCustomScan: Some(end),
    ReScanCustomScan: Some(rescan),
    ExplainCustomScan: Some(explain),
    // SAFETY: the remaining callbacks are optional (NULL): no mark/restore, no parallel scan.
    ..unsafe { std::mem::zeroed() }
};

/// Installs the hooks after whatever hooks were there, and registers the custom scan (so a
/// plan holding it can be read back from its text form). Called once from `_PG_init`.
pub(crate) fn init() {
    // SAFETY: _PG_init runs once per process, before any planning, single-threaded; the
    // methods are statics that live as long as the process.
    unsafe {
        PREVIOUS_PLANNER = pg_sys::planner_hook;
        pg_sys::planner_hook = Some(planner);
        PREVIOUS_UTILITY = pg_sys::ProcessUtility_hook;
        pg_sys::ProcessUtility_hook = Some(process_utility);
        pg_sys::RegisterCustomScanMethods(&raw const SCAN_METHODS);
        pg_sys::RegisterCustomScanMethods(&raw const SCAN_METHODS_UPDATE);
    }
}

/// Whether writes into table `relid` must go through the checked write here: it has a dedup
/// trigger, Citus distributes it over shards that each hold part of its rows, this is the
/// coordinator, and the write is not the checked write's own.
///
/// # Safety
/// In a transaction; `relid` is locked by the statement.
unsafe fn needs_check(relid: pg_sys::Oid) -> bool {
    // SAFETY: the statement holds a lock on the relation; it is closed before returning.
    unsafe {
        let rel = pg_sys::RelationIdGetRelation(relid);
        if rel.is_null() {
            return false;
        }
        let checked = (*(*rel).rd_rel).relkind == pg_sys::RELKIND_RELATION as c_char
            && (trigger_args_named(rel, TRIGGER).is_some() || trigger_args_named(rel, TRIGGER_SIMILAR).is_some())
            && super::citus::is_distributed(relid)
            && super::citus::is_coordinator()
            && !super::citus::is_checked_write(rel, &qualified_name(rel));
        pg_sys::RelationClose(rel);
        checked
    }
}

fn not_supported(what: &str, table: &str, hint: &str) -> ! {
    Error::new(
        Code::ERRCODE_FEATURE_NOT_SUPPORTED,
        format!("{what} is not supported on distributed dedup table {table}"),
    )
    .detail("Each row is checked against every shard and written by simdup on the coordinator.")
    .hint(hint)
    .raise()
}

// ---- INSERT: the planner hook and the custom scan ----

// PostgreSQL's own entry points, called as C calls them: an error they raise jumps straight to
// the caller's handler with every field it carries (SQLSTATE, constraint, position), which
// pgrx's guarded wrappers would rebuild. The frames that call them hold nothing to drop.
unsafe extern "C-unwind" {
    #[link_name = "standard_planner"]
    fn standard_planner_unguarded(
        parse: *mut pg_sys::Query,
        query_string: *const c_char,
        cursor_options: c_int,
        bound_params: pg_sys::ParamListInfo,
    ) -> *mut pg_sys::PlannedStmt;
    #[link_name = "standard_ProcessUtility"]
    fn standard_process_utility_unguarded(
        pstmt: *mut pg_sys::PlannedStmt,
        query_string: *const c_char,
        read_only_tree: bool,
        context: pg_sys::ProcessUtilityContext::Type,
        params: pg_sys::ParamListInfo,
        query_env: *mut pg_sys::QueryEnvironment,
        dest: *mut pg_sys::DestReceiver,
        qc: *mut pg_sys::QueryCompletion,
    );
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
    /// rewriteManip.c: adds `offset` to every range-table reference of `node` at
    /// `sublevels_up` (not in pgrx's bindings).
    #[link_name = "OffsetVarNodes"]
    fn offset_var_nodes(node: *mut pg_sys::Node, offset: c_int, sublevels_up: c_int);
}

/// The planner hook: an INSERT into a table that [`needs_check`] is planned here, everything
/// else by the previous hook (Citus's) or the standard planner, then given to
/// [`super::readahead::plan`] (which reads an `INSERT ... SELECT`'s rows ahead for the bulk
/// check).
///
/// # Safety
/// Called by PostgreSQL with the planner's arguments.
unsafe extern "C-unwind" fn planner(
    parse: *mut pg_sys::Query,
    query_string: *const c_char,
    cursor_options: c_int,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    let mut planned = ptr::null_mut();
    // SAFETY: the planner's arguments; `plan_if_checked` is guarded.
    unsafe { plan_if_checked(parse, query_string, cursor_options, bound_params, &mut planned) };
    if !planned.is_null() {
        return planned;
    }
    // SAFETY: the previous hook or the standard planner, with the same arguments; their errors
    // pass through this frame, which holds nothing that needs dropping.
    let stmt = unsafe {
        match PREVIOUS_PLANNER {
            Some(previous) => previous(parse, query_string, cursor_options, bound_params),
            None => standard_planner_unguarded(parse, query_string, cursor_options, bound_params),
        }
    };
    // SAFETY: the plan just made, of a statement that holds its locks; `plan` is guarded.
    unsafe { super::readahead::plan(stmt) };
    stmt
}

/// Plans `parse` into `*planned` if it is an INSERT that must go through the checked write.
///
/// # Safety
/// The planner's arguments.
#[pg_guard]
unsafe extern "C-unwind" fn plan_if_checked(
    parse: *mut pg_sys::Query,
    query_string: *const c_char,
    cursor_options: c_int,
    bound_params: pg_sys::ParamListInfo,
    planned: *mut *mut pg_sys::PlannedStmt,
) {
    // SAFETY: the caller passes the planner's own arguments (`parse` a Query being planned, its
    // result relation locked by the statement), as the helpers called here ask, and `planned`
    // points at its local.
    unsafe {
        refuse_unchecked_merge(parse);
        if let Some(relid) = insert_target(parse) {
            *planned = plan_checked_insert(parse, relid, query_string, cursor_options, bound_params);
        } else if let Some((relid, source, key)) = update_target(parse) {
            *planned = plan_checked_update(parse, relid, source, key, query_string, cursor_options, bound_params);
        }
    }
}

/// The previous planner hook, or the standard planner, inside pgrx's guard.
///
/// # Safety
/// The planner's arguments.
unsafe fn previous_planner(
    parse: *mut pg_sys::Query,
    query_string: *const c_char,
    cursor_options: c_int,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: the previous hook, or the standard planner, with the planner's arguments; an
    // error in the hook becomes a Rust panic at the boundary.
    unsafe {
        match PREVIOUS_PLANNER {
            Some(previous) => {
                pg_sys::ffi::pg_guard_ffi_boundary(|| previous(parse, query_string, cursor_options, bound_params))
            }
            None => pg_sys::standard_planner(parse, query_string, cursor_options, bound_params),
        }
    }
}

/// The target of an INSERT that must go through the checked write, if `parse` is one.
///
/// # Safety
/// `parse` is a query being planned.
unsafe fn insert_target(parse: *mut pg_sys::Query) -> Option<pg_sys::Oid> {
    // SAFETY: a valid Query.
    unsafe {
        if (*parse).commandType != pg_sys::CmdType::CMD_INSERT {
            return None;
        }
        result_to_check(parse)
    }
}

/// The result relation of `parse`, if it is a table whose writes this coordinator checks
/// ([`needs_check`]).
///
/// # Safety
/// `parse` is a query being planned.
unsafe fn result_to_check(parse: *mut pg_sys::Query) -> Option<pg_sys::Oid> {
    // SAFETY: a valid Query; its range table holds the result relation, which the statement
    // has locked.
    unsafe {
        if (*parse).resultRelation <= 0 {
            return None;
        }
        let rte = pg_sys::list_nth((*parse).rtable, (*parse).resultRelation - 1) as *mut pg_sys::RangeTblEntry;
        ((*rte).rtekind == pg_sys::RTEKind::RTE_RELATION && needs_check((*rte).relid)).then_some((*rte).relid)
    }
}

/// The target of an UPDATE that must go through the checked write — one that assigns the column
/// the table's dedup check reads — and that table's key column, if `parse` is one. (An UPDATE of
/// other columns is left to Citus: the shards' triggers let it through.) Returns the table, the
/// checked column and the key column.
///
/// # Safety
/// `parse` is a query being planned.
unsafe fn update_target(parse: *mut pg_sys::Query) -> Option<(pg_sys::Oid, i32, i32)> {
    // SAFETY: a valid Query.
    unsafe {
        if (*parse).commandType != pg_sys::CmdType::CMD_UPDATE {
            return None;
        }
        let (relid, source, key) = checked_target(parse)?;
        assigns((*parse).targetList, source).then_some((relid, source, key))
    }
}

/// [`result_to_check`], with the column its check reads and its key column.
///
/// # Safety
/// `parse` is a query being planned.
unsafe fn checked_target(parse: *mut pg_sys::Query) -> Option<(pg_sys::Oid, i32, i32)> {
    // SAFETY: a valid Query; the relation is locked by the statement.
    unsafe {
        let relid = result_to_check(parse)?;
        let rel = pg_sys::RelationIdGetRelation(relid);
        let columns = super::checked::checked_columns(rel);
        pg_sys::RelationClose(rel);
        let (source, key) = columns?;
        Some((relid, source, key))
    }
}

/// Whether the target list `targets` (of an UPDATE, or a MERGE's UPDATE action) assigns column
/// `attnum`.
///
/// # Safety
/// `targets` is a List of TargetEntry.
unsafe fn assigns(targets: *mut pg_sys::List, attnum: i32) -> bool {
    // SAFETY: the caller guarantees `targets` is a List (or NIL) of TargetEntry, so each cell
    // points at one.
    unsafe {
        cells(targets).iter().any(|cell| {
            let tle = cell.ptr_value as *mut pg_sys::TargetEntry;
            !(*tle).resjunk && i32::from((*tle).resno) == attnum
        })
    }
}

/// Refuses a `MERGE` into a distributed dedup table that could store a new text: one with an
/// `INSERT` action, or an `UPDATE` action that assigns the checked column. Citus would run its
/// actions on the shards, where nothing checks them against the other shards (the shards'
/// trigger would refuse the write with an error about writes through a worker). A MERGE that
/// only deletes, or updates other columns, is Citus's own, as such an UPDATE or DELETE is.
///
/// PostgreSQL 14 has no MERGE.
///
/// # Safety
/// `parse` is a query being planned.
#[cfg(feature = "pg14")]
unsafe fn refuse_unchecked_merge(_parse: *mut pg_sys::Query) {}

/// # Safety
/// `parse` is a query being planned.
#[cfg(not(feature = "pg14"))]
unsafe fn refuse_unchecked_merge(parse: *mut pg_sys::Query) {
    // SAFETY: a valid Query; the MERGE's actions are MergeAction nodes; the result relation is
    // locked by the statement.
    unsafe {
        if (*parse).commandType != pg_sys::CmdType::CMD_MERGE {
            return;
        }
        let Some((relid, source, _)) = checked_target(parse) else { return };
        let writes_text = cells((*parse).mergeActionList).iter().any(|cell| {
            let action = cell.ptr_value as *mut pg_sys::MergeAction;
            match (*action).commandType {
                pg_sys::CmdType::CMD_INSERT => true,
                pg_sys::CmdType::CMD_UPDATE => assigns((*action).targetList, source),
                _ => false,
            }
        });
        if writes_text {
            let rel = pg_sys::RelationIdGetRelation(relid);
            let table = qualified_name(rel);
            pg_sys::RelationClose(rel);
            not_supported(
                "MERGE that inserts rows or changes the checked column",
                &table,
                "Write the new rows with INSERT and the changed texts with UPDATE: both are checked across shards.",
            );
        }
    }
}

/// Plans `UPDATE t SET … WHERE …` that assigns the checked column as `SimdupCheckedUpdate` over
/// a SELECT of the rows it changes — each row's ctid, key and checked value as it is, then the
/// new values of the columns assigned — which the custom scan writes through the checked
/// update, in batches ([`super::checked::update_batch`]) or row by row
/// ([`super::checked::update_row`]).
///
/// # Safety
/// The planner's arguments; `relid` is the UPDATE's target, `source` the column its check reads,
/// `key` its key column.
unsafe fn plan_checked_update(
    parse: *mut pg_sys::Query,
    relid: pg_sys::Oid,
    source: i32,
    key: i32,
    query_string: *const c_char,
    cursor_options: c_int,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: the Query is copied before it is changed; the nodes built are palloc'd in the
    // planner's memory context, as the planner's own; each GUC nest level opened here is closed
    // here (an error's abort closes it otherwise).
    unsafe {
        let rel = pg_sys::RelationIdGetRelation(relid);
        let table = qualified_name(rel);
        pg_sys::RelationClose(rel);
        let returning = returning_list(parse, &table, "UPDATE");
        if (*parse).hasModifyingCTE {
            not_supported("a data-modifying WITH around an UPDATE", &table, "Run the statements one after another.");
        }
        let rows = pg_sys::copyObjectImpl(parse.cast()) as *mut pg_sys::Query;
        (*rows).commandType = pg_sys::CmdType::CMD_SELECT;
        (*rows).returningList = ptr::null_mut();
        let result = (*rows).resultRelation;
        (*rows).resultRelation = 0;
        // The target is read as one of the SELECT's relations (an UPDATE's target is in its
        // FROM list already; marked so, a deparsed SELECT names it there too), as the writer,
        // with the writer's rights to read it; the checked update checks the writer's UPDATE
        // privilege on each column assigned.
        for cell in cells((*(*rows).jointree).fromlist) {
            let node = cell.ptr_value as *mut pg_sys::Node;
            if (*node).type_ == pg_sys::NodeTag::T_RangeTblRef {
                let rti = (*(node as *mut pg_sys::RangeTblRef)).rtindex;
                (*(pg_sys::list_nth((*rows).rtable, rti - 1) as *mut pg_sys::RangeTblEntry)).inFromCl = true;
            }
        }
        let var = |attnum: i32| {
            let (mut typ, mut typmod, mut coll) = (pg_sys::InvalidOid, -1, pg_sys::InvalidOid);
            if attnum > 0 {
                pg_sys::get_atttypetypmodcoll(relid, attnum as pg_sys::AttrNumber, &mut typ, &mut typmod, &mut coll);
            } else {
                typ = pg_sys::TIDOID;
            }
            pg_sys::makeVar(result as _, attnum as pg_sys::AttrNumber, typ, typmod, coll, 0)
        };
        // The row as it is: ctid, key, checked value; then the new values. (Named: Citus names
        // its scan's columns after them, and EXPLAIN prints those names.)
        let mut columns: *mut pg_sys::List = ptr::null_mut();
        // (ctid is attribute -1, SelfItemPointerAttributeNumber.)
        let now = [(-1, c"ctid"), (key, c"key"), (source, c"checked")];
        for (i, (attnum, name)) in now.into_iter().enumerate() {
            let tle = pg_sys::makeTargetEntry(
                var(attnum).cast(),
                (i + 1) as pg_sys::AttrNumber,
                pg_sys::pstrdup(name.as_ptr()),
                false,
            );
            columns = pg_sys::lappend(columns, tle.cast());
        }
        let mut written: Vec<i32> = Vec::new();
        for cell in cells((*rows).targetList) {
            let tle = cell.ptr_value as *mut pg_sys::TargetEntry;
            if (*tle).resjunk {
                not_supported(
                    "an UPDATE assigning several columns from one sub-SELECT",
                    &table,
                    "Assign each column its own expression.",
                );
            }
            written.push(i32::from((*tle).resno));
            if (*tle).resname.is_null() {
                (*tle).resname = pg_sys::get_attname(relid, (*tle).resno, false);
            }
            (*tle).resno = (3 + written.len()) as pg_sys::AttrNumber;
            columns = pg_sys::lappend(columns, tle.cast());
        }
        (*rows).targetList = columns;
        // The rows' query reads the distributed table: planned (and run, `exec_update_rows`)
        // with the settings of the values' transfer pinned.
        let pins = pg_sys::NewGUCNestLevel();
        pin_coordinator();
        // The rows' query as SQL, to read a row again when another transaction changes it
        // between this statement's read and its write (exec_update_rows): every name qualified
        // (deparsed with only pg_catalog on the search path), so it reads what this plan reads
        // under any search path; its constants as the pinned settings write them, and read
        // them. (Before planning, which changes the query in place.)
        let again = query_sql(rows, &table);
        let options = cursor_options & !(pg_sys::CURSOR_OPT_PARALLEL_OK as c_int);
        let stmt = previous_planner(rows, query_string, options, bound_params);
        pg_sys::AtEOXact_GUC(true, pins);
        let stmt = wrap_in_scan(
            stmt,
            parse,
            relid,
            &written,
            true,
            returning,
            &raw const SCAN_METHODS_UPDATE,
            pg_sys::CmdType::CMD_UPDATE,
        );
        add_private_text(stmt, &again);
        stmt
    }
}

/// Plans `INSERT INTO t …` as `SimdupCheckedInsert` over the plan of its rows.
///
/// # Safety
/// The planner's arguments; `relid` is the INSERT's target.
unsafe fn plan_checked_insert(
    parse: *mut pg_sys::Query,
    relid: pg_sys::Oid,
    query_string: *const c_char,
    cursor_options: c_int,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: the Query is copied before it is changed; the nodes built are palloc'd in the
    // planner's memory context, as the planner's own; each GUC nest level opened here is closed
    // here (an error's abort closes it otherwise).
    unsafe {
        let table = {
            let rel = pg_sys::RelationIdGetRelation(relid);
            let name = qualified_name(rel);
            pg_sys::RelationClose(rel);
            name
        };
        let returning = returning_list(parse, &table, "INSERT");
        let conflict = conflict_clause(parse, relid, &table);
        // The rows: the same query as a SELECT of the target list, in its order.
        let rows = pg_sys::copyObjectImpl(parse.cast()) as *mut pg_sys::Query;
        (*rows).commandType = pg_sys::CmdType::CMD_SELECT;
        (*rows).returningList = ptr::null_mut();
        (*rows).onConflict = ptr::null_mut();
        // The target is no relation of the SELECT. It is the range table's first entry (the
        // parser adds it before the rows' own): removed, and the rows' references renumbered,
        // the SELECT reads as one written by hand (Citus deparses it for the workers when the
        // rows come from a distributed table). Its INSERT privilege is checked by the checked
        // write, per column written.
        let result = (*rows).resultRelation;
        (*rows).resultRelation = 0;
        if result == 1 {
            (*rows).rtable = pg_sys::list_delete_first((*rows).rtable);
            offset_var_nodes(rows.cast(), -1, 0);
        } else {
            // (Not seen: then an empty entry keeps the numbering.)
            let target = pg_sys::list_nth((*rows).rtable, result - 1) as *mut pg_sys::RangeTblEntry;
            (*target).rtekind = pg_sys::RTEKind::RTE_RESULT;
            (*target).relid = pg_sys::InvalidOid;
            (*target).relkind = 0;
            (*target).rellockmode = 0;
            (*target).inh = false;
            #[cfg(any(feature = "pg14", feature = "pg15"))]
            {
                (*target).requiredPerms = 0;
            }
            #[cfg(not(any(feature = "pg14", feature = "pg15")))]
            {
                (*target).perminfoindex = 0;
            }
        }
        // The rows' own entries are read FROM (an INSERT's sub-SELECT is not marked so, and a
        // deparsed SELECT would leave it out of its FROM clause).
        for cell in cells((*(*rows).jointree).fromlist) {
            let node = cell.ptr_value as *mut pg_sys::Node;
            if (*node).type_ == pg_sys::NodeTag::T_RangeTblRef {
                let rti = (*(node as *mut pg_sys::RangeTblRef)).rtindex;
                (*(pg_sys::list_nth((*rows).rtable, rti - 1) as *mut pg_sys::RangeTblEntry)).inFromCl = true;
            }
        }
        let mut columns: *mut pg_sys::List = ptr::null_mut();
        let mut written: Vec<i32> = Vec::new();
        for cell in cells((*rows).targetList) {
            let tle = cell.ptr_value as *mut pg_sys::TargetEntry;
            if (*tle).resjunk {
                continue;
            }
            written.push(i32::from((*tle).resno));
            (*tle).resno = (written.len()) as pg_sys::AttrNumber;
            columns = pg_sys::lappend(columns, tle.cast());
        }
        (*rows).targetList = columns;
        // Rows that come from Citus tables are planned (and run, `exec_rows`) with the settings
        // of the values' transfer pinned; rows made on the coordinator (VALUES, parameters, a
        // COPY's rows, local tables) with the writer's.
        let pinned = reads_citus_tables(rows);
        let nest = pg_sys::NewGUCNestLevel();
        if pinned {
            pin_coordinator();
        }
        // Not parallel: the rows are written while the plan runs.
        let options = cursor_options & !(pg_sys::CURSOR_OPT_PARALLEL_OK as c_int);
        let stmt = previous_planner(rows, query_string, options, bound_params);
        pg_sys::AtEOXact_GUC(true, nest);

        let stmt = wrap_in_scan(
            stmt,
            parse,
            relid,
            &written,
            pinned,
            returning,
            &raw const SCAN_METHODS,
            pg_sys::CmdType::CMD_INSERT,
        );
        if let Some(clause) = conflict {
            add_private_text(stmt, &clause);
        }
        stmt
    }
}

/// Whether query `rows` (not yet planned) reads a Citus table anywhere (a sub-SELECT, a CTE, a
/// view's query): then Citus sends its constants to the workers, and reads their rows back, as
/// text.
///
/// # Safety
/// `rows` is a valid Query.
unsafe fn reads_citus_tables(rows: *mut pg_sys::Query) -> bool {
    let (mut relations, mut items, mut row_security) = (ptr::null_mut(), ptr::null_mut(), false);
    // SAFETY: the caller guarantees `rows` is a valid Query; the walker only reads it
    // (PostgreSQL's plan cache runs it on queries before planning them), and lists the relations
    // of every range table.
    unsafe {
        pg_sys::extract_query_dependencies(rows.cast(), &mut relations, &mut items, &mut row_security);
        cells(relations).iter().any(|cell| super::citus::is_citus_table(cell.oid_value))
    }
}

/// The `ON CONFLICT … DO NOTHING` clause of INSERT `parse` into table `relid` (`table`, for
/// messages), as the checked write appends it to its own INSERT; None without one.
/// Its arbiter is named as the statement names it: columns, or a constraint. 0A000 for `DO
/// UPDATE`, and for an arbiter the clause cannot name (an expression, a collation or operator
/// class, a partial index's `WHERE`).
///
/// # Safety
/// `parse` is a query being planned; `relid` its target.
unsafe fn conflict_clause(parse: *mut pg_sys::Query, relid: pg_sys::Oid, table: &str) -> Option<String> {
    // SAFETY: a valid Query and its OnConflictExpr; catalog lookups of the target's columns and
    // constraints.
    unsafe {
        let conflict = (*parse).onConflict;
        if conflict.is_null() {
            return None;
        }
        if (*conflict).action != pg_sys::OnConflictAction::ONCONFLICT_NOTHING {
            not_supported(
                "INSERT … ON CONFLICT DO UPDATE",
                table,
                "Use ON CONFLICT DO NOTHING, then UPDATE the rows that were not stored.",
            );
        }
        let hint = "Name the arbiter by its columns or with ON CONSTRAINT, or leave it out.";
        if !(*conflict).arbiterWhere.is_null() {
            not_supported("INSERT … ON CONFLICT (…) WHERE …", table, hint);
        }
        let arbiter = if (*conflict).constraint != pg_sys::InvalidOid {
            let name = CStr::from_ptr(pg_sys::get_constraint_name((*conflict).constraint)).to_string_lossy();
            format!(" ON CONSTRAINT {}", pgrx::spi::quote_identifier(name))
        } else if !(*conflict).arbiterElems.is_null() {
            let columns: Vec<String> = cells((*conflict).arbiterElems)
                .iter()
                .map(|cell| {
                    let elem = cell.ptr_value as *mut pg_sys::InferenceElem;
                    let var = (*elem).expr as *mut pg_sys::Var;
                    let plain = (*var).xpr.type_ == pg_sys::NodeTag::T_Var
                        && (*var).varattno > 0
                        && (*elem).infercollid == pg_sys::InvalidOid
                        && (*elem).inferopclass == pg_sys::InvalidOid;
                    if !plain {
                        not_supported(
                            "INSERT … ON CONFLICT on an expression, a collation or an operator class",
                            table,
                            hint,
                        );
                    }
                    let name = CStr::from_ptr(pg_sys::get_attname(relid, (*var).varattno, false)).to_string_lossy();
                    pgrx::spi::quote_identifier(name)
                })
                .collect();
            format!(" ({})", columns.join(", "))
        } else {
            String::new()
        };
        Some(format!(" ON CONFLICT{arbiter} DO NOTHING"))
    }
}

/// Query `rows` as SQL, deparsed with only pg_catalog on the search path (every name
/// qualified).
///
/// # Safety
/// `rows` is a query being planned.
#[cfg(not(feature = "pg14"))]
unsafe fn query_sql(rows: *mut pg_sys::Query, _table: &str) -> String {
    // SAFETY: a valid Query, deparsed from a copy; the GUC nest level is opened and closed here.
    unsafe {
        let nest = pg_sys::NewGUCNestLevel();
        super::checked::set_local("search_path", "pg_catalog");
        let sql = pg_sys::pg_get_querydef(pg_sys::copyObjectImpl(rows.cast()) as *mut pg_sys::Query, false);
        let sql = CStr::from_ptr(sql).to_string_lossy().into_owned();
        pg_sys::AtEOXact_GUC(true, nest);
        sql
    }
}

/// PostgreSQL 14 exports no deparser of a query (pg_get_querydef came in 15): 0A000.
///
/// # Safety
/// None; unsafe as the other variant.
#[cfg(feature = "pg14")]
unsafe fn query_sql(_rows: *mut pg_sys::Query, table: &str) -> String {
    not_supported(
        "an UPDATE of the checked column on PostgreSQL 14",
        table,
        "Use PostgreSQL 15 or newer for such updates of distributed dedup tables.",
    )
}

/// Adds `text` to the private list of the custom scan on top of `stmt` (after its integers, a
/// String node): an INSERT's `ON CONFLICT` clause, an UPDATE's query of its rows.
///
/// # Safety
/// `stmt` is a plan [`wrap_in_scan`] made, in the planner's memory context.
unsafe fn add_private_text(stmt: *mut pg_sys::PlannedStmt, text: &str) {
    // SAFETY: the caller guarantees `stmt` is a plan wrap_in_scan made (its planTree a
    // CustomScan) in the planner's memory context, where the String node and its text are
    // palloc'd.
    unsafe {
        let scan = (*stmt).planTree as *mut pg_sys::CustomScan;
        let text = std::ffi::CString::new(text).unwrap_or_default();
        let node = pg_sys::makeString(pg_sys::pstrdup(text.as_ptr()));
        (*scan).custom_private = pg_sys::lappend((*scan).custom_private, node.cast());
    }
}

/// The text [`add_private_text`] put in custom scan `scan`'s plan, if any.
///
/// # Safety
/// `scan` is a plan of [`wrap_in_scan`].
unsafe fn private_text(scan: *mut pg_sys::CustomScan) -> Option<String> {
    // SAFETY: the private list of wrap_in_scan: the integers, then maybe a String.
    unsafe {
        let private = (*scan).custom_private;
        (pg_sys::list_length(private) > 1).then(|| {
            #[cfg(not(feature = "pg14"))]
            let text = (*(pg_sys::list_nth(private, 1) as *mut pg_sys::String)).sval;
            // PostgreSQL 14: a Value node of type T_String.
            #[cfg(feature = "pg14")]
            let text = (*(pg_sys::list_nth(private, 1) as *mut pg_sys::Value)).val.str_;
            CStr::from_ptr(text).to_string_lossy().into_owned()
        })
    }
}

/// A copy of the RETURNING list of write `parse` (`verb`: INSERT or UPDATE) into `table`, to be
/// computed from the rows stored; NULL without one. 0A000 for what the rows stored do not hold:
/// a sub-SELECT, a column of another relation than the target (an UPDATE's FROM list), a system
/// column, or (PostgreSQL 18) the row as it was before the statement (`old`).
///
/// # Safety
/// `parse` is a query being planned.
unsafe fn returning_list(parse: *mut pg_sys::Query, table: &str, verb: &str) -> *mut pg_sys::List {
    // SAFETY: a valid Query; pull_var_clause walks its RETURNING list (which holds no aggregate
    // or placeholder: the parser allows none there).
    unsafe {
        let list = (*parse).returningList;
        if list.is_null() {
            return ptr::null_mut();
        }
        let hint = "Return columns of the table itself, and compute the rest from them in a second statement.";
        if pg_sys::contain_subplans(list.cast()) {
            not_supported(&format!("{verb} … RETURNING a sub-SELECT"), table, hint);
        }
        for cell in cells(pg_sys::pull_var_clause(list.cast(), 0)) {
            let var = cell.ptr_value as *mut pg_sys::Var;
            if i64::from((*var).varno) != i64::from((*parse).resultRelation) {
                not_supported(&format!("{verb} … RETURNING columns of another table"), table, hint);
            }
            if (*var).varattno < 0 {
                not_supported(&format!("{verb} … RETURNING a system column"), table, hint);
            }
            #[cfg(feature = "pg18")]
            if (*var).varreturningtype == pg_sys::VarReturningType::VAR_RETURNING_OLD {
                not_supported(&format!("{verb} … RETURNING old values"), table, hint);
            }
        }
        pg_sys::copyObjectImpl(list.cast()) as *mut pg_sys::List
    }
}

/// Puts the custom scan of `methods` on top of `stmt`, the plan of the rows of write `parse`
/// (of kind `command`) into table `relid`, filling columns `written`; `pinned`: the rows' plan
/// begins and runs with the transfer's settings pinned (it reads Citus tables). With a
/// RETURNING list (`returning`, of [`returning_list`]), the scan returns it, computed from the
/// rows stored: it scans them as rows of the target, which joins the plan's relations for it.
///
/// # Safety
/// `stmt` was just planned for `parse`; `methods` are static.
#[allow(clippy::too_many_arguments)]
unsafe fn wrap_in_scan(
    stmt: *mut pg_sys::PlannedStmt,
    parse: *mut pg_sys::Query,
    relid: pg_sys::Oid,
    written: &[i32],
    pinned: bool,
    returning: *mut pg_sys::List,
    methods: *const pg_sys::CustomScanMethods,
    command: pg_sys::CmdType::Type,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: nodes palloc'd in the planner's memory context, as the planner's own.
    unsafe {
        let scan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        let child = (*stmt).planTree;
        (*scan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        (*scan).scan.plan.startup_cost = (*child).total_cost;
        (*scan).scan.plan.total_cost = (*child).total_cost;
        (*scan).scan.plan.plan_node_id = i32::MAX; // numbered apart from the planner's nodes
        (*scan).custom_plans = pg_sys::lappend(ptr::null_mut(), child.cast());
        let private: Vec<i32> =
            [u32::from(relid) as i32, i32::from(pinned)].into_iter().chain(written.iter().copied()).collect();
        (*scan).custom_private = crate::catalog::private_ints(&private);
        (*scan).methods = methods;
        (*stmt).planTree = scan.cast();
        (*stmt).commandType = command;
        (*stmt).hasReturning = !returning.is_null();
        if !returning.is_null() {
            // The target, appended to the plan's relations (the rows' plan does not read it), with
            // no privileges to check there: `begin` checks SELECT on the columns returned, the
            // checked write INSERT or UPDATE on those written. Locked as the statement locks it.
            let target = pg_sys::copyObjectImpl(pg_sys::list_nth((*parse).rtable, (*parse).resultRelation - 1))
                as *mut pg_sys::RangeTblEntry;
            (*target).inh = false;
            (*target).inFromCl = false;
            #[cfg(any(feature = "pg14", feature = "pg15"))]
            {
                (*target).requiredPerms = 0;
            }
            #[cfg(not(any(feature = "pg14", feature = "pg15")))]
            {
                (*target).perminfoindex = 0;
            }
            (*stmt).rtable = pg_sys::lappend((*stmt).rtable, target.cast());
            let rti = pg_sys::list_length((*stmt).rtable);
            #[cfg(feature = "pg18")]
            {
                (*stmt).unprunableRelids = pg_sys::bms_add_member((*stmt).unprunableRelids, rti);
            }
            // (pull_var_clause lists the Var nodes themselves.)
            for cell in cells(pg_sys::pull_var_clause(returning.cast(), 0)) {
                let var = cell.ptr_value as *mut pg_sys::Var;
                (*var).varno = rti as _;
                (*var).varnosyn = rti as _;
            }
            pg_sys::fix_opfuncids(returning.cast());
            (*scan).scan.scanrelid = rti as pg_sys::Index;
            (*scan).scan.plan.targetlist = returning;
        }
        (*stmt).canSetTag = (*parse).canSetTag;
        // A cached plan is replanned when the table changes (its trigger dropped, say).
        (*stmt).relationOids = pg_sys::lappend_oid((*stmt).relationOids, relid);
        stmt
    }
}

/// A new memory context, a child of the current one, for a batch's rows.
fn memory_context(name: &'static CStr) -> pg_sys::MemoryContext {
    // SAFETY: an AllocSet under the current context (freed with it), as AllocSetContextCreate
    // makes one.
    unsafe {
        pg_sys::AllocSetContextCreateExtended(
            pg_sys::CurrentMemoryContext,
            name.as_ptr(),
            pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
        )
    }
}

/// Forms a row of `desc` from `values` / `nulls` (one per column) in memory context `cx`, adds
/// it to `rows` as a datum of the table's row type, and returns its size in bytes.
///
/// # Safety
/// `desc` is the table's descriptor; the values are of its columns' types.
unsafe fn push_row(
    cx: pg_sys::MemoryContext,
    desc: pg_sys::TupleDesc,
    values: &mut [pg_sys::Datum],
    nulls: &mut [bool],
    rows: &mut Vec<pg_sys::Datum>,
) -> usize {
    // SAFETY: the caller guarantees `desc` is the table's descriptor and `values` / `nulls` one
    // per column, of its types, as heap_form_tuple reads them; the tuple is formed and copied in
    // `cx`, then the current context restored.
    unsafe {
        let old = pg_sys::CurrentMemoryContext;
        pg_sys::CurrentMemoryContext = cx;
        let tuple = pg_sys::heap_form_tuple(desc, values.as_mut_ptr(), nulls.as_mut_ptr());
        rows.push(pg_sys::heap_copy_tuple_as_datum(tuple, desc));
        pg_sys::CurrentMemoryContext = old;
        (*tuple).t_len as usize
    }
}

/// The state of a `SimdupCheckedInsert` node (palloc'd, nothing Rust owns).
#[repr(C)]
struct State {
    css: pg_sys::CustomScanState,
    rel: pg_sys::Relation,
    /// The rows of the batch being checked.
    rows: pg_sys::MemoryContext,
    /// simdup's schema, quoted (palloc'd C string).
    ext_schema: *mut c_char,
    /// The rows stored, for the RETURNING list (NULL without one).
    returned: *mut pg_sys::Tuplestorestate,
    /// Every row of the child plan has been written.
    written: bool,
}

#[pg_guard]
unsafe extern "C-unwind" fn create_state(_scan: *mut pg_sys::CustomScan) -> *mut pg_sys::Node {
    new_state(&raw const EXEC_METHODS)
}

#[pg_guard]
unsafe extern "C-unwind" fn create_update_state(_scan: *mut pg_sys::CustomScan) -> *mut pg_sys::Node {
    new_state(&raw const EXEC_METHODS_UPDATE)
}

/// A zeroed state node of the executor's kind with the custom scan's `methods`, as nodeCustom.c
/// expects.
fn new_state(methods: *const pg_sys::CustomExecMethods) -> *mut pg_sys::Node {
    // SAFETY: palloc0 of a node the size of State, in the executor's memory context.
    unsafe {
        let state = pg_sys::palloc0(std::mem::size_of::<State>()) as *mut State;
        (*state).css.ss.ps.type_ = pg_sys::NodeTag::T_CustomScanState;
        (*state).css.methods = methods;
        state.cast()
    }
}

/// The plan's private list: the table, whether the rows' plan runs with the transfer's settings
/// pinned, then the columns the rows fill.
///
/// # Safety
/// `node` is a `SimdupCheckedInsert` or `SimdupCheckedUpdate` node.
unsafe fn private(node: *mut pg_sys::CustomScanState) -> (pg_sys::Oid, bool, Vec<i32>) {
    // SAFETY: the plan built by wrap_in_scan.
    let ints = unsafe { crate::catalog::ints_of_private((*node).ss.ps.plan as *mut pg_sys::CustomScan) };
    (pg_sys::Oid::from(ints[0] as u32), ints[1] != 0, ints[2..].to_vec())
}

/// 42501 unless the user may read every column of table `relid` that the RETURNING list
/// `targets` (scanning it as relation `scanrelid`) returns, as the executor checks an INSERT's or
/// UPDATE's RETURNING (a whole-row reference: every column).
///
/// # Safety
/// In a transaction; `relid` is locked; `targets` is a List of TargetEntry.
unsafe fn check_returning_privileges(relid: pg_sys::Oid, targets: *mut pg_sys::List, scanrelid: pg_sys::Index) {
    // SAFETY: the caller guarantees a transaction, `relid` locked (so RelationIdGetRelation finds
    // it open) and `targets` a List of TargetEntry; catalog and ACL lookups of its columns.
    unsafe {
        let mut attrs: *mut pg_sys::Bitmapset = ptr::null_mut();
        pg_sys::pull_varattnos(targets.cast(), scanrelid, &mut attrs);
        let rel = pg_sys::RelationIdGetRelation(relid);
        let natts = (*(*rel).rd_att).natts;
        let table = qualified_name(rel);
        pg_sys::RelationClose(rel);
        let mut columns: Vec<i32> = Vec::new();
        let mut member = -1;
        loop {
            member = pg_sys::bms_next_member(attrs, member);
            if member < 0 {
                break;
            }
            match member + pg_sys::FirstLowInvalidHeapAttributeNumber {
                0 => columns.extend(1..=natts),
                attnum => columns.push(attnum),
            }
        }
        for attnum in columns {
            let attnum = attnum as pg_sys::AttrNumber;
            if pg_sys::get_attname(relid, attnum, true).is_null() {
                continue; // dropped
            }
            if !crate::access::column_privilege(relid, attnum, pg_sys::ACL_SELECT as pg_sys::AclMode) {
                Error::new(Code::ERRCODE_INSUFFICIENT_PRIVILEGE, format!("permission denied for table {table}"))
                    .detail("RETURNING reads the rows written, which needs SELECT on the columns it returns.")
                    .raise();
            }
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn begin(node: *mut pg_sys::CustomScanState, estate: *mut pg_sys::EState, eflags: c_int) {
    // SAFETY: the executor's node and state; the child plan is initialized as a child node; the
    // GUC nest level around that is closed at once (an error's abort closes it otherwise).
    unsafe {
        let scan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let child = pg_sys::list_nth((*scan).custom_plans, 0) as *mut pg_sys::Plan;
        let (relid, pinned, _) = private(node);
        // (Citus writes a prepared statement's shard query when its scan begins.)
        let nest = pg_sys::NewGUCNestLevel();
        if pinned {
            pin_coordinator();
        }
        let child_state = pg_sys::ExecInitNode(child, estate, eflags);
        pg_sys::AtEOXact_GUC(true, nest);
        (*node).custom_ps = pg_sys::lappend(ptr::null_mut(), child_state.cast());
        let state = node as *mut State;
        // The lock the INSERT's target takes (the rows' plan does not take it).
        (*state).rel = pg_sys::table_open(relid, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
        (*state).rows = memory_context(c"simdup checked insert rows");
        if eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as c_int == 0 {
            let schema = std::ffi::CString::new(crate::catalog::extension_schema()).unwrap_or_default();
            (*state).ext_schema = pg_sys::pstrdup(schema.as_ptr());
        }
        let scanrelid = (*scan).scan.scanrelid;
        if scanrelid > 0 {
            // RETURNING: the rows stored are kept (as minimal tuples of the table's descriptor)
            // and scanned back through the plan's projection, which is rebuilt for a scan slot
            // of that kind.
            let ss = &raw mut (*node).ss;
            pg_sys::ExecInitScanTupleSlot(estate, ss, (*(*state).rel).rd_att, &raw const pg_sys::TTSOpsMinimalTuple);
            pg_sys::ExecAssignScanProjectionInfoWithVarno(ss, scanrelid as _);
            (*state).returned = pg_sys::tuplestore_begin_heap(false, false, pg_sys::work_mem);
            if eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as c_int == 0 {
                check_returning_privileges(relid, (*scan).scan.plan.targetlist, scanrelid);
            }
        }
    }
}

/// Writes every row of the child plan on the first call; returns the RETURNING list of each row
/// stored, if the statement has one, else no tuple.
unsafe extern "C-unwind" fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: the executor's node; `exec_rows` is guarded.
    unsafe { write_all(node, exec_rows) }
}

/// Writes every row of the child plan through the checked update on the first call; returns the
/// RETURNING list of each row written, if the statement has one, else no tuple.
unsafe extern "C-unwind" fn exec_update(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: the executor's node; `exec_update_rows` is guarded.
    unsafe { write_all(node, exec_update_rows) }
}

/// Runs `write` (a guarded writer of the child plan's rows) on `node` once, then raises the
/// near-duplicate error it stopped at, if any, from this frame; returns the next row of the
/// RETURNING list (none without one).
///
/// # Safety
/// The executor's node; `write` is guarded (its errors become PostgreSQL errors there).
unsafe fn write_all(
    node: *mut pg_sys::CustomScanState,
    write: unsafe extern "C-unwind" fn(*mut pg_sys::CustomScanState, *mut Option<ConstraintError>),
) -> *mut pg_sys::TupleTableSlot {
    let state = node as *mut State;
    // SAFETY: the executor's node, of `State`.
    if !unsafe { (*state).written } {
        // SAFETY: `node` is the executor's node (the caller's contract), allocated as a `State`
        // by new_state, so `written` is its field.
        unsafe { (*state).written = true };
        let mut duplicate = None;
        // SAFETY: the caller guarantees the executor's node and a guarded `write` (its errors
        // become PostgreSQL errors there); `duplicate` lives on this frame for the call.
        unsafe { write(node, &mut duplicate) };
        if let Some(error) = duplicate {
            // SAFETY: the frames above are the executor's callback and this one, nothing in them
            // needs dropping (a ConstraintError holds only palloc'd pointers), and the relation is
            // open.
            unsafe { error.raise() }
        }
    }
    let mut slot = ptr::null_mut();
    // SAFETY: `node` is the executor's node of `State` (the caller's contract); `returned` is
    // non-NULL only once `begin` made the store next_returned reads; `next_returned` is guarded.
    unsafe {
        if !(*state).returned.is_null() {
            next_returned(node, &mut slot);
        }
    }
    slot
}

/// The next row of the RETURNING list into `*out`: the projection of the next row stored
/// (ExecScan: the plan's target list over the scan slot), an empty slot after the last.
///
/// # Safety
/// A node of [`State`] with its store of rows.
#[pg_guard]
unsafe extern "C-unwind" fn next_returned(node: *mut pg_sys::CustomScanState, out: *mut *mut pg_sys::TupleTableSlot) {
    // SAFETY: the caller guarantees a `State` node with its store, whose scan slot and projection
    // `begin` set up for ExecScan; `out` is the caller's local.
    unsafe { *out = pg_sys::ExecScan(&raw mut (*node).ss, Some(fetch_returned), Some(recheck_returned)) }
}

/// ExecScan's access method: the next row stored into the scan slot (a slot of minimal tuples,
/// the store's kind), or the slot emptied after the last.
#[pg_guard]
unsafe extern "C-unwind" fn fetch_returned(ss: *mut pg_sys::ScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: the ScanState of a node of `State` (its first member) with its store.
    unsafe {
        let slot = (*ss).ss_ScanTupleSlot;
        pg_sys::tuplestore_gettupleslot((*(ss as *mut State)).returned, true, false, slot);
        slot
    }
}

/// ExecScan's recheck method: never called (no EvalPlanQual reaches this node, which locks no
/// rows of its own); every row stored qualifies.
#[pg_guard]
unsafe extern "C-unwind" fn recheck_returned(_ss: *mut pg_sys::ScanState, _slot: *mut pg_sys::TupleTableSlot) -> bool {
    true
}

/// Where the checked write puts the rows it stores: the node's store, if its statement has a
/// RETURNING list.
///
/// # Safety
/// A node of [`State`], begun.
unsafe fn returned(state: *mut State) -> Option<Returned> {
    // SAFETY: the caller guarantees a `State` node begun by `begin`: `rel` is open and `returned`
    // NULL or its store.
    unsafe {
        (!(*state).returned.is_null()).then(|| Returned { store: (*state).returned, desc: (*(*state).rel).rd_att })
    }
}

/// # Safety
/// The executor's node.
#[pg_guard]
unsafe extern "C-unwind" fn exec_rows(node: *mut pg_sys::CustomScanState, duplicate: *mut Option<ConstraintError>) {
    // SAFETY: the caller guarantees the executor's node; #[pg_guard] puts this frame inside
    // pgrx's guard, as pinned_if_sent and write_rows ask; `duplicate` is write_all's local.
    unsafe { pinned_if_sent(node, || write_rows(node, duplicate)) }
}

/// Runs `write` (the writes of checked statement `node`'s rows, pulling them from its child
/// plan) with the transfer's settings pinned ([`pin_transfer`]) if the rows' plan reads Citus
/// tables, else as it is (the checked writes pin them for their own statements).
///
/// # Safety
/// The executor's node, inside pgrx's guard.
unsafe fn pinned_if_sent(node: *mut pg_sys::CustomScanState, write: impl FnOnce()) {
    // SAFETY: the caller guarantees the executor's node (its plan has wrap_in_scan's private
    // list, which `private` reads), inside pgrx's guard; the GUC nest level is closed here, or by
    // the (sub)transaction's abort on an error.
    unsafe {
        let (_, pinned, _) = private(node);
        if !pinned {
            return write();
        }
        let nest = pg_sys::NewGUCNestLevel();
        pin_transfer();
        write();
        pg_sys::AtEOXact_GUC(true, nest);
    }
}

/// The writes of `exec_rows`.
///
/// # Safety
/// The executor's node, inside pgrx's guard.
unsafe fn write_rows(node: *mut pg_sys::CustomScanState, duplicate: *mut Option<ConstraintError>) {
    // SAFETY: the child's slots are read before the next row is asked for; each row is formed
    // with the relation's own descriptor (the target list's types are the columns' types) and
    // copied into the batch's memory, reset for each batch; the checks' memory is the node's
    // expression context's, reset for each batch.
    unsafe {
        let state = node as *mut State;
        let child = pg_sys::list_nth((*node).custom_ps, 0) as *mut pg_sys::PlanState;
        let (relid, _, written) = private(node);
        let ext_schema = CStr::from_ptr((*state).ext_schema).to_string_lossy().into_owned();
        let desc = (*(*state).rel).rd_att;
        let natts = (*desc).natts as usize;
        let per_batch = (*(*node).ss.ps.ps_ExprContext).ecxt_per_tuple_memory;
        let estate = (*node).ss.ps.state;
        // A batch at a time where the check allows it (src/dedup/checked.rs, write_batch),
        // else a row at a time.
        let conflict = private_text((*node).ss.ps.plan as *mut pg_sys::CustomScan);
        let batch_rows = if batchable((*state).rel) { BATCH_ROWS } else { 1 };
        let mut values = vec![pg_sys::Datum::from(0); natts];
        let mut nulls = vec![true; natts];
        // (A plan is not asked again once it has returned its end: a scan would start over.)
        let mut done = false;
        while !done {
            pg_sys::MemoryContextReset((*state).rows);
            let mut rows: Vec<pg_sys::Datum> = Vec::new();
            done = !pull_batch(child, batch_rows, |slot| {
                values.fill(pg_sys::Datum::from(0));
                nulls.fill(true);
                for (i, &attnum) in written.iter().enumerate() {
                    values[attnum as usize - 1] = *(*slot).tts_values.add(i);
                    nulls[attnum as usize - 1] = *(*slot).tts_isnull.add(i);
                }
                Some(push_row((*state).rows, desc, &mut values, &mut nulls, &mut rows))
            });
            if rows.is_empty() {
                break;
            }
            pg_sys::MemoryContextReset(per_batch);
            let old = pg_sys::CurrentMemoryContext;
            pg_sys::CurrentMemoryContext = per_batch;
            let returned = returned(state);
            let outcome = if rows.len() == 1 {
                let row = Row { datum: rows[0], written: written.clone() };
                write_row(relid, row, &ext_schema, conflict.as_deref(), returned.as_ref())
            } else {
                write_batch(relid, &rows, &written, &ext_schema, conflict.as_deref(), returned.as_ref())
            };
            pg_sys::CurrentMemoryContext = old;
            match outcome {
                Outcome::Stored(n) => (*estate).es_processed += n,
                Outcome::Duplicate(error) => {
                    *duplicate = Some(error);
                    return;
                }
                Outcome::Changed => crate::errors::internal("an INSERT's checked write found its row changed"),
            }
        }
    }
}

/// How a checked UPDATE takes the rows of its rows' query — each row's ctid, key and checked
/// value as it is, then the new values of the columns written — for the checked update: a datum
/// of the table's row type holding the key and the new values, and the row as the query read it
/// ([`OldRow`]).
struct UpdateRows<'a> {
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
                super::checked::key_equality(self.key_type),
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

/// # Safety
/// The executor's node.
#[pg_guard]
unsafe extern "C-unwind" fn exec_update_rows(
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
unsafe fn write_update_rows(node: *mut pg_sys::CustomScanState, duplicate: *mut Option<ConstraintError>) {
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
        // A batch at a time where the check allows it (src/dedup/checked.rs, update_batch),
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
                    super::checked::concurrent_update(format!(
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
const REREADS: usize = 100;

/// Asks `child` for rows and hands each, its attributes read, to `take`, which returns the bytes
/// it kept of it (None: the row is left out), until `limit` rows were kept or [`BATCH_BYTES`].
/// False once the plan has returned its end (it is not asked again: a scan would start over).
///
/// # Safety
/// `child` is an initialised plan state; `take` reads the slot before the next row is asked for.
unsafe fn pull_batch(
    child: *mut pg_sys::PlanState,
    limit: usize,
    mut take: impl FnMut(*mut pg_sys::TupleTableSlot) -> Option<usize>,
) -> bool {
    let (mut kept, mut bytes) = (0, 0);
    while kept < limit && bytes < BATCH_BYTES {
        // SAFETY: the caller guarantees `child` is an initialised plan state; the slot it returns
        // is valid until the next call.
        let slot = unsafe { pg_sys::ExecProcNode(child) };
        // SAFETY: `slot` is checked non-NULL first; it is the slot just returned, still valid.
        if slot.is_null() || unsafe { (*slot).tts_flags } & pg_sys::TTS_FLAG_EMPTY as u16 != 0 {
            return false;
        }
        // SAFETY: `slot` is the non-empty slot just returned (the plan not yet asked again);
        // slot_getallattrs deforms its columns for `take`.
        unsafe { pg_sys::slot_getallattrs(slot) };
        if let Some(b) = take(slot) {
            kept += 1;
            bytes += b;
        }
    }
    true
}

#[pg_guard]
unsafe extern "C-unwind" fn end(node: *mut pg_sys::CustomScanState) {
    // SAFETY: the node begun by `begin`.
    unsafe {
        pg_sys::ExecEndNode(pg_sys::list_nth((*node).custom_ps, 0) as *mut pg_sys::PlanState);
        let state = node as *mut State;
        if !(*state).returned.is_null() {
            pg_sys::tuplestore_end((*state).returned);
        }
        if !(*state).rel.is_null() {
            pg_sys::table_close((*state).rel, pg_sys::NoLock as pg_sys::LOCKMODE);
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn rescan(node: *mut pg_sys::CustomScanState) {
    // SAFETY: the node begun by `begin`.
    unsafe { pg_sys::ExecReScan(pg_sys::list_nth((*node).custom_ps, 0) as *mut pg_sys::PlanState) }
}

#[pg_guard]
unsafe extern "C-unwind" fn explain(
    node: *mut pg_sys::CustomScanState,
    _ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: the node begun by `begin`; EXPLAIN's state.
    unsafe {
        let table = qualified_name((*(node as *mut State)).rel);
        let text = std::ffi::CString::new(format!("each row against every shard of {table}")).unwrap_or_default();
        pg_sys::ExplainPropertyText(c"Dedup Check".as_ptr(), text.as_ptr(), es);
    }
}

// ---- COPY … FROM: the utility hook ----

/// Rows checked and written together, at most (and at most [`BATCH_BYTES`] of them): the
/// batches of `SimdupCheckedInsert`, and the rows a COPY sends to one INSERT.
const BATCH_ROWS: usize = 1000;
const BATCH_BYTES: usize = 16 << 20;

/// A COPY into a table that [`needs_check`], in progress (palloc'd: the hook's frame holds
/// nothing to drop).
struct CopyJob {
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

/// The utility hook: `COPY t FROM …` into a table that [`needs_check`] is read here and its
/// rows written in batches by `INSERT … SELECT`, which the planner hook above plans as checked
/// writes (Citus opens a coordinated transaction for statements a statement runs, so the
/// shards' writes commit or abort with this one); into a plain dedup table that
/// [`super::readahead::copies_ahead`], in batches of up to
/// `simdup.copy_batch_memory`, each read ahead for the bulk check. Everything else
/// goes to the previous hook (Citus's) or the standard one, unchanged.
///
/// # Safety
/// Called by PostgreSQL with ProcessUtility's arguments.
#[allow(clippy::too_many_arguments)]
unsafe extern "C-unwind" fn process_utility(
    pstmt: *mut pg_sys::PlannedStmt,
    query_string: *const c_char,
    read_only_tree: bool,
    context: pg_sys::ProcessUtilityContext::Type,
    params: pg_sys::ParamListInfo,
    query_env: *mut pg_sys::QueryEnvironment,
    dest: *mut pg_sys::DestReceiver,
    qc: *mut pg_sys::QueryCompletion,
) {
    let mut job: *mut CopyJob = ptr::null_mut();
    // SAFETY: `copy_begin` is guarded; the statement is valid for the call.
    unsafe { copy_begin(pstmt, query_string, &mut job) };
    if job.is_null() {
        // SAFETY: the previous hook or the standard one, with the same arguments; their errors
        // pass through this frame, which holds nothing that needs dropping.
        unsafe {
            match PREVIOUS_UTILITY {
                Some(previous) => previous(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc),
                None => standard_process_utility_unguarded(
                    pstmt,
                    query_string,
                    read_only_tree,
                    context,
                    params,
                    query_env,
                    dest,
                    qc,
                ),
            }
        }
        return;
    }
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
/// [`super::readahead::copies_ahead`] (`*job` stays NULL for any other statement).
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
        let source = if checked { None } else { super::readahead::copies_ahead(rel, stmt) };
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
        super::readahead::clear_ahead();
        let text_attnum = match source {
            Some(super::bulk::HintSource::Text(attnum)) => attnum,
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
/// [`super::readahead::fingerprint_ahead`] for the batch's INSERT.
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
                if let Some(text) = super::tuple::text_of(values[attnum as usize - 1], (*job).text_type) {
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
        super::readahead::fingerprint_ahead((*rel).rd_id, texts);
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
        super::readahead::clear_ahead();
        pg_sys::EndCopyFrom((*job).cstate);
        pg_sys::FreeExecutorState((*job).estate);
        pg_sys::MemoryContextDelete((*job).batch);
        pg_sys::MemoryContextDelete((*job).spare);
        pg_sys::table_close((*job).rel, pg_sys::NoLock as pg_sys::LOCKMODE);
    }
}
