//! Where a dedup table's rows live, as the dedup engine asks it: whether a relation is one part
//! of a table spread over several nodes, answered by the layer that knows how (src/citus),
//! registered once at load; without one, every table is whole.

use std::sync::OnceLock;

use pgrx::pg_sys;

/// The questions the engine asks about a relation's place.
pub(crate) struct Placement {
    /// What the dedup trigger on `rel` does with a row ([`Gate`]); may refuse the write.
    pub gate: unsafe fn(rel: pg_sys::Relation) -> Gate,
    /// Whether `rel` is one part (a shard or placement) of a distributed table.
    pub is_part: unsafe fn(rel: pg_sys::Relation) -> bool,
    /// Whether table `relid` is distributed over parts that each hold some of its rows.
    pub is_distributed: fn(relid: pg_sys::Oid) -> bool,
    /// Whether table `relid` is known to the distribution layer at all.
    pub is_managed: fn(relid: pg_sys::Oid) -> bool,
}

/// The dedup trigger's way with a row on a relation.
pub(crate) enum Gate {
    /// A whole table: the row is checked.
    Whole,
    /// One part of a distributed table, named for messages by its table's name: the row is
    /// checked against this part only.
    Part(String),
    /// The row passes unchecked (checked elsewhere, or copied by the distribution layer).
    Pass,
}

static PLACEMENT: OnceLock<&'static Placement> = OnceLock::new();

/// Registers the distribution layer's answers. Called once from `_PG_init`.
pub(crate) fn register(placement: &'static Placement) {
    let _ = PLACEMENT.set(placement);
}

/// [`Placement::gate`] of `rel`; [`Gate::Whole`] without a distribution layer.
///
/// # Safety
/// `rel` is the open relation the trigger fired on.
pub(crate) unsafe fn gate(rel: pg_sys::Relation) -> Gate {
    match PLACEMENT.get() {
        // SAFETY: the caller's.
        Some(p) => unsafe { (p.gate)(rel) },
        None => Gate::Whole,
    }
}

/// [`Placement::is_part`] of `rel`; false without a distribution layer.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn is_part(rel: pg_sys::Relation) -> bool {
    // SAFETY: the caller's.
    PLACEMENT.get().is_some_and(|p| unsafe { (p.is_part)(rel) })
}

/// [`Placement::is_distributed`] of `relid`; false without a distribution layer.
pub(crate) fn is_distributed(relid: pg_sys::Oid) -> bool {
    PLACEMENT.get().is_some_and(|p| (p.is_distributed)(relid))
}

/// [`Placement::is_managed`] of `relid`; false without a distribution layer.
pub(crate) fn is_managed(relid: pg_sys::Oid) -> bool {
    PLACEMENT.get().is_some_and(|p| (p.is_managed)(relid))
}
