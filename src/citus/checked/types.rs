//! What the steps of a checked write pass each other: the check a table's trigger makes, the
//! columns it reads and writes, a row, the outcome, and the rows returned for RETURNING.

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::errors::{Code, ConstraintError, Error, OrRaise};

use crate::dedup::config::Config;
use crate::dedup::trigger::duplicate_error;
use crate::similarity::config::{similar_error, SimilarConfig};

/// The check a table's dedup trigger makes: by SimHash distance or by verified similarity.
pub(crate) enum Check {
    SimHash(Config),
    Similar(SimilarConfig),
}

impl Check {
    /// The trigger's 23505 for a row of table `rel` whose near-duplicate has key `key` (as text)
    /// at `measure` (the distance, or the Jaccard similarity), naming the key only if the caller
    /// may read it.
    pub(crate) fn duplicate(
        &self,
        rel: pg_sys::Relation,
        name: &str,
        key: &str,
        measure: f64,
        may_read_key: bool,
    ) -> ConstraintError {
        match self {
            Check::SimHash(cfg) => duplicate_error(rel, cfg, name, key, measure as u32, may_read_key),
            Check::Similar(cfg) => similar_error(rel, cfg, name, key, measure, None, may_read_key),
        }
    }
}

/// The columns the check reads and writes.
pub(crate) struct Cols {
    /// The column the check reads: the text, or an adopted fingerprint.
    pub(crate) source: i32,
    /// Whether `source` is a text (not an adopted fingerprint).
    pub(crate) text: bool,
    /// The fingerprint column (SimHash).
    pub(crate) fp: Option<i32>,
    pub(crate) key: i32,
    pub(crate) dup_of: Option<i32>,
}

/// The outcome of a checked write: the rows stored, or the near-duplicate that rejects the
/// statement (the relation left open: the error names it).
pub(crate) enum Outcome {
    Stored(u64),
    Duplicate(ConstraintError),
    /// The one row of a checked UPDATE ([`update_row`]) was changed by another transaction
    /// since the UPDATE read it: nothing was written, the caller reads it again.
    Changed,
}

/// Where a checked write puts the rows it stored, as the shards stored them (defaults, `dup_of`,
/// generated columns and the shards' own triggers included), for a statement's `RETURNING` list
/// ([`crate::citus`]).
pub(crate) struct Returned {
    /// Filled in the memory context it was made in.
    pub(crate) store: *mut pg_sys::Tuplestorestate,
    /// The table's descriptor, dropped columns included: the store's rows are of it.
    pub(crate) desc: pg_sys::TupleDesc,
}

impl Returned {
    /// Puts the rows of the statement SPI ran last into the store: after its first `skip`
    /// columns (`skip` = 1: an int8 whose `rank` orders the rows; 0: the order they came in),
    /// the table's columns but the dropped ones (`RETURNING …, *`). In rank order, stably.
    ///
    /// # Safety
    /// In the SPI connection that ran the statement, before it runs another.
    pub(crate) unsafe fn put_spi_rows(&self, skip: usize, mut rank: impl FnMut(Option<i64>) -> usize) {
        // SAFETY: SPI's result of the last statement, valid until the connection runs another;
        // the store copies each row (tuplestore_putvalues) into its own memory.
        unsafe {
            let table = pg_sys::SPI_tuptable;
            if table.is_null() {
                return;
            }
            let spi_desc = (*table).tupdesc;
            let tuples = std::slice::from_raw_parts((*table).vals, pg_sys::SPI_processed as usize);
            let dropped: Vec<bool> =
                pgrx::PgTupleDesc::from_pg_unchecked(self.desc).iter().map(|att| att.attisdropped).collect();
            let live = dropped.iter().filter(|&&d| !d).count();
            if (*spi_desc).natts as usize != skip + live {
                crate::errors::internal("a checked write returned other columns than the table's");
            }
            let mut order: Vec<(usize, usize)> = tuples
                .iter()
                .enumerate()
                .map(|(r, &tuple)| {
                    let mut isnull = false;
                    let first = (skip > 0)
                        .then(|| pg_sys::SPI_getbinval(tuple, spi_desc, 1, &mut isnull).value() as i64)
                        .filter(|_| !isnull);
                    (rank(first), r)
                })
                .collect();
            order.sort_unstable();
            let mut spi_values = vec![pg_sys::Datum::from(0); skip + live];
            let mut spi_nulls = vec![true; skip + live];
            let mut values = vec![pg_sys::Datum::from(0); dropped.len()];
            let mut nulls = vec![true; dropped.len()];
            for (_, r) in order {
                pg_sys::heap_deform_tuple(tuples[r], spi_desc, spi_values.as_mut_ptr(), spi_nulls.as_mut_ptr());
                let mut c = skip;
                for (a, &gone) in dropped.iter().enumerate() {
                    if !gone {
                        (values[a], nulls[a]) = (spi_values[c], spi_nulls[c]);
                        c += 1;
                    }
                }
                pg_sys::tuplestore_putvalues(self.store, self.desc, values.as_mut_ptr(), nulls.as_mut_ptr());
            }
        }
    }
}

/// Runs `sql` with `args` over SPI (read-write: a fresh snapshot per statement) and returns the
/// first column of each row as text.
pub(crate) fn query(sql: &str, args: &[DatumWithOid], what: &str) -> Vec<Option<String>> {
    Spi::connect_mut(|client| {
        let rows = client.update(sql, None, args).or_raise(what);
        rows.map(|row| row.get::<String>(1).or_raise(what)).collect()
    })
}

pub(crate) fn not_supported(message: String, detail: &str) -> ! {
    Error::new(Code::ERRCODE_FEATURE_NOT_SUPPORTED, message).detail(detail).raise()
}
