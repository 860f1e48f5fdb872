//! Connected components of a near-duplicate graph (union-find over fingerprints).
//!
//! Batch grouping first collapses identical fingerprints, finds the pairs of *distinct*
//! fingerprints within distance k, and joins them here; the rows are attached afterwards.

use std::collections::HashMap;

/// Union-find over arbitrary `u64`-like keys (fingerprints), with path halving and union by
/// size. Memory: one map entry and two `u32`s per key that appears in an edge.
#[derive(Default)]
pub struct Components {
    index: HashMap<i64, u32>,
    keys: Vec<i64>,
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl Components {
    pub fn new() -> Self {
        Self::default()
    }

    fn id(&mut self, key: i64) -> u32 {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = u32::try_from(self.keys.len()).expect("more than 2^32 fingerprints");
        self.index.insert(key, i);
        self.keys.push(key);
        self.parent.push(i);
        self.size.push(1);
        i
    }

    fn find(&mut self, mut i: u32) -> u32 {
        while self.parent[i as usize] != i {
            let p = self.parent[i as usize];
            self.parent[i as usize] = self.parent[p as usize];
            i = p;
        }
        i
    }

    /// Records that `a` and `b` are in the same component (duplicates and self-edges are fine).
    pub fn union(&mut self, a: i64, b: i64) {
        let (ia, ib) = (self.id(a), self.id(b));
        let (mut ra, mut rb) = (self.find(ia), self.find(ib));
        if ra == rb {
            return;
        }
        if self.size[ra as usize] < self.size[rb as usize] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb as usize] = ra;
        self.size[ra as usize] += self.size[rb as usize];
    }

    /// Number of keys seen.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Every key seen with the smallest key of its component (a deterministic component id),
    /// in order of first appearance.
    pub fn labels(mut self) -> Vec<(i64, i64)> {
        let n = self.keys.len();
        let mut smallest: Vec<i64> = vec![i64::MAX; n];
        for i in 0..n as u32 {
            let r = self.find(i) as usize;
            smallest[r] = smallest[r].min(self.keys[i as usize]);
        }
        (0..n as u32)
            .map(|i| {
                let r = self.find(i) as usize;
                (self.keys[i as usize], smallest[r])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn chains_and_islands() {
        let mut c = Components::new();
        for (a, b) in [(5, 9), (9, 2), (7, 8), (2, 5), (-3, 8)] {
            c.union(a, b);
        }
        let mut l = c.labels();
        l.sort();
        assert_eq!(l, vec![(-3, -3), (2, 2), (5, 2), (7, -3), (8, -3), (9, 2)]);
    }

    proptest! {
        /// Same partition as a naive label propagation.
        #[test]
        fn matches_naive(edges in proptest::collection::vec((0i64..40, 0i64..40), 0..60)) {
            let mut c = Components::new();
            for &(a, b) in &edges { c.union(a, b); }
            let got: HashMap<i64, i64> = c.labels().into_iter().collect();
            let mut label: HashMap<i64, i64> = HashMap::new();
            for &(a, b) in &edges { label.insert(a, a); label.insert(b, b); }
            loop {
                let mut changed = false;
                for &(a, b) in &edges {
                    let m = label[&a].min(label[&b]);
                    for x in [a, b] {
                        if label[&x] != m { label.insert(x, m); changed = true; }
                    }
                }
                if !changed { break; }
            }
            prop_assert_eq!(got, label);
        }
    }
}
