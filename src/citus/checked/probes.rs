//! A batch's probes: what the check reads of each row of a batch, their lock stripes, the
//! stored matches of all of them in one cross-shard query, and which earlier rows of the batch
//! each row meets; shared by batch writes and batch updates.

use super::search::{similar_condition, verified_condition};
use super::settings::on_index;
use super::target::column_name;
use super::types::{Check, Cols};
use std::collections::HashMap;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::errors::OrRaise;

use crate::similarity::minhash::{char_set, set_bands, text_short, ShortText};
use simdup_core::similarity::{Keys, Via};

use super::pending::{self, Claim};
use crate::dedup::config::Config;
use crate::dedup::tuple::text_of;
use crate::similarity::config::SimilarConfig;

/// What a batch's rows are checked by: per row, what the check reads of it.
/// The texts a SimHash batch verifies its candidates with (None: NULL), and the quoted name of
/// the table's text column.
pub(crate) struct Verified {
    pub(crate) texts: Vec<Option<String>>,
    pub(crate) column: String,
}

pub(crate) enum Probes<'a> {
    /// The fingerprint of each row (None: NULL or featureless text).
    SimHash { cfg: &'a Config, fps: Vec<Option<i64>>, verified: Option<Verified> },
    /// The text, shingle set and band values of each row (an empty set: NULL or no shingles),
    /// each short text's 3-shingle set and short band values, and each row's containment keys
    /// (with the containment rule).
    Similar {
        cfg: &'a SimilarConfig,
        texts: Vec<String>,
        sets: Vec<Vec<u64>>,
        bands: Vec<Vec<i64>>,
        short: Vec<Option<ShortText>>,
        keys: Vec<Option<Keys>>,
    },
}

