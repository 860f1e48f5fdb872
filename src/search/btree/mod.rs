//! A reader of the key indexes' B-tree pages: the entries of a one-`bigint`-column B-tree whose
//! keys fall in a sorted list of ranges, read page by page instead of tuple by tuple through the
//! index access method.
//!
//! The access method answers one tuple at a time: each probe is an `index_rescan` (scan-key
//! preprocessing, a descent from the root) and each entry a `btgettuple` call that evaluates
//! both scan keys through the fmgr. Here the leaf of every range is found from the level above
//! the leaves in one pass, the leaves are then read in key order (one shared by several ranges
//! once), pinned and prefetched ahead, and a leaf's keys are compared in place as the integers
//! they are. The argument for its correctness is in docs/architecture.md ("Reading the key
//! indexes"); in short, the protocol of nbtree's own scans (`_bt_search`, `_bt_moveright`,
//! `_bt_readpage`):
//!
//! * Pages are read under a share content lock, one page at a time, never two: no lock order,
//!   no deadlock with writers. No lock is held between a parent and its child, as in
//!   `_bt_search`; the first pass holds such links a little longer, which the next two make
//!   safe. (Pages pinned ahead of their read are looked at unlocked, only to choose what to
//!   prefetch; nothing read that way reaches an answer.)
//! * **Concurrent splits** (Lehman and Yao): entries only ever move right, every page's high key
//!   bounds what it holds, so after each lock the reader moves right while the page's high key
//!   is below the key it seeks or the page is half dead or deleted, as `_bt_moveright`. A leaf's
//!   right link is read while the leaf is locked: entries a split moves right after that were
//!   read from the leaf itself. A parent (or leaf) locked for several ranges serves each only
//!   while its high key covers the range's start; the ranges ascend, and a page's low bound can
//!   only fall (when its left sibling is deleted), so nothing sought lies to its left.
//! * **Page deletion and recycling.** A deleted page keeps its right link until no transaction
//!   that could hold a link to it runs, so moving right from it is safe; a leaf stays pinned
//!   from its read until its entries' heap rows are fetched, which keeps VACUUM's cleanup lock
//!   off it, so no entry read from it can be removed and its heap TID reused in between (nbtree
//!   keeps that pin for the same reason whenever the snapshot is not an MVCC one: the dedup
//!   check's dirty snapshot).
//! * **Serializable transactions.** Every leaf read is predicate-locked (`PredicateLockPage`),
//!   an empty index as a relation, as `_bt_first` and `_bt_readpage` do; the heap fetch locks
//!   the tuples.
//! * The root comes from the metapage, read once per call; a fast root that is deleted or half
//!   dead is left by its right link, and a level that does not match is an error, as in
//!   `_bt_getroot`.
//!
//! What the reader relies on of the on-disk format (stable since PostgreSQL 13, checked by
//! the metapage's magic number and version ≥ 4): pivot tuples mark their attribute count in the
//! TID's offset (`INDEX_ALT_TID_MASK`), the first data item of an internal page is "minus
//! infinity", posting-list tuples (`BT_IS_POSTING`) list their heap TIDs at the offset their
//! TID's block number gives, NULL keys sort last. A metapage of another version (an index last
//! built before PostgreSQL 12 and carried over by pg_upgrade) makes the caller use the access
//! method instead. It counts what the access method counts in the statistics views.
//!
//! This file is the search: the descent to each range's leaf and the read of the ranges, leaf
//! by leaf. Its parts: `page.rs` (the on-disk format), `buffers.rs` (the buffers pages were
//! last found in), `prefetch.rs` (the prefetch hints) and `leaf.rs` (the read of a locked leaf).

mod buffers;
mod leaf;
mod page;
mod prefetch;

use self::buffers::read_page;
use self::leaf::{lower_bound, read_leaf};
use self::page::{
    block, tid_block, Key, Meta, Page, BTP_LEAF, BTP_META, BTREE_MAGIC, HEAPKEYSPACE_VERSION, METAPAGE, PAGE_HEADER,
    P_NONE,
};
use self::prefetch::{prefetch_buffer_header, prefetch_ends, prefetch_line_pointers, prefetch_tuples, Shape};

use pgrx::pg_sys;

use crate::errors;

// storage/predicate.h, which pgrx does not bind. Called through `guarded` (they may raise an
// ERROR: out of shared memory for predicate locks).
unsafe extern "C-unwind" {
    fn PredicateLockPage(relation: pg_sys::Relation, blkno: pg_sys::BlockNumber, snapshot: pg_sys::Snapshot);
    fn PredicateLockRelation(relation: pg_sys::Relation, snapshot: pg_sys::Snapshot);
}

