//! The Rust half of the batch functions `simdup_pairs` and `simdup_groups` (sql/batch.sql): the
//! distinct fingerprints of a table, read once, joined in memory on the values of each 16-bit
//! block within the tight thresholds (`simdup_core::pairs`), and union-find for the groups.

use pgrx::prelude::*;
use pgrx::spi::quote_identifier;
use pgrx::PgRelation;

use crate::args;
use crate::errors::{Code, Error, OrRaise};
use simdup_core::components::Components;
use simdup_core::leaders::leaders;
use simdup_core::pairs::{near_pairs_limited, TooManyPairs};

/// `simdup.max_distance`, the default k of the batch functions. A function (rather than
/// `current_setting(...)` in a DEFAULT) because it also loads the library, which defines the
/// parameter: `current_setting('simdup.max_distance')` fails in a session that has not yet used
/// simdup.
#[pg_extern(sql = "")]
pub(crate) fn simdup_max_distance() -> i32 {
    crate::gucs::max_distance()
}

/// Rows fetched per cursor batch while reading fingerprints.
const BATCH: i64 = 50_000;

/// The schema-qualified name of `tbl`, quoted.
fn qualified(tbl: &PgRelation) -> String {
    format!("{}.{}", quote_identifier(tbl.namespace()), quote_identifier(tbl.name()))
}

/// Checks that `fp_column` is a bigint column of `tbl`: 42703 when there is no such column,
/// 42804 when it has another type.
fn check_fingerprint_column(tbl: &PgRelation, fp_column: &str) {
    let desc = tbl.tuple_desc();
    let Some(att) = desc.iter().find(|a| !a.is_dropped() && a.name() == fp_column) else {
        Error::new(
            Code::ERRCODE_UNDEFINED_COLUMN,
            format!("column \"{fp_column}\" of relation \"{}\" does not exist", tbl.name()),
        )
        .raise()
    };
    // SAFETY: a catalog lookup of an existing type.
    if unsafe { pgrx::pg_sys::getBaseType(att.type_oid().value()) } != pgrx::pg_sys::INT8OID {
        Error::new(
            Code::ERRCODE_DATATYPE_MISMATCH,
            format!("column \"{fp_column}\" of relation \"{}\" is not a bigint fingerprint column", tbl.name()),
        )
        .hint("The batch functions read SimHash fingerprints: pass the bigint column simdup_enable added or adopted.")
        .raise();
    }
}

/// Every non-NULL value of bigint column `fp_column` of `tbl` (duplicates included).
fn table_fingerprints(tbl: &PgRelation, fp_column: &str) -> Vec<u64> {
    check_fingerprint_column(tbl, fp_column);
    let fp = quote_identifier(fp_column);
    read_fingerprints(&format!("SELECT {fp} FROM {} WHERE {fp} IS NOT NULL", qualified(tbl)))
}

/// The bigint first column of `query`'s rows, in order (NULLs skipped), read through a cursor
/// with read-only SPI (these functions run in parallel queries and on hot standbys, where a
/// transaction ID cannot be assigned).
fn read_fingerprints(query: &str) -> Vec<u64> {
    let mut fps = Vec::new();
    // pgrx frees fetched tuple tables only when an SPI session ends: one session per batch.
    let cursor = Spi::connect(|client| client.open_cursor(query, &[]).detach_into_name());
    loop {
        let n = Spi::connect(|client| {
            let mut cursor = client.find_cursor(&cursor).or_raise("fingerprint cursor");
            let rows = cursor.fetch(BATCH).or_raise("reading fingerprints");
            let n = rows.len();
            for row in rows {
                if let Some(v) = row.get::<i64>(1).or_raise("reading a fingerprint") {
                    fps.push(v as u64);
                }
            }
            if n > 0 {
                cursor.detach_into_name();
            } // else dropping it closes it
            n
        });
        if n == 0 {
            break;
        }
        pgrx::check_for_interrupts!();
    }
    fps
}

/// The pair join of the batch functions, run in this backend: pairs of distinct values of
/// `fps` within distance k, each once, on `simdup.batch_threads`
/// threads, reporting progress (a NOTICE every 10 seconds) and checking for interrupts as they
/// go. The callback runs on this backend's thread only (the core's promise): it is the only
/// place PostgreSQL is called from while the helper threads run.
///
/// The pairs are held in memory, 16 bytes each: more than `simdup.batch_memory` allows stops
/// the join as soon as it finds them, with 54000.
fn join_in_backend(fps: Vec<u64>, k: i32) -> Vec<(u64, u64)> {
    let k = args::max_distance(k);
    let n = fps.len();
    let threads = crate::gucs::batch_threads();
    let memory = crate::gucs::batch_memory();
    let max_pairs = memory / std::mem::size_of::<(u64, u64)>();
    let start = std::time::Instant::now();
    let mut last = start;
    let found = near_pairs_limited(fps, k, threads, max_pairs, &mut |checks| {
        pgrx::check_for_interrupts!();
        if last.elapsed().as_secs() >= 10 {
            last = std::time::Instant::now();
            pgrx::notice!(
                "simdup: comparing {n} fingerprints at k = {k} on {threads} thread(s): {}M candidate checks so far, {} s",
                checks / 1_000_000,
                start.elapsed().as_secs()
            );
        }
    });
    found.unwrap_or_else(|TooManyPairs { max_pairs }| {
        Error::new(
            Code::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!("more than {max_pairs} pairs of fingerprints within distance {k} among {n} fingerprints"),
        )
        .detail(format!(
            "simdup.batch_memory ({} kB, at most simdup.memory_limit) holds {max_pairs} pairs of 16 bytes; the search stopped when it found more.",
            memory / 1024
        ))
        .hint("Raise simdup.batch_memory (SET simdup.batch_memory = '1GB'; a superuser sets the ceiling simdup.memory_limit), or use a smaller k.")
        .raise()
    })
}

