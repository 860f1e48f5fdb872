//! Comparing shingle sets: the size of their intersection ([`Overlap`]), and from it Jaccard
//! similarity and containment, the measures every similarity decision uses; and
//! [`OverlapCounter`], which counts the overlap of one set with the shingles of many texts
//! without building their sets. It knows sets of 64-bit hashes only: [`crate::similarity::minhash`], whose
//! shingle sets these are, re-exports it and feeds the counter a text's shingles
//! ([`crate::similarity::minhash::char_overlap`]).

/// Size of the intersection of two sets (strictly ascending slices), by a merge walk.
pub fn intersection_size(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
        n += usize::from(x == y);
    }
    n
}

/// Jaccard similarity |A ∩ B| / |A ∪ B| of two sets given as strictly ascending slices (as
/// [`crate::similarity::minhash::shingles`] returns them; see [`crate::similarity::minhash::to_set`]). Always in
/// `[0, 1]`; unsorted input gives a meaningless value but no panic.
///
/// Two empty sets give **1.0**: they are equal, and "identical inputs have similarity 1" then
/// holds without exception (an empty and a non-empty set give 0.0). The SQL layer returns NULL
/// for text without shingles before it gets here anyway.
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    Overlap::of(a, b).jaccard()
}

/// Two sets' sizes and the size of their intersection: one merge walk, from which both
/// [`jaccard`] and [`containment`] follow (the dedup triggers need both of a candidate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overlap {
    pub shared: usize,
    pub a: usize,
    pub b: usize,
}

impl Overlap {
    /// The overlap of two sets given as strictly ascending slices.
    pub fn of(a: &[u64], b: &[u64]) -> Overlap {
        Overlap { shared: intersection_size(a, b), a: a.len(), b: b.len() }
    }

    /// [`jaccard`]'s value.
    pub fn jaccard(&self) -> f64 {
        if self.a == 0 && self.b == 0 {
            return 1.0;
        }
        self.shared as f64 / (self.a + self.b - self.shared) as f64
    }

    /// [`containment`]'s value.
    pub fn containment(&self) -> f64 {
        let smaller = self.a.min(self.b);
        if smaller == 0 {
            return 1.0;
        }
        self.shared as f64 / smaller as f64
    }
}

/// Containment |A ∩ B| / min(|A|, |B|) of two sets given as strictly ascending slices: the share
/// of the smaller set found in the other, 1.0 when one contains the other. Where Jaccard falls
/// as text is added to one side (an inserted paragraph, a boilerplate header), containment stays
/// high. Always in `[0, 1]`; an empty set gives 1.0 (it is contained in anything), as two empty
/// sets give Jaccard 1.0.
pub fn containment(a: &[u64], b: &[u64]) -> f64 {
    Overlap::of(a, b).containment()
}

/// The [`Overlap`] of one fixed set with the sets of many streams of hashes (a text's shingles,
/// repeats included), without sorting them: the dedup trigger's verification of its candidates.
/// Each hash is looked up in a hash table of the fixed set, and those not in it are counted
/// once each in a second table, so the counts are exactly those of [`Overlap::of`] on the
/// streams' sets (the full 64-bit hashes are compared). The tables are kept between texts
/// (a generation number marks what the current text has seen), so verifying a candidate
/// allocates nothing once the tables have grown to its size.
pub struct OverlapCounter {
    /// The fixed set, open addressing on the hash's top bits; a slot's generation is the last
    /// text that met its shingle (0: never), [`EMPTY`] marks a free slot.
    fixed: Vec<Slot>,
    len: usize,
    /// The current text's shingles that are not in the fixed set: a slot is occupied when its
    /// generation is the current one.
    other: Vec<Slot>,
    other_len: usize,
    gen: u32,
}

/// A hash and a generation, side by side (one cache line holds four).
#[derive(Clone, Copy)]
struct Slot {
    hash: u64,
    gen: u32,
}

/// The generation of a free slot of the fixed set's table (the counter's generations stop below it).
const EMPTY: u32 = u32::MAX;

/// Table slots for `n` entries: a power of two at least twice `n` (at least 16).
fn table_size(n: usize) -> usize {
    (n.max(8) * 2).next_power_of_two()
}

/// The home slot of hash `h` in a table of `size` slots (a power of two).
fn home(h: u64, size: usize) -> usize {
    (h >> (64 - size.trailing_zeros())) as usize
}

