//! The rows of checked writes whose transactions are in progress, as every writer on the
//! coordinator can see them: what lets a checked write wait only for a writer of a
//! near-duplicate candidate, instead of holding its lock stripes to commit.
//!
//! On one node the dedup trigger holds a row's stripes only in its check window: a later writer
//! finds an uncommitted row through the index with a dirty snapshot and waits for its writer
//! (src/dedup/window.rs). A checked write searches the shards with the workers' snapshots,
//! which see committed rows only, so until 0.4.0 it held its stripes to the end of its
//! transaction: an open transaction that had written 60 unrelated rows held most of a SimHash
//! table's 640 stripes, and every writer of the table waited for its commit. Now each checked
//! write of a row or a batch, on the coordinator ([`claim`]):
//!
//! 1. takes its stripes in a window of its own, records its rows here with the next sequence
//!    number — a SimHash row's fingerprint, a similarity row's lock values
//!    ([`simdup_core::locks::SimilarValues`]: band values, prefix shingles, containment keys,
//!    what its stripes are reduced from) — and closes the window: microseconds;
//! 2. looks here for the *earlier* records (smaller sequence numbers) of other transactions in
//!    progress that could be near-duplicates of its rows — a fingerprint within k, a lock value
//!    in common that one side takes exclusively — and waits for each one's transaction to end
//!    (`XactLockTableWait`), holding no stripe, then looks again;
//! 3. searches every shard (src/citus/checked/search.rs, probes.rs), then writes.
//!
//! The records stay until the transaction has ended and released its locks (a resource-release
//! callback after the locks): a writer that waits for one waits for the transaction's lock,
//! which PostgreSQL releases after Citus's commit callbacks have committed the workers
//! (one-phase in `XACT_EVENT_PRE_COMMIT`, two-phase in `XACT_EVENT_COMMIT`). Once the wait
//! returns, or when the record is gone, the shards show the rows.
//!
//! Why no two near-duplicates can both commit (docs/citus.md): writers T1 and T2 of rows a and
//! b that could be near-duplicates record them with sequence numbers s1 < s2, say. T2 looks for
//! earlier records after it recorded b, so after T1 recorded a: it finds a's record while T1 is
//! in progress and waits for T1's end, or T1 has ended and (committed) the shards show a to
//! T2's search, which comes after. Either way T2 sees a. T1 does not wait for T2 (a later
//! record), so two writers of one row each never deadlock: the later one waits, as a unique
//! index's second writer of a key does. Two transactions that each wrote a row and then a
//! near-duplicate of the other's wait for each other's transaction locks on the coordinator,
//! and its deadlock detector ends one (40P01), as for two crossing duplicate keys.
//!
//! The records live in shared memory: `simdup.checked_write_slots` slots (a PostgreSQL-start
//! setting), one per SimHash row and one per lock value of a similarity row (about 70 for an
//! article). Without them (simdup not in `shared_preload_libraries`, or the setting 0), or when
//! they are full, a checked write takes its stripes to the end of its transaction, as before
//! 0.4.0 (after waiting for the recorded writers of its rows' candidates): correct, less live.
//! The window of step 1 is what orders a recording writer against such a one: the window waits
//! for stripes held to commit, and a writer that holds them to commit looked for records in
//! its own window, after every record made before it.

use std::cell::{Cell, RefCell};

use pgrx::pg_sys;

use simdup_core::locks::SimilarValues;

use crate::dedup::lookup::{lock_to_commit, row_stripes, similar_stripes};
use crate::dedup::window::{self, Stripe};

/// What a checked write's rows could conflict with: their fingerprints at the table's distance,
/// or the union of their similarity lock values.
pub(crate) enum Claim {
    Fingerprints { k: u32, fps: Vec<u64> },
    Similar(SimilarValues),
}

/// A slot's kind: free, a fingerprint, or a similarity lock value of the main space or of the
/// containment-key space (exclusive or shared).
const FREE: u32 = 0;
const FINGERPRINT: u32 = 1;
const MAIN: u32 = 2;
const KEY_EXCLUSIVE: u32 = 3;
const KEY_SHARED: u32 = 4;

