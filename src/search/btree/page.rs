//! The on-disk format of a key index's B-tree pages as the page reader reads them: the metapage, a
//! page's special space and line pointers, index tuples (pivots, posting lists, NULL keys) and the
//! heap TIDs of a leaf tuple.

use pgrx::pg_sys;

/// `BTPageOpaqueData` (access/nbtree.h, PostgreSQL 14 and later): the special space of a page.
#[repr(C)]
pub(super) struct Opaque {
    pub(super) prev: pg_sys::BlockNumber,
    pub(super) next: pg_sys::BlockNumber,
    pub(super) level: u32,
    pub(super) flags: u16,
    pub(super) cycle_id: u16,
}

/// The start of `BTMetaPageData` (access/nbtree.h).
#[repr(C)]
pub(super) struct Meta {
    pub(super) magic: u32,
    pub(super) version: u32,
    pub(super) root: pg_sys::BlockNumber,
    pub(super) level: u32,
    pub(super) fastroot: pg_sys::BlockNumber,
    pub(super) fastlevel: u32,
}

pub(super) const BTREE_MAGIC: u32 = 0x053162;
/// The first version with heap TIDs as keys, suffix truncation and posting lists (PostgreSQL 12).
pub(super) const HEAPKEYSPACE_VERSION: u32 = 4;
pub(super) const P_NONE: pg_sys::BlockNumber = 0;
pub(super) const METAPAGE: pg_sys::BlockNumber = 0;
pub(super) const BTP_LEAF: u16 = 1 << 0;
pub(super) const BTP_DELETED: u16 = 1 << 2;
pub(super) const BTP_META: u16 = 1 << 3;
pub(super) const BTP_HALF_DEAD: u16 = 1 << 4;
pub(super) const P_HIKEY: u16 = 1;
pub(super) const INDEX_NULL_MASK: u16 = 0x8000;
pub(super) const INDEX_ALT_TID_MASK: u16 = 0x2000;
pub(super) const BT_OFFSET_MASK: u16 = 0x0FFF;
pub(super) const BT_IS_POSTING: u16 = 0x2000;
/// `SizeOfPageHeaderData`, already MAXALIGNed: where the line pointers (and a metapage's
/// contents) start.
pub(super) const PAGE_HEADER: usize = 24;
/// `MAXALIGN(sizeof(IndexTupleData))`: where a NULL-free index tuple's first attribute starts.
pub(super) const TUPLE_DATA: usize = 8;

/// A key as the B-tree orders it: "minus infinity" (a truncated pivot), a value, or NULL (after
/// every value).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(super) enum Key {
    MinusInfinity,
    Value(i64),
    Null,
}

