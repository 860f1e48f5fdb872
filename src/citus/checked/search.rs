//! The cross-shard search of a checked write: one query over every shard for the near-duplicate
//! with the smallest key, and the SQL conditions it tests.

use super::settings::on_index;
use super::target::column_name;
use super::types::{query, Check, Cols};
use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;

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
                .then(|| {
                    let bands = set_bands(&set, cfg.bands, cfg.rows);
                    let short = text_short(&text, cfg.threshold);
                    let keys = cfg.keys(&set);
                    let values = cfg.values(&set, &bands, short.as_ref(), keys.as_ref());
                    pending::claim(relid, &Claim::Similar(values));
                    let short = short.map(|s| s.bands);
                    let (similarity, condition) =
                        similar_condition(cfg, ext_schema, &source, ["$2", "$1", "$5", "$3", "$4", "$6"]);
                    let args = vec![
                        bands.into(),
                        text.into(),
                        cfg.threshold.into(),
                        cfg.containment.into(),
                        short.into(),
                        keys.map(|k| k.probe()).into(),
                    ];
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
