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

/// `BTPageOpaqueData` (access/nbtree.h, PostgreSQL 14 and later): the special space of a page.
#[repr(C)]
struct Opaque {
    prev: pg_sys::BlockNumber,
    next: pg_sys::BlockNumber,
    level: u32,
    flags: u16,
    cycle_id: u16,
}

/// The start of `BTMetaPageData` (access/nbtree.h).
#[repr(C)]
struct Meta {
    magic: u32,
    version: u32,
    root: pg_sys::BlockNumber,
    level: u32,
    fastroot: pg_sys::BlockNumber,
    fastlevel: u32,
}

const BTREE_MAGIC: u32 = 0x053162;
/// The first version with heap TIDs as keys, suffix truncation and posting lists (PostgreSQL 12).
const HEAPKEYSPACE_VERSION: u32 = 4;
const P_NONE: pg_sys::BlockNumber = 0;
const METAPAGE: pg_sys::BlockNumber = 0;
const BTP_LEAF: u16 = 1 << 0;
const BTP_DELETED: u16 = 1 << 2;
const BTP_META: u16 = 1 << 3;
const BTP_HALF_DEAD: u16 = 1 << 4;
const P_HIKEY: u16 = 1;
const INDEX_NULL_MASK: u16 = 0x8000;
const INDEX_ALT_TID_MASK: u16 = 0x2000;
const BT_OFFSET_MASK: u16 = 0x0FFF;
const BT_IS_POSTING: u16 = 0x2000;
/// `SizeOfPageHeaderData`, already MAXALIGNed: where the line pointers (and a metapage's
/// contents) start.
const PAGE_HEADER: usize = 24;
/// `MAXALIGN(sizeof(IndexTupleData))`: where a NULL-free index tuple's first attribute starts.
const TUPLE_DATA: usize = 8;

/// A key as the B-tree orders it: "minus infinity" (a truncated pivot), a value, or NULL (after
/// every value).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Key {
    MinusInfinity,
    Value(i64),
    Null,
}

/// The memory of the pinned buffer `buf`.
///
/// # Safety
/// `buf` is pinned.
unsafe fn block(buf: pg_sys::Buffer) -> *const u8 {
    // SAFETY: a pinned buffer's block stays in memory; local buffers (a temporary table's
    // index) are numbered from -1 down, shared ones from 1 up (BufferGetBlock in bufmgr.h).
    unsafe {
        if buf < 0 {
            *pg_sys::LocalBufferBlockPointers.offset((-buf - 1) as isize) as *const u8
        } else {
            pg_sys::BufferBlocks.add((buf - 1) as usize * pg_sys::BLCKSZ as usize) as *const u8
        }
    }
}

/// A share-locked, pinned page of the index.
struct Page {
    buf: pg_sys::Buffer,
    ptr: *const u8,
}

impl Page {
    /// # Safety
    /// `buf` is pinned and share-locked.
    unsafe fn of(buf: pg_sys::Buffer) -> Page {
        // SAFETY: the caller guarantees `buf` is pinned, all `block` asks; its share lock, also
        // promised, is what the reads through `ptr` rely on.
        Page { buf, ptr: unsafe { block(buf) } }
    }

    fn header(&self) -> &pg_sys::PageHeaderData {
        // SAFETY: every page starts with its header; the lock keeps it stable.
        unsafe { &*(self.ptr as *const pg_sys::PageHeaderData) }
    }

    fn opaque(&self) -> &Opaque {
        // SAFETY: a B-tree page's special space is its BTPageOpaqueData; `usable` checks
        // pd_special before any other read of a page that might not be one.
        unsafe { &*(self.ptr.add(self.header().pd_special as usize) as *const Opaque) }
    }

    /// The page is an initialised B-tree page (not all zeros, special space where nbtree puts it).
    fn usable(&self) -> bool {
        let h = self.header();
        is_btree_page(h.pd_upper, h.pd_special)
    }

    fn ignore(&self) -> bool {
        self.opaque().flags & (BTP_DELETED | BTP_HALF_DEAD) != 0
    }

    /// Keys from `lo` on may start here: the page is live and its high key (if any) is not
    /// below `lo` (else they lie to its right).
    fn covers(&self, lo: i64) -> bool {
        !self.ignore() && self.high_key().is_none_or(|hk| hk >= Key::Value(lo))
    }

    fn rightmost(&self) -> bool {
        self.opaque().next == P_NONE
    }

    fn max_offset(&self) -> u16 {
        max_offset(self.header().pd_lower)
    }

    fn first_data(&self) -> u16 {
        first_data(self.rightmost())
    }