/// The memory of the pinned buffer `buf`.
///
/// # Safety
/// `buf` is pinned.
pub(super) unsafe fn block(buf: pg_sys::Buffer) -> *const u8 {
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
pub(super) struct Page {
    pub(super) buf: pg_sys::Buffer,
    pub(super) ptr: *const u8,
}

impl Page {
    /// # Safety
    /// `buf` is pinned and share-locked.
    pub(super) unsafe fn of(buf: pg_sys::Buffer) -> Page {
        // SAFETY: the caller guarantees `buf` is pinned, all `block` asks; its share lock, also
        // promised, is what the reads through `ptr` rely on.
        Page { buf, ptr: unsafe { block(buf) } }
    }

    pub(super) fn header(&self) -> &pg_sys::PageHeaderData {
        // SAFETY: every page starts with its header; the lock keeps it stable.
        unsafe { &*(self.ptr as *const pg_sys::PageHeaderData) }
    }

    pub(super) fn opaque(&self) -> &Opaque {
        // SAFETY: a B-tree page's special space is its BTPageOpaqueData; `usable` checks
        // pd_special before any other read of a page that might not be one.
        unsafe { &*(self.ptr.add(self.header().pd_special as usize) as *const Opaque) }
    }

    /// The page is an initialised B-tree page (not all zeros, special space where nbtree puts it).
    pub(super) fn usable(&self) -> bool {
        let h = self.header();
        is_btree_page(h.pd_upper, h.pd_special)
    }

    pub(super) fn ignore(&self) -> bool {
        self.opaque().flags & (BTP_DELETED | BTP_HALF_DEAD) != 0
    }

    /// Keys from `lo` on may start here: the page is live and its high key (if any) is not
    /// below `lo` (else they lie to its right).
    pub(super) fn covers(&self, lo: i64) -> bool {
        !self.ignore() && self.high_key().is_none_or(|hk| hk >= Key::Value(lo))
    }

    pub(super) fn rightmost(&self) -> bool {
        self.opaque().next == P_NONE
    }

    pub(super) fn max_offset(&self) -> u16 {
        max_offset(self.header().pd_lower)
    }

    pub(super) fn first_data(&self) -> u16 {
        first_data(self.rightmost())
    }

    /// The index tuple at `offset` (1-based, at most `max_offset`).
    pub(super) fn tuple(&self, offset: u16) -> *const u8 {
        // SAFETY: line pointers follow the header; lp_off is the low 15 bits of each.
        unsafe {
            let lp = std::ptr::read_unaligned(self.ptr.add(PAGE_HEADER + (offset as usize - 1) * 4) as *const u32);
            self.ptr.add((lp & 0x7FFF) as usize)
        }
    }

    pub(super) fn key(&self, offset: u16) -> Key {
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
    pub(super) fn high_key(&self) -> Option<Key> {
        (!self.rightmost()).then(|| self.key(P_HIKEY))
    }
}

/// A page header's `pd_upper` and `pd_special` say an initialised B-tree page: not all zeros,
/// its special space where nbtree puts it.
pub(super) fn is_btree_page(pd_upper: u16, pd_special: u16) -> bool {
    pd_upper != 0 && pd_special as usize + std::mem::size_of::<Opaque>() == pg_sys::BLCKSZ as usize
}

/// The offset of a page's last item, from its header's `pd_lower`, at most as many line pointers
/// as the page holds (a corrupt `pd_lower` reads no line pointer beyond it).
pub(super) fn max_offset(pd_lower: u16) -> u16 {
    let items = (pd_lower as usize).saturating_sub(PAGE_HEADER) / 4;
    items.min((pg_sys::BLCKSZ as usize - PAGE_HEADER) / 4) as u16
}

/// The first data item: 1 on the rightmost page of a level, which has no high key, else 2.
pub(super) fn first_data(rightmost: bool) -> u16 {
    if rightmost {
        1
    } else {
        2
    }
}

/// The offset in `a..=b` at the fraction of the way that `lo` is from `x` to `y`: where a key
/// likely is among a page's items, whose keys (hashes) are evenly spread.
pub(super) fn interpolate(a: u16, b: u16, x: i64, y: i64, lo: i64) -> u16 {
    // In floating point: a guess needs no more precision, and no key difference overflows.
    let frac = ((lo as f64 - x as f64) / (y as f64 - x as f64)).clamp(0.0, 1.0);
    a + ((b - a) as f64 * frac) as u16
}

/// # Safety
/// `t` points at an index tuple.
pub(super) unsafe fn tid_offset(t: *const u8) -> u16 {
    // SAFETY: ip_posid follows the two halves of the block number.
    unsafe { std::ptr::read_unaligned(t.add(4) as *const u16) }
}

/// # Safety
/// `t` points at an index tuple.
pub(super) unsafe fn tid_block(t: *const u8) -> u32 {
    // SAFETY: ItemPointerData starts with bi_hi, bi_lo.
    unsafe {
        let hi = std::ptr::read_unaligned(t as *const u16) as u32;
        let lo = std::ptr::read_unaligned(t.add(2) as *const u16) as u32;
        (hi << 16) | lo
    }
}

/// # Safety
/// `t` points at an index tuple.
pub(super) unsafe fn is_posting(t: *const u8) -> bool {
    // SAFETY: t_info follows the TID.
    unsafe {
        std::ptr::read_unaligned(t.add(6) as *const u16) & INDEX_ALT_TID_MASK != 0 && tid_offset(t) & BT_IS_POSTING != 0
    }
}

/// How many heap TIDs the leaf tuple `t` holds.
///
/// # Safety
/// `t` points at a non-pivot tuple of a locked leaf page.
pub(super) unsafe fn entries(t: *const u8) -> i64 {
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
pub(super) unsafe fn heap_tids(t: *const u8, key: i64, out: &mut Vec<(i64, pg_sys::ItemPointerData)>) {
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

/// The on-disk format this reader assumes, checked against PostgreSQL on the server the tests
/// run on (every tested major): a B-tree on one `bigint` column, with duplicates (posting
/// lists), NULLs, several leaves and a level above them, walked page by page with this file's
/// own decoding — metapage, special space, line pointers, high keys, pivots and their
/// downlinks, posting lists — and compared with what PostgreSQL itself answers of the same
/// index and table.
#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests {
    use super::super::Reader;
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
