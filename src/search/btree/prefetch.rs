//! The page reader's prefetch hints: a leaf's buffer header, its ends, and the line pointers and
//! tuples around where a range likely starts, read from the pinned leaf without its lock.

use pgrx::pg_sys;

use super::buffers::RECENT;
use super::page::{first_data, interpolate, is_btree_page, max_offset, Opaque, PAGE_HEADER, P_HIKEY, P_NONE};

/// Line pointers around the guessed position of a range's first key whose tuples are
/// prefetched: the guess is usually within a few items, and a range holds about 15 entries at
/// 1M rows.
pub(super) const PREFETCH_ITEMS: (u16, u16) = (8, 24);

/// Asks the CPU to bring `addr`'s cache line into its caches (a hint: it never faults).
#[inline]
pub(super) fn prefetch(addr: *const u8) {
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
pub(super) unsafe fn prefetch_buffer_header(index: pg_sys::Relation, blkno: pg_sys::BlockNumber) {
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
pub(super) fn prefetch_ends(ptr: *const u8) {
    prefetch(ptr);
    prefetch(ptr.wrapping_add(pg_sys::BLCKSZ as usize - 64));
}

/// What the prefetch hints read of a pinned leaf that is not locked: its item count and whether
/// it is the rightmost, and its line pointers. A writer may be changing the page meanwhile, so
/// each is read by a relaxed atomic load (a plain load on x86-64), and what is read only chooses
/// what to prefetch: a page changed under it gives a useless prefetch, never a wrong answer, and
/// a prefetch never faults.
pub(super) struct Shape {
    pub(super) ptr: *const u8,
    pub(super) first: u16,
    pub(super) max: u16,
    pub(super) rightmost: bool,
}

impl Shape {
    /// The shape of the pinned page at `ptr`; `None` if it does not look like an initialised
    /// B-tree page (the read will say what it is).
    pub(super) fn of(ptr: *const u8) -> Option<Shape> {
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

    pub(super) fn u16_at(&self, offset: usize) -> u16 {
        // SAFETY: `offset` is an even offset within the pinned block (which is at least 8-aligned
        // in memory), valid for reads while it is pinned; an atomic load races with nothing.
        unsafe { std::sync::atomic::AtomicU16::from_ptr(self.ptr.add(offset) as *mut u16) }
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(super) fn u32_at(&self, offset: usize) -> u32 {
        // SAFETY: `offset` is a 4-aligned offset within the pinned block (at least 8-aligned in
        // memory), valid for reads while it is pinned; an atomic load races with nothing.
        unsafe { std::sync::atomic::AtomicU32::from_ptr(self.ptr.add(offset) as *mut u32) }
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Where the line pointer of item `offset` (1..=max) says its tuple is.
    pub(super) fn tuple(&self, offset: u16) -> *const u8 {
        let lp = self.u32_at(PAGE_HEADER + (offset as usize - 1) * 4);
        self.ptr.wrapping_add((lp & 0x7FFF) as usize)
    }
}

/// The items of the leaf `page` around where `lo` likely is, guessed from its item count and
/// `bounds` (the first ones without bounds).
pub(super) fn likely_items(page: &Shape, lo: i64, bounds: Option<(i64, i64)>) -> std::ops::RangeInclusive<u16> {
    let (first, max) = (page.first, page.max);
    let guess = bounds.map_or(first, |(x, y)| interpolate(first, max.max(first), x, y, lo));
    let (before, after) = PREFETCH_ITEMS;
    // Empty when the page has no data items (first > max).
    guess.saturating_sub(before).max(first)..=guess.saturating_add(after).min(max)
}

/// Prefetches the line pointers of [`likely_items`] (the header read).
pub(super) fn prefetch_line_pointers(page: &Option<Shape>, lo: i64, bounds: Option<(i64, i64)>) {
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
pub(super) fn prefetch_tuples(page: &Option<Shape>, lo: i64, bounds: Option<(i64, i64)>) {
    let Some(page) = page else { return };
    if !page.rightmost && page.max >= P_HIKEY {
        prefetch(page.tuple(P_HIKEY));
    }
    for offset in likely_items(page, lo, bounds) {
        prefetch(page.tuple(offset));
    }
}

#[cfg(test)]
mod unit_tests {
    use super::super::page::{Opaque, PAGE_HEADER, P_NONE};
    use super::Shape;
    use pgrx::pg_sys;

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
}
