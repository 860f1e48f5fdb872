//! The buffers in which this backend last found the key indexes' pages, and pinning a page through
//! them.

use pgrx::pg_sys;

/// Index pages remembered in [`RECENT`] (4 bytes each) before it is emptied: the key indexes
/// of a 10M-row table have ~110,000 pages.
pub(super) const RECENT_PAGES: usize = 1 << 20;
/// Indexes remembered in [`RECENT`] before it is emptied.
pub(super) const RECENT_INDEXES: usize = 64;

/// The buffer in which this backend last found each page of the indexes it read: a hint (the
/// buffer may hold another page by now, which `ReadRecentBuffer` sees from its tag).
#[derive(Default)]
pub(super) struct Recent {
    /// Per index, by block number (0, `InvalidBuffer`: not known).
    indexes: Vec<(pg_sys::Oid, Vec<pg_sys::Buffer>)>,
    /// The index read last (a search reads one index at a time).
    last: usize,
}

impl Recent {
    /// Where `index` is in `indexes`.
    pub(super) fn find(&mut self, index: pg_sys::Oid) -> Option<usize> {
        if self.indexes.get(self.last).is_some_and(|(oid, _)| *oid == index) {
            return Some(self.last);
        }
        self.last = self.indexes.iter().position(|(oid, _)| *oid == index)?;
        Some(self.last)
    }

    /// The length of the per-index arrays, in all.
    pub(super) fn pages(&self) -> usize {
        self.indexes.iter().map(|(_, blocks)| blocks.len()).sum()
    }

    pub(super) fn get(&mut self, index: pg_sys::Oid, blkno: pg_sys::BlockNumber) -> Option<pg_sys::Buffer> {
        let i = self.find(index)?;
        let buf = *self.indexes[i].1.get(blkno as usize)?;
        (buf != pg_sys::InvalidBuffer as pg_sys::Buffer).then_some(buf)
    }

    /// Remembers that block `blkno` of `index` was found in buffer `buf`; empties the map first
    /// when it would grow past [`RECENT_PAGES`] blocks or [`RECENT_INDEXES`] indexes.
    pub(super) fn remember(&mut self, index: pg_sys::Oid, blkno: pg_sys::BlockNumber, buf: pg_sys::Buffer) {
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
    pub(super) static RECENT: std::cell::RefCell<Recent> = std::cell::RefCell::new(Recent::default());
}

/// Pins block `blkno` of `index`: through [`RECENT`]'s buffer if that still holds it
/// (`ReadRecentBuffer` checks the buffer's tag and pins it, without the buffer mapping
/// table's lookup), else `ReadBuffer`, remembering the buffer.
///
/// # Safety
/// `index` is an open index.
pub(super) unsafe fn read_page(index: pg_sys::Relation, blkno: pg_sys::BlockNumber) -> pg_sys::Buffer {
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

#[cfg(test)]
mod unit_tests {
    use super::{Recent, RECENT_INDEXES, RECENT_PAGES};
    use pgrx::pg_sys::Oid;

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
}
