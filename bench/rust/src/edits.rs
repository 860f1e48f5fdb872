//! Shared by the quality examples: a seeded RNG, text units (clauses, sentences), the seeded
//! realistic edits, corpus loading and character-shingle Jaccard.

use std::io::{BufRead, BufReader};

use serde::Deserialize;
use simdup_core::features::feature_hash;
use simdup_core::normalize::normalize;

// ---------------------------------------------------------------------------------------------
// Seeded RNG (SplitMix64): no dependency, stable across platforms.

pub use simdup_core::hash::mix64;

pub struct Rng(u64);

impl Rng {
    pub fn new(parts: &[u64]) -> Rng {
        let mut s = 0x1234_5678_9abc_def0u64;
        for &p in parts {
            s = mix64(s ^ p.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        }
        Rng(s)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

// ---------------------------------------------------------------------------------------------
// Text units and edits.

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Zh,
    En,
}

pub fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}')
}

pub fn is_closer(c: char) -> bool {
    matches!(c, '”' | '’' | '」' | '』' | '）' | ')' | '"' | '\'' | '》')
}

/// Splits `text` into units, each ending with a delimiter (plus closing quotes and whitespace
/// after it) or at the end of text. ASCII delimiters only count before whitespace, a closing
/// quote or the end (so 3.5 and 1,000 stay whole). Concatenating the units gives `text`.
pub fn split_units(text: &str, cjk: &[char], ascii: &[char]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut units = Vec::new();
    let mut cur = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        cur.push(c);
        i += 1;
        let next = chars.get(i).copied();
        let ends = cjk.contains(&c) || (ascii.contains(&c) && next.is_none_or(|n| n.is_whitespace() || is_closer(n)));
        if ends {
            while i < chars.len() && (is_closer(chars[i]) || chars[i].is_whitespace()) {
                cur.push(chars[i]);
                i += 1;
            }
            units.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        units.push(cur);
    }
    units
}

pub const CLAUSE_CJK: [char; 5] = ['。', '！', '？', '；', '，'];
pub const CLAUSE_ASCII: [char; 5] = ['.', '!', '?', ';', ','];
pub const SENT_CJK: [char; 3] = ['。', '！', '？'];
pub const SENT_ASCII: [char; 3] = ['.', '!', '?'];

pub fn clauses(text: &str) -> Vec<String> {
    split_units(text, &CLAUSE_CJK, &CLAUSE_ASCII)
}

pub fn sentences(text: &str) -> Vec<String> {
    split_units(text, &SENT_CJK, &SENT_ASCII)
}

pub fn nchars(s: &str) -> usize {
    s.chars().count()
}

/// Deletes random clauses until about `frac` of the characters are gone.
pub fn delete_clauses(text: &str, frac: f64, rng: &mut Rng) -> String {
    let units = clauses(text);
    let total = nchars(text);
    let target = (frac * total as f64).max(1.0);
    let lens: Vec<usize> = units.iter().map(|u| nchars(u)).collect();
    let mut order: Vec<usize> = (0..units.len()).collect();
    rng.shuffle(&mut order);
    let mut drop = vec![false; units.len()];
    let mut removed = 0usize;
    for &i in &order {
        if removed as f64 >= target {
            break;
        }
        let l = lens[i] as f64;
        if l > 2.0 * target || (removed > 0 && removed as f64 + l > 1.5 * target) {
            continue;
        }
        drop[i] = true;
        removed += lens[i];
    }
    if removed == 0 {
        // Every clause is too long: cut a span of the target size at a random place instead.
        let chars: Vec<char> = text.chars().collect();
        let n = target.round() as usize;
        let start = rng.below(chars.len().saturating_sub(n).max(1));
        return chars[..start].iter().chain(&chars[(start + n).min(chars.len())..]).collect();
    }
    units.iter().enumerate().filter(|&(i, _)| !drop[i]).map(|(_, u)| u.as_str()).collect()
}

pub fn insert_sentence(text: &str, other: &str, lang: Lang, rng: &mut Rng) -> String {
    let theirs = sentences(other);
    let mut s = rng.pick(&theirs).clone();
    for _ in 0..20 {
        let n = nchars(s.trim());
        if (10..=200).contains(&n) {
            break;
        }
        s = rng.pick(&theirs).clone();
    }
    let mut s = s.trim().to_string();
    if nchars(&s) > 200 {
        s = s.chars().take(200).collect();
    }
    if lang == Lang::En {
        s.push(' ');
    }
    let mut units = sentences(text);
    let at = if units.len() >= 2 { 1 + rng.below(units.len() - 1) } else { units.len() };
    if lang == Lang::En && at > 0 && !units[at - 1].ends_with(char::is_whitespace) {
        units[at - 1].push(' ');
    }
    units.insert(at, s);
    units.concat()
}

