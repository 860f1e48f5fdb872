//! Reading a locked leaf: the entries of a key range, found by interpolation, galloping and binary
//! search, their keys compared in place.

use pgrx::pg_sys;

use super::page::{entries, heap_tids, interpolate, Key, Page};
use super::prefetch::prefetch;

/// How many items ahead of the entry being read a leaf's tuples are prefetched: a range holds
/// ~15 entries at 1M rows, ~150 at 10M.
pub(super) const ENTRIES_AHEAD: u16 = 8;

/// Reads the entries of the locked leaf `page` with keys in `lo..=hi` that `keep` keeps into
/// `out`, counting the heap TIDs read into `read`. True if the range ends on this page: a key above `hi` was met, or the page is the
/// rightmost or its high key is above `hi` (every key to its right is at least the high key).
///
/// `keep` runs for every entry in the range (at 10M rows ~65,000 a k = 10 lookup): on a CPU with
/// `popcnt` the read is compiled with it, so that the distance `keep` computes is one
/// instruction, not the dozen of x86-64's baseline.
#[allow(clippy::too_many_arguments)]
pub(super) fn read_leaf(
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
pub(super) unsafe fn read_leaf_popcnt(
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
pub(super) fn read_leaf_any(
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
pub(super) fn lower_bound(
    key: impl Fn(u16) -> Key,
    mut a: u16,
    mut b: u16,
    lo: i64,
    bounds: Option<(i64, i64)>,
) -> u16 {
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
    use super::super::page::Key;
    use super::lower_bound;
    use proptest::prelude::*;

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
