//! A batch's probes: what the check reads of each row of a batch, their lock stripes, the
//! stored matches of all of them in one cross-shard query, and which earlier rows of the batch
//! each row meets; shared by batch writes and batch updates.

use super::search::{
    array_literal, candidate_query, count_query, similar_condition, verified_condition, IndexArrays, IndexValues,
};
use super::settings::on_index;
use super::target::column_name;
use super::types::{Check, Cols};
use std::collections::{HashMap, HashSet};

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
        verify: &[Verify],
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
                // The rows with shingles and candidates to verify: their positions, texts, band
                // values, short band values, containment keys and, past the verification limit,
                // the keys of the candidates it chose (as array literals: one text each, cast on
                // the shards).
                let rows: Vec<usize> =
                    (0..sets.len()).filter(|&i| !sets[i].is_empty() && !matches!(verify[i], Verify::Nothing)).collect();
                let (similarity, mut condition) = similar_condition(
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
                condition = format!(
                    "({condition}) AND (q.chosen IS NULL OR t.{key}::pg_catalog.int8 OPERATOR(pg_catalog.=) ANY (q.chosen::pg_catalog.int8[]))"
                );
                let chosen = rows
                    .iter()
                    .map(|&i| match &verify[i] {
                        Verify::Keys(keys) => Some(array_literal(keys)),
                        _ => None,
                    })
                    .collect::<Vec<Option<String>>>();
                (
                    format!(
                        "SELECT q.i::pg_catalog.int8, t.{key}::pg_catalog.int8, {similarity}
                         FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.int4[]), pg_catalog.unnest($2::pg_catalog.text[]),
                                         pg_catalog.unnest($3::pg_catalog.text[]), pg_catalog.unnest($4::pg_catalog.text[]),
                                         pg_catalog.unnest($5::pg_catalog.text[]), pg_catalog.unnest($8::pg_catalog.text[]))
                              AS q(i, body, bands, short, probe, chosen)
                         JOIN {table} t ON {condition}"
                    ),
                    vec![
                        rows.iter().map(|&i| i as i32 + 1).collect::<Vec<i32>>().into(),
                        rows.iter().map(|&i| texts[i].clone()).collect::<Vec<String>>().into(),
                        rows.iter().map(|&i| array_literal(&bands[i])).collect::<Vec<String>>().into(),
                        rows.iter()
                            .map(|&i| short[i].as_ref().map(|s| array_literal(&s.bands)))
                            .collect::<Vec<Option<String>>>()
                            .into(),
                        rows.iter()
                            .map(|&i| keys[i].as_ref().map(|k| array_literal(&k.probe())))
                            .collect::<Vec<Option<String>>>()
                            .into(),
                        cfg.threshold.into(),
                        cfg.containment.into(),
                        chosen.into(),
                    ],
                )
            }
        }
    }

    /// How many index values row `i` shares with row `j` of the batch, as the similarity
    /// indexes count them ([`super::search::count_query`]): its band values among `j`'s, its
    /// short band values among `j`'s, its containment keys to look up among `j`'s stored ones.
    pub(crate) fn shared(&self, i: usize, j: usize) -> u32 {
        match self {
            Probes::SimHash { .. } => 0,
            Probes::Similar { bands, short, keys, .. } => {
                let count = simdup_core::similarity::candidates::shared_values;
                let short = match (&short[i], &short[j]) {
                    (Some(a), Some(b)) => count(&a.bands, &b.bands),
                    _ => 0,
                };
                let keys = match (&keys[i], &keys[j]) {
                    (Some(a), Some(b)) => count(&a.probe(), &b.entry()),
                    _ => 0,
                };
                count(&bands[i], &bands[j]) + short + keys
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

/// Which stored candidates of a row the batch's search verifies.
#[derive(Clone)]
pub(crate) enum Verify {
    /// every one (no verification limit, or within it)
    All,
    /// those of these keys (the verification limit's choice)
    Keys(Vec<i64>),
    /// none (the row has no candidate)
    Nothing,
}

/// What the stored rows hold for a batch's rows: per row, the key and measure of each stored
/// near-duplicate verified; and, past the verification limit (similarity), the key of every
/// stored candidate with how many index values it shares with the row, from which the row's
/// choice among the stored rows and the batch's earlier ones is made
/// ([`simdup_core::similarity::candidates::verified`]). The rows verified are the stored
/// candidates that choice can take: the `limit` first among the stored ones alone.
pub(crate) struct Stored {
    pub(crate) matches: Vec<Vec<(i64, f64)>>,
    pub(crate) counts: Option<Vec<Vec<(i64, u32)>>>,
    /// `simdup.similar_verify_limit`, read once for the statement's batch
    limit: usize,
}

impl Stored {
    /// Which of row `i`'s candidates — its stored ones, but those `skip` says the batch changed,
    /// and the batch's rows `earlier` (key, index values shared) — are verified: None, every
    /// one; else those keys (the verification limit's choice).
    pub(crate) fn chosen(
        &self,
        i: usize,
        skip: impl Fn(i64) -> bool,
        earlier: impl IntoIterator<Item = (i64, u32)>,
    ) -> Option<HashSet<i64>> {
        let counts = self.counts.as_ref()?;
        let mut rows: Vec<(i64, u32)> = counts[i].iter().copied().filter(|&(key, _)| !skip(key)).collect();
        rows.extend(earlier);
        simdup_core::similarity::candidates::verified(&rows, self.limit).map(|keys| keys.into_iter().collect())
    }
}

/// The stored near-duplicates of a batch's rows, by one query over every shard ([`Probes::search`]:
/// one round trip to each shard), as whoever calls it (the owner). With the verification limit
/// (`simdup.similar_verify_limit`, a similarity check), one query first finds each row's stored
/// candidates ([`super::search::candidate_query`]; none for any row: no other query); for the
/// rows whose candidates, with the batch's earlier rows sharing an index value with them, can
/// pass the limit, another counts the index values each stored candidate shares
/// ([`super::search::count_query`]); and the search verifies only the candidates the limit can
/// choose. None is asked for when no row has anything to match.
///
/// `own` (a batch update's) gives each row's own key, never its candidate; and as the rows the
/// batch changes before a row are no candidates of it either, the search verifies for each row
/// the `limit` + `changed` first of its stored candidates (`changed`: how many rows the batch
/// changes).
pub(crate) fn stored_matches(
    probes: &Probes,
    ext_schema: &str,
    table: &str,
    (source, key): (&str, &str),
    own: Option<&[i64]>,
    changed: usize,
) -> Stored {
    let n = match probes {
        Probes::SimHash { fps, .. } => fps.len(),
        Probes::Similar { sets, .. } => sets.len(),
    };
    let limit = crate::gucs::similar_verify_limit();
    let mut stored = Stored { matches: vec![Vec::new(); n], counts: None, limit };
    if !(0..n).any(|i| probes.has(i)) {
        return stored;
    }
    let mut verify = vec![Verify::All; n];
    if let (Probes::Similar { cfg, sets, bands, short, keys, .. }, true) = (probes, limit > 0) {
        let probe: Vec<Option<Vec<i64>>> = keys.iter().map(|k| k.as_ref().map(Keys::probe)).collect();
        let values =
            |i: usize| (bands[i].as_slice(), short[i].as_ref().map(|s| s.bands.as_slice()), probe[i].as_deref());
        let with_shingles = || (0..n).filter(|&i| !sets[i].is_empty());
        let mine = |i: usize, key: i64| own.is_none_or(|own| own[i] != key);
        // 1. Each row's stored candidates, one index lookup of its arrays an index.
        let mut candidates: Vec<Vec<i64>> = vec![Vec::new(); n];
        let sql = candidate_query(cfg, ext_schema, table, (source, key), "::pg_catalog.int8", "");
        let args = IndexArrays::of(with_shingles().map(|i| (i, values(i)))).args();
        let what = "finding the stored candidates of the batch's rows";
        on_index(|| {
            Spi::connect_mut(|client| {
                for row in client.update(sql.as_str(), None, &args).or_raise(what) {
                    if let (Some(i), Some(key)) = (row.get::<i64>(1).or_raise(what), row.get::<i64>(2).or_raise(what)) {
                        if mine(i as usize - 1, key) {
                            candidates[i as usize - 1].push(key);
                        }
                    }
                }
            })
        });
        // 2. The rows whose candidates, with the batch's earlier rows that share an index value
        // with them (whichever of those are let through), can pass the limit: how many values
        // each stored candidate shares, one lookup a value. The others verify every candidate.
        let mut by_band = HashMap::new();
        let mut over = Vec::new();
        for i in with_shingles() {
            let earlier = probes.earlier(i, &[], &by_band).len();
            if !candidates[i].is_empty() && candidates[i].len() + earlier > limit + changed {
                over.push(i);
            }
            probes.add_bands(i, &mut by_band);
        }
        let mut counts: Vec<Vec<(i64, u32)>> =
            candidates.iter().map(|c| c.iter().map(|&key| (key, 0)).collect()).collect();
        if !over.is_empty() {
            for &i in &over {
                counts[i].clear();
            }
            let sql = count_query(cfg, ext_schema, table, source, key, "::pg_catalog.int8", "");
            let args = IndexValues::of(over.iter().map(|&i| (i, values(i)))).args();
            let what = "counting the index values the stored rows share with the batch's rows";
            on_index(|| {
                for_each_row(&sql, &args, what, |i, key, shared: i64| {
                    if mine(i, key) {
                        counts[i].push((key, shared as u32));
                    }
                })
            });
        }
        for (i, rows) in counts.iter().enumerate() {
            verify[i] = if rows.is_empty() {
                Verify::Nothing
            } else {
                simdup_core::similarity::candidates::verified(rows, limit + changed).map_or(Verify::All, Verify::Keys)
            };
        }
        stored.counts = Some(counts);
        if verify.iter().all(|v| matches!(v, Verify::Nothing)) {
            return stored;
        }
    }
    let (sql, args) = probes.search(ext_schema, table, source, key, &verify);
    let found = &mut stored.matches;
    let what = "searching every shard for near-duplicates";
    let mut run = || for_each_row(&sql, &args, what, |i, key, measure: f64| found[i].push((key, measure)));
    match probes {
        Probes::SimHash { .. } => run(),
        Probes::Similar { .. } => on_index(run),
    }
    stored
}

/// Each row (i, key, value) of `sql`, a query over every shard with `args`, to `each` with i
/// counted from 0 (the query's from 1); rows with a NULL are skipped.
fn for_each_row<T: pgrx::datum::FromDatum + pgrx::datum::IntoDatum>(
    sql: &str,
    args: &[DatumWithOid],
    what: &str,
    mut each: impl FnMut(usize, i64, T),
) {
    Spi::connect_mut(|client| {
        for row in client.update(sql, None, args).or_raise(what) {
            if let (Some(i), Some(key), Some(value)) =
                (row.get::<i64>(1).or_raise(what), row.get::<i64>(2).or_raise(what), row.get::<T>(3).or_raise(what))
            {
                each(i as usize - 1, key, value);
            }
        }
    })
}