/// The pairs of distinct fingerprints of column `fp_column` of `tbl` within distance k, each
/// once, with fa < fb (as bigints).
fn table_pairs(tbl: &PgRelation, fp_column: &str, k: i32) -> Vec<(i64, i64)> {
    join_in_backend(table_fingerprints(tbl, fp_column), k)
        .into_iter()
        .map(|(a, b)| {
            let (a, b) = (a as i64, b as i64);
            if a < b {
                (a, b)
            } else {
                (b, a)
            }
        })
        .collect()
}

/// All pairs of distinct values of column `fingerprint_column` of `tbl` within Hamming
/// distance k, each once (fa < fb), with their distance. Memory: about 16 bytes per distinct
/// fingerprint, plus the output (simdup_core::pairs).
#[pg_extern(sql = "")]
pub(crate) fn _simdup_fingerprint_pairs(
    tbl: PgRelation,
    fingerprint_column: &str,
    k: i32,
) -> TableIterator<'static, (name!(fa, i64), name!(fb, i64), name!(distance, i32))> {
    let pairs = table_pairs(&tbl, fingerprint_column, k);
    TableIterator::new(pairs.into_iter().map(|(a, b)| (a, b, simdup_core::hamming(a as u64, b as u64) as i32)))
}

/// Connected components of the graph "distinct fingerprints within distance k": one row per
/// fingerprint that has at least one *other* fingerprint within distance k, with the smallest
/// fingerprint (as a bigint) of its component as the component id.
#[pg_extern(sql = "")]
pub(crate) fn _simdup_fingerprint_components(
    tbl: PgRelation,
    fingerprint_column: &str,
    k: i32,
) -> TableIterator<'static, (name!(fp, i64), name!(component, i64))> {
    let mut uf = Components::new();
    for (a, b) in table_pairs(&tbl, fingerprint_column, k) {
        uf.union(a, b);
    }
    TableIterator::new(uf.labels())
}

/// Leader clustering of the distinct fingerprints of a table (`simdup_core::leaders`), taken in
/// the order of each fingerprint's smallest `key_column` value: each fingerprint in a group of
/// two or more, with its group's leader. Every member is within k of its leader.
#[pg_extern(sql = "")]
pub(crate) fn _simdup_fingerprint_leaders(
    tbl: PgRelation,
    fingerprint_column: &str,
    key_column: &str,
    k: i32,
) -> TableIterator<'static, (name!(fp, i64), name!(leader, i64))> {
    check_fingerprint_column(&tbl, fingerprint_column);
    let (fp, key) = (quote_identifier(fingerprint_column), quote_identifier(key_column));
    let order = read_fingerprints(&format!(
        "SELECT {fp} FROM {} WHERE {fp} IS NOT NULL GROUP BY {fp} ORDER BY pg_catalog.min({key}), {fp}",
        qualified(&tbl)
    ));
    let pairs = join_in_backend(order.clone(), k);
    TableIterator::new(leaders(&order, &pairs).into_iter().map(|(m, l)| (m as i64, l as i64)))
}

/// The groups of a graph whose nodes are numbered 1..=n (`simdup_groups(..., verify => true)`
/// numbers the rows of its verified pairs in key order), with edges `a[i]`–`b[i]`: per node in a
/// group of two or more, the group's first node — by `method` 'components' (connected
/// components, [`Components`]) or 'leader' (leader clustering in node order, [`leaders`]). As
/// the nodes are numbered in key order, the first node is the group's smallest key.
#[pg_extern(sql = "")]
fn _simdup_graph_groups(
    n: i64,
    a: Vec<i64>,
    b: Vec<i64>,
    method: &str,
) -> TableIterator<'static, (name!(node, i64), name!(first, i64))> {
    if a.len() != b.len() {
        crate::errors::invalid_parameter(
            format!("the edge lists have different lengths, {} and {}", a.len(), b.len()),
            "Edge i joins a[i] and b[i].",
        );
    }
    let groups: Vec<(i64, i64)> = match args::GroupMethod::parse(method) {
        args::GroupMethod::Components => {
            let mut uf = Components::new();
            for (&x, &y) in a.iter().zip(&b) {
                uf.union(x, y);
            }
            uf.labels()
        }
        args::GroupMethod::Leader => {
            let order: Vec<u64> = (1..=n.max(0) as u64).collect();
            let pairs: Vec<(u64, u64)> = a.iter().zip(&b).map(|(&x, &y)| (x as u64, y as u64)).collect();
            leaders(&order, &pairs).into_iter().map(|(m, l)| (m as i64, l as i64)).collect()
        }
    };
    TableIterator::new(groups)
}