pub fn swap_sentences(text: &str, lang: Lang, rng: &mut Rng) -> String {
    let mut units = sentences(text);
    if units.len() < 2 {
        units = clauses(text);
    }
    if units.len() < 2 {
        return text.to_string();
    }
    if lang == Lang::En {
        // The last sentence may lack a trailing space.
        let last = units.len() - 1;
        if !units[last].ends_with(char::is_whitespace) {
            units[last].push(' ');
        }
    }
    let a = rng.below(units.len());
    let mut b = rng.below(units.len() - 1);
    if b >= a {
        b += 1;
    }
    units.swap(a, b);
    let out = units.concat();
    if lang == Lang::En {
        out.trim_end().to_string()
    } else {
        out
    }
}

/// Typos in about `rate` of the characters that can take one (Chinese: CJK characters;
/// English: ASCII letters). Chinese: the character is replaced by one drawn from `pool` (the
/// corpus's own characters, so by frequency: what a wrong pick of an input method or an OCR
/// confusion gives). English, one of three at random, inside a word as people and OCR err: the
/// letter replaced by another, dropped, or swapped with the next letter of the word.
pub fn typos(text: &str, rate: f64, lang: Lang, pool: &[char], rng: &mut Rng) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let eligible: Vec<usize> = chars
        .iter()
        .enumerate()
        .filter(|&(_, &c)| if lang == Lang::Zh { is_cjk(c) } else { c.is_ascii_alphabetic() })
        .map(|(i, _)| i)
        .collect();
    if eligible.is_empty() {
        return text.to_string();
    }
    let n = ((rate * eligible.len() as f64).round() as usize).clamp(1, eligible.len());
    let mut idx = eligible;
    rng.shuffle(&mut idx);
    let substitute = |old: char, rng: &mut Rng| loop {
        let new = if lang == Lang::Zh {
            *rng.pick(pool)
        } else {
            let l = (b'a' + rng.below(26) as u8) as char;
            if old.is_ascii_uppercase() {
                l.to_ascii_uppercase()
            } else {
                l
            }
        };
        if new != old {
            return new;
        }
    };
    if lang == Lang::Zh {
        for &i in &idx[..n] {
            chars[i] = substitute(chars[i], rng);
        }
        return chars.into_iter().collect();
    }
    let mut dropped = vec![false; chars.len()];
    let mut touched = vec![false; chars.len()];
    for &i in &idx[..n] {
        if touched[i] {
            continue;
        }
        touched[i] = true;
        let next_letter = chars.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic()) && !touched[i + 1];
        match rng.below(3) {
            1 => dropped[i] = true,
            2 if next_letter && chars[i] != chars[i + 1] => {
                chars.swap(i, i + 1);
                touched[i + 1] = true;
            }
            _ => chars[i] = substitute(chars[i], rng),
        }
    }
    chars.into_iter().zip(dropped).filter(|&(_, d)| !d).map(|(c, _)| c).collect()
}

pub fn full_width(c: char) -> char {
    if c.is_ascii_alphanumeric() {
        char::from_u32(c as u32 + 0xFEE0).unwrap()
    } else {
        c
    }
}

/// Full-width / half-width and whitespace changes.
pub fn reformat(text: &str, lang: Lang, rng: &mut Rng) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut col = 0usize;
    let mut double_quote_open = false;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            while i < chars.len() && chars[i].is_whitespace() {
                i += 1;
            }
            let prev = out.chars().last();
            let ws = match lang {
                Lang::Zh => *rng.pick(&["\n", "\n\n", "\u{3000}\u{3000}", " ", "\r\n\u{3000}\u{3000}"]),
                Lang::En => {
                    if matches!(prev, Some('.' | '!' | '?')) {
                        "  "
                    } else if col > 70 {
                        "\n"
                    } else {
                        " "
                    }
                }
            };
            if ws.contains('\n') {
                col = 0;
            }
            out.push_str(ws);
            continue;
        }
        let next = chars.get(i + 1).copied();
        match lang {
            Lang::Zh => {
                let c2 = match c {
                    '，' => ',',
                    '；' => ';',
                    '：' => ':',
                    '？' => '?',
                    '！' => '!',
                    '（' => '(',
                    '）' => ')',
                    _ => full_width(c),
                };
                out.push(c2);
                // Pangu spacing between Chinese and Latin letters or digits.
                if let Some(n) = next {
                    if (is_cjk(c) && n.is_ascii_alphanumeric()) || (c.is_ascii_alphanumeric() && is_cjk(n)) {
                        out.push(' ');
                    }
                }
            }
            Lang::En => {
                let c2 = match c {
                    '"' => {
                        double_quote_open = !double_quote_open;
                        if double_quote_open {
                            '“'
                        } else {
                            '”'
                        }
                    }
                    '\'' => '’',
                    d if d.is_ascii_digit() => full_width(d),
                    _ => c,
                };
                out.push(c2);
            }
        }
        col += 1;
        i += 1;
    }
    out
}

