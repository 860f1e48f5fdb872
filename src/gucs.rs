//! Configuration parameters (`simdup.*`). The statics are private; read them with the getters.

use std::ffi::{CStr, CString};

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting, PostgresGucEnum};

/// `simdup.bulk_check`: when the dedup trigger checks a statement's rows against a copy of the
/// table's fingerprints in memory (src/dedup/bulk.rs).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum BulkCheck {
    /// Once the statement has checked enough rows that loading costs less than their lookups.
    #[name = c"auto"]
    Auto,
    /// From the statement's first row.
    #[name = c"on"]
    On,
    /// Never.
    #[name = c"off"]
    Off,
}

static MAX_DISTANCE: GucSetting<i32> = GucSetting::<i32>::new(simdup_core::DEFAULT_MAX_DISTANCE as i32);
static INDEX_SEARCH: GucSetting<bool> = GucSetting::<bool>::new(true);
static PAGE_READER: GucSetting<bool> = GucSetting::<bool>::new(true);
static CHECKED_WRITE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static BATCH_THREADS: GucSetting<i32> = GucSetting::<i32>::new(-1);
static BATCH_MEMORY: GucSetting<i32> = GucSetting::<i32>::new(256 * 1024);
static BULK_CHECK: GucSetting<BulkCheck> = GucSetting::<BulkCheck>::new(BulkCheck::Auto);
static BULK_CHECK_MEMORY: GucSetting<i32> = GucSetting::<i32>::new(512 * 1024);
static COPY_BATCH_MEMORY: GucSetting<i32> = GucSetting::<i32>::new(128 * 1024);
static MEMORY_LIMIT: GucSetting<i32> = GucSetting::<i32>::new(1024 * 1024);
static SIMILAR_VERIFY_LIMIT: GucSetting<i32> =
    GucSetting::<i32>::new(simdup_core::similarity::candidates::DEFAULT_VERIFY_LIMIT as i32);
static CHECKED_WRITE_SLOTS: GucSetting<i32> = GucSetting::<i32>::new(131_072);

/// Registers the parameters. Called once from `_PG_init`.
pub fn init() {
    GucRegistry::define_int_guc(
        c"simdup.max_distance",
        c"Default maximum Hamming distance between near-duplicate SimHash fingerprints.",
        c"Used where a function's max_distance argument is omitted. Chosen by measurement on real Chinese and English news; see the README.",
        &MAX_DISTANCE,
        0,
        64,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"simdup.index_search",
        c"Lets the planner serve hamming(fp, q) <= k with simdup's block indexes.",
        c"When on, a scan with such a condition on a column with simdup block indexes may use a Tid Scan over _simdup_tids; the condition stays as its filter. Off: plans as without simdup.",
        &INDEX_SEARCH,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"simdup.page_reader",
        c"Reads simdup's key indexes page by page instead of through the B-tree access method.",
        c"Both find the same rows (the same snapshot, the same HOT handling); on is faster. Off exists to compare the two and as a way around a fault of the page reader.",
        &PAGE_READER,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"simdup.checked_write",
        c"Internal: the distributed table simdup_insert is writing (set by simdup_insert only).",
        c"simdup_insert sets it with SET LOCAL, which Citus propagates to the workers; the dedup trigger on a shard of a distributed table lets a write through only while it names that table and the writer has the table owner's rights (simdup_insert writes as the owner). It lets no other role skip the check.",
        &CHECKED_WRITE,
        GucContext::Userset,
        GucFlags::NO_SHOW_ALL,
    );
    GucRegistry::define_int_guc(
        c"simdup.batch_threads",
        c"Threads with which simdup_pairs and simdup_groups compare fingerprints, the backend's own included.",
        c"-1 (default): max_parallel_workers_per_gather + 1; 0 or 1: the backend alone, no thread; never more than the CPUs available. Threads of the backend, not parallel workers: they count against neither max_worker_processes nor max_parallel_workers.",
        &BATCH_THREADS,
        -1,
        64,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"simdup.batch_memory",
        c"Memory simdup_pairs and simdup_groups may use for the pairs of near-duplicate fingerprints they find.",
        c"16 bytes a pair. A call that finds more pairs stops with SQLSTATE 54000 before it uses more; raise this setting, or lower k.",
        &BATCH_MEMORY,
        1024,
        i32::MAX,
        GucContext::Userset,
        GucFlags::UNIT_KB,
    );
    GucRegistry::define_enum_guc(
        c"simdup.bulk_check",
        c"When the dedup trigger checks a statement's rows against the table's fingerprints loaded into memory.",
        c"auto (default): once a statement (INSERT ... SELECT, COPY, a multi-row INSERT) has checked so many rows that loading the table's fingerprints costs less than looking its rows up in the block indexes, at the earliest after 100 rows; on: from its first row; off: never. Loading takes SHARE ROW EXCLUSIVE on the table (readers do not wait; another writer waits for one row's check at most: the statement then gives the lock and its copy up), only when it is free at once and the role may LOCK the table in that mode (UPDATE, DELETE or TRUNCATE privilege); otherwise the rows are looked up one by one. The answers are the same either way.",
        &BULK_CHECK,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"simdup.bulk_check_memory",
        c"Memory the dedup trigger's bulk check may use for a table's fingerprints.",
        c"Up to 160 bytes a stored row: 8 for each of up to 8 blocks, twice while the copy is rebuilt with the statement's rows, and 16 for the row's fingerprint and tid. A table estimated to need more is checked row by row.",
        &BULK_CHECK_MEMORY,
        1024,
        i32::MAX,
        GucContext::Userset,
        GucFlags::UNIT_KB,
    );
    GucRegistry::define_int_guc(
        c"simdup.copy_batch_memory",
        c"Rows a COPY into a dedup table writes by one INSERT, in bytes of rows.",
        c"A COPY read ahead for the bulk check holds two batches (the one written and the next, whose texts are fingerprinted meanwhile) and a copy of the next one's texts. Smaller batches use less memory; each batch's INSERT loads the table's fingerprints once.",
        &COPY_BATCH_MEMORY,
        8,
        1024 * 1024,
        GucContext::Userset,
        GucFlags::UNIT_KB,
    );
    GucRegistry::define_int_guc(
        c"simdup.memory_limit",
        c"The most memory any of simdup.batch_memory, simdup.bulk_check_memory and simdup.copy_batch_memory gives a statement, whatever a role sets them to.",
        c"Those three are user-settable (a role may lower them for its own statements); each is used at most up to this ceiling, which only a superuser can change (ALTER SYSTEM, ALTER DATABASE / ROLE ... SET, postgresql.conf).",
        &MEMORY_LIMIT,
        1024,
        i32::MAX,
        GucContext::Suset,
        GucFlags::UNIT_KB,
    );
    GucRegistry::define_int_guc(
        c"simdup.similar_verify_limit",
        c"The most stored rows the similarity dedup check verifies for one row.",
        c"When more stored rows share LSH band values (or containment keys) with a new row, the check verifies those sharing the most, the smaller keys first among equals, so that a family of texts with a long common part costs each insert a bounded time. A near-duplicate is then missed only when at least this many other candidates share as many values with the new row (docs/dedup.md). 64 by default; 0: no limit. Only a superuser can change it. The Citus checked write chooses as one node does.",
        &SIMILAR_VERIFY_LIMIT,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    let prefix: &CStr = c"simdup";
    // SAFETY: called from _PG_init, in the backend's main thread.
    unsafe { crate::compat::reserve_guc_prefix(prefix) };
}

/// `simdup.max_distance`.
pub fn max_distance() -> i32 {
    MAX_DISTANCE.get()
}

/// `simdup.index_search`.
pub fn index_search() -> bool {
    INDEX_SEARCH.get()
}

/// `simdup.page_reader`: read the key indexes with src/search/btree/.
pub fn page_reader() -> bool {
    PAGE_READER.get()
}

/// `simdup.checked_write`: the table `simdup_insert` is writing, if any.
pub fn checked_write() -> Option<String> {
    CHECKED_WRITE.get().map(|s| s.to_string_lossy().into_owned()).filter(|s| !s.is_empty())
}

/// `simdup.batch_threads`, resolved to a thread count: -1 follows
/// `max_parallel_workers_per_gather` (the workers a parallel query may add to its backend, plus
/// the backend); 0 and 1 are the backend alone; never more than the CPUs this process may use.
pub fn batch_threads() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let wanted = match BATCH_THREADS.get() {
        // SAFETY: a plain int GUC of PostgreSQL, read in the backend's thread.
        -1 => unsafe { pgrx::pg_sys::max_parallel_workers_per_gather }.max(0) as usize + 1,
        n => n.max(1) as usize,
    };
    wanted.min(cpus)
}

