//! The check window of a row: the lock stripes a dedup trigger holds while it checks a row and
//! until the row's index entries are in place — and no longer, as a unique index holds its leaf
//! page's lock only across its check and its insertion.
//!
//! Until 0.3.0 a row's stripes were held to the end of its transaction. Stripes are shared by
//! unrelated rows (a stripe is a piece of the fingerprint, or a band value), so a transaction that
//! wrote a few rows, or sat open after writing them, made unrelated writers wait, and two
//! multi-row transactions deadlocked on unrelated rows. Now:
//!
//! 1. a row's window opens when its check starts ([`open`]): the stripes of the statement's
//!    previous row are released (the executor inserted that row's index entries before it fired
//!    this row's BEFORE triggers), then the row's stripes are taken in ascending order;
//! 2. the window closes when the statement checks its next row, when the statement ends (a
//!    callback on its executor memory, which PostgreSQL frees at the end of the statement, on
//!    error too) or when the transaction ends;
//! 3. before the check waits for another transaction (a candidate it is writing or deleting), it
//!    releases the window's stripes and takes them again afterwards ([`around_wait`]), as
//!    `_bt_check_unique` releases its page lock before `XactLockTableWait`.
//!
//! Why no two near-duplicates can both commit: two rows within k share a stripe (pigeonhole;
//! for similarity, a band or prefix stripe), so their windows never overlap. The later window
//! opens after the earlier row's index entries are in place, and its search with a dirty
//! snapshot sees that row, committed or in progress (then it waits for its writer's end and
//! searches again). A row that is out of its window is found through the index, as a unique
//! index finds an in-progress key. docs/dedup.md, "Under concurrency", has the whole argument.
//!
//! What it gives: a writer waits for another only for the few milliseconds of that writer's
//! window on a stripe they share, or for the whole transaction of a writer of a near-duplicate
//! candidate of its row (as for a duplicate key); an open transaction holds no stripe. A backend
//! holds the stripes of one row at a time (and of a row of each enclosing statement, when a
//! trigger of its own inserts into the table while a row is pending), taken in one order, and
//! never waits for a transaction while holding them: unrelated writers do not deadlock.
//!
//! The stripes are session locks (released here, and at the end of the transaction in every
//! case, by a transaction callback), so that a window can close whichever resource owner is
//! current: a statement's end runs under its portal's.

use std::cell::{Cell, RefCell};

use pgrx::pg_sys;
use pgrx::{register_xact_callback, PgXactCallbackEvent};

/// One lock of a window: a stripe of a lock class (simdup's own advisory lock field 4), taken
/// exclusively or shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Stripe {
    pub class: u16,
    pub stripe: u32,
    pub exclusive: bool,
}

struct Window {
    /// The executor memory of the statement that checks the row (null: unknown; the window
    /// then closes with the transaction or the statement's next row).
    context: pg_sys::MemoryContext,
    relid: pg_sys::Oid,
    stripes: Vec<Stripe>,
}