/// Runs a call into PostgreSQL that may raise an ERROR, turning its longjmp into a Rust unwind
/// (what `#[pg_guard]` does for pgrx's own bindings).
///
/// # Safety
/// `f` only calls a PostgreSQL function.
unsafe fn guarded<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: the caller promises `f` only calls a PostgreSQL function, so an ERROR's longjmp,
    // which pg_guard_ffi_boundary catches, skips no Rust frame with anything to drop.
    unsafe { pg_sys::submodules::ffi::pg_guard_ffi_boundary(f) }
}

/// A reader of one index, for one call.
pub(crate) struct Reader {
    index: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    root: pg_sys::BlockNumber,
    level: u32,
}

impl Reader {
    /// A reader of `index`, if this reader can read it: `None` for a B-tree whose metapage is
    /// of an older version (use the access method).
    ///
    /// # Safety
    /// `index` is an open B-tree index relation (AccessShareLock) on one `bigint` key column,
    /// `snapshot` valid for the reader's life.
    pub(crate) unsafe fn new(index: pg_sys::Relation, snapshot: pg_sys::Snapshot) -> Option<Reader> {
        // SAFETY: block 0 of a B-tree is its metapage; read under a share lock.
        unsafe {
            let buf = read_page(index, METAPAGE);
            pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as i32);
            let page = Page::of(buf);
            let meta = &*(page.ptr.add(PAGE_HEADER) as *const Meta);
            let ok = page.usable()
                && page.opaque().flags & BTP_META != 0
                && meta.magic == BTREE_MAGIC
                && meta.version >= HEAPKEYSPACE_VERSION;
            let (root, level) = (meta.fastroot, meta.fastlevel);
            pg_sys::UnlockReleaseBuffer(buf);
            ok.then_some(Reader { index, snapshot, root, level })
        }
    }

    /// Calls `visit(key, tid)` for the heap TID of every entry whose key lies in one of
    /// `ranges` (inclusive, ascending, not overlapping) and for which `keep(key)` holds, in key
    /// order. `keep` runs with a leaf locked: it must not call into PostgreSQL. `visit` runs
    /// with the leaf of the entry pinned but not locked.
    ///
    /// Two passes. First the leaf each range starts from is read off the level above the
    /// leaves (whose few pages stay in the CPU's caches; a parent stays locked while it covers
    /// the next ranges). Then the ranges are read from those leaves, each leaf pinned and its
    /// memory prefetched [`AHEAD`] leaves before it is read: a leaf read lately is the cost of
    /// a search (its line pointers and tuples are cache misses, one after the other in a
    /// binary search), and the prefetch overlaps them. The ranges that start on one leaf are
    /// read under one lock of it, so that a leaf costs one pin, one lock and one release
    /// whatever number of ranges it serves.
    ///
    /// # Safety
    /// As [`Reader::new`].
    pub(crate) unsafe fn scan(
        &self,
        ranges: &[(i64, i64)],
        keep: impl FnMut(i64) -> bool,
        visit: impl FnMut(i64, &pg_sys::ItemPointerData),
    ) {
        debug_assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0));
        if self.root == P_NONE {
            // SAFETY: an empty index; as _bt_first, lock the relation for serializable readers.
            unsafe { guarded(|| PredicateLockRelation(self.index, self.snapshot)) };
            return;
        }
        // Predicate locks are taken only by SERIALIZABLE transactions (PredicateLockPage returns
        // at once in any other: a call less a leaf).
        // SAFETY: a backend global, read.
        let serializable = unsafe { pg_sys::XactIsoLevel } == pg_sys::XACT_SERIALIZABLE as i32;
        let mut out = Collect { keep, visit, found: Vec::new(), read: 0, serializable };
        // SAFETY: buffers are pinned and locked as described in the module; every pin taken is
        // released before returning (on error, by the resource owner, with the locks); the index
        // stays open while the reader reads it (prefetch_buffer_header reads its OID).
        unsafe {
            let starts = self.start_leaves(ranges);
            // Distinct start leaves, in order (ascending keys: consecutive ranges share them),
            // with the first key sought on each.
            let mut leaves: Vec<(Start, i64)> = Vec::with_capacity(starts.len());
            for (start, &(lo, _)) in starts.iter().zip(ranges) {
                if leaves.last().is_none_or(|(s, _)| s.leaf != start.leaf) {
                    leaves.push((*start, lo));
                }
            }
            // Pinned leaves: the one being read, then those prefetched ahead of it, each a step
            // further the nearer it gets: its header and special space when pinned, the line
            // pointers around its first range's likely start two leaves before its read, their
            // tuples one leaf before.
            let mut ahead: std::collections::VecDeque<Ahead> = Default::default();
            let mut pinned = 0; // leaves[..pinned] have been pinned
            let mut r = 0;
            while r < ranges.len() {
                // The group of ranges that start on one leaf.
                let leaf = starts[r].leaf;
                let end = r + starts[r..].iter().take_while(|s| s.leaf == leaf).count();
                while ahead.len() <= AHEAD && pinned < leaves.len() {
                    let (start, lo) = leaves[pinned];
                    // Pinning locks the buffer's header, a cache miss the CPU waits for (an
                    // atomic operation): the header of the leaf pinned AHEAD later is brought in
                    // now.
                    if let Some(&(later, _)) = leaves.get(pinned + AHEAD) {
                        prefetch_buffer_header(self.index, later.leaf);
                    }
                    let buf = self.read_page(start.leaf);
                    prefetch_ends(block(buf));
                    ahead.push_back(Ahead { leaf: start.leaf, buf, lo, bounds: start.bounds });
                    pinned += 1;
                }
                let Some(current) = ahead.pop_front() else { unreachable!("a start leaf is pinned for every range") };
                debug_assert!(current.leaf == leaf);
                for (position, next) in ahead.iter().enumerate().take(2) {
                    // Not locked: what is read of these pages only chooses what to prefetch.
                    let shape = Shape::of(block(next.buf));
                    if position == 0 {
                        prefetch_tuples(&shape, next.lo, next.bounds);
                    } else {
                        prefetch_line_pointers(&shape, next.lo, next.bounds);
                    }
                }
                let buf = current.buf;
                // The group's ranges are read under one lock of the leaf, up to the first that
                // the leaf does not cover (a split moved it right since its parent was read) or
                // that goes on to the right.
                pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as i32);
                let page = Page::of(buf);
                out.found.clear();
                let mut j = r;
                let mut goes_on = None;
                if page.usable() && page.opaque().flags & BTP_LEAF != 0 && page.covers(ranges[r].0) {
                    out.predicate_lock(self, &page);
                    while j < end && page.covers(ranges[j].0) {
                        let (lo, hi) = ranges[j];
                        let done = out.read(&page, lo, hi, starts[j].bounds);
                        j += 1;
                        if !done {
                            goes_on = Some(page.opaque().next);
                            break;
                        }
                    }
                }
                pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_UNLOCK as i32);
                out.visit_found();
                pgrx::check_for_interrupts!();
                if let Some(next) = goes_on {
                    // The last range read goes on past the leaf's high key, so every later
                    // range of the group starts to its right too.
                    let (lo, hi) = ranges[j - 1];
                    self.read_right(self.move_right(self.lock_page(next), lo), lo, hi, None, &mut out);
                }
                // Ranges the leaf did not cover: from the leaf, moving right as a descent does,
                // with a pin of their own to walk right with (the leaf's stays for the next).
                for (&(lo, hi), start) in ranges[j..end].iter().zip(&starts[j..end]) {
                    pg_sys::IncrBufferRefCount(buf);
                    pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as i32);
                    let page = self.move_right(Page::of(buf), lo);
                    if page.opaque().flags & BTP_LEAF == 0 {
                        self.corrupt("a child of the level above the leaves is not a leaf");
                    }
                    let bounds = if page.buf == buf { start.bounds } else { None };
                    self.read_right(page, lo, hi, bounds, &mut out);
                }
                pg_sys::ReleaseBuffer(buf);
                r = end;
            }
            for a in &ahead {
                pg_sys::ReleaseBuffer(a.buf);
            }
            // As the access method counts: a scan per range, every entry read.
            crate::compat::count_stats(self.index, ranges.len() as i64, out.read, 0);
        }
    }

    /// Reads the range `lo..=hi` from the locked leaf `page` (pinned by the caller for this
    /// read, released here) and the leaves to its right as far as the range goes.
    ///
    /// # Safety
    /// As [`Reader::new`]; `page` is a leaf of the reader's index that covers `lo`.
    unsafe fn read_right<K: FnMut(i64) -> bool, V: FnMut(i64, &pg_sys::ItemPointerData)>(
        &self,
        mut page: Page,
        lo: i64,
        hi: i64,
        mut bounds: Option<(i64, i64)>,
        out: &mut Collect<K, V>,
    ) {
        // SAFETY: the caller guarantees an open index and `page` a pinned, share-locked leaf; each
        // page is read locked, unlocked before `visit`, then released, and the next one pinned and
        // locked by lock_page before move_right reads it.
        unsafe {
            loop {
                out.predicate_lock(self, &page);
                out.found.clear();
                let done = out.read(&page, lo, hi, bounds.take());
                let next = page.opaque().next;
                pg_sys::LockBuffer(page.buf, pg_sys::BUFFER_LOCK_UNLOCK as i32);
                out.visit_found();
                pgrx::check_for_interrupts!();
                pg_sys::ReleaseBuffer(page.buf);
                if done {
                    break;
                }
                page = self.move_right(self.lock_page(next), lo);
            }
        }
    }

    /// The leaf each range starts from: the child, in the page above the leaves that covers
    /// the range's first key, of the last pivot below it. A range's entries may have moved
    /// right of it by the time it is read (a split), never left: the read moves right as a
    /// descent does. The parent stays locked while the next ranges' first keys are below its
    /// high key (their children are read off it one after another, a few cache lines each),
    /// and is descended to from the root otherwise.
    ///
    /// # Safety
    /// The reader's index is open and not empty.
    unsafe fn start_leaves(&self, ranges: &[(i64, i64)]) -> Vec<Start> {
        if self.level == 0 {
            // The root is the only leaf (or was).
            return vec![Start { leaf: self.root, bounds: None }; ranges.len()];
        }
        let mut out = Vec::with_capacity(ranges.len());
        let mut parent: Option<Page> = None;
        // SAFETY: the caller guarantees the index is open and not empty; `parent` comes from
        // `descend` pinned and share-locked, is read (`child`) only so, and is unlocked and
        // released when left.
        unsafe {
            for &(lo, _) in ranges {
                if let Some(p) = parent.take_if(|p| !p.covers(lo)) {
                    pg_sys::UnlockReleaseBuffer(p.buf);
                }
                let page = parent.get_or_insert_with(|| self.descend(lo, 1));
                out.push(child(page, lo).unwrap_or_else(|| self.corrupt("an internal page has no items")));
            }
            if let Some(p) = parent {
                pg_sys::UnlockReleaseBuffer(p.buf);
            }
        }
        out
    }

    /// Descends from the root to the leftmost page of `level` that may hold `lo`
    /// (share-locked, pinned): at each level the child of the last pivot below `lo` (nbtree's
    /// descent for `>= lo` without its shortcut past pivots equal to `lo`: at worst one leaf
    /// more is read).
    ///
    /// # Safety
    /// The reader's index is open, not empty, and `level` at most its root's.
    unsafe fn descend(&self, lo: i64, level: u32) -> Page {
        // SAFETY: the caller guarantees an open, non-empty index and `level` at most the root's;
        // each page is pinned and share-locked (lock_page) before it is read, and unlocked and
        // released before its child is locked: one lock at a time.
        unsafe {
            let mut page = self.move_right(self.lock_page(self.root), lo);
            if page.opaque().level != self.level {
                self.corrupt("its root has a level other than the metapage's");
            }
            while page.opaque().level > level {
                let child = child(&page, lo).unwrap_or_else(|| self.corrupt("an internal page has no items"));
                pg_sys::UnlockReleaseBuffer(page.buf);
                page = self.move_right(self.lock_page(child.leaf), lo);
            }
            page
        }
    }

    /// Lehman and Yao: from a locked page, moves right (releasing it) while the page is deleted
    /// or half dead, or its high key is below `lo`. Returns the locked page to read.
    ///
    /// # Safety
    /// `page` is pinned and share-locked.
    unsafe fn move_right(&self, mut page: Page, lo: i64) -> Page {
        // SAFETY: the caller guarantees `page` is pinned and share-locked; `usable` is checked
        // before its special space is read; a page left is unlocked and released before the
        // next is locked.
        unsafe {
            loop {
                if !page.usable() {
                    self.corrupt("a page is not a B-tree page");
                }
                if page.covers(lo) {
                    return page;
                }
                if page.rightmost() {
                    self.corrupt("its rightmost page is deleted");
                }
                let next = page.opaque().next;
                pg_sys::UnlockReleaseBuffer(page.buf);
                page = self.lock_page(next);
            }
        }
    }

    /// Block `blkno` of the reader's index, pinned ([`read_page`]) and share-locked.
    ///
    /// # Safety
    /// The reader's index is open.
    unsafe fn lock_page(&self, blkno: pg_sys::BlockNumber) -> Page {
        // SAFETY: a pinned buffer of the index, locked before it is read.
        unsafe {
            let buf = self.read_page(blkno);
            pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as i32);
            Page::of(buf)
        }
    }

    /// [`read_page`] of the reader's index.
    ///
    /// # Safety
    /// The reader's index is open.
    unsafe fn read_page(&self, blkno: pg_sys::BlockNumber) -> pg_sys::Buffer {
        // SAFETY: the reader's index is open (this function's contract), as read_page requires.
        unsafe { read_page(self.index, blkno) }
    }

    fn corrupt(&self, what: &str) -> ! {
        // SAFETY: an open relation's name.
        let name = unsafe { pgrx::name_data_to_str(&(*(*self.index).rd_rel).relname).to_owned() };
        errors::index_corrupted(&name, what)
    }
}