/// A memory setting in kB, in bytes, capped by `simdup.memory_limit` (superuser-only): the one
/// place every memory setting passes through.
fn capped(kb: i32) -> usize {
    kb.clamp(0, MEMORY_LIMIT.get().max(0)) as usize * 1024
}

/// `simdup.batch_memory`, in bytes (at most `simdup.memory_limit`).
pub fn batch_memory() -> usize {
    capped(BATCH_MEMORY.get())
}

/// `simdup.bulk_check`.
pub fn bulk_check() -> BulkCheck {
    BULK_CHECK.get()
}

/// `simdup.bulk_check_memory`, in bytes (at most `simdup.memory_limit`).
pub fn bulk_check_memory() -> usize {
    capped(BULK_CHECK_MEMORY.get())
}

/// Registers the parameters that exist only when simdup is in `shared_preload_libraries` (set
/// at server start: PostgreSQL refuses to create them later). Called from `_PG_init` then.
pub fn init_preloaded() {
    GucRegistry::define_int_guc(
        c"simdup.checked_write_slots",
        c"Slots in shared memory for the rows of Citus checked writes whose transactions are in progress.",
        c"A checked write records each row it writes (one slot a SimHash row, one a lock value of a similarity row, about 70 for an article) instead of holding its lock stripes to commit; later writers wait only for a transaction with an earlier record of a near-duplicate candidate. When the slots are full, or simdup is not in shared_preload_libraries, or this is 0, a checked write holds its stripes until its transaction ends. 32 bytes a slot; set at server start; exists only with simdup in shared_preload_libraries.",
        &CHECKED_WRITE_SLOTS,
        0,
        1 << 26,
        GucContext::Postmaster,
        GucFlags::default(),
    );
}

/// `simdup.copy_batch_memory`, in bytes (at least 8 kB, at most `simdup.memory_limit`).
pub fn copy_batch_memory() -> usize {
    capped(COPY_BATCH_MEMORY.get()).max(8 * 1024)
}

/// `simdup.checked_write_slots` (server start): the slots of src/citus/checked/pending.rs.
pub fn checked_write_slots() -> u32 {
    CHECKED_WRITE_SLOTS.get().max(0) as u32
}

/// `simdup.similar_verify_limit` (superuser-only, 64 by default): the most candidates the
/// similarity dedup check verifies for one row; 0, no limit (simdup_core::similarity::candidates).
pub fn similar_verify_limit() -> usize {
    SIMILAR_VERIFY_LIMIT.get().max(0) as usize
}
