//! Work on several threads of the calling process, for a caller (a PostgreSQL backend) that must
//! keep answering its own interrupts: helper threads start with every signal blocked, only the
//! calling thread runs the caller's [`Interrupt`], and if that unwinds (a cancel, a statement
//! timeout) the helpers stop at their next item before the unwinding goes on.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::Interrupt;

/// `f` of every item, in the items' order, computed on up to `threads` threads (the calling
/// one included; 0 and 1 mean the calling thread alone). `interrupt` is called on the calling
/// thread between its items and while it waits for the helpers; a helper that panics makes
/// the call panic.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    interrupt: Interrupt<'_>,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // Takes items one at a time until none is left or the work stops: (index, result) each.
    let work = |between: &mut dyn FnMut()| {
        let mut done = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= items.len() {
                break;
            }
            done.push((i, f(&items[i])));
            between();
        }
        done
    };
    let helpers = threads.min(items.len()).saturating_sub(1);
    let mut done: Vec<_> =
        with_helpers("simdup map", helpers, &stop, || work(&mut || {}), interrupt, |i| work(i), |i| i())
            .into_iter()
            .flatten()
            .collect();
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// [`map`] of `items` on threads of its own, begun now while the caller goes on with other work
/// (a backend writing one batch of rows while the next batch's texts are fingerprinted): every
/// thread starts with every signal blocked and never calls the caller's [`Interrupt`].
/// [`Background::wait`] gives the items back with their results; dropping it unwaited stops the
/// threads at their next item and waits for them, so a caller that errors out leaves no thread
/// running (each item should be short: the wait is one item's time).
pub struct Background<T, R> {
    stop: std::sync::Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Returned<T, R>>>,
}

/// What a background map's thread returns: the items, and each one's result (None once
/// stopped).
type Returned<T, R> = (Vec<T>, Vec<Option<R>>);

/// Begins `f` of every item of `items` on up to `threads` threads (at least one, not the
/// caller's). None when no thread can be started: the caller computes them itself.
pub fn map_in_background<T, R>(
    items: Vec<T>,
    threads: usize,
    f: impl Fn(&T) -> R + Send + Sync + 'static,
) -> Option<Background<T, R>>
where
    T: Send + Sync + 'static,
    R: Send + 'static,
{
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let caller = std::thread::current();
    let stop_in = stop.clone();
    let handle = with_signals_blocked(|| {
        std::thread::Builder::new().name("simdup ahead".into()).spawn(move || {
            // The caller is woken when the work ends, however it ends.
            struct Wake(std::thread::Thread);
            impl Drop for Wake {
                fn drop(&mut self) {
                    self.0.unpark();
                }
            }
            let _wake = Wake(caller);
            // Stopped items give None (the caller dropped the work and does not read them).
            let out = map(&items, threads.max(1), &mut || {}, |x| (!stop_in.load(Ordering::Relaxed)).then(|| f(x)));
            (items, out)
        })
    })
    .ok()?;
    Some(Background { stop, handle: Some(handle) })
}

impl<T, R> Background<T, R> {
    /// The items and each one's result, once every thread has finished; `interrupt` is called
    /// on the calling thread while it waits (and may unwind: the threads are then stopped).
    /// A thread that panicked makes this panic.
    pub fn wait(mut self, interrupt: Interrupt<'_>) -> (Vec<T>, Vec<R>) {
        while self.handle.as_ref().is_some_and(|h| !h.is_finished()) {
            interrupt();
            std::thread::park_timeout(Duration::from_millis(10));
        }
        let handle = self.handle.take().expect("waited once");
        let (items, out) = handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let out = out.into_iter().map(|r| r.expect("nothing stopped a background map that was waited for")).collect();
        (items, out)
    }
}

impl<T, R> Drop for Background<T, R> {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            self.stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
    }
}