pub const ZH_SITES: [&str; 7] = ["新华网", "人民网", "中国新闻网", "新浪新闻", "网易新闻", "澎湃新闻", "凤凰网"];
pub const ZH_NAMES: [&str; 5] = ["张三", "李明", "王芳", "刘洋", "陈静"];
pub const EN_SITES: [&str; 5] = ["Reuters", "AP", "ABC News", "The Guardian", "BBC"];
pub const EN_NAMES: [&str; 4] = ["John Smith", "Jane Doe", "Mark Lee", "Sarah Brown"];

pub fn boilerplate(text: &str, title: &str, lang: Lang, rng: &mut Rng) -> String {
    match lang {
        Lang::Zh => {
            let title = if title.is_empty() { clauses(text)[0].trim().to_string() } else { title.to_string() };
            let (site, name) = (*rng.pick(&ZH_SITES), *rng.pick(&ZH_NAMES));
            let header = match rng.below(2) {
                0 => format!("来源：{site} 责任编辑：{name} 原标题：{title}\n"),
                _ => format!("【{site}讯】原标题：{title} 记者 {name}\n"),
            };
            let footer = match rng.below(2) {
                0 => format!("\n（责任编辑：{name}）"),
                _ => format!("\n本文来源：{site}，转载请注明出处。更多精彩内容请关注{site}官方微信公众号。"),
            };
            format!("{header}{text}{footer}")
        }
        Lang::En => {
            let title = if title.is_empty() {
                text.split_whitespace().take(8).collect::<Vec<_>>().join(" ") + "..."
            } else {
                title.to_string()
            };
            let (site, name, name2) = (*rng.pick(&EN_SITES), *rng.pick(&EN_NAMES), *rng.pick(&EN_NAMES));
            let header = match rng.below(2) {
                0 => format!("Source: {site} | Editor: {name} | Original title: {title}\n\n"),
                _ => format!("By {name}, {site} staff writer. Originally published as \"{title}\".\n"),
            };
            let footer = match rng.below(2) {
                0 => format!("\n\nEditor: {name2}. Copyright 2023 {site}. All rights reserved."),
                _ => format!("\n\n(Reporting by {name}; editing by {name2}) Follow {site} on Twitter for more news."),
            };
            format!("{header}{text}{footer}")
        }
    }
}

pub fn truncate(text: &str, frac: f64) -> String {
    let n = nchars(text);
    text.chars().take(((1.0 - frac) * n as f64).round() as usize).collect()
}

#[derive(Deserialize)]
pub struct RawDoc {
    #[serde(default)]
    id: String,
    #[serde(default)]
    title: Option<String>,
    body: Option<String>,
}

/// The documents of a corpus file ({"id", "title", "body"} per line) as (id, title, body),
/// trimmed; lines without a body are skipped.
pub fn load_with_ids(path: &str) -> Vec<(String, String, String)> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    for line in BufReader::new(f).lines() {
        let line = line.unwrap();
        if line.trim().is_empty() {
            continue;
        }
        let d: RawDoc = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{path}: {e}"));
        if let Some(body) = d.body {
            out.push((d.id, d.title.unwrap_or_default().trim().to_string(), body.trim().to_string()));
        }
    }
    out
}

/// The documents of a corpus file as (title, body).
pub fn load(path: &str) -> Vec<(String, String)> {
    load_with_ids(path).into_iter().map(|(_, t, b)| (t, b)).collect()
}

/// The first ~`target` characters of `body`, cut at the sentence end closest to `target`
/// within ±30%.
pub fn excerpt(body: &str, target: usize) -> Option<String> {
    let mut best: Option<(usize, usize)> = None; // (|len − target|, units)
    let units = sentences(body);
    let mut len = 0;
    for (k, u) in units.iter().enumerate() {
        len += nchars(u.trim_end());
        let d = len.abs_diff(target);
        if len * 10 >= target * 7 && len * 10 <= target * 13 && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k + 1));
        }
        len += nchars(u) - nchars(u.trim_end());
        if len > target * 2 {
            break;
        }
    }
    best.map(|(_, k)| units[..k].concat().trim_end().to_string())
}

pub const MH: usize = 64;

pub fn minhash(set: &[u64]) -> [u32; MH] {
    let mut m = [u32::MAX; MH];
    for &h in set {
        for (i, v) in m.iter_mut().enumerate() {
            let x = (mix64(h ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)) >> 32) as u32;
            if x < *v {
                *v = x;
            }
        }
    }
    m
}

pub fn matches(a: &[u32; MH], b: &[u32; MH]) -> u32 {
    a.iter().zip(b).map(|(x, y)| u32::from(x == y)).sum()
}

pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    inter as f64 / (a.len() + b.len() - inter) as f64
}

/// Character 5-shingles of the normalized text, whitespace runs collapsed to one space.
pub fn shingles(text: &str) -> Vec<u64> {
    let norm = normalize(text);
    let chars: Vec<char> = norm.split_whitespace().collect::<Vec<_>>().join(" ").chars().collect();
    let mut out: Vec<u64> = if chars.len() < 5 {
        vec![feature_hash(&chars.iter().collect::<String>())]
    } else {
        chars.windows(5).map(|w| feature_hash(&w.iter().collect::<String>())).collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}
