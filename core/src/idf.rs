//! Inverse document frequencies.
//!
//! The Chinese table is jieba's `idf.txt` (jieba-rs 0.11.0, MIT licence), vendored in
//! `data/jieba_idf.txt` so that a dependency update cannot change stored fingerprints. It has no
//! word with a Latin letter or a digit. The English table, `data/english_idf.txt`, is built by
//! `scripts/build_english_idf.py` from wordfreq's English word frequencies on jieba's scale
//! (`the` weighs what `的` weighs); it holds only ASCII-alphanumeric words.
//!
//! Both are compressed into the binary at compile time and parsed once per process into one
//! flat open-addressing table keyed by the same xxh3 hash as the features, so a lookup costs no
//! second hash of the token. The English table is laid over jieba's: an ASCII-alphanumeric token takes its English
//! IDF first, then jieba's; any other token (never in the English table) takes jieba's. A token
//! in neither gets `unknown_idf` × jieba's median.

use std::sync::LazyLock;

use include_flate::flate;

use crate::hash::feature_hash;
use crate::normalize::normalize_into;

flate!(static JIEBA_IDF: str from "data/jieba_idf.txt");
flate!(static ENGLISH_IDF: str from "data/english_idf.txt");

/// One slot of [`IdfTable`]: a feature hash (0: empty) and its IDF, 12 bytes, so that five
/// slots share a cache line.
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Slot {
    key: [u32; 2],
    idf: f32,
}

impl Slot {
    #[inline]
    fn key(&self) -> u64 {
        u64::from(self.key[0]) | (u64::from(self.key[1]) << 32)
    }
}

/// An IDF table keyed by feature hash: open addressing with linear probing in one flat array.
///
/// The table (~400,000 words) is larger than a CPU cache, so a lookup is usually a cache miss;
/// [`IdfTable::prefetch`] lets a caller start the misses of many lookups at once and take the
/// values afterwards. Hash 0 marks an empty slot; a word whose hash is 0 is kept aside.
pub struct IdfTable {
    slots: Vec<Slot>,
    mask: usize,
    len: usize,
    zero: Option<f32>,
    median: f32,
}

impl IdfTable {
    fn with_capacity(words: usize) -> IdfTable {
        // Load factor at most 3/4.
        let slots = (words.max(8) * 4 / 3 + 1).next_power_of_two();
        let slots = vec![Slot::default(); slots];
        advise_huge_pages(&slots);
        let mask = slots.len() - 1;
        IdfTable { slots, mask, len: 0, zero: None, median: 1.0 }
    }