/// Runs `own` on the calling thread and `helper` on up to `helpers` threads of their own (named
/// `name`, started with every signal blocked; fewer when no more can be started), then waits for
/// the helpers, calling `waiting` on the calling thread meanwhile (every 10 ms, and as each one
/// finishes). Returns what `own` returned, then what each helper returned. `own` and `waiting`
/// get `caller`, the calling thread's own state (its interrupt). `stop` is set when the calling
/// thread unwinds (an interrupt that unwinds) or a helper panics, for the work to stop at its
/// next item before the unwinding goes on; a helper's panic is resumed on the calling thread.
pub(crate) fn with_helpers<C: ?Sized, P: Send>(
    name: &str,
    helpers: usize,
    stop: &AtomicBool,
    helper: impl Fn() -> P + Sync,
    caller: &mut C,
    own: impl FnOnce(&mut C) -> P,
    mut waiting: impl FnMut(&mut C),
) -> Vec<P> {
    let wake = std::thread::current();
    let running = AtomicUsize::new(0); // helpers started and not yet finished
    std::thread::scope(|s| {
        // If `own` or `waiting` unwinds, this stops the helpers before the scope waits for them.
        let _stop = StopOnUnwind(stop);
        let handles: Vec<_> = with_signals_blocked(|| {
            (0..helpers)
                .map_while(|_| {
                    running.fetch_add(1, Ordering::AcqRel);
                    let started = std::thread::Builder::new().name(name.into()).spawn_scoped(s, || {
                        let _finished = Finished { running: &running, caller: &wake };
                        // A helper that panics stops the others too.
                        let _stop = StopOnUnwind(stop);
                        helper()
                    });
                    if started.is_err() {
                        running.fetch_sub(1, Ordering::AcqRel); // no more threads to be had: go on with those started
                    }
                    started.ok()
                })
                .collect()
        });
        let mut all = vec![own(caller)];
        while running.load(Ordering::Acquire) > 0 {
            waiting(caller);
            std::thread::park_timeout(Duration::from_millis(10));
        }
        for h in handles {
            all.push(h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        all
    })
}

/// Sets the flag when dropped while its thread unwinds (a panic, or a callback that unwinds).
struct StopOnUnwind<'a>(&'a AtomicBool);

impl Drop for StopOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// A helper's last act, also when it panics: one fewer running, and the caller woken to see it.
struct Finished<'a> {
    running: &'a AtomicUsize,
    caller: &'a std::thread::Thread,
}

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.running.fetch_sub(1, Ordering::AcqRel);
        self.caller.unpark();
    }
}

/// Runs `f` (which starts threads) with every signal blocked in the calling thread, so the
/// threads started inherit a mask that blocks them all; the caller's mask is restored after,
/// also if `f` unwinds. Process signals then reach the calling thread only.
fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    #[cfg(unix)]
    {
        struct Restore(libc::sigset_t);
        impl Drop for Restore {
            fn drop(&mut self) {
                // SAFETY: restores the mask saved below.
                unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
            }
        }
        // SAFETY: plain sigset_t values, filled by the libc calls before use.
        let _restore = unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
            Restore(old)
        };
        f()
    }
    #[cfg(not(unix))]
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_in_order_on_any_thread_count() {
        let items: Vec<u64> = (0..1000).collect();
        for threads in [0, 1, 2, 3, 8] {
            let mut calls = 0;
            let out = map(&items, threads, &mut || calls += 1, |&x| x * x + 1);
            assert_eq!(out, items.iter().map(|&x| x * x + 1).collect::<Vec<_>>(), "threads {threads}");
            assert!(calls > 0 || threads > 1);
        }
        assert!(map(&[] as &[u64], 4, &mut || {}, |&x| x).is_empty());
    }

    #[test]
    fn an_unwinding_interrupt_stops_the_helpers() {
        let items: Vec<u64> = (0..100_000).collect();
        let seen = AtomicUsize::new(0);
        let mut n = 0;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            map(
                &items,
                3,
                &mut || {
                    n += 1;
                    if n == 10 {
                        panic!("cancel");
                    }
                },
                |&x| {
                    seen.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_micros(50));
                    x
                },
            )
        }));
        assert!(r.is_err());
        // The helpers stopped long before the end.
        assert!(seen.load(Ordering::Relaxed) < items.len() / 2);
    }

    #[test]
    fn a_background_map_gives_the_items_and_their_results() {
        for threads in [0, 1, 2, 4] {
            let items: Vec<String> = (0..500).map(|i| format!("item {i}")).collect();
            let work = map_in_background(items.clone(), threads, |s: &String| s.len()).expect("a thread");
            let mut calls = 0;
            let (back, lens) = work.wait(&mut || calls += 1);
            assert_eq!(back, items);
            assert_eq!(lens, items.iter().map(String::len).collect::<Vec<_>>());
        }
        let (none, out) = map_in_background(Vec::<u8>::new(), 2, |&x| x).expect("a thread").wait(&mut || {});
        assert!(none.is_empty() && out.is_empty());
    }

    #[test]
    fn a_dropped_background_map_stops_at_its_next_item() {
        let seen = std::sync::Arc::new(AtomicUsize::new(0));
        let s = seen.clone();
        let items: Vec<u64> = (0..100_000).collect();
        let work = map_in_background(items, 2, move |&x| {
            s.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_micros(50));
            x
        })
        .expect("a thread");
        std::thread::sleep(Duration::from_millis(20));
        drop(work); // returns once the threads have stopped
        let after = seen.load(Ordering::Relaxed);
        assert!(after < 100_000 / 2, "stopped early: {after}");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(seen.load(Ordering::Relaxed), after, "no thread still running");
    }

    #[test]
    fn a_panicking_background_item_panics_the_wait() {
        let work = map_in_background((0..64u64).collect(), 2, |&x| {
            if x == 40 {
                panic!("item 40");
            }
            x
        })
        .expect("a thread");
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work.wait(&mut || {}))).is_err());
    }

    #[test]
    fn a_panicking_helper_makes_the_call_panic() {
        let items: Vec<u64> = (0..64).collect();
        let r = std::panic::catch_unwind(|| {
            map(&items, 4, &mut || {}, |&x| {
                if x == 40 {
                    panic!("item 40");
                }
                x
            })
        });
        assert!(r.is_err());
    }
}
