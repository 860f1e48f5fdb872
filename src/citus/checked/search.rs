//! The cross-shard search of a checked write: one query over every shard for the near-duplicate
//! with the smallest key, and the SQL conditions it tests.

use super::settings::on_index;
use super::target::column_name;
use super::types::{query, Check, Cols};
use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::errors::OrRaise;

use crate::similarity::minhash::{char_set, set_bands, text_short};

use super::pending::{self, Claim};
use crate::similarity::config::SimilarConfig;

/// Steps 1 to 3 of a checked write, as the table's owner: the lock stripes of `value` (the text
/// the row will store, or its adopted fingerprint, as text; None: NULL) and its record as a row
/// in progress, after the earlier writers in progress of its near-duplicate candidates
/// ([`pending::claim`]), then one query over every shard for its near-duplicate with the
/// smallest key, leaving out the row whose key (as text) is `exclude` (an UPDATE's own row);
/// that key, as text, and the measure (the distance, or the Jaccard similarity).
pub(crate) fn nearest_stored(
    relid: pg_sys::Oid,
    check: &Check,
    cols: &Cols,
    table: &str,
    ext_schema: &str,
    value: Option<String>,
    exclude: Option<&str>,
) -> Option<(String, f64)> {
    let column = |attnum: i32| column_name(relid, attnum);
    let source = column(cols.source);
    let key_column = column(cols.key);
    // (Ordered aggregates, not ORDER BY key LIMIT 1: pushed to the shards, that would let a
    // shard's planner walk its primary key index.) The own row is left out by its key, compared
    // as text: the parameter after the search's own; the condition parenthesized, so that this
    // applies to all of it (the similarity check's is a disjunction).
    let smallest = |measure: &str, condition: &str, params: usize| {
        let own = match exclude {
            Some(_) => format!(" AND t.{key_column}::pg_catalog.text OPERATOR(pg_catalog.<>) ${}", params + 1),
            None => String::new(),
        };
        format!(
            "SELECT (pg_catalog.array_agg(t.{key_column} ORDER BY t.{key_column}))[1]::pg_catalog.text
                  || ' ' || (pg_catalog.array_agg({measure} ORDER BY t.{key_column}))[1]
             FROM {table} t WHERE ({condition}){own}"
        )
    };
    let search = |sql: String, mut args: Vec<DatumWithOid>| {
        args.extend(exclude.map(|key| key.to_owned().into()));
        query(&sql, &args, "searching every shard for a near-duplicate").into_iter().next().flatten().and_then(|s| {
            let (key, measure) = s.rsplit_once(' ')?;
            Some((key.to_owned(), measure.parse::<f64>().ok()?))
        })
    };
    match check {
        Check::SimHash(cfg) => {
            let fp = match (value.as_deref(), cols.text) {
                (Some(text), true) => crate::fingerprint::simhash(text),
                (Some(fp), false) => Some(fp.parse::<i64>().or_raise("reading the row's fingerprint")),
                (None, _) => None,
            };
            fp.and_then(|fp| {
                pending::claim(relid, &Claim::Fingerprints { k: cfg.k, fps: vec![fp as u64] });
                let fp_column = column(cols.fp.unwrap_or(cols.source));
                let distance = format!("{ext_schema}.hamming(t.{fp_column}, $1)");
                let mut condition = format!("{distance} OPERATOR(pg_catalog.<=) {}", cfg.k);
                let mut args: Vec<DatumWithOid> = vec![fp.into()];
                // The table's verification, as the trigger's (src/dedup/verify.rs).
                if let (Some(v), true) = (cfg.verify, cols.text) {
                    condition += &verified_condition(ext_schema, &source, "$2", v);
                    args.push(value.unwrap_or_default().into());
                }
                let params = args.len();
                search(smallest(&distance, &condition, params), args)
            })
        }
        Check::Similar(cfg) => {
            let text = value.unwrap_or_default();
            let set = char_set(&text, cfg.k);
            (!set.is_empty())
                .then(|| -> Option<(String, f64)> {
                    let bands = set_bands(&set, cfg.bands, cfg.rows);
                    let short = text_short(&text, cfg.threshold);
                    let keys = cfg.keys(&set);
                    let values = cfg.values(&set, &bands, short.as_ref(), keys.as_ref());
                    pending::claim(relid, &Claim::Similar(values));
                    let short = short.map(|s| s.bands);
                    let probe = keys.map(|k| k.probe());
                    let (similarity, mut condition) =
                        similar_condition(cfg, ext_schema, &source, ["$2", "$1", "$5", "$3", "$4", "$6"]);
                    let mut args: Vec<DatumWithOid> = vec![
                        bands.clone().into(),
                        text.into(),
                        cfg.threshold.into(),
                        cfg.containment.into(),
                        short.clone().into(),
                        probe.clone().into(),
                    ];
                    let limit = crate::gucs::similar_verify_limit();
                    if limit > 0 {
                        // The verification limit: only the candidates it chooses are verified
                        // (the rows sharing the most index values, the smaller keys first among
                        // equals, as the trigger chooses on one node): none, no near-duplicate.
                        let row = [(0, (bands.as_slice(), short.as_deref(), probe.as_deref()))];
                        let choice = on_index(|| chosen_keys(cfg, ext_schema, table, (&source, &key_column), &row, limit, exclude));
                        match choice {
                            Choice::Nothing => return None,
                            Choice::All => {}
                            Choice::Keys(chosen) => {
                                condition = format!("({condition}) AND t.{key_column}::pg_catalog.text OPERATOR(pg_catalog.=) ANY ($7::pg_catalog.text[])");
                                args.push(chosen.into());
                                return on_index(|| search(smallest(&similarity, &condition, 7), args));
                            }
                        }
                    }
                    on_index(|| search(smallest(&similarity, &condition, 6), args))
                })
                .flatten()
        }
    }
}