impl Probes<'_> {
    /// Whether row `i` can be a near-duplicate of anything (it has a fingerprint or shingles).
    pub(crate) fn has(&self, i: usize) -> bool {
        match self {
            Probes::SimHash { fps, .. } => fps[i].is_some(),
            Probes::Similar { sets, .. } => !sets[i].is_empty(),
        }
    }

    /// The rows' lock stripes (ascending: the order every writer takes stripes in) and their
    /// record as rows in progress, after the earlier writers in progress of their near-duplicate
    /// candidates ([`pending::claim`]).
    pub(crate) fn claim(&self, relid: pg_sys::Oid) {
        let claim = match self {
            Probes::SimHash { cfg, fps, .. } => {
                Claim::Fingerprints { k: cfg.k, fps: fps.iter().flatten().map(|&fp| fp as u64).collect() }
            }
            Probes::Similar { cfg, sets, bands, short, keys, .. } => {
                let rows: Vec<_> = (0..sets.len())
                    .filter(|&i| !sets[i].is_empty())
                    .map(|i| cfg.values(&sets[i], &bands[i], short[i].as_ref(), keys[i].as_ref()))
                    .collect();
                Claim::Similar(simdup_core::locks::SimilarValues::union(&rows))
            }
        };
        pending::claim(relid, &claim);
    }

    /// The query over every shard for the stored near-duplicates of the batch's rows, and its
    /// arguments: rows (i, key, measure), i the row's position from 1 — the distance within k,
    /// or (similarity) the trigger's decision on a row sharing a band (the Jaccard similarity).
    pub(crate) fn search(
        &self,
        ext_schema: &str,
        table: &str,
        source: &str,
        key: &str,
    ) -> (String, Vec<DatumWithOid<'static>>) {
        match self {
            Probes::SimHash { cfg, fps, verified } => {
                // With the table's verification, the stored row's text must be a near-duplicate
                // of the batch row's (src/dedup/verify.rs).
                let (texts, verify) = match (verified, cfg.verify) {
                    (Some(v), Some(verify)) => {
                        (Some(v.texts.clone()), verified_condition(ext_schema, &v.column, "q.body", verify))
                    }
                    _ => (None, String::new()),
                };
                (
                    format!(
                        "SELECT q.i, t.{key}::pg_catalog.int8, {ext_schema}.hamming(t.{source}, q.fp)::pg_catalog.float8
                         FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.int8[]), pg_catalog.unnest($2::pg_catalog.text[]))
                              WITH ORDINALITY AS q(fp, body, i)
                         JOIN {table} t ON {ext_schema}.hamming(t.{source}, q.fp) OPERATOR(pg_catalog.<=) {}{verify}",
                        cfg.k
                    ),
                    vec![fps.clone().into(), texts.unwrap_or_default().into()],
                )
            }
            Probes::Similar { cfg, texts, sets, bands, short, keys } => {
                // The rows with shingles: their positions, texts, band values, short band
                // values and containment keys (as array literals: one text each, cast on the
                // shards).
                let rows: Vec<usize> = (0..sets.len()).filter(|&i| !sets[i].is_empty()).collect();
                let band_literal =
                    |b: &[i64]| format!("{{{}}}", b.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
                let (similarity, condition) = similar_condition(
                    cfg,
                    ext_schema,
                    source,
                    [
                        "q.body",
                        "q.bands::pg_catalog.int8[]",
                        "q.short::pg_catalog.int8[]",
                        "$6",
                        "$7",
                        "q.probe::pg_catalog.int8[]",
                    ],
                );
                (
                    format!(
                        "SELECT q.i::pg_catalog.int8, t.{key}::pg_catalog.int8, {similarity}
                         FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.int4[]), pg_catalog.unnest($2::pg_catalog.text[]),
                                         pg_catalog.unnest($3::pg_catalog.text[]), pg_catalog.unnest($4::pg_catalog.text[]),
                                         pg_catalog.unnest($5::pg_catalog.text[]))
                              AS q(i, body, bands, short, probe)
                         JOIN {table} t ON {condition}"
                    ),
                    vec![
                        rows.iter().map(|&i| i as i32 + 1).collect::<Vec<i32>>().into(),
                        rows.iter().map(|&i| texts[i].clone()).collect::<Vec<String>>().into(),
                        rows.iter().map(|&i| band_literal(&bands[i])).collect::<Vec<String>>().into(),
                        rows.iter()
                            .map(|&i| short[i].as_ref().map(|s| band_literal(&s.bands)))
                            .collect::<Vec<Option<String>>>()
                            .into(),
                        rows.iter()
                            .map(|&i| keys[i].as_ref().map(|k| band_literal(&k.probe())))
                            .collect::<Vec<Option<String>>>()
                            .into(),
                        cfg.threshold.into(),
                        cfg.containment.into(),
                    ],
                )
            }
        }
    }

    /// The rows among `through` (earlier rows of the batch that the statement let through, in
    /// order) that row `i` is checked against: all of them (SimHash), or those sharing a band,
    /// a short band or a containment key with it (similarity: `by_band` of
    /// [`Probes::add_bands`]), as the indexes offer candidates.
    pub(crate) fn earlier(&self, i: usize, through: &[usize], by_band: &HashMap<i64, Vec<usize>>) -> Vec<usize> {
        match self {
            Probes::SimHash { .. } => through.to_vec(),
            Probes::Similar { .. } => {
                let mut js: Vec<usize> =
                    self.band_keys(i, true).iter().filter_map(|b| by_band.get(b)).flatten().copied().collect();
                js.sort_unstable();
                js.dedup();
                js
            }
        }
    }

    /// Files row `i`, let through, under its band values, short band values and containment
    /// index values (similarity).
    pub(crate) fn add_bands(&self, i: usize, by_band: &mut HashMap<i64, Vec<usize>>) {
        for b in self.band_keys(i, false) {
            by_band.entry(b).or_default().push(i);
        }
    }

    /// Row `i`'s band values, its short band values (bit-inverted: the two kinds never meet
    /// under one key, [`Probes::near`] tests which is shared), and its containment keys as the
    /// index stores them (`probe` false) or as a row looks them up (`probe` true), for `by_band`
    /// (similarity).
    pub(crate) fn band_keys(&self, i: usize, probe: bool) -> Vec<i64> {
        match self {
            Probes::SimHash { .. } => Vec::new(),
            Probes::Similar { bands, short, keys, .. } => {
                let keys = keys[i].as_ref().map(|k| if probe { k.probe() } else { k.entry() }).unwrap_or_default();
                bands[i]
                    .iter()
                    .copied()
                    .chain(short[i].iter().flat_map(|s| &s.bands).map(|&b| !b))
                    .chain(keys)
                    .collect()
            }
        }
    }

    /// The trigger's decision on row `i` against an earlier row `j` of the batch that the
    /// statement let through: the measure when `j` makes `i` a near-duplicate (for similarity,
    /// only a row sharing a band, as the index offers candidates).
    pub(crate) fn near(&self, i: usize, j: usize) -> Option<f64> {
        match self {
            Probes::SimHash { cfg, fps, verified } => {
                let distance = (fps[i]? ^ fps[j]?).count_ones();
                let confirmed = || match (verified, cfg.verify) {
                    (Some(v), Some(verify)) => match (&v.texts[i], &v.texts[j]) {
                        (Some(a), Some(b)) => {
                            verify.rule().texts(a, b, &mut crate::similarity::minhash::interrupt).is_some()
                        }
                        _ => false,
                    },
                    _ => true,
                };
                (distance <= cfg.k && confirmed()).then_some(f64::from(distance))
            }
            Probes::Similar { cfg, texts, sets, bands, short, keys } => {
                let shares_short = match (&short[i], &short[j]) {
                    (Some(a), Some(b)) => a.bands.iter().any(|x| b.bands.contains(x)),
                    _ => false,
                };
                let shares_key = match (&keys[i], &keys[j]) {
                    (Some(a), Some(b)) => a.meet(b),
                    _ => false,
                };
                let by_band = bands[i].iter().any(|b| bands[j].contains(b));
                if sets[j].is_empty() {
                    return None;
                }
                // As the trigger: each index that offers the pair, with the rules it covers.
                let short_set = |k: usize| short[k].as_ref().map(|s| s.set.as_slice());
                [(by_band, Via::Band), (shares_key, Via::Key), (shares_short, Via::ShortBand)]
                    .into_iter()
                    .filter(|&(found, _)| found)
                    .find_map(|(_, via)| {
                        let mut pair = crate::shingles::pair(&texts[i], &texts[j])
                            .with_short(Some(short_set(i)), Some(short_set(j)));
                        cfg.similar(&sets[i], &sets[j], via, &mut pair)
                    })
                    .map(|m| m.jaccard)
            }
        }
    }
}

