//! The dedup trigger on a shard of a Citus hash-distributed table: which relations are shards,
//! and which writes their trigger lets through.
//!
//! There the trigger fires on one shard placement and sees only that shard's rows, so it cannot
//! decide whether a row is a near-duplicate (docs/citus.md, "Dedup across shards"). Checked
//! writes — plain INSERT and COPY on the coordinator ([`super`]), `simdup_insert`
//! — go through the checked write ([`super::checked`]), which locks the row's stripes there,
//! searches every shard, and writes as the owner with `simdup.checked_write` set to the table's
//! name (a `SET LOCAL` that Citus propagates to the workers in the same transaction). On a shard
//! of a hash-distributed table the trigger lets exactly those writes through and refuses every
//! other write of a new or changed text: writes through a worker (MX), and statements that reach
//! the shards some other way.
//!
//! Whether a relation is such a shard is read from Citus's metadata (on every node with Citus
//! 11+), without depending on Citus: a shard's name is its table's name, `_`, and its shard id.
//! The answer is cached per backend and forgotten when the relation's relcache entry is
//! invalidated (a shard dropped, moved or renamed).

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::dedup::placement::{Gate, Placement};
use crate::errors::{Code, Error, OrRaise};

/// The answers the dedup engine asks of Citus ([`crate::dedup::placement`]), registered by
/// [`super::init`].
pub(crate) static PLACEMENT: Placement =
    Placement { gate, is_part: |rel| unsafe { shard_of(rel) }.is_some(), is_distributed, is_managed: is_citus_table };

/// What the dedup trigger on `rel` does with a row: on a shard whose placements each hold part
/// of the table's rows, only the coordinator's checked writes and Citus filling a shard pass
/// (any other write is refused here); on a placement of a reference or Citus-local table the
/// row is checked against that placement, named by its table; elsewhere it is checked, unless
/// Citus is filling a shard it is creating.
///
/// # Safety
/// `rel` is the open relation the trigger fired on.
unsafe fn gate(rel: pg_sys::Relation) -> Gate {
    // SAFETY: the caller's.
    unsafe {
        let shard = shard_of(rel);
        if passes_unchecked(rel, shard.as_ref()) {
            Gate::Pass
        } else {
            shard.map_or(Gate::Whole, |s| Gate::Part(s.name))
        }
    }
}

/// The distributed table a shard belongs to.
#[derive(Clone, Debug)]
pub(crate) struct Shard {
    /// The table's name, unqualified (for messages, as PostgreSQL's own name relations).
    pub name: String,
    /// The table's schema-qualified, quoted name (`format('%I.%I', schema, table)`), as
    /// `simdup_insert` writes it into `simdup.checked_write`.
    pub table: String,
    /// Citus's distribution method: `h` hash, `r` range, `a` append, `n` (reference and local
    /// tables: one shard that every placement holds whole).
    pub method: char,
}

impl Shard {
    /// Does one placement of this shard see only part of the table's rows?
    pub fn is_partial(&self) -> bool {
        is_partial(&self.method.to_string())
    }
}

/// Does a table distributed with Citus's method `method` (`pg_dist_partition.partmethod`) have
/// placements that see only part of its rows? All but reference and local tables (`n`).
fn is_partial(method: &str) -> bool {
    method != "n"
}

/// Whether the extension citus is installed in this database: a catalog lookup, so that the
/// checks of every INSERT on a database without Citus run no query (and log nothing).
fn citus_installed() -> bool {
    // SAFETY: a catalog lookup by name, missing_ok.
    unsafe { pg_sys::get_extension_oid(c"citus".as_ptr(), true) != pg_sys::InvalidOid }
}

/// Whether Citus's catalog table `pg_catalog.<table>` exists (Citus is installed here).
fn has_catalog(client: &pgrx::spi::SpiClient, table: &str) -> bool {
    client
        .select(
            "SELECT pg_catalog.to_regclass(pg_catalog.format('pg_catalog.%I', $1::pg_catalog.text)) IS NOT NULL",
            Some(1),
            &[table.into()],
        )
        .or_raise("looking for Citus")
        .first()
        .get_one::<bool>()
        .or_raise("looking for Citus")
        == Some(true)
}

