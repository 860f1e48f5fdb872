//! All pairs of distinct fingerprints within Hamming distance k, without comparing all pairs.
//!
//! For each 16-bit block i of the default layout, the fingerprints are bucketed by the value of
//! block i (a counting sort over the 65,536 values); each bucket is joined with itself and with
//! the buckets of the values within the block's threshold tᵢ of its own (the same tight probe
//! set a single lookup uses, [`Layout::thresholds`]; a block with tᵢ = −1 is skipped). By the
//! general pigeonhole principle every pair within distance k meets in some block; a pair is kept
//! only from its [`Layout::first_block`], so each comes out once, without a DISTINCT.
//!
//! Work per block: Σ over buckets of |bucket| × |neighbour buckets| candidate checks, i.e.
//! about Σᵢ n² · N(tᵢ) / 2¹⁷ for n uniformly random fingerprints (N(t) = 1, 17, 137, 697 values
//! for t = 0, 1, 2, 3; at k = 10, t = (2, 2, 2, 1): 428 / 2¹⁷ · n², 3.3·10⁹ checks at n = 10⁶),
//! plus whatever a crowded block value adds. Identical fingerprints are collapsed first, so many
//! copies of one document cost nothing. A check is an XOR and a popcount against k: eight at a
//! time with AVX-512 (VPOPCNTQ) where the CPU has it, else four at a time with AVX2 (a table
//! lookup per half byte), else the POPCNT instruction, else portable code (the CPU is asked at
//! run time; every path gives the same pairs).
//!
//! Threads ([`near_pairs_parallel`]): the 65,536 block values of each block are cut into
//! [`CHUNKS`] ranges handed out to the threads one at a time (so a crowded range does not leave
//! the others idle); the calling thread works too, and it alone calls the `interrupt` callback,
//! so a host that may only be called from its own thread (a PostgreSQL backend) can check for
//! cancellation there. When the callback unwinds (a cancelled query), the helper threads stop
//! within [`CHECKS_PER_TICK`] checks and are joined before the unwinding goes on. The helpers
//! block every signal, so a host's signal handlers keep running on the calling thread. The pairs
//! come out in the same order whatever the number of threads.
//!
//! Memory: the distinct fingerprints twice (16 bytes each) and two 65,537-entry offset tables,
//! plus the output (16 bytes a pair); with threads, a block's pairs are held once more while
//! they are appended to the output in order.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::blocks::{block, Layout, BLOCKS};

mod block;
mod kernels;
#[cfg(test)]
mod tests;

use block::BlockJoin;
use kernels::Isa;

/// Candidate checks between two calls of the progress tick: the `interrupt` callback on the
/// calling thread, a look at the stop flag on a helper thread (a few milliseconds).
pub const CHECKS_PER_TICK: u64 = 1 << 22;

/// Ranges of block values per block handed out to threads (512 values each).
pub const CHUNKS: usize = 128;
const CHUNK_VALUES: usize = 65_536 / CHUNKS;

/// Fingerprints of neighbour buckets copied together before a bucket is checked against them
/// (64 KiB a thread).
const GATHER: usize = 1 << 13;
/// Buckets of at most this many fingerprints are joined with themselves pair by pair.
const SMALL: usize = 32;
/// How many block values ahead the buckets are prefetched.
const AHEAD: usize = 2;
/// Fingerprints after the last bucket, so that PAD of them can be read from any bucket's start.
const PAD: usize = 32;

/// Pairs `(a, b)`, `a < b`, of distinct values of `fps` (duplicates are ignored) with
/// `hamming(a, b) <= k`, each exactly once, on the calling thread alone; `interrupt` is called
/// every [`CHECKS_PER_TICK`] candidate checks or so.
pub fn near_pairs(fps: Vec<u64>, k: u32, interrupt: &mut dyn FnMut()) -> Vec<(u64, u64)> {
    near_pairs_parallel(fps, k, 1, &mut |_| interrupt())
}

/// [`near_pairs`] on `threads` threads, the calling thread included (0 and 1: the calling
/// thread alone, no thread started). `interrupt` is called on the calling thread only, with the
/// number of candidate checks done so far, about every [`CHECKS_PER_TICK`] checks (and every
/// 10 ms while the calling thread waits for the others); it may unwind. The same pairs in the
/// same order whatever `threads` is.
pub fn near_pairs_parallel(fps: Vec<u64>, k: u32, threads: usize, interrupt: &mut dyn FnMut(u64)) -> Vec<(u64, u64)> {
    join(fps, k, threads, Isa::detect(), usize::MAX, interrupt).unwrap_or_default()
}

/// More pairs than the caller allowed: the join stopped early, its pairs dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyPairs {
    /// The limit that was exceeded.
    pub max_pairs: usize,
}

