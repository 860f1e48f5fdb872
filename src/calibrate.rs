//! `simdup_calibrate(tbl, sample => n)` (sql/calibrate.sql): the table's settings it reports
//! against, and the rows of its two histograms with their suggestions
//! ([`simdup_core::calibrate`]). The sample and each sampled row's nearest or most similar other
//! row are read by sql/calibrate.sql with ordinary queries served by the table's indexes.

use pgrx::pg_sys;
use pgrx::prelude::*;

use simdup_core::calibrate::{bar, similarity_lower_edge, valley, wilson, Histogram, SIMILARITY_BUCKETS};

/// The similarity buckets a valley is looked for in: those where the index finds a pair with
/// at least this probability (below it, the counts fall with the index's recall, which would
/// make a valley of its own).
const MIN_VALLEY_RECALL: f64 = 0.9;
use simdup_core::similarity::minhash as mh;

use crate::errors::{Code, Error};

/// The width of the widest bar.
const BAR_WIDTH: usize = 40;

/// `_simdup_calibrate_settings(tbl)`: the max_distance of `tbl`'s SimHash dedup trigger and the
/// threshold of its similarity dedup trigger (NULL where it has none), for the report to mark
/// them; 0A000 for a Citus distributed table (its shards' ctids name no row of the table, and a
/// row's nearest other row may be on another node). Declared in sql/calibrate.sql.
#[pg_extern(sql = false)]
fn _simdup_calibrate_settings(
    tbl: pg_sys::Oid,
) -> TableIterator<'static, (name!(max_distance, Option<i32>), name!(threshold, Option<f64>))> {
    if crate::dedup::placement::is_distributed(tbl) {
        Error::new(Code::ERRCODE_FEATURE_NOT_SUPPORTED, "simdup_calibrate is not supported on a distributed table")
            .detail("A row's nearest other row may be in another shard, which a shard's search does not see.")
            .hint("Calibrate on a local copy of a sample: CREATE TABLE s AS SELECT * FROM t TABLESAMPLE BERNOULLI (1), then enable and calibrate s.")
            .raise()
    }
    let (_, simhash, similar) = crate::triggers::trigger_configs(tbl);
    TableIterator::once((simhash.map(|c| c.k as i32), similar.map(|c| c.threshold)))
}

/// A report row: method, bucket, rows, bar, note.
type Row = (String, String, i64, String, Option<String>);

/// What both reports say of their sample and suggestion.
struct Report<'a> {
    method: &'a str,
    hist: Histogram,
    /// The valley is looked for among buckets 1..reach ([`valley`]).
    reach: usize,
    labels: Vec<String>,
    /// Which bucket holds the table's current setting, and its note.
    current: Option<(usize, String)>,
    /// The setting suggested (`k`, `threshold`) and its value at a bucket.
    setting: &'a str,
    suggest: &'a dyn Fn(usize) -> String,
    /// Extra notes by bucket (e.g. the similarity index's recall there).
    extra: Vec<Option<String>>,
    table_rows: f64,
    about: String,
}

impl Report<'_> {
    /// The rows: a bucket each, with the summary on the first, the suggestion on the valley's
    /// bucket (or why there is none on the first) and the current setting on its bucket.
    fn rows(self) -> Vec<Row> {
        let n = self.hist.total();
        let max = self.hist.counts.iter().copied().max().unwrap_or(0);
        let mut notes: Vec<Vec<String>> = vec![Vec::new(); self.hist.counts.len()];
        notes[0].push(self.about);
        match valley(&self.hist, self.reach) {
            Some(v) => {
                let flagged = self.hist.flagged(v.at);
                let (lo, hi) = wilson(flagged, n);
                let share = flagged as f64 / n as f64;
                let floor = if v.floor.0 == v.floor.1 {
                    String::new()
                } else {
                    // from the smaller value to the larger (similarity buckets run downwards)
                    let (mut a, mut b) = ((self.suggest)(v.floor.0), (self.suggest)(v.floor.1));
                    if self.setting == "threshold" {
                        std::mem::swap(&mut a, &mut b);
                    }
                    format!(", the middle of its floor {a} to {b}")
                };
                notes[v.at].push(format!(
                    "<- suggested {} = {} (the valley{floor}): flags {flagged} of the {n} sampled rows ({:.1} %, 95 % interval {:.1}-{:.1} %), about {} of {} rows",
                    self.setting,
                    (self.suggest)(v.at),
                    100.0 * share,
                    100.0 * lo,
                    100.0 * hi,
                    grouped((share * self.table_rows).round()),
                    grouped(self.table_rows.round()),
                ));
            }
            None => notes[0].push(
                "no suggestion: the sample shows no mode of near-duplicates apart from the rest (no valley deeper than its noise)"
                    .to_owned(),
            ),
        }
        if let Some((i, note)) = self.current {
            notes[i].push(note);
        }
        for (i, extra) in self.extra.into_iter().enumerate() {
            notes[i].extend(extra);
        }
        self.hist
            .counts
            .iter()
            .zip(self.labels)
            .zip(notes)
            .map(|((&count, label), notes)| {
                let note = (!notes.is_empty()).then(|| notes.join("; "));
                (self.method.to_owned(), label, count as i64, bar(count, max, BAR_WIDTH), note)
            })
            .collect()
    }
}