/// What `check` reads of each row's checked value (`values[i]`: the text or adopted
/// fingerprint, None for NULL or a row not to check, which then matches nothing).
///
/// # Safety
/// The datums are of the checked column's type `source_type`.
pub(crate) unsafe fn probes_of<'a>(
    relid: pg_sys::Oid,
    check: &'a Check,
    cols: &Cols,
    values: &[Option<pg_sys::Datum>],
    source_type: pg_sys::Oid,
) -> Probes<'a> {
    // SAFETY: the caller guarantees each datum of `values` is of `source_type`, the checked
    // column's type, as text_of asks (a NULL is None, never read).
    let text = |v: &Option<pg_sys::Datum>| v.and_then(|v| unsafe { text_of(v, source_type) });
    match check {
        Check::SimHash(cfg) => {
            let texts: Option<Vec<Option<String>>> = cols.text.then(|| values.iter().map(text).collect());
            let fps = match &texts {
                Some(texts) => texts.iter().map(|t| t.as_deref().and_then(crate::fingerprint::simhash)).collect(),
                None => values.iter().map(|v| v.map(|v| v.value() as i64)).collect(),
            };
            let verified = match (texts, cfg.verify) {
                (Some(texts), Some(_)) => Some(Verified { texts, column: column_name(relid, cols.source) }),
                _ => None,
            };
            Probes::SimHash { cfg, fps, verified }
        }
        Check::Similar(cfg) => {
            let texts: Vec<String> = values.iter().map(|v| text(v).unwrap_or_default()).collect();
            let sets: Vec<Vec<u64>> = texts.iter().map(|t| char_set(t, cfg.k)).collect();
            let bands = sets
                .iter()
                .map(|s| if s.is_empty() { Vec::new() } else { set_bands(s, cfg.bands, cfg.rows) })
                .collect();
            let short = texts
                .iter()
                .zip(&sets)
                .map(|(t, s)| if s.is_empty() { None } else { text_short(t, cfg.threshold) })
                .collect();
            let keys = sets.iter().map(|s| if s.is_empty() { None } else { cfg.keys(s) }).collect();
            Probes::Similar { cfg, texts, sets, bands, short, keys }
        }
    }
}

/// The stored near-duplicates of a batch's rows, by one query over every shard ([`Probes::search`]:
/// one round trip to each shard), as whoever calls it (the owner): per row, the key and measure
/// of each match. None is asked for when no row has anything to match.
pub(crate) fn stored_matches(
    probes: &Probes,
    ext_schema: &str,
    table: &str,
    source: &str,
    key: &str,
) -> Vec<Vec<(i64, f64)>> {
    let n = match probes {
        Probes::SimHash { fps, .. } => fps.len(),
        Probes::Similar { sets, .. } => sets.len(),
    };
    let mut found: Vec<Vec<(i64, f64)>> = vec![Vec::new(); n];
    if !(0..n).any(|i| probes.has(i)) {
        return found;
    }
    let (sql, args) = probes.search(ext_schema, table, source, key);
    let mut run = || {
        Spi::connect_mut(|client| {
            let what = "searching every shard for near-duplicates";
            for row in client.update(sql.as_str(), None, &args).or_raise(what) {
                let (Some(i), Some(key), Some(measure)) = (
                    row.get::<i64>(1).or_raise(what),
                    row.get::<i64>(2).or_raise(what),
                    row.get::<f64>(3).or_raise(what),
                ) else {
                    continue;
                };
                found[i as usize - 1].push((key, measure));
            }
        })
    };
    match probes {
        Probes::SimHash { .. } => run(),
        Probes::Similar { .. } => on_index(run),
    }
    found
}