/// The verification of a SimHash candidate as a query's condition on stored row `t` (text
/// column `source`) against the new text `text` (an SQL expression): ` AND
/// _simdup_verified(...)`, the trigger's decision (src/dedup/verify.rs).
pub(crate) fn verified_condition(
    ext_schema: &str,
    source: &str,
    text: &str,
    v: crate::dedup::config::Verify,
) -> String {
    let containment = v.containment.map_or_else(|| "NULL".to_owned(), |c| format!("{c:?}"));
    format!(
        " AND {ext_schema}._simdup_verified(t.{source}::pg_catalog.text, {text}, {:?}::pg_catalog.float8, {containment}::pg_catalog.float8)",
        v.threshold
    )
}

/// The trigger's decision (src/similarity/trigger.rs) as the similarity check's query asks it of
/// every shard: the measure (`_simdup_similar_match`: the Jaccard similarity of a near-duplicate)
/// and the condition "stored row `t` shares a band value with the new text and is a
/// near-duplicate by every rule, or shares a short band value and is one by the short-text rule
/// alone" (`_simdup_similar_short_match`). The band tests are written as the two indexes'
/// expressions, so that each shard reads them ([`crate::search::similarity`]). `[text, bands,
/// short, threshold, containment]` are the SQL expressions of the new row's text, its band
/// values and short band values (`int8[]`; short NULL for a text without short bands), and the
/// trigger's threshold and containment, and `probe` the new row's containment keys to look up
/// (`int8[]`, [`simdup_core::similarity::Keys::probe`]; used only when the trigger has containment:
/// then the condition also holds for a stored row whose containment keys meet the new row's and
/// that `_simdup_similar_key_match` counts a near-duplicate, and the measure is whichever match
/// is not NULL: both give the pair's k-shingle Jaccard similarity).
pub(crate) fn similar_condition(
    cfg: &SimilarConfig,
    ext_schema: &str,
    source: &str,
    params: [&str; 6],
) -> (String, String) {
    let [text, bands, short, threshold, containment, probe] = params;
    let (k, b, r, t) = (cfg.k, cfg.bands, cfg.rows, cfg.threshold);
    let stored = format!("t.{source}::pg_catalog.text");
    let by_band = format!("{ext_schema}._simdup_similar_match({stored}, {text}, {k}, {threshold}, {containment})");
    let mut condition = format!(
        "({ext_schema}._simdup_similar_bands(t.{source}, {k}, {b}, {r}) OPERATOR(pg_catalog.&&) {bands} \
          AND {by_band} IS NOT NULL) \
         OR ({ext_schema}._simdup_similar_short_bands(t.{source}, '{t}'::pg_catalog.float8) OPERATOR(pg_catalog.&&) {short} \
             AND {ext_schema}._simdup_similar_short_match({stored}, {text}, {k}, {threshold}) IS NOT NULL)"
    );
    let mut similarity = by_band.clone();
    if let Some(c) = cfg.containment {
        // The key test is written as the containment index's expression, for the shards'
        // planners; a row found by a band and by a key is measured once, by its Jaccard.
        let by_key =
            format!("{ext_schema}._simdup_similar_key_match({stored}, {text}, {k}, {threshold}, {containment})");
        condition.push_str(&format!(
            " OR ({ext_schema}._simdup_similar_keys(t.{source}, {k}, '{c}'::pg_catalog.float8) OPERATOR(pg_catalog.&&) {probe} \
                 AND {by_key} IS NOT NULL)"
        ));
        similarity = format!("COALESCE({by_band}, {by_key})");
    }
    (similarity, condition)
}