/// Leaves pinned and prefetched ahead of the one being read.
const AHEAD: usize = 3;

/// Where a range starts: a leaf, and the keys that bound it as its parent said when the range
/// was placed (the pivots on either side of its downlink), if both are values: a hint for
/// finding the range's first key on the leaf, never trusted for the answer.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Start {
    leaf: pg_sys::BlockNumber,
    bounds: Option<(i64, i64)>,
}

/// The downlink of the last pivot below `lo` on the locked internal page `page` (its first
/// data item is minus infinity, so there is one unless the page is empty), with the bounds of
/// its subtree ([`Start`]). The pivots after the first are found as a leaf's keys are
/// ([`lower_bound`]: they are hashes too, spread evenly).
fn child(page: &Page, lo: i64) -> Option<Start> {
    let (first, end) = (page.first_data(), page.max_offset() + 1);
    if first >= end {
        return None;
    }
    // The first pivot at least `lo` after the first item; the one before it is below `lo`.
    let a = lower_bound(|i| page.key(i), first + 1, end, lo, None) - 1;
    let upper = if a < page.max_offset() { Some(page.key(a + 1)) } else { page.high_key() };
    let bounds = match (page.key(a), upper) {
        (Key::Value(x), Some(Key::Value(y))) if x < y => Some((x, y)),
        _ => None,
    };
    // SAFETY: an item of the locked page; a pivot's downlink is its TID's block number.
    Some(Start { leaf: unsafe { tid_block(page.tuple(a)) }, bounds })
}