    /// Sets the IDF of `hash`, keeping an existing one unless `replace`.
    fn set(&mut self, hash: u64, idf: f32, replace: bool) {
        if hash == 0 {
            if self.zero.is_none() {
                self.len += 1;
            }
            if replace || self.zero.is_none() {
                self.zero = Some(idf);
            }
            return;
        }
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mut i = hash as usize & self.mask;
        loop {
            let slot = &mut self.slots[i];
            match slot.key() {
                0 => {
                    *slot = Slot { key: [hash as u32, (hash >> 32) as u32], idf };
                    self.len += 1;
                    return;
                }
                k if k == hash => {
                    if replace {
                        slot.idf = idf;
                    }
                    return;
                }
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        let zero = self.zero.take();
        let mut bigger = IdfTable::with_capacity(old.len() * 2);
        for s in old.iter().filter(|s| s.key() != 0) {
            bigger.set(s.key(), s.idf, false);
        }
        if let Some(idf) = zero {
            bigger.set(0, idf, false);
        }
        bigger.median = self.median;
        *self = bigger;
    }

    /// Parses `word idf` lines. Words are normalized like document text; where two words
    /// normalize alike the first one's IDF is kept.
    pub fn parse(text: &str) -> IdfTable {
        let mut table = IdfTable::with_capacity(text.len() / 16);
        let mut values = Vec::with_capacity(text.len() / 16);
        for_each_entry(text, |hash, idf| {
            table.set(hash, idf, false);
            values.push(idf);
        });
        table.median = if values.is_empty() {
            1.0
        } else {
            let mid = (values.len() - 1) / 2;
            let (_, m, _) = values.select_nth_unstable_by(mid, f32::total_cmp);
            *m
        };
        table
    }

    /// Lays `word idf` lines over the table: their IDFs replace the table's for the same
    /// words. The median stays the table's own.
    pub fn overlay(&mut self, text: &str) {
        for_each_entry(text, |hash, idf| self.set(hash, idf, true));
    }

    /// The IDF of the token with this hash, if the table has it.
    #[inline]
    pub fn get(&self, hash: u64) -> Option<f32> {
        if hash == 0 {
            return self.zero;
        }
        let mut i = hash as usize & self.mask;
        loop {
            let slot = &self.slots[i];
            match slot.key() {
                0 => return None,
                k if k == hash => return Some(slot.idf),
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    /// Asks the CPU to bring the slot of `hash` into its cache, so that a later [`get`] of it
    /// does not wait for memory. Only a hint: it changes no result.
    ///
    /// [`get`]: IdfTable::get
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = self.slots[hash as usize & self.mask..].as_ptr();
            // SAFETY: a prefetch is a hint that never faults; `p` points into the table.
            #[allow(unused_unsafe)]
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = hash;
    }

    /// The median IDF over the table as parsed, before any overlay (jieba's default for
    /// unknown words).
    pub fn median(&self) -> f32 {
        self.median
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Asks Linux to back the (not yet touched) table with 2 MiB pages where transparent huge
/// pages are enabled for `madvise`: lookups land all over the table, and with 4 KiB pages most
/// of them would also miss the TLB. Only a hint: it changes no result.
fn advise_huge_pages(slots: &[Slot]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = slots.as_ptr() as usize;
        let end = start + std::mem::size_of_val(slots);
        let (a, b) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if a < b {
            // SAFETY: the range lies inside the live allocation `slots`; MADV_HUGEPAGE changes
            // no contents, only how the kernel backs them.
            unsafe { libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = slots;
}

/// Calls `f(hash, idf)` for each `word idf` line, the word normalized like document text.
fn for_each_entry(text: &str, mut f: impl FnMut(u64, f32)) {
    let mut buf = String::new();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let (Some(word), Some(idf)) = (parts.next(), parts.next()) else { continue };
        let Ok(idf) = idf.parse::<f32>() else { continue };
        normalize_into(word, &mut buf);
        f(feature_hash(&buf), idf);
    }
}

static TABLE: LazyLock<IdfTable> = LazyLock::new(|| {
    let mut t = IdfTable::parse(&JIEBA_IDF);
    t.overlay(&ENGLISH_IDF);
    t
});

/// The IDF table of the fingerprint: jieba's with the English table laid over it (median:
/// jieba's), parsed on first use.
pub fn table() -> &'static IdfTable {
    &TABLE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_load() {
        let t = table();
        assert!(t.len() > 300_000, "{}", t.len());
        let de = t.get(feature_hash("的")).unwrap();
        assert!((de - 0.884_742).abs() < 1e-4);
        // jieba's median, not moved by the English words.
        assert!((t.median() - 11.954_768).abs() < 1e-4, "{}", t.median());
        assert_eq!(t.get(feature_hash("zzzz-not-a-word")), None);
        let the = t.get(feature_hash("the")).unwrap();
        assert!((the - 0.8847).abs() < 1e-4, "{the}");
        let rare = t.get(feature_hash("photosynthesis")).unwrap();
        assert!(rare > 9.0 && rare < 12.5, "{rare}");
    }

    #[test]
    fn flat_table_keeps_first_and_overlays() {
        let mut t = IdfTable::with_capacity(1);
        // Many keys through growth, with colliding low bits and the reserved key 0.
        for k in 0..5000u64 {
            t.set(k << 40, k as f32, false);
            t.set(k << 40, -1.0, false);
        }
        assert_eq!(t.len(), 5000);
        for k in 0..5000u64 {
            assert_eq!(t.get(k << 40), Some(k as f32));
        }
        assert_eq!(t.get(0), Some(0.0));
        assert_eq!(t.get(1), None);
        assert_eq!(t.get(5000 << 40), None);
        t.set(7 << 40, 70.0, true);
        t.set(0, 9.0, true);
        assert_eq!((t.get(7 << 40), t.get(0), t.len()), (Some(70.0), Some(9.0), 5000));
    }

    #[test]
    fn english_table_is_ascii_and_disjoint_from_jieba() {
        // So laying it over jieba's table gives ASCII-alphanumeric tokens their English IDF
        // first and leaves every other token to jieba's.
        let jieba = IdfTable::parse(&JIEBA_IDF);
        let mut n = 0;
        let mut prev = "";
        for line in ENGLISH_IDF.lines() {
            let (word, idf) = line.split_once(' ').unwrap();
            let ascii = word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
            assert!(!word.is_empty() && ascii, "{word}");
            assert!(word > prev, "not sorted or repeated: {word}");
            let idf: f32 = idf.parse().unwrap();
            assert!((0.88..=13.91).contains(&idf), "{word} {idf}");
            assert_eq!(jieba.get(feature_hash(word)), None, "{word} is in jieba's table");
            prev = word;
            n += 1;
        }
        assert!(n > 45_000, "{n}");
    }
}
