//! Planning of a plain INSERT or text-changing UPDATE into a distributed dedup table: the rows as a query
//! of their own, under the checked write's custom scan.

use super::node::add_private_text;
use super::returning::returning_list;
use super::rules::{needs_check, not_supported};
use super::scan::{SCAN_METHODS, SCAN_METHODS_UPDATE};
use std::ffi::{c_char, c_int, CStr};
use std::ptr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::catalog::{cells, qualified_name};
use crate::citus::checked::pin_coordinator;

// rewriteManip.c: adds `offset` to every range-table reference of `node` at `sublevels_up`
// (not in pgrx's bindings), called as C calls it.
unsafe extern "C-unwind" {
    #[link_name = "OffsetVarNodes"]
    fn offset_var_nodes(node: *mut pg_sys::Node, offset: c_int, sublevels_up: c_int);
}

/// Plans `parse` into `*planned` if it is an INSERT or UPDATE that must go through the checked
/// write; the statement's rows are planned by `previous` (the planner hook installed before
/// simdup's: Citus's), or the standard planner. Called by the planner hook (src/hooks.rs).
///
/// # Safety
/// The planner's arguments.
#[pg_guard]
pub(crate) unsafe extern "C-unwind" fn plan_if_checked(
    previous: pg_sys::planner_hook_type,
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
            *planned = plan_checked_insert(previous, parse, relid, query_string, cursor_options, bound_params);
        } else if let Some((relid, source, key)) = update_target(parse) {
            *planned =
                plan_checked_update(previous, parse, relid, source, key, query_string, cursor_options, bound_params);
        }
    }
}

/// The previous planner hook `previous`, or the standard planner, inside pgrx's guard.
///
/// # Safety
/// The planner's arguments.
pub(super) unsafe fn previous_planner(
    previous: pg_sys::planner_hook_type,
    parse: *mut pg_sys::Query,
    query_string: *const c_char,
    cursor_options: c_int,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: the previous hook, or the standard planner, with the planner's arguments; an
    // error in the hook becomes a Rust panic at the boundary.
    unsafe {
        match previous {
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
pub(super) unsafe fn insert_target(parse: *mut pg_sys::Query) -> Option<pg_sys::Oid> {
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
pub(super) unsafe fn result_to_check(parse: *mut pg_sys::Query) -> Option<pg_sys::Oid> {
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
pub(super) unsafe fn update_target(parse: *mut pg_sys::Query) -> Option<(pg_sys::Oid, i32, i32)> {
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
pub(super) unsafe fn checked_target(parse: *mut pg_sys::Query) -> Option<(pg_sys::Oid, i32, i32)> {
    // SAFETY: a valid Query; the relation is locked by the statement.
    unsafe {
        let relid = result_to_check(parse)?;
        let rel = pg_sys::RelationIdGetRelation(relid);
        let columns = crate::citus::checked::checked_columns(rel);
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
pub(super) unsafe fn assigns(targets: *mut pg_sys::List, attnum: i32) -> bool {
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
/// # Safety
/// `parse` is a query being planned.
pub(super) unsafe fn refuse_unchecked_merge(parse: *mut pg_sys::Query) {
    // SAFETY: a valid Query; the result relation is locked by the statement.
    unsafe {
        let Some(actions) = crate::compat::merge_actions(parse) else { return };
        let Some((relid, source, _)) = checked_target(parse) else { return };
        let writes_text = actions.iter().any(|&(command, targets)| match command {
            pg_sys::CmdType::CMD_INSERT => true,
            pg_sys::CmdType::CMD_UPDATE => assigns(targets, source),
            _ => false,
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
/// update, in batches ([`crate::citus::checked::update_batch`]) or row by row
/// ([`crate::citus::checked::update_row`]).
///
/// # Safety
/// The planner's arguments; `relid` is the UPDATE's target, `source` the column its check reads,
/// `key` its key column.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn plan_checked_update(
    previous: pg_sys::planner_hook_type,
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
        let stmt = previous_planner(previous, rows, query_string, options, bound_params);
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
pub(super) unsafe fn plan_checked_insert(
    previous: pg_sys::planner_hook_type,
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
            crate::compat::clear_required_permissions(target);
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
        let stmt = previous_planner(previous, rows, query_string, options, bound_params);
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
pub(super) unsafe fn reads_citus_tables(rows: *mut pg_sys::Query) -> bool {
    let (mut relations, mut items, mut row_security) = (ptr::null_mut(), ptr::null_mut(), false);
    // SAFETY: the caller guarantees `rows` is a valid Query; the walker only reads it
    // (PostgreSQL's plan cache runs it on queries before planning them), and lists the relations
    // of every range table.
    unsafe {
        pg_sys::extract_query_dependencies(rows.cast(), &mut relations, &mut items, &mut row_security);
        cells(relations).iter().any(|cell| crate::citus::shard::is_citus_table(cell.oid_value))
    }
}

/// Query `rows` as SQL, deparsed with only pg_catalog on the search path (every name
/// qualified); 0A000 on PostgreSQL 14, which exports no deparser of a query.
///
/// # Safety
/// `rows` is a query being planned.
unsafe fn query_sql(rows: *mut pg_sys::Query, table: &str) -> String {
    // SAFETY: a valid Query, deparsed from a copy; the GUC nest level is opened and closed here.
    let sql = unsafe {
        let nest = pg_sys::NewGUCNestLevel();
        crate::citus::checked::set_local("search_path", "pg_catalog");
        let sql = crate::compat::query_def(pg_sys::copyObjectImpl(rows.cast()) as *mut pg_sys::Query)
            .map(|sql| CStr::from_ptr(sql).to_string_lossy().into_owned());
        pg_sys::AtEOXact_GUC(true, nest);
        sql
    };
    sql.unwrap_or_else(|| {
        not_supported(
            "an UPDATE of the checked column on PostgreSQL 14",
            table,
            "Use PostgreSQL 15 or newer for such updates of distributed dedup tables.",
        )
    })
}

/// The `ON CONFLICT … DO NOTHING` clause of INSERT `parse` into table `relid` (`table`, for
/// messages), as the checked write appends it to its own INSERT; None without one.
/// Its arbiter is named as the statement names it: columns, or a constraint. 0A000 for `DO
/// UPDATE`, and for an arbiter the clause cannot name (an expression, a collation or operator
/// class, a partial index's `WHERE`).
///
/// # Safety
/// `parse` is a query being planned; `relid` its target.
pub(super) unsafe fn conflict_clause(parse: *mut pg_sys::Query, relid: pg_sys::Oid, table: &str) -> Option<String> {
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

/// Puts the custom scan of `methods` on top of `stmt`, the plan of the rows of write `parse`
/// (of kind `command`) into table `relid`, filling columns `written`; `pinned`: the rows' plan
/// begins and runs with the transfer's settings pinned (it reads Citus tables). With a
/// RETURNING list (`returning`, of [`returning_list`]), the scan returns it, computed from the
/// rows stored: it scans them as rows of the target, which joins the plan's relations for it.
///
/// # Safety
/// `stmt` was just planned for `parse`; `methods` are static.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn wrap_in_scan(
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
            crate::compat::clear_required_permissions(target);
            (*stmt).rtable = pg_sys::lappend((*stmt).rtable, target.cast());
            let rti = pg_sys::list_length((*stmt).rtable);
            crate::compat::mark_unprunable(stmt, rti);
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