/// A leaf pinned ahead of its read: its block, its buffer, the first key sought on it and its
/// bounds ([`Start`]).
struct Ahead {
    leaf: pg_sys::BlockNumber,
    buf: pg_sys::Buffer,
    lo: i64,
    bounds: Option<(i64, i64)>,
}

/// Where a scan's entries go: `keep` chooses them as a leaf is read (the leaf locked), `visit`
/// gets them once it is unlocked.
struct Collect<K, V> {
    keep: K,
    visit: V,
    /// The entries kept from the leaf read last, not yet visited.
    found: Vec<(i64, pg_sys::ItemPointerData)>,
    /// Heap TIDs read, for the statistics.
    read: i64,
    /// The transaction is SERIALIZABLE: leaves read are predicate-locked.
    serializable: bool,
}

impl<K: FnMut(i64) -> bool, V: FnMut(i64, &pg_sys::ItemPointerData)> Collect<K, V> {
    /// Reads `lo..=hi` on the locked leaf `page` ([`read_leaf`]), adding to `found`.
    fn read(&mut self, page: &Page, lo: i64, hi: i64, bounds: Option<(i64, i64)>) -> bool {
        read_leaf(page, lo, hi, bounds, &mut self.keep, &mut self.found, &mut self.read)
    }

    /// Gives `found` to `visit`.
    fn visit_found(&mut self) {
        for (key, tid) in &self.found {
            (self.visit)(*key, tid);
        }
    }

    /// Predicate-locks the leaf `page` of `reader`'s index in a serializable transaction, as
    /// `_bt_readpage` does.
    ///
    /// # Safety
    /// `page` is pinned.
    unsafe fn predicate_lock(&self, reader: &Reader, page: &Page) {
        if self.serializable {
            // SAFETY: a pinned buffer; PredicateLockPage may raise an ERROR (guarded).
            unsafe {
                let blkno = pg_sys::BufferGetBlockNumber(page.buf);
                guarded(|| PredicateLockPage(reader.index, blkno, reader.snapshot));
            }
        }
    }
}