/// [`near_pairs_parallel`] that stops as soon as more than `max_pairs` pairs are found (all
/// threads together), so that its memory stays within about `16 * max_pairs` bytes plus one
/// range's pairs per thread, and returns [`TooManyPairs`] then.
pub fn near_pairs_limited(
    fps: Vec<u64>,
    k: u32,
    threads: usize,
    max_pairs: usize,
    interrupt: &mut dyn FnMut(u64),
) -> Result<Vec<(u64, u64)>, TooManyPairs> {
    join(fps, k, threads, Isa::detect(), max_pairs, interrupt)
}

/// The pairs of [`near_pairs_limited`] that have at least one value of `batch`: the pairs within
/// k among the values of `batch` and `stored` together (each exactly once, `a < b`, a value in
/// both counted as `batch`'s), without checking the pairs of two `stored` values. For a batch
/// checked against a large stored set, the work is about |batch| · |batch ∪ stored| rather than
/// |batch ∪ stored|² / 2: a third for 200,000 against 1M, a twenty-fifth against 10M.
pub fn near_pairs_across(
    batch: Vec<u64>,
    stored: Vec<u64>,
    k: u32,
    threads: usize,
    max_pairs: usize,
    interrupt: &mut dyn FnMut(u64),
) -> Result<Vec<(u64, u64)>, TooManyPairs> {
    join_sides(batch, Some(stored), k, threads, Isa::detect(), max_pairs, interrupt)
}

/// The bound on the pairs of one join, shared by its threads.
struct Limit {
    max_pairs: usize,
    /// Pairs of the ranges finished (all threads, all blocks so far).
    found: AtomicUsize,
    exceeded: AtomicBool,
}

fn join(
    fps: Vec<u64>,
    k: u32,
    threads: usize,
    isa: Isa,
    max_pairs: usize,
    interrupt: &mut dyn FnMut(u64),
) -> Result<Vec<(u64, u64)>, TooManyPairs> {
    join_sides(fps, None, k, threads, isa, max_pairs, interrupt)
}

/// The join of `fps` with itself, or (with `stored`) of `fps` with itself and with `stored`:
/// every bucket holds its `fps` values first, and a pair of two `stored` values is never checked.
fn join_sides(
    mut fps: Vec<u64>,
    stored: Option<Vec<u64>>,
    k: u32,
    threads: usize,
    isa: Isa,
    max_pairs: usize,
    interrupt: &mut dyn FnMut(u64),
) -> Result<Vec<(u64, u64)>, TooManyPairs> {
    fps.sort_unstable();
    fps.dedup();
    let across = stored.is_some();
    let mut stored = stored.unwrap_or_default();
    stored.sort_unstable();
    stored.dedup();
    // A value of both sides is the batch's (both sorted: one merge).
    let mut at = 0;
    stored.retain(|&fp| {
        while at < fps.len() && fps[at] < fp {
            at += 1;
        }
        at == fps.len() || fps[at] != fp
    });
    let n = fps.len() + stored.len();
    let mut out = Vec::new();
    if n < 2 || fps.is_empty() {
        return Ok(out);
    }
    let limit = Limit { max_pairs, found: AtomicUsize::new(0), exceeded: AtomicBool::new(false) };
    let layout = Layout::default_layout();
    let t = layout.thresholds(k.min(64) as i32);
    let mut offsets = vec![0u32; 65_537];
    let mut next = vec![0u32; 65_537];
    // (Across: where each bucket's `stored` values start.)
    let mut stored_at = vec![0u32; if across { 65_537 } else { 0 }];
    let mut sorted = vec![0u64; n + PAD];
    let mut done = 0u64; // candidate checks of the blocks finished
    for i in 0..BLOCKS {
        if t[i] < 0 {
            continue; // pairs within k always meet in an earlier block
        }
        // Counting sort by the value of block i, each bucket's `fps` values first.
        offsets.iter_mut().for_each(|o| *o = 0);
        for &fp in fps.iter().chain(&stored) {
            offsets[block(fp, i) as usize + 1] += 1;
        }
        for v in 0..65_536 {
            offsets[v + 1] += offsets[v];
        }
        next.copy_from_slice(&offsets);
        for &fp in &fps {
            let slot = &mut next[block(fp, i) as usize];
            sorted[*slot as usize] = fp;
            *slot += 1;
        }
        if across {
            stored_at.copy_from_slice(&next);
        }
        for &fp in &stored {
            let slot = &mut next[block(fp, i) as usize];
            sorted[*slot as usize] = fp;
            *slot += 1;
        }
        let stored_at = across.then_some(&stored_at[..]);
        let job = BlockJoin::new(i, k, &t, &layout, &offsets, stored_at, &sorted, isa, &limit);
        done += if threads <= 1 {
            let mut checks = 0;
            job.run(0..65_536, &mut out, &mut |c| {
                checks += c;
                interrupt(done + checks);
                true
            });
            checks
        } else {
            job.run_threads(threads, &mut out, &mut |c| interrupt(done + c))
        };
        if limit.exceeded.load(Ordering::Relaxed) {
            return Err(TooManyPairs { max_pairs });
        }
    }
    Ok(out)
}