/// Citus's distribution method of table `relid` (`h` hash, `r` range, `a` append, `n`
/// reference and local tables), None when it is not a Citus table or Citus is not installed:
/// read from Citus's catalog when there is one, without depending on Citus.
fn distribution_method(relid: pg_sys::Oid) -> Option<String> {
    if !citus_installed() {
        return None;
    }
    Spi::connect(|client| {
        if !has_catalog(client, "pg_dist_partition") {
            return None;
        }
        client
            .select(
                "SELECT p.partmethod::pg_catalog.text FROM pg_catalog.pg_dist_partition p
                 WHERE p.logicalrelid OPERATOR(pg_catalog.=) $1",
                Some(1),
                &[relid.into()],
            )
            .or_raise("reading Citus's metadata")
            .first()
            .get_one::<String>()
            .ok()
            .flatten()
    })
}

/// `_simdup_citus_distributed(tbl)`: whether `tbl` is a Citus table whose shards each hold part
/// of its rows (hash, range or append distributed), where the dedup trigger of one shard cannot
/// decide and ctids name no row. The one place SQL asks.
#[pg_extern(sql = "")]
fn _simdup_citus_distributed(tbl: pg_sys::Oid) -> bool {
    is_distributed(tbl)
}

/// Whether table `relid` is in Citus's metadata at all (distributed, reference or Citus local).
pub(super) fn is_citus_table(relid: pg_sys::Oid) -> bool {
    distribution_method(relid).is_some()
}

/// Whether table `relid` is Citus-distributed with shards that each hold part of its rows.
pub(crate) fn is_distributed(relid: pg_sys::Oid) -> bool {
    distribution_method(relid).is_some_and(|m| is_partial(&m))
}

/// Whether this node is the Citus coordinator (`citus_is_coordinator()`); only asked once a
/// table is known to be distributed, so Citus is installed.
pub(super) fn is_coordinator() -> bool {
    Spi::get_one::<bool>("SELECT pg_catalog.citus_is_coordinator()").or_raise("asking Citus").unwrap_or(false)
}

/// Whether the write in progress on `rel` (a distributed table `table`, or one of its shards)
/// is `_simdup_checked_insert`'s own: `simdup.checked_write` names the table *and* the writer
/// has the owner's rights. The setting alone is one any writer can set; the owner's identity is
/// what a writer cannot take (and the owner could disable the trigger anyway).
///
/// # Safety
/// `rel` is an open relation.
pub(super) unsafe fn is_checked_write(rel: pg_sys::Relation, table: &str) -> bool {
    // SAFETY: the caller guarantees an open relation; a role membership lookup.
    let owner = unsafe { pg_sys::has_privs_of_role(pg_sys::GetUserId(), (*(*rel).rd_rel).relowner) };
    owner && crate::gucs::checked_write().as_deref() == Some(table)
}

thread_local! {
    static SHARDS: RefCell<Option<HashMap<pg_sys::Oid, Option<Shard>>>> = const { RefCell::new(None) };
}

/// Relcache invalidation: forget `relid` (all relations for InvalidOid).
#[pg_guard]
unsafe extern "C-unwind" fn forget(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    SHARDS.with(|s| {
        if let Some(map) = s.borrow_mut().as_mut() {
            if relid == pg_sys::InvalidOid {
                map.clear();
            } else {
                map.remove(&relid);
            }
        }
    });
}

/// The distributed table whose shard `rel` is, if it is a Citus shard.
///
/// # Safety
/// `rel` is an open relation, in a transaction.
pub(super) unsafe fn shard_of(rel: pg_sys::Relation) -> Option<Shard> {
    // SAFETY: the caller guarantees an open relation.
    let relid = unsafe { (*rel).rd_id };
    if let Some(known) = SHARDS.with(|s| s.borrow().as_ref().and_then(|m| m.get(&relid).cloned())) {
        return known;
    }
    // SAFETY: the caller guarantees `rel` is open: its rd_rel is valid, as relation_name asks.
    let (namespace, name) = unsafe { ((*(*rel).rd_rel).relnamespace, crate::catalog::relation_name(rel)) };
    let shard = lookup(namespace, &name);
    SHARDS.with(|s| {
        let mut s = s.borrow_mut();
        if s.is_none() {
            // SAFETY: registering a callback for the backend's lifetime; `forget` only touches
            // this thread-local map.
            unsafe { pg_sys::CacheRegisterRelcacheCallback(Some(forget), pg_sys::Datum::from(0)) };
        }
        s.get_or_insert_with(HashMap::new).insert(relid, shard.clone());
    });
    shard
}