#[repr(C)]
#[derive(Clone, Copy)]
struct Slot {
    /// The writer's top-level transaction id.
    xid: pg_sys::TransactionId,
    /// The table's database and OID (the slots are shared by every database of the server).
    database: u32,
    relid: u32,
    kind: u32,
    value: u64,
    /// The order of the records: a writer waits only for earlier ones.
    seq: u64,
}

// 32 bytes a slot, as `simdup.checked_write_slots` documents.
const _: () = assert!(std::mem::size_of::<Slot>() == 32);

impl Claim {
    /// The lock stripes of these rows (the trigger's: two writers of near-duplicates share one).
    fn stripes(&self) -> Vec<Stripe> {
        match self {
            Claim::Fingerprints { k, fps } => fps.iter().flat_map(|&fp| row_stripes(fp as i64, *k)).collect(),
            Claim::Similar(v) => similar_stripes(&v.stripes()),
        }
    }

    fn values(&self) -> Vec<(u32, u64)> {
        match self {
            Claim::Fingerprints { fps, .. } => fps.iter().map(|&fp| (FINGERPRINT, fp)).collect(),
            Claim::Similar(v) => v
                .exclusive
                .iter()
                .map(|&x| (MAIN, x))
                .chain(v.keys_exclusive.iter().map(|&x| (KEY_EXCLUSIVE, x)))
                .chain(v.keys_shared.iter().map(|&x| (KEY_SHARED, x)))
                .collect(),
        }
    }

    /// Whether a pending row's record (`kind`, `value`) could be a near-duplicate of one of
    /// these rows: a fingerprint within k, or a shared lock value that one side takes
    /// exclusively (`SimilarValues::conflict`).
    fn meets(&self, kind: u32, value: u64) -> bool {
        let has = |v: &[u64]| v.binary_search(&value).is_ok();
        match (self, kind) {
            (Claim::Fingerprints { k, fps }, FINGERPRINT) => fps.iter().any(|&fp| (fp ^ value).count_ones() <= *k),
            (Claim::Similar(v), MAIN) => has(&v.exclusive),
            (Claim::Similar(v), KEY_EXCLUSIVE) => has(&v.keys_exclusive) || has(&v.keys_shared),
            (Claim::Similar(v), KEY_SHARED) => has(&v.keys_exclusive),
            _ => false,
        }
    }
}

/// The shared memory: a header, then the slots.
#[repr(C)]
struct Header {
    lock: *mut pg_sys::LWLock,
    slots: u32,
    /// One past the last slot in use.
    top: u32,
    /// The sequence number of the next record.
    next: u64,
}

const NAME: &std::ffi::CStr = c"simdup checked writes in progress";

static mut REGISTRY: *mut Header = std::ptr::null_mut();
static mut SLOTS: u32 = 0;
static mut PREVIOUS_STARTUP: pg_sys::shmem_startup_hook_type = None;
#[cfg(not(feature = "pg14"))]
static mut PREVIOUS_REQUEST: pg_sys::shmem_request_hook_type = None;

thread_local! {
    /// The slots this backend's transaction filled.
    static MINE: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    static CALLBACK: Cell<bool> = const { Cell::new(false) };
}

fn size(slots: u32) -> usize {
    std::mem::size_of::<Header>() + slots as usize * std::mem::size_of::<Slot>()
}

/// Asks for the shared memory, from `_PG_init` while `shared_preload_libraries` loads.
pub(crate) fn init() {
    let slots = crate::gucs::checked_write_slots();
    if slots == 0 {
        return;
    }
    // SAFETY: called once, in the postmaster, while shared_preload_libraries loads: the hooks
    // are installed before any backend starts, each chaining the one it replaces.
    unsafe {
        SLOTS = slots;
        PREVIOUS_STARTUP = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(startup);
        #[cfg(feature = "pg14")]
        request();
        #[cfg(not(feature = "pg14"))]
        {
            PREVIOUS_REQUEST = pg_sys::shmem_request_hook;
            pg_sys::shmem_request_hook = Some(request_hook);
        }
    }
}