thread_local! {
    static WINDOWS: RefCell<Vec<Window>> = const { RefCell::new(Vec::new()) };
    /// Whether this transaction has the callback that closes every window at its end.
    static AT_END: Cell<bool> = const { Cell::new(false) };
    /// The statements' executor memories that have the callback closing their windows (one
    /// callback a statement, however many rows it checks).
    static WATCHED: RefCell<Vec<pg_sys::MemoryContext>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn tag(relid: pg_sys::Oid, s: &Stripe) -> pg_sys::LOCKTAG {
    // SAFETY: MyDatabaseId is set before any SQL runs.
    let database = unsafe { u32::from(pg_sys::MyDatabaseId) };
    pg_sys::LOCKTAG {
        locktag_field1: database,
        locktag_field2: u32::from(relid),
        locktag_field3: s.stripe,
        locktag_field4: s.class,
        locktag_type: pg_sys::LockTagType::LOCKTAG_ADVISORY as u8,
        locktag_lockmethodid: pg_sys::USER_LOCKMETHOD as u8,
    }
}

pub(crate) fn mode(s: &Stripe) -> pg_sys::LOCKMODE {
    (if s.exclusive { pg_sys::ExclusiveLock } else { pg_sys::ShareLock }) as pg_sys::LOCKMODE
}

/// Takes stripe `s` as a session lock: waits, honouring lock_timeout, deadlock detection and
/// cancels.
fn take(relid: pg_sys::Oid, s: &Stripe) {
    // SAFETY: LockAcquire with a fully initialised tag of the user lock method, as
    // pg_advisory_lock does for a session lock.
    unsafe { pg_sys::LockAcquire(&tag(relid, s), mode(s), true, false) };
}

/// Releases session locks taken by [`take`]. Cannot fail (a lock not held gives a WARNING).
fn release(relid: pg_sys::Oid, stripes: &[Stripe]) {
    for s in stripes.iter().rev() {
        // SAFETY: LockRelease with a fully initialised tag of the user lock method, the mode and
        // session flag `take` used, as pg_advisory_unlock does; a lock not held only warns.
        unsafe { pg_sys::LockRelease(&tag(relid, s), mode(s), true) };
    }
}

/// The executor memory of the statement whose row trigger is running: the parent of the
/// per-tuple context the trigger manager calls a row trigger in (an executor's per-tuple
/// contexts are children of its `es_query_cxt`).
pub(crate) fn statement_context() -> Option<pg_sys::MemoryContext> {
    // SAFETY: CurrentMemoryContext is always a valid context in a backend.
    let parent = unsafe { (*pg_sys::CurrentMemoryContext).parent };
    (!parent.is_null()).then_some(parent)
}

/// Closes every window of the statement whose executor memory is `context`.
fn close_in(context: pg_sys::MemoryContext) {
    let closed: Vec<Window> = WINDOWS.with(|w| match w.try_borrow_mut() {
        Ok(mut w) => {
            let (gone, kept): (Vec<Window>, Vec<Window>) = w.drain(..).partition(|x| x.context == context);
            *w = kept;
            gone
        }
        Err(_) => Vec::new(),
    });
    for w in closed {
        release(w.relid, &w.stripes);
    }
}

/// A memory context callback: the statement whose executor memory this is has ended.
unsafe extern "C-unwind" fn statement_ended(arg: *mut std::ffi::c_void) {
    let context = arg as pg_sys::MemoryContext;
    WATCHED.with(|w| {
        if let Ok(mut w) = w.try_borrow_mut() {
            w.retain(|&c| c != context);
        }
    });
    close_in(context);
}

/// Closes every window (the end of the transaction).
fn close_all() {
    let closed: Vec<Window> =
        WINDOWS.with(|w| w.try_borrow_mut().map(|mut w| w.drain(..).collect()).unwrap_or_default());
    for w in closed {
        release(w.relid, &w.stripes);
    }
    AT_END.with(|a| a.set(false));
}

/// Closes the window of the running statement's previous row, if it has one: called for every
/// row a dedup trigger fires on, so that a row that opens no window of its own (featureless,
/// unchanged, or cleared by the bulk check's copy) ends the previous row's too.
pub(crate) fn close_previous() {
    if let Some(context) = statement_context() {
        close_in(context);
    }
}

/// Opens the window of a row of table `relid` that the running statement checks: closes the
/// statement's previous row's window, then takes `stripes` in ascending order (see the module).
pub(crate) fn open(relid: pg_sys::Oid, stripes: Vec<Stripe>) {
    let context = statement_context().unwrap_or(std::ptr::null_mut());
    let first = !context.is_null() && WATCHED.with(|w| !w.borrow().contains(&context));
    if first {
        // SAFETY: the statement's executor memory, passed to `statement_ended` as the context
        // it is registered on (called at the end of the statement, on error too).
        unsafe { crate::catalog::on_reset(context, statement_ended, context.cast()) };
        WATCHED.with(|w| w.borrow_mut().push(context));
    }
    open_in(context, relid, stripes);
}

/// Closes the windows keyed by `context`, then opens one of `stripes` under that key, taken in
/// ascending order; the end of the transaction closes it in any case.
fn open_in(context: pg_sys::MemoryContext, relid: pg_sys::Oid, mut stripes: Vec<Stripe>) {
    stripes.sort_unstable();
    stripes.dedup();
    close_in(context);
    if !AT_END.with(|a| a.replace(true)) {
        for event in [PgXactCallbackEvent::Commit, PgXactCallbackEvent::Abort, PgXactCallbackEvent::Prepare] {
            register_xact_callback(event, close_all);
        }
    }
    enter(context, relid, stripes);
}

/// The key of the windows a caller closes itself ([`open_explicit`], [`close_explicit`]): no
/// memory context has this address.
static EXPLICIT: u8 = 0;

fn explicit() -> pg_sys::MemoryContext {
    (&raw const EXPLICIT).cast_mut().cast()
}

/// Opens a window of table `relid` that its caller closes with [`close_explicit`], or the end of
/// the transaction: takes `stripes` in ascending order. The Citus checked write holds one around
/// the record of its rows (src/citus/checked/pending.rs), outside any row trigger.
pub(crate) fn open_explicit(relid: pg_sys::Oid, stripes: Vec<Stripe>) {
    open_in(explicit(), relid, stripes);
}

/// Closes the window [`open_explicit`] opened, if it is still open.
pub(crate) fn close_explicit() {
    close_in(explicit());
}

/// Pushes a window of `stripes` (ascending) and takes them. Each stripe is recorded once it is
/// granted: a lock wait that ends in an error leaves in the window only what was taken, which
/// the statement's or the transaction's end releases.
fn enter(context: pg_sys::MemoryContext, relid: pg_sys::Oid, stripes: Vec<Stripe>) {
    WINDOWS.with(|w| w.borrow_mut().push(Window { context, relid, stripes: Vec::with_capacity(stripes.len()) }));
    for s in stripes {
        take(relid, &s);
        WINDOWS.with(|w| {
            if let Some(last) = w.borrow_mut().last_mut() {
                last.stripes.push(s);
            }
        });
    }
}

/// Runs `wait` (a wait for another transaction's end) outside the current row's window: its
/// stripes are released first and taken again afterwards, so that a writer never waits for a
/// transaction while holding stripes (which unrelated writers may want).
pub(crate) fn around_wait(wait: impl FnOnce()) {
    let current = WINDOWS.with(|w| w.borrow_mut().pop());
    if let Some(w) = &current {
        release(w.relid, &w.stripes);
    }
    wait();
    if let Some(Window { context, relid, stripes }) = current {
        enter(context, relid, stripes);
    }
}