/// The shard id a shard's name ends with (Citus names a shard `<table>_<shard id>`), if `name`
/// has that form.
fn shard_id(name: &str) -> Option<i64> {
    let (table, id) = name.rsplit_once('_')?;
    (!table.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then(|| id.parse().ok()).flatten()
}

/// Reads Citus's metadata: the shard id is the number after the name's last `_`, and Citus's
/// own `shard_name()` of (table, shard id) must give this relation's name.
fn lookup(namespace: pg_sys::Oid, name: &str) -> Option<Shard> {
    let shard_id = shard_id(name)?;
    if !citus_installed() {
        return None;
    }
    Spi::connect(|client| {
        if !has_catalog(client, "pg_dist_shard") {
            return None;
        }
        let rows = client
            .select(
                // Operators named with their schema too: the trigger runs with the writer's
                // search_path, which may put another schema's `=` before pg_catalog's.
                "SELECT l.relname::pg_catalog.text, pg_catalog.format('%I.%I', n.nspname, l.relname), p.partmethod::pg_catalog.text
                 FROM pg_catalog.pg_dist_shard s
                 JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid OPERATOR(pg_catalog.=) s.logicalrelid
                 JOIN pg_catalog.pg_class l ON l.oid OPERATOR(pg_catalog.=) s.logicalrelid
                 JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) l.relnamespace
                 WHERE s.shardid OPERATOR(pg_catalog.=) $1 AND l.relnamespace OPERATOR(pg_catalog.=) $2
                   AND pg_catalog.shard_name(s.logicalrelid, s.shardid)::pg_catalog.text OPERATOR(pg_catalog.=)
                       ANY (ARRAY[pg_catalog.quote_ident($3), pg_catalog.format('%I.%I', n.nspname, $3)])",
                Some(1),
                &[shard_id.into(), namespace.into(), name.into()],
            )
            .or_raise("reading Citus's shard metadata");
        if rows.is_empty() {
            return None;
        }
        let row = rows.first();
        let field = |i| row.get::<String>(i).or_raise("reading Citus's shard metadata");
        let (name, table, method) = (field(1)?, field(2)?, field(3)?);
        Some(Shard { name, table, method: method.chars().next().unwrap_or('h') })
    })
}

/// Whether a dedup trigger on `rel` lets the row through unchecked because `rel` is a Citus
/// shard placement, before any check of its own: the one place both triggers ask.
///
/// * On a shard of a hash-, range- or append-distributed table (`shard`, from [`shard_of`]) a
///   write passes if it is the coordinator's checked write ([`is_checked_write`]) or Citus
///   filling a shard it created in this transaction ([`citus_filling`]); any other write of a
///   new or changed text is refused ([`refuse_unchecked`]).
/// * A relation Citus's metadata does not list yet can still be a shard being filled: when
///   `create_distributed_table` distributes a table that has rows, Citus creates each shard and
///   copies the rows into it over connections that do not see the metadata it writes over
///   others. Those rows were checked when first written, against the whole table; checking them
///   again on one shard (which holds part of them, in the order of the copy) would replace a
///   mark-mode `dup_of` with a shard's answer, and skip or refuse rows in the other modes.
///
/// Returns false when the trigger must check the row: a plain table, or a placement of a
/// reference or Citus-local table (which holds every row).
///
/// # Safety
/// `rel` is the open relation the trigger fired on.
pub(super) unsafe fn passes_unchecked(rel: pg_sys::Relation, shard: Option<&Shard>) -> bool {
    // SAFETY: the caller guarantees `rel` is the open relation the trigger fired on, which is
    // all is_checked_write and citus_filling ask.
    unsafe {
        match shard {
            Some(shard) if shard.is_partial() => {
                if !is_checked_write(rel, &shard.table) && !citus_filling(rel, true) {
                    refuse_unchecked(shard);
                }
                true
            }
            Some(_) => false,
            None => citus_filling(rel, false),
        }
    }
}