/// A row's band values, short band values (a short text's) and containment keys to look up
/// (with containment).
pub(crate) type RowValues<'a> = (&'a [i64], Option<&'a [i64]>, Option<&'a [i64]>);

/// The index values of rows, as the counting query of the verification limit reads them: each
/// value with its row's position (from 1) and its kind (0: a band value, 1: a short band value,
/// 2: a containment key to look up), as three arrays.
pub(crate) struct IndexValues {
    pub(crate) rows: Vec<i32>,
    pub(crate) values: Vec<i64>,
    pub(crate) kinds: Vec<i32>,
}

impl IndexValues {
    /// The values of rows (i, from 0, and its [`RowValues`]), each filed under i + 1.
    pub(crate) fn of<'a>(rows: impl IntoIterator<Item = (usize, RowValues<'a>)>) -> Self {
        let mut out = IndexValues { rows: Vec::new(), values: Vec::new(), kinds: Vec::new() };
        for (i, (bands, short, probe)) in rows {
            for (kind, values) in [(0, Some(bands)), (1, short), (2, probe)] {
                for &v in values.unwrap_or_default() {
                    out.rows.push(i as i32 + 1);
                    out.values.push(v);
                    out.kinds.push(kind);
                }
            }
        }
        out
    }

    /// The arguments `$1` to `$3` of [`count_query`].
    pub(crate) fn args(&self) -> Vec<DatumWithOid<'static>> {
        vec![self.rows.clone().into(), self.values.clone().into(), self.kinds.clone().into()]
    }
}

