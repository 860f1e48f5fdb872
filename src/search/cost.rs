//! The cost model of a search through the block indexes: the relative costs the per-block
//! thresholds are chosen with, and the planner's price of a search.

use pgrx::pg_sys;

use simdup_core::blocks::ball_size;

use super::indexes::BlockIndexes;

/// Relative cost of one B-tree descent (a probe) and of one candidate checked from the index,
/// for choosing per-block thresholds (they matter only for layouts of unequal block widths):
/// a descent is taken to cost as much as 50 candidate checks (docs/performance.md has the
/// measured figures).
pub(crate) const DESCENT_COST: f64 = 1.0;
pub(crate) const CHECK_COST: f64 = 0.02;

/// Planner cost of probing: per probe value a B-tree descent (as btcostestimate prices one:
/// log2(rows) comparisons and 50 operator costs a level), per candidate an index tuple and a
/// distance check, per match a random heap page. Returns (startup, total).
pub(crate) fn probe_cost(found: &BlockIndexes, rows: f64, k: i32) -> (f64, f64) {
    // SAFETY: reading planner cost parameters (GUCs) of this backend.
    let (cpu_op, cpu_index, cpu_tuple, random_page) = unsafe {
        (pg_sys::cpu_operator_cost, pg_sys::cpu_index_tuple_cost, pg_sys::cpu_tuple_cost, pg_sys::random_page_cost)
    };
    let rows = rows.max(1.0);
    let layout = &found.layout;
    let t = layout.thresholds_for(k.clamp(0, 64), rows, DESCENT_COST, CHECK_COST);
    let mut probes = 0.0;
    let mut candidates = 0.0;
    for (i, &ti) in t.iter().enumerate() {
        let n = ball_size(layout.width(i), ti) as f64;
        probes += n;
        candidates += n * rows / 2f64.powi(layout.width(i) as i32);
    }
    let height = (rows.ln() / 256f64.ln()).ceil().max(1.0);
    let descent = (rows.log2().ceil() + 50.0 * (height + 1.0)) * cpu_op;
    let matches = 1.0 + candidates * 0.001;
    let startup = probes * descent + candidates * (cpu_index + cpu_op) + matches * random_page;
    (startup, startup + matches * (cpu_tuple + cpu_op))
}

/// Planner cost of reading every row of `heap`, as a sequential scan prices it: its pages at
/// seq_page_cost, its rows at cpu_tuple_cost plus one operator (the distance). Where a nearest
/// search's next radius would cost more, it reads the table instead.
///
/// # Safety
/// `heap` is an open relation.
pub(crate) unsafe fn scan_cost(heap: pg_sys::Relation) -> f64 {
    // SAFETY: the caller guarantees the relation; cost parameters are this backend's GUCs.
    unsafe {
        let pages = f64::from(pg_sys::RelationGetNumberOfBlocksInFork(heap, pg_sys::ForkNumber::MAIN_FORKNUM));
        let rows = crate::catalog::estimated_rows(heap);
        pages * pg_sys::seq_page_cost + rows * (pg_sys::cpu_tuple_cost + pg_sys::cpu_operator_cost)
    }
}

/// Planner cost of `ORDER BY fp <~> q LIMIT n` through the block indexes: the search at the
/// radius within which n of the `rows` would lie were fingerprints spread uniformly, and at
/// least at `first_radius`, where the search starts. (Real text has its nearest rows nearer
/// than uniform values do; the search reads the table instead where searching wider would
/// cost more, which only the executor can tell.) Returns (startup, total).
pub(crate) fn nearest_cost(found: &BlockIndexes, rows: f64, n: f64, first_radius: i32) -> (f64, f64) {
    let rows = rows.max(1.0);
    let mut binomial = 1.0f64; // C(64, k)
    let mut within = binomial; // Σᵢ≤ₖ C(64, i)
    let mut k = 0;
    while k < 64 && within / 2f64.powi(64) * rows < n {
        binomial = binomial * f64::from(64 - k) / f64::from(k + 1);
        within += binomial;
        k += 1;
    }
    probe_cost(found, rows, k.max(first_radius))
}

/// The search radius tried first by [`nearest`]: near-duplicate text lies within 10 bits
/// (docs/quality.md), so where the neighbours are near duplicates the search costs one k = 10
/// lookup.
pub(crate) const FIRST_RADIUS: i32 = 10;