    /// The index tuple at `offset` (1-based, at most `max_offset`).
    fn tuple(&self, offset: u16) -> *const u8 {
        // SAFETY: line pointers follow the header; lp_off is the low 15 bits of each.
        unsafe {
            let lp = std::ptr::read_unaligned(self.ptr.add(PAGE_HEADER + (offset as usize - 1) * 4) as *const u32);
            self.ptr.add((lp & 0x7FFF) as usize)
        }
    }

    fn key(&self, offset: u16) -> Key {
        // SAFETY: `tuple` points at an index tuple: its TID (6 bytes), then t_info, then the
        // data of a NULL-free tuple at TUPLE_DATA (an int8 is 8-aligned there).
        unsafe {
            let t = self.tuple(offset);
            let info = std::ptr::read_unaligned(t.add(6) as *const u16);
            if info & INDEX_ALT_TID_MASK != 0 && !is_posting(t) && tid_offset(t) & BT_OFFSET_MASK == 0 {
                return Key::MinusInfinity; // a pivot with its key truncated away
            }
            if info & INDEX_NULL_MASK != 0 {
                return Key::Null; // the one key column is NULL
            }
            Key::Value(std::ptr::read_unaligned(t.add(TUPLE_DATA) as *const i64))
        }
    }

    /// The high key, which bounds the keys of the page (none on the rightmost page).
    fn high_key(&self) -> Option<Key> {
        (!self.rightmost()).then(|| self.key(P_HIKEY))
    }
}

/// A page header's `pd_upper` and `pd_special` say an initialised B-tree page: not all zeros,
/// its special space where nbtree puts it.
fn is_btree_page(pd_upper: u16, pd_special: u16) -> bool {
    pd_upper != 0 && pd_special as usize + std::mem::size_of::<Opaque>() == pg_sys::BLCKSZ as usize
}

/// The offset of a page's last item, from its header's `pd_lower`, at most as many line pointers
/// as the page holds (a corrupt `pd_lower` reads no line pointer beyond it).
fn max_offset(pd_lower: u16) -> u16 {
    let items = (pd_lower as usize).saturating_sub(PAGE_HEADER) / 4;
    items.min((pg_sys::BLCKSZ as usize - PAGE_HEADER) / 4) as u16
}

/// The first data item: 1 on the rightmost page of a level, which has no high key, else 2.
fn first_data(rightmost: bool) -> u16 {
    if rightmost {
        1
    } else {
        2
    }
}

/// # Safety
/// `t` points at an index tuple.
unsafe fn tid_offset(t: *const u8) -> u16 {
    // SAFETY: ip_posid follows the two halves of the block number.
    unsafe { std::ptr::read_unaligned(t.add(4) as *const u16) }
}

/// # Safety
/// `t` points at an index tuple.
unsafe fn tid_block(t: *const u8) -> u32 {
    // SAFETY: ItemPointerData starts with bi_hi, bi_lo.
    unsafe {
        let hi = std::ptr::read_unaligned(t as *const u16) as u32;
        let lo = std::ptr::read_unaligned(t.add(2) as *const u16) as u32;
        (hi << 16) | lo
    }
}

/// # Safety
/// `t` points at an index tuple.
unsafe fn is_posting(t: *const u8) -> bool {
    // SAFETY: t_info follows the TID.
    unsafe {
        std::ptr::read_unaligned(t.add(6) as *const u16) & INDEX_ALT_TID_MASK != 0 && tid_offset(t) & BT_IS_POSTING != 0
    }
}

/// How many heap TIDs the leaf tuple `t` holds.
///
/// # Safety
/// `t` points at a non-pivot tuple of a locked leaf page.
unsafe fn entries(t: *const u8) -> i64 {
    // SAFETY: the caller guarantees `t` is a non-pivot tuple of a locked leaf: its TID and t_info
    // are readable, and a posting list's TID count is in its TID's offset (BTreeTupleGetNPosting).
    unsafe {
        if is_posting(t) {
            (tid_offset(t) & BT_OFFSET_MASK) as i64
        } else {
            1
        }
    }
}

/// Pushes the heap TIDs of the leaf tuple `t` (one, or a posting list's) onto `out`.
///
/// # Safety
/// `t` points at a non-pivot tuple of a locked leaf page.
unsafe fn heap_tids(t: *const u8, key: i64, out: &mut Vec<(i64, pg_sys::ItemPointerData)>) {
    // SAFETY: a posting list tuple holds BT_OFFSET_MASK-masked count of 6-byte TIDs at the
    // offset its TID's block number gives (BTreeTupleGetPosting); a plain one its own TID.
    unsafe {
        if is_posting(t) {
            let n = (tid_offset(t) & BT_OFFSET_MASK) as usize;
            let list = t.add(tid_block(t) as usize) as *const pg_sys::ItemPointerData;
            for i in 0..n {
                out.push((key, std::ptr::read_unaligned(list.add(i))));
            }
        } else {
            out.push((key, std::ptr::read_unaligned(t as *const pg_sys::ItemPointerData)));
        }
    }
}