/// 1234567 as "1,234,567".
fn grouped(x: f64) -> String {
    let digits = format!("{}", x.max(0.0) as u64);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The summary of a sample.
fn about(n: u64, table_rows: f64, seconds: f64, reach: &str) -> String {
    format!(
        "{n} rows sampled of about {} ({:.2} %); {reach}; {seconds:.1} s",
        grouped(table_rows.round()),
        if table_rows > 0.0 { 100.0 * n as f64 / table_rows } else { 100.0 },
    )
}

/// `_simdup_calibrate_simhash(distances, radius, table_rows, current_k, seconds)`: the SimHash
/// report of each sampled row's distance to its nearest other row (NULL: none within `radius`
/// bits). Nothing for a NULL argument other than `current_k`. Declared in sql/calibrate.sql.
#[pg_extern(sql = false)]
#[allow(clippy::type_complexity)]
fn _simdup_calibrate_simhash(
    distances: Option<Vec<Option<i32>>>,
    radius: Option<i32>,
    table_rows: Option<f64>,
    current_k: Option<i32>,
    seconds: Option<f64>,
) -> TableIterator<
    'static,
    (name!(method, String), name!(bucket, String), name!(rows, i64), name!(bar, String), name!(note, Option<String>)),
> {
    // NULL in, nothing out (the current setting alone may be NULL: no dedup trigger).
    let (Some(distances), Some(radius), Some(table_rows), Some(seconds)) = (distances, radius, table_rows, seconds)
    else {
        return TableIterator::new(Vec::new());
    };
    let radius = radius.clamp(0, 64) as u32;
    let hist = Histogram::of_distances(distances.into_iter().map(|d| d.map(|d| d.max(0) as u32)), radius);
    let n = hist.total();
    let mut labels: Vec<String> = (0..=radius).map(|d| d.to_string()).collect();
    labels.push(format!("> {radius}"));
    let current = current_k.map(|k| {
        let k = k.max(0) as u32;
        if k > radius {
            let note =
                format!("current k = {k} (the dedup trigger's max_distance) is beyond the {radius} bits searched");
            (radius as usize + 1, note)
        } else {
            let note = format!(
                "current k = {k} (the dedup trigger's max_distance) flags {} sampled rows",
                hist.flagged(k as usize)
            );
            (k as usize, note)
        }
    });
    let extra = vec![None; hist.counts.len()];
    let suggest = |v: usize| v.to_string();
    let report = Report {
        method: "simhash",
        about: about(n, table_rows, seconds, &format!("each row's nearest other row, searched within {radius} bits")),
        reach: hist.counts.len() - 1,
        hist,
        labels,
        current,
        setting: "k",
        suggest: &suggest,
        extra,
        table_rows,
    };
    TableIterator::new(report.rows())
}

/// `_simdup_calibrate_similarity(similarities, bands, rows, table_rows, current_threshold,
/// seconds)`: the similarity report of each sampled row's best Jaccard with another row among
/// the candidates of the similarity index of `bands` × `rows` (NULL: no candidate). A pair of
/// similarity s is a candidate with probability `minhash_s_curve(s, bands, rows)`: where that is
/// below 0.99 the bucket's note says so (its counts are then low). Nothing for a NULL argument
/// other than `current_threshold`. Declared in sql/calibrate.sql.
#[pg_extern(sql = false)]
#[allow(clippy::type_complexity)]
fn _simdup_calibrate_similarity(
    similarities: Option<Vec<Option<f64>>>,
    bands: Option<i32>,
    rows: Option<i32>,
    table_rows: Option<f64>,
    current_threshold: Option<f64>,
    seconds: Option<f64>,
) -> TableIterator<
    'static,
    (name!(method, String), name!(bucket, String), name!(rows, i64), name!(bar, String), name!(note, Option<String>)),
> {
    let (Some(similarities), Some(bands), Some(rows), Some(table_rows), Some(seconds)) =
        (similarities, bands, rows, table_rows, seconds)
    else {
        return TableIterator::new(Vec::new());
    };
    let (bands, rows) = (bands.max(1) as usize, rows.max(1) as usize);
    let hist = Histogram::of_similarities(similarities.iter().copied());
    let n = hist.total();
    let mut labels: Vec<String> = (0..SIMILARITY_BUCKETS)
        .map(|i| format!("{:.2}-{:.2}", similarity_lower_edge(i), similarity_lower_edge(i) + 0.05))
        .collect();
    labels.push("none".to_owned());
    let current = current_threshold.map(|t| {
        let flagged = similarities.iter().filter(|s| s.is_some_and(|s| s >= t)).count();
        (
            simdup_core::calibrate::similarity_bucket(t),
            format!("current threshold = {t} (the dedup trigger's) flags {flagged} sampled rows by Jaccard"),
        )
    });
    let mut extra: Vec<Option<String>> = (0..SIMILARITY_BUCKETS)
        .map(|i| {
            let p = mh::s_curve(similarity_lower_edge(i), bands, rows);
            (p < crate::similarity::planner::MIN_RECALL).then(|| {
                format!("the index finds a pair of similarity {:.2} with probability {p:.2}", similarity_lower_edge(i))
            })
        })
        .collect();
    extra.push(Some("no row shares a band of the similarity index with it".to_owned()));
    let suggest = |v: usize| format!("{:.2}", similarity_lower_edge(v));
    let reach = (0..SIMILARITY_BUCKETS)
        .find(|&i| mh::s_curve(similarity_lower_edge(i), bands, rows) < MIN_VALLEY_RECALL)
        .unwrap_or(SIMILARITY_BUCKETS);
    let report = Report {
        method: "similarity",
        about: about(
            n,
            table_rows,
            seconds,
            "each row's most similar other row among the similarity index's candidates",
        ),
        reach,
        hist,
        labels,
        current,
        setting: "threshold",
        suggest: &suggest,
        extra,
        table_rows,
    };
    TableIterator::new(report.rows())
}