/// # Safety
/// Called where PostgreSQL lets a library request shared memory.
unsafe fn request() {
    // SAFETY: the caller guarantees the request phase; the name is a static C string.
    unsafe {
        pg_sys::RequestAddinShmemSpace(size(SLOTS));
        pg_sys::RequestNamedLWLockTranche(NAME.as_ptr(), 1);
    }
}

#[cfg(not(feature = "pg14"))]
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn request_hook() {
    // SAFETY: PostgreSQL calls this hook in the request phase; the previous hook first.
    unsafe {
        if let Some(previous) = PREVIOUS_REQUEST {
            previous();
        }
        request();
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn startup() {
    // SAFETY: PostgreSQL calls this hook when it creates (or attaches to) shared memory, the
    // previous hook first; ShmemInitStruct under AddinShmemInitLock, as every library does; the
    // area has the size requested, and is zeroed (every slot FREE) when first created.
    unsafe {
        if let Some(previous) = PREVIOUS_STARTUP {
            previous();
        }
        let init_lock = &raw mut (*pg_sys::MainLWLockArray.add(21)).lock; // AddinShmemInitLock
        pg_sys::LWLockAcquire(init_lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        let mut found = false;
        let header = pg_sys::ShmemInitStruct(NAME.as_ptr(), size(SLOTS), &mut found).cast::<Header>();
        if !found {
            std::ptr::write_bytes(header.cast::<u8>(), 0, size(SLOTS));
            (*header).lock = &raw mut (*pg_sys::GetNamedLWLockTranche(NAME.as_ptr())).lock;
            (*header).slots = SLOTS;
        }
        REGISTRY = header;
        pg_sys::LWLockRelease(init_lock);
    }
}

/// The registry and its slots, under its lock in `mode`; None without the shared memory.
fn with_slots<R>(mode: pg_sys::LWLockMode::Type, f: impl FnOnce(&mut Header, &mut [Slot]) -> R) -> Option<R> {
    // SAFETY: REGISTRY is set by the startup hook in the postmaster (inherited by every backend)
    // or is null; the slots follow the header, `slots` of them; the LWLock guards them, and `f`
    // is plain Rust that raises no PostgreSQL error, so the lock is released on every path.
    unsafe {
        let header = REGISTRY;
        if header.is_null() {
            return None;
        }
        let slots = std::slice::from_raw_parts_mut(header.add(1).cast::<Slot>(), (*header).slots as usize);
        pg_sys::LWLockAcquire((*header).lock, mode);
        let out = f(&mut *header, slots);
        pg_sys::LWLockRelease((*header).lock);
        Some(out)
    }
}

/// Module steps 1 and 2 for the rows `claim` of a checked write into table `relid`: returns once
/// no other transaction in progress has an earlier record that `claim` meets. The caller then
/// searches the shards and writes.
pub(crate) fn claim(relid: pg_sys::Oid, claim: &Claim) {
    let stripes = claim.stripes();
    window::open_explicit(relid, stripes.clone());
    // SAFETY: REGISTRY is read only to know whether the shared memory exists.
    if unsafe { REGISTRY.is_null() } {
        // No records anywhere on this server: the stripes to commit, as before 0.4.0.
        lock_to_commit(relid, stripes);
        window::close_explicit();
        return;
    }
    // SAFETY: in a transaction that writes (a checked write): its top-level id is assigned here
    // if it has none yet, as any write would.
    let me = unsafe { pg_sys::GetTopTransactionId() };
    let mut ended: Vec<pg_sys::TransactionId> = Vec::new();
    match record(relid, me, claim) {
        Some(seq) => {
            window::close_explicit();
            loop {
                let waits = earlier(relid, me, claim, Some(seq), &ended);
                if waits.is_empty() {
                    return;
                }
                wait_for(&waits);
                ended.extend(waits);
            }
        }
        None => {
            // No room: wait, outside the window, for every recorded writer of a candidate,
            // then hold the stripes to commit.
            loop {
                let waits = earlier(relid, me, claim, None, &ended);
                if waits.is_empty() {
                    break;
                }
                window::around_wait(|| wait_for(&waits));
                ended.extend(waits);
            }
            lock_to_commit(relid, stripes);
            window::close_explicit();
        }
    }
}

/// The other transactions in progress with a record for table `relid` that `claim` meets,
/// earlier than `seq` (None: any), leaving out those in `ended`.
fn earlier(
    relid: pg_sys::Oid,
    me: pg_sys::TransactionId,
    claim: &Claim,
    seq: Option<u64>,
    ended: &[pg_sys::TransactionId],
) -> Vec<pg_sys::TransactionId> {
    let database = this_database();
    with_slots(pg_sys::LWLockMode::LW_SHARED, |header, slots| {
        let mut waits: Vec<pg_sys::TransactionId> = Vec::new();
        for s in &slots[..header.top as usize] {
            if s.kind != FREE
                && s.relid == u32::from(relid)
                && s.database == database
                && s.xid != me
                && seq.is_none_or(|seq| s.seq < seq)
                && !ended.contains(&s.xid)
                && !waits.contains(&s.xid)
                && claim.meets(s.kind, s.value)
            {
                waits.push(s.xid);
            }
        }
        waits
    })
    .unwrap_or_default()
}

/// Waits for the end of each transaction of `xids`.
fn wait_for(xids: &[pg_sys::TransactionId]) {
    for &xid in xids {
        // SAFETY: waits for the end of a transaction by its id (a share lock on its transaction
        // lock, honouring lock_timeout, deadlock detection and cancels).
        unsafe {
            pg_sys::XactLockTableWait(xid, std::ptr::null_mut(), std::ptr::null_mut(), pg_sys::XLTW_Oper::XLTW_None)
        };
    }
}

/// Records `claim` for transaction `me` until it ends, with the next sequence number (module
/// step 1); None when the shared memory has too few free slots (nothing is recorded then).
fn record(relid: pg_sys::Oid, me: pg_sys::TransactionId, claim: &Claim) -> Option<u64> {
    let values = claim.values();
    let database = this_database();
    if !CALLBACK.with(|c| c.replace(true)) {
        // SAFETY: registered once per backend; `released` stays valid for its life.
        unsafe { pg_sys::RegisterResourceReleaseCallback(Some(released), std::ptr::null_mut()) };
    }
    let (seq, filled) = with_slots(pg_sys::LWLockMode::LW_EXCLUSIVE, |header, slots| {
        let free: Vec<u32> =
            (0..slots.len() as u32).filter(|&i| slots[i as usize].kind == FREE).take(values.len()).collect();
        if free.len() < values.len() {
            return (None, Vec::new());
        }
        let seq = header.next;
        header.next += 1;
        for (&i, &(kind, value)) in free.iter().zip(&values) {
            slots[i as usize] = Slot { xid: me, database, relid: u32::from(relid), kind, value, seq };
            header.top = header.top.max(i + 1);
        }
        (Some(seq), free)
    })?;
    MINE.with(|m| m.borrow_mut().extend(filled));
    seq
}

fn this_database() -> u32 {
    // SAFETY: MyDatabaseId is set before any SQL runs.
    unsafe { u32::from(pg_sys::MyDatabaseId) }
}

/// Frees this backend's slots once its top-level transaction has released its locks.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn released(
    phase: pg_sys::ResourceReleasePhase::Type,
    _commit: bool,
    top_level: bool,
    _arg: *mut std::ffi::c_void,
) {
    if phase != pg_sys::ResourceReleasePhase::RESOURCE_RELEASE_AFTER_LOCKS || !top_level {
        return;
    }
    let mine: Vec<u32> = MINE.with(|m| std::mem::take(&mut *m.borrow_mut()));
    if mine.is_empty() {
        return;
    }
    with_slots(pg_sys::LWLockMode::LW_EXCLUSIVE, |header, slots| {
        for i in mine {
            slots[i as usize].kind = FREE;
        }
        while header.top > 0 && slots[header.top as usize - 1].kind == FREE {
            header.top -= 1;
        }
    });
}