/// Index pages remembered in [`RECENT`] (4 bytes each) before it is emptied: the key indexes
/// of a 10M-row table have ~110,000 pages.
const RECENT_PAGES: usize = 1 << 20;
/// Indexes remembered in [`RECENT`] before it is emptied.
const RECENT_INDEXES: usize = 64;

/// The buffer in which this backend last found each page of the indexes it read: a hint (the
/// buffer may hold another page by now, which `ReadRecentBuffer` sees from its tag).
#[derive(Default)]
struct Recent {
    /// Per index, by block number (0, `InvalidBuffer`: not known).
    indexes: Vec<(pg_sys::Oid, Vec<pg_sys::Buffer>)>,
    /// The index read last (a search reads one index at a time).
    last: usize,
}

impl Recent {
    /// Where `index` is in `indexes`.
    fn find(&mut self, index: pg_sys::Oid) -> Option<usize> {
        if self.indexes.get(self.last).is_some_and(|(oid, _)| *oid == index) {
            return Some(self.last);
        }
        self.last = self.indexes.iter().position(|(oid, _)| *oid == index)?;
        Some(self.last)
    }

    /// The length of the per-index arrays, in all.
    fn pages(&self) -> usize {
        self.indexes.iter().map(|(_, blocks)| blocks.len()).sum()
    }

    fn get(&mut self, index: pg_sys::Oid, blkno: pg_sys::BlockNumber) -> Option<pg_sys::Buffer> {
        let i = self.find(index)?;
        let buf = *self.indexes[i].1.get(blkno as usize)?;
        (buf != pg_sys::InvalidBuffer as pg_sys::Buffer).then_some(buf)
    }

    /// Remembers that block `blkno` of `index` was found in buffer `buf`; empties the map first
    /// when it would grow past [`RECENT_PAGES`] blocks or [`RECENT_INDEXES`] indexes.
    fn remember(&mut self, index: pg_sys::Oid, blkno: pg_sys::BlockNumber, buf: pg_sys::Buffer) {
        let n = blkno as usize + 1;
        if n > RECENT_PAGES {
            return; // beyond what the map holds
        }
        let i = match self.find(index) {
            Some(i) => i,
            None => {
                if self.indexes.len() >= RECENT_INDEXES {
                    *self = Recent::default();
                }
                self.indexes.push((index, Vec::new()));
                self.last = self.indexes.len() - 1;
                self.last
            }
        };
        let have = self.indexes[i].1.len();
        if have < n {
            // Grown by doubling, to at most what the map holds.
            let grown = n.max(have * 2).min(RECENT_PAGES);
            if self.pages() + grown - have > RECENT_PAGES {
                *self = Recent::default();
                return self.remember(index, blkno, buf);
            }
            self.indexes[i].1.resize(grown, pg_sys::InvalidBuffer as pg_sys::Buffer);
        }
        self.indexes[i].1[blkno as usize] = buf;
    }
}

thread_local! {
    static RECENT: std::cell::RefCell<Recent> = std::cell::RefCell::new(Recent::default());
}