/// The query counting, for each row of [`IndexValues`] (`$1` to `$3`), how many of its index
/// values each stored row shares, as the trigger's indexes count them on one node (one index
/// lookup a value, `simdup_core::similarity::candidates`): rows (i, `key` with `key_cast`
/// after it, count), leaving out `extra` (a condition on `t`, or empty). Each test is written as its index's
/// expression, so that each shard reads it.
pub(crate) fn count_query(
    cfg: &SimilarConfig,
    ext_schema: &str,
    table: &str,
    source: &str,
    key: &str,
    key_cast: &str,
    extra: &str,
) -> String {
    let (k, b, r, t) = (cfg.k, cfg.bands, cfg.rows, cfg.threshold);
    // Each value is looked up in its kind's index only: the other two arms get an array of one
    // NULL, which overlaps nothing. The arms are the indexes' conditions alone, so that a shard
    // reads them as one BitmapOr and computes no index expression again for the rows it finds
    // (an arm that also tested the kind left the whole condition as a filter, which computed a
    // stored row's MinHash bands once a value: 250 against 37 ms for 2,000 candidates).
    let value =
        |kind: u8| format!("ARRAY[CASE WHEN q.kind OPERATOR(pg_catalog.=) {kind} THEN q.v END]::pg_catalog.int8[]");
    let mut condition = format!(
        "{ext_schema}._simdup_similar_bands(t.{source}, {k}, {b}, {r}) OPERATOR(pg_catalog.&&) {} \
         OR {ext_schema}._simdup_similar_short_bands(t.{source}, '{t}'::pg_catalog.float8) OPERATOR(pg_catalog.&&) {}",
        value(0),
        value(1)
    );
    if let Some(c) = cfg.containment {
        condition.push_str(&format!(
            " OR {ext_schema}._simdup_similar_keys(t.{source}, {k}, '{c}'::pg_catalog.float8) OPERATOR(pg_catalog.&&) {}",
            value(2)
        ));
    }
    format!(
        "SELECT q.i::pg_catalog.int8, t.{key}{key_cast}, pg_catalog.count(*)::pg_catalog.int8
         FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.int4[]), pg_catalog.unnest($2::pg_catalog.int8[]),
                         pg_catalog.unnest($3::pg_catalog.int4[])) AS q(i, v, kind)
         JOIN {table} t ON ({condition}){extra}
         GROUP BY q.i, t.{key}"
    )
}

/// Which stored candidates of a row the verification limit lets the search verify.
pub(crate) enum Choice {
    /// none: the row has no candidate
    Nothing,
    /// every one: they are at most the limit
    All,
    /// those of these keys (as text)
    Keys(Vec<String>),
}

/// The stored candidates of one row (`row`: its values) that the verification limit `limit`
/// lets the search verify, leaving out the row whose key (as text) is `exclude`: first the
/// candidates, one index lookup of the row's arrays an index ([`candidate_query`]); past the
/// limit, the `limit` sharing the most index values ([`count_query`]), the smaller keys first
/// among equals, in the key type's order as the trigger compares keys (the rule of
/// `simdup_core::similarity::candidates::verified`, here in SQL: the key need not be an integer).
fn chosen_keys(
    cfg: &SimilarConfig,
    ext_schema: &str,
    table: &str,
    (source, key): (&str, &str),
    row: &[(usize, RowValues)],
    limit: usize,
    exclude: Option<&str>,
) -> Choice {
    let own = |param: usize| match exclude {
        Some(_) => format!(" AND t.{key}::pg_catalog.text OPERATOR(pg_catalog.<>) ${param}"),
        None => String::new(),
    };
    let what = "counting the stored candidates of the new row";
    let candidates = candidate_query(cfg, ext_schema, table, (source, key), "", &own(5));
    let mut args = IndexArrays::of(row.iter().copied()).args();
    args.extend(exclude.map(|key| key.to_owned().into()));
    let n = Spi::connect_mut(|client| {
        let sql = format!("SELECT pg_catalog.count(*) FROM ({candidates}) AS c(i, k)");
        let mut rows = client.update(sql.as_str(), None, &args).or_raise(what);
        rows.next().and_then(|row| row.get::<i64>(1).or_raise(what)).unwrap_or(0)
    });
    match n as usize {
        0 => return Choice::Nothing,
        n if n <= limit => return Choice::All,
        _ => {}
    }
    let counts = count_query(cfg, ext_schema, table, source, key, "", &own(4));
    let sql = format!(
        "SELECT (pg_catalog.array_agg(c.k::pg_catalog.text ORDER BY c.n DESC, c.k))[1:{limit}]
         FROM ({counts}) AS c(i, k, n)"
    );
    let mut args = IndexValues::of(row.iter().copied()).args();
    args.extend(exclude.map(|key| key.to_owned().into()));
    let what = "counting the index values the stored rows share with the new row";
    Spi::connect_mut(|client| {
        let mut rows = client.update(sql.as_str(), None, &args).or_raise(what);
        rows.next().and_then(|row| row.get::<Vec<String>>(1).or_raise(what))
    })
    .map_or(Choice::Nothing, Choice::Keys)
}