impl OverlapCounter {
    /// A counter for the fixed set `a` (strictly ascending, as [`crate::similarity::minhash::shingles`]
    /// returns it).
    pub fn new(a: &[u64]) -> OverlapCounter {
        let size = table_size(a.len());
        let mut fixed = vec![Slot { hash: 0, gen: EMPTY }; size];
        for &h in a {
            let mut i = home(h, size);
            while fixed[i].gen != EMPTY && fixed[i].hash != h {
                i = (i + 1) & (size - 1);
            }
            fixed[i] = Slot { hash: h, gen: 0 };
        }
        OverlapCounter {
            fixed,
            len: a.len(),
            other: vec![Slot { hash: 0, gen: 0 }; table_size(256)],
            other_len: 0,
            gen: 0,
        }
    }

    /// The overlap of the fixed set (`a`) with the set of the hashes `walk` passes to the sink
    /// it is given (`b`; repeats allowed).
    pub fn count(&mut self, walk: impl FnOnce(&mut dyn FnMut(u64))) -> Overlap {
        self.next_generation();
        let (mut shared, mut own) = (0usize, 0usize);
        let size = self.fixed.len();
        walk(&mut |h| {
            let mut i = home(h, size);
            loop {
                let slot = &mut self.fixed[i];
                if slot.gen == EMPTY {
                    break;
                }
                if slot.hash == h {
                    if slot.gen != self.gen {
                        slot.gen = self.gen;
                        shared += 1;
                    }
                    return;
                }
                i = (i + 1) & (size - 1);
            }
            if self.insert_other(h) {
                own += 1;
            }
        });
        Overlap { shared, a: self.len, b: shared + own }
    }

    /// Starts a new text: every mark and every slot of the second table is stale.
    fn next_generation(&mut self) {
        self.other_len = 0;
        self.gen += 1;
        if self.gen == EMPTY {
            for s in self.fixed.iter_mut().filter(|s| s.gen != EMPTY) {
                s.gen = 0;
            }
            self.other.iter_mut().for_each(|s| s.gen = 0);
            self.gen = 1;
        }
    }

    /// Adds `h` to the current text's own shingles; whether it was new.
    fn insert_other(&mut self, h: u64) -> bool {
        let size = self.other.len();
        let mut i = home(h, size);
        while self.other[i].gen == self.gen {
            if self.other[i].hash == h {
                return false;
            }
            i = (i + 1) & (size - 1);
        }
        self.other[i] = Slot { hash: h, gen: self.gen };
        self.other_len += 1;
        // At most half full, so a probe always ends at a free slot.
        if self.other_len * 2 > size {
            self.grow();
        }
        true
    }

    /// Doubles the second table, keeping the current text's entries.
    fn grow(&mut self) {
        let size = self.other.len() * 2;
        let old = std::mem::replace(&mut self.other, vec![Slot { hash: 0, gen: 0 }; size]);
        for s in old.into_iter().filter(|s| s.gen == self.gen) {
            let mut i = home(s.hash, size);
            while self.other[i].gen == self.gen {
                i = (i + 1) & (size - 1);
            }
            self.other[i] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn set(mut v: Vec<u64>) -> Vec<u64> {
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Hashes from a small range, so that streams repeat values and meet the fixed set.
    fn stream() -> impl Strategy<Value = Vec<u64>> {
        proptest::collection::vec((0u64..600).prop_map(|x| x.wrapping_mul(0x9E37_79B9_7F4A_7C15)), 0..700)
    }

    proptest! {
        /// One counter, many streams: each overlap equals the sorted sets' (tables reused across
        /// streams, the second table grown from its smallest size).
        #[test]
        fn counted_overlap_equals_sets(a in stream(), others in proptest::collection::vec(stream(), 1..6)) {
            let sa = set(a.clone());
            let mut counter = OverlapCounter::new(&sa);
            for b in others.iter().chain([&a]) {
                let counted = counter.count(|sink| b.iter().for_each(|&h| sink(h)));
                prop_assert_eq!(counted, Overlap::of(&sa, &set(b.clone())));
            }
        }
    }

    /// Long streams (the second table grows many times), an empty fixed set, and a generation
    /// counter that wraps.
    #[test]
    fn counted_overlap_long_streams_and_wrap() {
        let h = |x: u64| x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (x << 7);
        let a: Vec<u64> = (0..1200).map(h).collect();
        let streams: Vec<Vec<u64>> = vec![
            (600..3000).map(h).collect(),
            (0..300).chain(0..300).chain(5000..9000).map(h).collect(),
            Vec::new(),
            vec![h(1)],
        ];
        for fixed in [set(a), Vec::new()] {
            let mut counter = OverlapCounter::new(&fixed);
            for round in 0..3 {
                if round == 2 {
                    counter.gen = EMPTY - 2;
                }
                for b in &streams {
                    let counted = counter.count(|sink| b.iter().for_each(|&x| sink(x)));
                    assert_eq!(counted, Overlap::of(&fixed, &set(b.clone())));
                }
            }
        }
    }
}