/// Pins block `blkno` of `index`: through [`RECENT`]'s buffer if that still holds it
/// (`ReadRecentBuffer` checks the buffer's tag and pins it, without the buffer mapping
/// table's lookup), else `ReadBuffer`, remembering the buffer.
///
/// # Safety
/// `index` is an open index.
unsafe fn read_page(index: pg_sys::Relation, blkno: pg_sys::BlockNumber) -> pg_sys::Buffer {
    // SAFETY: an open relation; ReadRecentBuffer pins only a buffer whose tag is this
    // relation's block, else returns false.
    unsafe {
        let oid = (*index).rd_id;
        if let Some(buf) = RECENT.with(|r| r.borrow_mut().get(oid, blkno)) {
            if crate::compat::read_recent_buffer(index, blkno, buf) {
                return buf;
            }
        }
        let buf = pg_sys::ReadBuffer(index, blkno);
        RECENT.with(|r| r.borrow_mut().remember(oid, blkno, buf));
        buf
    }
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

/// Line pointers around the guessed position of a range's first key whose tuples are
/// prefetched: the guess is usually within a few items, and a range holds about 15 entries at
/// 1M rows.
const PREFETCH_ITEMS: (u16, u16) = (8, 24);

/// Asks the CPU to bring `addr`'s cache line into its caches (a hint: it never faults).
#[inline]
fn prefetch(addr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and never faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(addr as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// Prefetches the header of the shared buffer in which this backend last found block `blkno`
/// of `index` ([`RECENT`]), which pinning it will lock (a hint: nothing is read).
///
/// # Safety
/// `index` is an open relation (its `rd_id` is read).
unsafe fn prefetch_buffer_header(index: pg_sys::Relation, blkno: pg_sys::BlockNumber) {
    // SAFETY: the caller guarantees an open relation.
    let oid = unsafe { (*index).rd_id };
    if let Some(buf) = RECENT.with(|r| r.borrow_mut().get(oid, blkno)).filter(|&b| b > 0) {
        // SAFETY: shared buffers are numbered from 1 to NBuffers, their headers an array of
        // that many padded descriptors (GetBufferDescriptor in buf_internals.h); a buffer number
        // remembered in this backend is within it.
        prefetch(unsafe { pg_sys::BufferDescriptors.add(buf as usize - 1) } as *const u8);
    }
}

/// Prefetches the header and the special space of the pinned page at `ptr` (nothing is read).
fn prefetch_ends(ptr: *const u8) {
    prefetch(ptr);
    prefetch(ptr.wrapping_add(pg_sys::BLCKSZ as usize - 64));
}

/// What the prefetch hints read of a pinned leaf that is not locked: its item count and whether
/// it is the rightmost, and its line pointers. A writer may be changing the page meanwhile, so
/// each is read by a relaxed atomic load (a plain load on x86-64), and what is read only chooses
/// what to prefetch: a page changed under it gives a useless prefetch, never a wrong answer, and
/// a prefetch never faults.
struct Shape {
    ptr: *const u8,
    first: u16,
    max: u16,
    rightmost: bool,
}

impl Shape {
    /// The shape of the pinned page at `ptr`; `None` if it does not look like an initialised
    /// B-tree page (the read will say what it is).
    fn of(ptr: *const u8) -> Option<Shape> {
        let page = Shape { ptr, first: 0, max: 0, rightmost: false };
        let header = |field| page.u16_at(field);
        if !is_btree_page(
            header(std::mem::offset_of!(pg_sys::PageHeaderData, pd_upper)),
            header(std::mem::offset_of!(pg_sys::PageHeaderData, pd_special)),
        ) {
            return None;
        }
        let special = pg_sys::BLCKSZ as usize - std::mem::size_of::<Opaque>();
        let rightmost = page.u32_at(special + std::mem::offset_of!(Opaque, next)) == P_NONE;
        let max = max_offset(header(std::mem::offset_of!(pg_sys::PageHeaderData, pd_lower)));
        Some(Shape { first: first_data(rightmost), max, rightmost, ..page })
    }

    fn u16_at(&self, offset: usize) -> u16 {
        // SAFETY: `offset` is an even offset within the pinned block (which is at least 8-aligned
        // in memory), valid for reads while it is pinned; an atomic load races with nothing.
        unsafe { std::sync::atomic::AtomicU16::from_ptr(self.ptr.add(offset) as *mut u16) }
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn u32_at(&self, offset: usize) -> u32 {
        // SAFETY: `offset` is a 4-aligned offset within the pinned block (at least 8-aligned in
        // memory), valid for reads while it is pinned; an atomic load races with nothing.
        unsafe { std::sync::atomic::AtomicU32::from_ptr(self.ptr.add(offset) as *mut u32) }
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Where the line pointer of item `offset` (1..=max) says its tuple is.
    fn tuple(&self, offset: u16) -> *const u8 {
        let lp = self.u32_at(PAGE_HEADER + (offset as usize - 1) * 4);
        self.ptr.wrapping_add((lp & 0x7FFF) as usize)
    }
}

/// The items of the leaf `page` around where `lo` likely is, guessed from its item count and
/// `bounds` (the first ones without bounds).
fn likely_items(page: &Shape, lo: i64, bounds: Option<(i64, i64)>) -> std::ops::RangeInclusive<u16> {
    let (first, max) = (page.first, page.max);
    let guess = bounds.map_or(first, |(x, y)| interpolate(first, max.max(first), x, y, lo));
    let (before, after) = PREFETCH_ITEMS;
    // Empty when the page has no data items (first > max).
    guess.saturating_sub(before).max(first)..=guess.saturating_add(after).min(max)
}

/// Prefetches the line pointers of [`likely_items`] (the header read).
fn prefetch_line_pointers(page: &Option<Shape>, lo: i64, bounds: Option<(i64, i64)>) {
    let Some(page) = page else { return };
    let items = likely_items(page, lo, bounds);
    let (a, b) = (*items.start() as usize, *items.end() as usize);
    if a <= b {
        for line in ((PAGE_HEADER + (a - 1) * 4)..=(PAGE_HEADER + (b - 1) * 4)).step_by(64) {
            prefetch(page.ptr.wrapping_add(line));
        }
        // The last line pointer of the items.
        prefetch(page.ptr.wrapping_add(PAGE_HEADER + (b - 1) * 4));
    }
}

/// Prefetches the tuples of [`likely_items`] (the line pointers read), and the high key, which
/// the read compares first.
fn prefetch_tuples(page: &Option<Shape>, lo: i64, bounds: Option<(i64, i64)>) {
    let Some(page) = page else { return };
    if !page.rightmost && page.max >= P_HIKEY {
        prefetch(page.tuple(P_HIKEY));
    }
    for offset in likely_items(page, lo, bounds) {
        prefetch(page.tuple(offset));
    }
}

/// How many items ahead of the entry being read a leaf's tuples are prefetched: a range holds
/// ~15 entries at 1M rows, ~150 at 10M.
const ENTRIES_AHEAD: u16 = 8;

/// The offset in `a..=b` at the fraction of the way that `lo` is from `x` to `y`.
fn interpolate(a: u16, b: u16, x: i64, y: i64, lo: i64) -> u16 {
    // In floating point: a guess needs no more precision, and no key difference overflows.
    let frac = ((lo as f64 - x as f64) / (y as f64 - x as f64)).clamp(0.0, 1.0);
    a + ((b - a) as f64 * frac) as u16
}

/// Reads the entries of the locked leaf `page` with keys in `lo..=hi` that `keep` keeps into
/// `out`, counting the heap TIDs read into `read`. True if the range ends on this page: a key above `hi` was met, or the page is the
/// rightmost or its high key is above `hi` (every key to its right is at least the high key).
///
/// `keep` runs for every entry in the range (at 10M rows ~65,000 a k = 10 lookup): on a CPU with
/// `popcnt` the read is compiled with it, so that the distance `keep` computes is one
/// instruction, not the dozen of x86-64's baseline.
#[allow(clippy::too_many_arguments)]
fn read_leaf(
    page: &Page,
    lo: i64,
    hi: i64,
    bounds: Option<(i64, i64)>,
    keep: &mut impl FnMut(i64) -> bool,
    out: &mut Vec<(i64, pg_sys::ItemPointerData)>,
    read: &mut i64,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has popcnt.
        return unsafe { read_leaf_popcnt(page, lo, hi, bounds, keep, out, read) };
    }
    read_leaf_any(page, lo, hi, bounds, keep, out, read)
}

/// [`read_leaf_any`] compiled for a CPU with `popcnt`.
///
/// # Safety
/// The CPU has `popcnt`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
#[allow(clippy::too_many_arguments)]
unsafe fn read_leaf_popcnt(
    page: &Page,
    lo: i64,
    hi: i64,
    bounds: Option<(i64, i64)>,
    keep: &mut impl FnMut(i64) -> bool,
    out: &mut Vec<(i64, pg_sys::ItemPointerData)>,
    read: &mut i64,
) -> bool {
    read_leaf_any(page, lo, hi, bounds, keep, out, read)
}

/// [`read_leaf`] for any CPU.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn read_leaf_any(
    page: &Page,
    lo: i64,
    hi: i64,
    bounds: Option<(i64, i64)>,
    keep: &mut impl FnMut(i64) -> bool,
    out: &mut Vec<(i64, pg_sys::ItemPointerData)>,
    read: &mut i64,
) -> bool {
    let max = page.max_offset();
    let a = lower_bound(|i| page.key(i), page.first_data(), max + 1, lo, bounds);
    for offset in a..=max {
        // The tuples of a range lie one after another on the page (downwards, in an index built
        // in order; anywhere, in one grown by inserts): each a cache miss that the prefetch of
        // the tuple [`ENTRIES_AHEAD`] items on overlaps with the reads of those before it.
        if offset + ENTRIES_AHEAD <= max {
            prefetch(page.tuple(offset + ENTRIES_AHEAD));
        }
        match page.key(offset) {
            Key::Value(v) if v <= hi => {
                let t = page.tuple(offset);
                // SAFETY: `t` is a data item (from first_data to max_offset) of the locked leaf
                // `page`, so a non-pivot tuple of a locked leaf, as `entries` asks.
                *read += unsafe { entries(t) };
                if keep(v) {
                    // SAFETY: the same tuple `t`, of `page`, which stays locked for the whole
                    // read: as heap_tids asks.
                    unsafe { heap_tids(t, v, out) };
                }
            }
            _ => return true,
        }
    }
    page.high_key().is_none_or(|hk| hk > Key::Value(hi))
}

/// The first offset in `a..b` whose key is at least `lo` (`b` if none) on a leaf, or among an
/// internal page's pivots, whose keys ascend. The keys are hashes, spread evenly, so
/// interpolating between the keys that bound the page (`bounds`, from its parent; else the keys
/// at the ends, read here) lands within a few items of the answer; galloping from there brackets
/// it and a binary search finishes. Each key read is a line pointer and a tuple, two cache misses
/// on a page not read lately: this reads about 5 keys where a plain binary search reads 9.
/// Whatever `bounds` say, the answer is the keys'.
fn lower_bound(key: impl Fn(u16) -> Key, mut a: u16, mut b: u16, lo: i64, bounds: Option<(i64, i64)>) -> u16 {
    let lo_key = Key::Value(lo);
    if b - a > 16 {
        let ends = match bounds {
            Some(xy) => Some(xy),
            None => match (key(a), key(b - 1)) {
                (Key::Value(x), _) if lo <= x => return a,
                (_, Key::Value(y)) if y < lo => return b,
                (Key::Value(x), Key::Value(y)) => Some((x, y)),
                _ => None,
            },
        };
        if let Some((x, y)) = ends {
            let guess = interpolate(a, b - 1, x, y, lo);
            let mut step = 4;
            if key(guess) < lo_key {
                // The answer is in guess + 1 ..= b.
                let mut from = guess + 1;
                while from + step < b {
                    let probe = from + step;
                    if key(probe) >= lo_key {
                        b = probe;
                        break;
                    }
                    from = probe + 1;
                    step *= 2;
                }
                a = from;
            } else {
                // The answer is in a ..= guess.
                let mut to = guess;
                while to >= a + step {
                    let probe = to - step;
                    if key(probe) < lo_key {
                        a = probe + 1;
                        break;
                    }
                    to = probe;
                    step *= 2;
                }
                b = to;
            }
        }
    }
    // Binary search: the answer is in a..=b.
    while a < b {
        let m = a + (b - a) / 2;
        if key(m) < lo_key {
            a = m + 1;
        } else {
            b = m;
        }
    }
    a
}

#[cfg(test)]
mod unit_tests {
    use super::{lower_bound, Key, Opaque, Recent, Shape, PAGE_HEADER, P_NONE, RECENT_INDEXES, RECENT_PAGES};
    use pgrx::pg_sys;
    use pgrx::pg_sys::Oid;
    use proptest::prelude::*;

    /// The map of recent buffers answers what it was told, forgets everything rather than
    /// grow past its bounds, and never answers a block it was not told of.
    #[test]
    fn recent_buffers() {
        let mut r = Recent::default();
        let (a, b) = (Oid::from(16384), Oid::from(16385));
        assert_eq!(r.get(a, 0), None);
        r.remember(a, 7, 42);
        r.remember(b, 3, -2); // a local buffer
        assert_eq!((r.get(a, 7), r.get(b, 3), r.get(a, 3), r.get(a, 1000)), (Some(42), Some(-2), None, None));
        r.remember(a, 7, 43);
        assert_eq!(r.get(a, 7), Some(43));
        // A block beyond the map is not remembered; the rest stays.
        r.remember(a, RECENT_PAGES as u32, 1);
        assert_eq!((r.get(a, RECENT_PAGES as u32), r.get(a, 7)), (None, Some(43)));
        // Growing past the bound on blocks empties the map first.
        r.remember(b, RECENT_PAGES as u32 - 1, 5);
        assert_eq!((r.get(b, RECENT_PAGES as u32 - 1), r.get(a, 7), r.get(b, 3)), (Some(5), None, None));
        assert!(r.pages() <= RECENT_PAGES);
        // So does one index more than the bound on indexes.
        let mut r = Recent::default();
        for i in 0..=RECENT_INDEXES as u32 {
            r.remember(Oid::from(20000 + i), 1, 9);
        }
        assert_eq!(r.indexes.len(), 1);
        assert_eq!((r.get(Oid::from(20000), 1), r.get(Oid::from(20000 + RECENT_INDEXES as u32), 1)), (None, Some(9)));
    }

    /// A page's shape as the prefetch hints read it, unlocked: item count, first data item,
    /// rightmost or not, where a line pointer says a tuple is; and nothing for a page that is
    /// not an initialised B-tree page.
    #[test]
    fn shape_of_a_page() {
        #[repr(C, align(8192))]
        struct Block([u8; pg_sys::BLCKSZ as usize]);
        let mut block = Block([0; pg_sys::BLCKSZ as usize]);
        let ptr = block.0.as_ptr();
        assert!(Shape::of(ptr).is_none(), "an all-zero page");
        let special = pg_sys::BLCKSZ as usize - std::mem::size_of::<Opaque>();
        let put16 = |b: &mut Block, at: usize, v: u16| b.0[at..at + 2].copy_from_slice(&v.to_ne_bytes());
        let put32 = |b: &mut Block, at: usize, v: u32| b.0[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        put16(&mut block, std::mem::offset_of!(pg_sys::PageHeaderData, pd_lower), (PAGE_HEADER + 3 * 4) as u16);
        put16(&mut block, std::mem::offset_of!(pg_sys::PageHeaderData, pd_upper), 8000);
        put16(&mut block, std::mem::offset_of!(pg_sys::PageHeaderData, pd_special), special as u16);
        put32(&mut block, special + std::mem::offset_of!(Opaque, next), 17);
        put32(&mut block, PAGE_HEADER + 4, 8040 | (1 << 15)); // item 2: lp_off 8040, lp_flags 1
        let shape = Shape::of(block.0.as_ptr()).expect("a B-tree page");
        assert_eq!((shape.first, shape.max, shape.rightmost), (2, 3, false));
        assert_eq!(shape.tuple(2) as usize - block.0.as_ptr() as usize, 8040);
        put32(&mut block, special + std::mem::offset_of!(Opaque, next), P_NONE);
        let shape = Shape::of(block.0.as_ptr()).expect("a B-tree page");
        assert_eq!((shape.first, shape.rightmost), (1, true));
        // A corrupt pd_lower: no line pointer beyond the page.
        put16(&mut block, std::mem::offset_of!(pg_sys::PageHeaderData, pd_lower), u16::MAX);
        let shape = Shape::of(block.0.as_ptr()).expect("a B-tree page");
        assert!(PAGE_HEADER + shape.max as usize * 4 <= pg_sys::BLCKSZ as usize);
        put16(&mut block, std::mem::offset_of!(pg_sys::PageHeaderData, pd_special), 8000);
        assert!(Shape::of(block.0.as_ptr()).is_none(), "special space elsewhere");
    }

    proptest! {
        /// `lower_bound` is `partition_point` on ascending keys, whatever their spread
        /// (duplicates, clusters, a trailing NULL), from any start offset, and whatever bounds
        /// it is given as a hint (right, wrong, reversed or none).
        #[test]
        fn lower_bound_is_partition_point(
            mut keys in proptest::collection::vec(prop_oneof![any::<i64>(), -50i64..50], 0..500),
            null in any::<bool>(),
            lo in prop_oneof![any::<i64>(), -60i64..60],
            first in 1u16..3,
            bounds in proptest::option::of((any::<i64>(), any::<i64>())),
        ) {
            keys.sort_unstable();
            let mut all: Vec<Key> = keys.iter().map(|&k| Key::Value(k)).collect();
            if null {
                all.push(Key::Null);
            }
            // Offsets are 1-based; items before `first` (a high key) are not searched.
            let key = |i: u16| all[(i - first) as usize];
            let n = all.len() as u16;
            let expect = first + all.partition_point(|&k| k < Key::Value(lo)) as u16;
            prop_assert_eq!(lower_bound(key, first, first + n, lo, bounds), expect);
        }
    }
}

/// The on-disk format this reader assumes, checked against PostgreSQL on the server the tests
/// run on (every tested major): a B-tree on one `bigint` column, with duplicates (posting
/// lists), NULLs, several leaves and a level above them, walked page by page with this file's
/// own decoding — metapage, special space, line pointers, high keys, pivots and their
/// downlinks, posting lists — and compared with what PostgreSQL itself answers of the same
/// index and table.
#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests {
    use super::*;
    use pgrx::prelude::*;

    /// A leaf entry: its key and its heap TID as (block, offset).
    type Entry = (Key, (u32, u16));

    /// Every entry of the leaves, left to right, the root's level, the number of leaves and of
    /// posting lists, and checks of every page on the way.
    ///
    /// # Safety
    /// `index` is an open B-tree on one `bigint` column.
    unsafe fn walk(index: pg_sys::Relation) -> (Vec<Entry>, u32, usize, usize) {
        // SAFETY: pages pinned and share-locked while read, as the reader reads them.
        unsafe {
            let snapshot = pg_sys::GetActiveSnapshot();
            let reader = Reader::new(index, snapshot).expect("a B-tree of the current version");
            // Down the leftmost path: the first data item of an internal page points to its
            // leftmost child.
            let mut page = reader.lock_page(reader.root);
            assert!(page.usable(), "the root is a B-tree page");
            let levels = page.opaque().level;
            while page.opaque().flags & BTP_LEAF == 0 {
                assert_eq!(page.opaque().prev, P_NONE, "the leftmost path starts each level");
                let first = page.first_data();
                assert_eq!(page.key(first), Key::MinusInfinity, "an internal page's first item is minus infinity");
                // Pivots ascend, and each is below the page's high key.
                for i in first + 1..page.max_offset() {
                    assert!(page.key(i) <= page.key(i + 1), "pivots ascend");
                }
                if let Some(hk) = page.high_key() {
                    assert!(page.key(page.max_offset()) <= hk, "the last pivot is at most the high key");
                }
                let level = page.opaque().level;
                let down = tid_block(page.tuple(first));
                pg_sys::UnlockReleaseBuffer(page.buf);
                page = reader.lock_page(down);
                assert_eq!(page.opaque().level, level - 1, "a downlink goes one level down");
            }
            let mut out = Vec::new();
            let mut leaves = 0;
            let mut postings = 0;
            let mut last_high: Option<Key> = None;
            loop {
                leaves += 1;
                assert!(!page.ignore(), "no deleted or half-dead leaf in a fresh index");
                let first = page.first_data();
                for i in first..=page.max_offset() {
                    let t = page.tuple(i);
                    let key = page.key(i);
                    assert!(last_high.is_none_or(|hk| key >= hk), "a leaf's keys follow its left sibling's high key");
                    if let Some(hk) = page.high_key() {
                        assert!(key <= hk, "a leaf's keys are at most its high key");
                    }
                    let mut tids = Vec::new();
                    let v = match key {
                        Key::Value(v) => v,
                        _ => 0,
                    };
                    heap_tids(t, v, &mut tids);
                    assert_eq!(tids.len() as i64, entries(t), "a posting list's count");
                    postings += usize::from(is_posting(t));
                    for (_, tid) in tids {
                        out.push((key, (tid_of_block(&tid), tid.ip_posid)));
                    }
                }
                last_high = page.high_key();
                let next = page.opaque().next;
                pg_sys::UnlockReleaseBuffer(page.buf);
                if next == P_NONE {
                    break;
                }
                page = reader.lock_page(next);
                assert_eq!(page.opaque().level, 0, "leaves link to leaves");
            }
            (out, levels, leaves, postings)
        }
    }

    fn tid_of_block(tid: &pg_sys::ItemPointerData) -> u32 {
        (u32::from(tid.ip_blkid.bi_hi) << 16) | u32::from(tid.ip_blkid.bi_lo)
    }

    #[pg_test]
    fn the_page_layout_is_the_servers() {
        // 40,000 rows, 8,000 distinct keys five times each (posting lists), negative and
        // positive, and 500 NULLs (sorted last).
        Spi::run(
            "CREATE TABLE lay (k bigint);
             INSERT INTO lay SELECT CASE WHEN g % 81 = 0 THEN NULL ELSE (g % 8000 - 4000)::bigint * 1000003 END
             FROM generate_series(1, 40000) g;
             CREATE INDEX lay_k ON lay (k);",
        )
        .unwrap();
        let oid = Spi::get_one::<pg_sys::Oid>("SELECT 'lay_k'::regclass::oid").unwrap().unwrap();
        // SAFETY: the index just created, opened and closed here under AccessShareLock.
        let (entries, levels, leaves, postings) = unsafe {
            let index = pg_sys::index_open(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let walked = walk(index);
            pg_sys::index_close(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            walked
        };
        assert!(
            levels >= 1 && leaves > 10 && postings > 1000,
            "levels {levels}, leaves {leaves}, posting lists {postings}"
        );
        // What PostgreSQL stores: every row's key and TID, in the index's order (NULLs last,
        // TIDs ascending within a key).
        let expected: Vec<Entry> = Spi::connect(|c| {
            c.select(
                "SELECT k, (ctid::text::point)[0]::int8 AS blk, (ctid::text::point)[1]::int4 AS off FROM lay
                 ORDER BY k NULLS LAST, ctid",
                None,
                &[],
            )
            .unwrap()
            .map(|row| {
                let k = row.get::<i64>(1).unwrap();
                let blk = row.get::<i64>(2).unwrap().unwrap() as u32;
                let off = row.get::<i32>(3).unwrap().unwrap() as u16;
                (k.map_or(Key::Null, Key::Value), (blk, off))
            })
            .collect()
        });
        assert_eq!(entries.len(), expected.len());
        assert!(entries == expected, "the leaves, read with this file's layout, hold the table's keys and TIDs");
    }
}
