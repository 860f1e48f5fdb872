//! Every PostgreSQL hook simdup installs, in one place and one order, each saving and chaining
//! the hook that was there before it.
//!
//! [`init`] runs once from `_PG_init` and installs, in this order:
//!
//! 1. `set_rel_pathlist_hook` ([`set_rel_pathlist`]): the previous hook first (Citus and
//!    others), then, where [`crate::search::planner::may_add_paths`],
//!    [`crate::search::planner::add_paths`] adds the block-index Tid Scan path for
//!    `hamming(fp, q) <= k` and [`crate::similarity::planner::add_paths`] the similarity-index
//!    path for `jaccard(body, q) >= t`;
//! 2. `planner_hook` ([`planner`]): a plain INSERT or text-changing UPDATE into a Citus
//!    distributed dedup table is planned by [`crate::citus::plan_if_checked`] (before Citus,
//!    which was loaded first); everything else by the previous hook or the standard planner,
//!    whose plan is then given to [`crate::dedup::readahead::plan`] (an `INSERT … SELECT`'s rows
//!    read ahead for the bulk check);
//! 3. `ProcessUtility_hook` ([`process_utility`]): `COPY … FROM` into a dedup table that
//!    src/copy.rs takes (a distributed one's checked writes, or a plain one's read-ahead
//!    batches); every other statement to the previous hook or the standard one.
//!
//! Then the custom scans are registered: `SimdupCheckedInsert` and `SimdupCheckedUpdate`
//! ([`crate::citus::init`], which also gives the dedup engine its shard recognition) and the
//! read-ahead's ([`crate::dedup::readahead::init`]).

use std::ffi::{c_char, c_int};
use std::ptr;

use pgrx::pg_sys;
use pgrx::prelude::*;

static mut PREVIOUS_REL_PATHLIST: pg_sys::set_rel_pathlist_hook_type = None;
static mut PREVIOUS_PLANNER: pg_sys::planner_hook_type = None;
static mut PREVIOUS_UTILITY: pg_sys::ProcessUtility_hook_type = None;

/// Installs the hooks after whatever hooks were there, in the order of this module's
/// documentation, and registers the custom scans. Called once from `_PG_init`.
pub(crate) fn init() {
    // SAFETY: _PG_init runs once per process, before any planning, single-threaded; each
    // previous hook is saved before its place is taken.
    unsafe {
        PREVIOUS_REL_PATHLIST = pg_sys::set_rel_pathlist_hook;
        pg_sys::set_rel_pathlist_hook = Some(set_rel_pathlist);
        PREVIOUS_PLANNER = pg_sys::planner_hook;
        pg_sys::planner_hook = Some(planner);
        PREVIOUS_UTILITY = pg_sys::ProcessUtility_hook;
        pg_sys::ProcessUtility_hook = Some(process_utility);
    }
    crate::citus::init();
    crate::dedup::init();
}

/// The `set_rel_pathlist_hook`: the previous hook, then simdup's block-index paths, then its
/// similarity-index paths.
#[pg_guard]
unsafe extern "C-unwind" fn set_rel_pathlist(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
) {
    // SAFETY: the planner passes valid pointers; PREVIOUS_REL_PATHLIST is only written by init().
    unsafe {
        if let Some(previous) = PREVIOUS_REL_PATHLIST {
            previous(root, rel, rti, rte);
        }
        if crate::search::planner::may_add_paths(root, rti, rte)
            && crate::search::planner::add_paths(root, rel, rti, rte)
        {
            crate::similarity::planner::add_paths(root, rel, rti, rte);
        }
    }
}

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
}

/// The planner hook: an INSERT or UPDATE that must go through Citus's checked write is planned
/// by [`crate::citus::plan_if_checked`], everything else by the previous hook (Citus's) or the
/// standard planner, then given to [`crate::dedup::readahead::plan`] (which reads an
/// `INSERT ... SELECT`'s rows ahead for the bulk check).
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
    // SAFETY: the planner's arguments; `plan_if_checked` is guarded; PREVIOUS_PLANNER is only
    // written by init().
    unsafe {
        crate::citus::plan_if_checked(PREVIOUS_PLANNER, parse, query_string, cursor_options, bound_params, &mut planned)
    };
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
    unsafe { crate::dedup::readahead::plan(stmt) };
    stmt
}

/// The utility hook: `COPY t FROM …` that src/copy.rs takes ([`crate::copy::begin`]) is read
/// there and its rows written in batches by `INSERT … SELECT` (planned by [`planner`]: checked
/// writes into a Citus distributed table, whose shards' writes commit or abort with this
/// statement's coordinated transaction; into a plain dedup table, read-ahead batches of up to
/// `simdup.copy_batch_memory`). Everything else goes to the previous hook (Citus's) or the
/// standard one, unchanged.
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
    // SAFETY: ProcessUtility's statement and text, valid for the call.
    let job = unsafe { crate::copy::begin(pstmt, query_string) };
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
    // SAFETY: the job `begin` returned; `qc` is this hook's completion record; this frame holds
    // nothing to drop.
    unsafe { crate::copy::run(job, qc) };
}
