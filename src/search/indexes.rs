//! Which block indexes a table has, read from the catalog (relcache), never from index names
//! or `pg_get_indexdef` text.
//!
//! A block index is a valid, non-partial B-tree of the integer operator family on one of:
//!
//! * `_simdup_key(fp, offset)` (0.2.0): the fingerprint rotated so that the block starting at
//!   bit `offset` is on top; the set of offsets of a column's key indexes is its [`Layout`];
//! * `simhash_block(fp, i)` INCLUDE (fp) (0.1.0): the four 16-bit blocks of the default layout.
//!   Tables enabled under 0.1.0 keep being served by them until `simdup_reindex` replaces them.

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::pg_sys::{self, AttrNumber, Oid};
use pgrx::prelude::*;

use crate::catalog::{cells, is_our_function};
use crate::errors::invalid_parameter;

use simdup_core::blocks::{key, Layout, BLOCKS};

/// How one block index is probed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `_simdup_key(fp, offset)`: one bigint key that is the whole (rotated) fingerprint.
    Key,
    /// `simhash_block(fp, i) INCLUDE (fp)`: an int4 key, the fingerprint in column 2.
    Block,
}

/// The block indexes of one fingerprint column: `oids[i]` serves block i of `layout`.
#[derive(Clone, Debug)]
pub(crate) struct BlockIndexes {
    pub kind: Kind,
    pub layout: Layout,
    pub oids: Vec<Oid>,
}

/// What one index is, if it is a block index: (fingerprint column, kind, offset or block).
///
/// # Safety
/// `index` is an open index relation.
unsafe fn classify(index: pg_sys::Relation) -> Option<(AttrNumber, Kind, u32)> {
    // SAFETY: an open index relation has rd_rel, rd_index and rd_opfamily set.
    unsafe {
        let form = &*(*index).rd_index;
        if (*(*index).rd_rel).relam != pg_sys::BTREE_AM_OID
            || !form.indisvalid
            || !form.indisready
            || form.indnkeyatts != 1
            || *(*index).rd_opfamily != pg_sys::INTEGER_BTREE_FAM_OID
            || !pg_sys::RelationGetIndexPredicate(index).is_null()
        {
            return None;
        }
        let keys = form.indkey.values.as_slice(form.indnatts as usize);
        if keys[0] != 0 {
            return None; // a plain column, not an expression
        }
        let exprs = pg_sys::RelationGetIndexExpressions(index);
        let first = cells(exprs).first()?.ptr_value as *mut pg_sys::Node;
        if (*first).type_ != pg_sys::NodeTag::T_FuncExpr {
            return None;
        }
        let func = &*(first as *mut pg_sys::FuncExpr);
        let args = cells(func.args);
        if args.len() != 2 {
            return None;
        }
        let (var, konst) = (args[0].ptr_value as *mut pg_sys::Node, args[1].ptr_value as *mut pg_sys::Node);
        if (*var).type_ != pg_sys::NodeTag::T_Var || (*konst).type_ != pg_sys::NodeTag::T_Const {
            return None;
        }
        let (var, konst) = (&*(var as *mut pg_sys::Var), &*(konst as *mut pg_sys::Const));
        if konst.constisnull || konst.consttype != pg_sys::INT4OID {
            return None;
        }
        let n = konst.constvalue.value() as i32;
        if form.indnatts == 1 && is_our_function(func.funcid, Some(_simdup_key_wrapper)) {
            return (0..64).contains(&n).then_some((var.varattno, Kind::Key, n as u32));
        }
        if form.indnatts == 2
            && keys[1] == var.varattno
            && is_our_function(func.funcid, Some(crate::fingerprint::simhash_block_wrapper))
        {
            return (0..BLOCKS as i32).contains(&n).then_some((var.varattno, Kind::Block, n as u32));
        }
        None
    }
}

/// [`block_indexes`] answers by (table, column).
type Layouts = HashMap<(Oid, AttrNumber), Option<BlockIndexes>>;

thread_local! {
    /// [`block_indexes`] answers of this backend, by (table, column); an entry is dropped when
    /// the table's relcache entry is invalidated, which PostgreSQL does whenever an index of
    /// the table is created, dropped, validated or rebuilt, the table is altered, and at the
    /// abort of a transaction that did any of these.
    static CACHE: RefCell<Option<Layouts>> = const { RefCell::new(None) };
}