/// The array literal of `values` (`{1,2,3}`): one text a row's array, cast on the shards.
pub(crate) fn array_literal(values: &[i64]) -> String {
    format!("{{{}}}", values.iter().map(i64::to_string).collect::<Vec<_>>().join(","))
}

/// Rows' index values as whole arrays, for [`candidate_query`] (`$1` to `$4`): each row's
/// position (from 1), its band values, short band values and containment keys to look up, as
/// array literals (one text each, cast on the shards; NULL: none).
pub(crate) struct IndexArrays {
    rows: Vec<i32>,
    bands: Vec<String>,
    short: Vec<Option<String>>,
    probe: Vec<Option<String>>,
}

impl IndexArrays {
    /// The arrays of rows (i, from 0, and its [`RowValues`]), each filed under i + 1.
    pub(crate) fn of<'a>(rows: impl IntoIterator<Item = (usize, RowValues<'a>)>) -> Self {
        let mut out = IndexArrays { rows: Vec::new(), bands: Vec::new(), short: Vec::new(), probe: Vec::new() };
        for (i, (bands, short, probe)) in rows {
            out.rows.push(i as i32 + 1);
            out.bands.push(array_literal(bands));
            out.short.push(short.map(array_literal));
            out.probe.push(probe.map(array_literal));
        }
        out
    }

    pub(crate) fn args(&self) -> Vec<DatumWithOid<'static>> {
        vec![self.rows.clone().into(), self.bands.clone().into(), self.short.clone().into(), self.probe.clone().into()]
    }
}

/// The query of rows' stored candidates ([`IndexArrays`], `$1` to `$4`): rows (i, `key` with
/// `key_cast` after it), one a stored row sharing a band value, a short band value or (with
/// containment) a containment key with row i, as the trigger's indexes offer candidates, leaving
/// out `extra` (a condition on `t`, or empty). One index lookup of a row's arrays an index, the
/// arms the indexes' conditions alone (one BitmapOr a row, nothing computed again): what the
/// limit needs to know before it counts values one at a time ([`count_query`]).
pub(crate) fn candidate_query(
    cfg: &SimilarConfig,
    ext_schema: &str,
    table: &str,
    (source, key): (&str, &str),
    key_cast: &str,
    extra: &str,
) -> String {
    let (k, b, r, t) = (cfg.k, cfg.bands, cfg.rows, cfg.threshold);
    let mut condition = format!(
        "{ext_schema}._simdup_similar_bands(t.{source}, {k}, {b}, {r}) OPERATOR(pg_catalog.&&) q.bands::pg_catalog.int8[] \
         OR {ext_schema}._simdup_similar_short_bands(t.{source}, '{t}'::pg_catalog.float8) OPERATOR(pg_catalog.&&) q.short::pg_catalog.int8[]"
    );
    if let Some(c) = cfg.containment {
        condition.push_str(&format!(
            " OR {ext_schema}._simdup_similar_keys(t.{source}, {k}, '{c}'::pg_catalog.float8) OPERATOR(pg_catalog.&&) q.probe::pg_catalog.int8[]"
        ));
    }
    format!(
        "SELECT q.i::pg_catalog.int8, t.{key}{key_cast}
         FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.int4[]), pg_catalog.unnest($2::pg_catalog.text[]),
                         pg_catalog.unnest($3::pg_catalog.text[]), pg_catalog.unnest($4::pg_catalog.text[]))
              AS q(i, bands, short, probe)
         JOIN {table} t ON ({condition}){extra}"
    )
}
