//! Groups that do not chain: leader (star) clustering of a near-duplicate graph.
//!
//! Connected components ([`crate::components`]) join a and c whenever a chain a–b–c of
//! near-duplicates links them, so one group can hold members far more than k apart. Leader
//! clustering walks the fingerprints in a given order (the batch functions pass the order of
//! each fingerprint's smallest primary key, so it is deterministic and favours the earliest
//! row): the first fingerprint not yet in a group leads a new group, and every fingerprint
//! within k of it that is not yet in a group joins it. Every member is within k of its group's
//! leader, so two members are at most 2k apart; each fingerprint is in exactly one group.

use std::collections::HashMap;

/// For fingerprints `order` (distinct, in the order leaders are chosen) and the pairs of them
/// within distance k (`pairs`, from [`crate::pairs::near_pairs`], each once, either way round),
/// each fingerprint that is in a group of two or more, with its group's leader, in `order`.
pub fn leaders(order: &[u64], pairs: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let rank: HashMap<u64, usize> = order.iter().enumerate().map(|(i, &fp)| (fp, i)).collect();
    let mut near: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
    for &(a, b) in pairs {
        if let (Some(&x), Some(&y)) = (rank.get(&a), rank.get(&b)) {
            near[x].push(y);
            near[y].push(x);
        }
    }
    let mut leader: Vec<Option<usize>> = vec![None; order.len()];
    for i in 0..order.len() {
        if leader[i].is_some() || near[i].is_empty() {
            continue;
        }
        let mut members = 0;
        for &j in &near[i] {
            if leader[j].is_none() {
                leader[j] = Some(i);
                members += 1;
            }
        }
        if members > 0 {
            leader[i] = Some(i);
        }
    }
    (0..order.len()).filter_map(|i| leader[i].map(|l| (order[i], order[l]))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::hamming;
    use crate::pairs::near_pairs;
    use proptest::prelude::*;

    #[test]
    fn a_chain_is_cut() {
        // 0 - 1 - 3 - 7 at k = 1: components would make one group; leaders make {0, 1} and {3, 7}.
        let order = [0u64, 1, 3, 7];
        let got = leaders(&order, &near_pairs(order.to_vec(), 1, &mut || {}));
        assert_eq!(got, vec![(0, 0), (1, 0), (3, 3), (7, 3)]);
    }

    proptest! {
        /// Every member is within k of its leader; leaders lead themselves; a fingerprint left
        /// out has no neighbour that was free when it came; the groups partition the members.
        #[test]
        fn stars(
            centres in proptest::collection::vec(any::<u64>(), 1..6),
            flips in proptest::collection::vec((0usize..6, proptest::collection::vec(0u32..64, 0..8)), 0..40),
            k in 0u32..=12,
        ) {
            let mut fps: Vec<u64> = centres.clone();
            for (c, bits) in &flips {
                let mut fp = centres[c % centres.len()];
                for b in bits { fp ^= 1 << b; }
                fps.push(fp);
            }
            fps.sort_unstable();
            fps.dedup();
            let pairs = near_pairs(fps.clone(), k, &mut || {});
            let got = leaders(&fps, &pairs);
            let of: HashMap<u64, u64> = got.iter().copied().collect();
            prop_assert_eq!(of.len(), got.len());
            for (&m, &l) in &of {
                prop_assert!(hamming(m, l) <= k);
                prop_assert_eq!(of.get(&l), Some(&l));
            }
            let rank: HashMap<u64, usize> = fps.iter().enumerate().map(|(i, &fp)| (fp, i)).collect();
            for (&m, &l) in &of {
                prop_assert!(rank[&l] <= rank[&m], "a leader comes before its members");
            }
            // A fingerprint in no group has neighbours, if any, only in groups of earlier
            // leaders that are more than k from it (else it would have joined them).
            for &fp in &fps {
                if of.contains_key(&fp) {
                    continue;
                }
                for &other in &fps {
                    if other != fp && hamming(other, fp) <= k {
                        let l = of[&other];
                        prop_assert!(rank[&l] < rank[&fp]);
                        prop_assert!(hamming(l, fp) > k);
                    }
                }
            }
        }
    }
}