/// Whether the write in progress on `rel` is Citus copying rows into a shard it is creating
/// (`create_distributed_table` of a table with rows; shard moves and splits): all of
///
/// * `rel` was created in this transaction (`rd_createSubid`);
/// * the writer has the rights of the relation's owner (Citus connects as the user who ran
///   `create_distributed_table`, who owns the table, or a superuser);
/// * `listed`: Citus's metadata lists `rel` as a shard. Else its name must be a shard's (a name,
///   `_`, a shard id), Citus installed, and this backend one of Citus's internal connections
///   (`application_name` `citus_internal gpid=…`, as Citus's own `IsCitusInternalBackend`).
///
/// The owner's rights are what an ordinary role never has: a writer with them could drop the
/// trigger instead (docs/dedup.md, the owner's row of the table of roles). The connection is not
/// a guarantee (any client can name itself so, and the owner's own writes that Citus routes in
/// that transaction pass too, as they do to shards it lists, docs/citus.md); it keeps a table an
/// application creates and fills in one transaction checked as usual.
///
/// # Safety
/// `rel` is an open relation.
unsafe fn citus_filling(rel: pg_sys::Relation, listed: bool) -> bool {
    // SAFETY: the caller guarantees `rel` is open, so its rd_createSubid and rd_rel are valid;
    // application_name is a GUC string (NULL or NUL-terminated) of this backend.
    unsafe {
        if (*rel).rd_createSubid == 0 {
            // InvalidSubTransactionId: not created in this transaction
            return false;
        }
        let shard_like = || {
            let app = pg_sys::application_name;
            shard_id(&crate::catalog::relation_name(rel)).is_some()
                && !app.is_null()
                && std::ffi::CStr::from_ptr(app).to_bytes().starts_with(CITUS_INTERNAL)
                && citus_installed()
        };
        pg_sys::has_privs_of_role(pg_sys::GetUserId(), (*(*rel).rd_rel).relowner) && (listed || shard_like())
    }
}

/// The `application_name` prefix of Citus's connections between nodes
/// (`CITUS_APPLICATION_NAME_PREFIX`, distributed/connection_management.h, Citus 11 and later).
const CITUS_INTERNAL: &[u8] = b"citus_internal gpid=";

/// Refuses a write on a shard of distributed table `shard` that [`passes_unchecked`] does not
/// let through: 0A000, naming the table (not the shard) and saying how to write. On the
/// coordinator, plain INSERT, COPY and text-changing UPDATEs are checked writes
/// ([`super`]), so what reaches this refusal is a write through a worker, or a
/// statement Citus sends to the shards some other way.
fn refuse_unchecked(shard: &Shard) -> ! {
    Error::new(
        Code::ERRCODE_FEATURE_NOT_SUPPORTED,
        format!("this write to distributed table {} cannot be checked for near-duplicates", shard.table),
    )
    .detail(
        "Its dedup trigger runs on each shard and sees only that shard's rows. INSERT, COPY, UPDATE and simdup_insert on the coordinator check each new or changed row against every shard; writes through a worker cannot be checked.",
    )
    .hint("Write the rows with INSERT, COPY or UPDATE on the coordinator.")
    .raise()
}

#[cfg(test)]
mod tests {
    use super::shard_id;

    /// A shard's name is its table's name, `_` and a shard id; nothing else has one.
    #[test]
    fn shard_ids() {
        assert_eq!(shard_id("docs_102008"), Some(102008));
        assert_eq!(shard_id("my_docs_7"), Some(7));
        for name in ["docs", "docs_", "_102008", "docs_-5", "docs_+5", "docs_12a", "docs_99999999999999999999"] {
            assert_eq!(shard_id(name), None, "{name}");
        }
    }
}