/// Relcache invalidation: forget `relid`'s entries (all of them for InvalidOid).
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn forget(_arg: pg_sys::Datum, relid: Oid) {
    CACHE.with(|c| {
        if let Some(map) = c.borrow_mut().as_mut() {
            if relid == pg_sys::InvalidOid {
                map.clear();
            } else {
                map.retain(|&(r, _), _| r != relid);
            }
        }
    });
}

/// The block indexes of column `attnum` of `heap`, if they form a layout: key indexes whose
/// offsets include 0 and cut the fingerprint into blocks of 8 to 32 bits (preferred), or the
/// four 0.1.0 block indexes. Read from the catalog once per table and column, then from a
/// backend-local cache kept by relcache invalidation, so that planning a served query and each
/// row of the dedup trigger open no index to find them.
///
/// # Safety
/// `heap` is an open table relation.
pub(crate) unsafe fn block_indexes(heap: pg_sys::Relation, attnum: AttrNumber) -> Option<BlockIndexes> {
    // SAFETY: an open relation.
    let relid = unsafe { (*heap).rd_id };
    if let Some(known) = CACHE.with(|c| c.borrow().as_ref().and_then(|m| m.get(&(relid, attnum)).cloned())) {
        return known;
    }
    // SAFETY: `heap` is an open table relation (this function's contract), as
    // read_block_indexes requires.
    let found = unsafe { read_block_indexes(heap, attnum) };
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            // SAFETY: registered once for the backend's lifetime; `forget` only touches this
            // thread-local map.
            unsafe { pg_sys::CacheRegisterRelcacheCallback(Some(forget), pg_sys::Datum::from(0)) };
        }
        c.get_or_insert_with(HashMap::new).insert((relid, attnum), found.clone());
    });
    found
}

/// [`block_indexes`] read from the catalog.
///
/// # Safety
/// `heap` is an open table relation.
unsafe fn read_block_indexes(heap: pg_sys::Relation, attnum: AttrNumber) -> Option<BlockIndexes> {
    let mut keys: Vec<(u32, Oid)> = Vec::new();
    let mut block_0_1: [Option<Oid>; BLOCKS] = [None; BLOCKS];
    // SAFETY: RelationGetIndexList returns a fresh list of the OIDs of `heap`'s indexes, which
    // we open and close under AccessShareLock, as the planner does.
    unsafe {
        let list = pg_sys::RelationGetIndexList(heap);
        for cell in cells(list) {
            let oid = cell.oid_value;
            let index = pg_sys::index_open(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let what = classify(index);
            pg_sys::index_close(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            match what {
                Some((col, Kind::Key, offset)) if col == attnum && !keys.iter().any(|&(o, _)| o == offset) => {
                    keys.push((offset, oid));
                }
                Some((col, Kind::Block, block)) if col == attnum => {
                    block_0_1[block as usize].get_or_insert(oid);
                }
                _ => {}
            }
        }
        pg_sys::list_free(list);
    }
    keys.sort_unstable_by_key(|&(offset, _)| offset);
    if let Ok(layout) = Layout::new(keys.iter().map(|&(o, _)| o).collect()) {
        return Some(BlockIndexes { kind: Kind::Key, layout, oids: keys.into_iter().map(|(_, oid)| oid).collect() });
    }
    if block_0_1.iter().all(Option::is_some) {
        return Some(BlockIndexes {
            kind: Kind::Block,
            layout: Layout::default_layout(),
            oids: block_0_1.into_iter().flatten().collect(),
        });
    }
    None
}

/// The B-tree key of the block of `fp` that starts at bit `offset` (0 = most significant): `fp`
/// rotated left by `offset` with its sign bit flipped, so that the keys of one block value form
/// one range. Rotation does not change Hamming distance, so the key is the whole fingerprint.
#[pg_extern(sql = "")]
fn _simdup_key(fp: i64, offset: i32) -> i64 {
    if !(0..64).contains(&offset) {
        invalid_parameter(format!("bit offset {offset} is out of range"), "A block starts at bit 0 to 63.");
    }
    key(fp as u64, offset as u32)
}
