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
    let caller = std::thread::current();
    let running = AtomicUsize::new(0); // helpers started and not yet finished
    let mut done = std::thread::scope(|s| {
        // If `interrupt` unwinds, this stops the helpers before the scope waits for them.
        let _stop = StopOnUnwind(&stop);
        let helpers: Vec<_> = with_signals_blocked(|| {
            (1..threads.min(items.len()))
                .map_while(|_| {
                    running.fetch_add(1, Ordering::AcqRel);
                    let started = std::thread::Builder::new().name("simdup map".into()).spawn_scoped(s, || {
                        let _finished = Finished { running: &running, caller: &caller };
                        // A helper that panics stops the others too.
                        let _stop = StopOnUnwind(&stop);
                        work(&mut || {})
                    });
                    if started.is_err() {
                        running.fetch_sub(1, Ordering::AcqRel); // no more threads to be had: go on with those started
                    }
                    started.ok()
                })
                .collect()
        });
        let mut done = work(&mut *interrupt);
        while running.load(Ordering::Acquire) > 0 {
            interrupt();
            std::thread::park_timeout(Duration::from_millis(10));
        }
        for h in helpers {
            done.extend(h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        done
    });
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Sets the flag when dropped while its thread unwinds (a panic, or a callback that unwinds).
pub(crate) struct StopOnUnwind<'a>(pub(crate) &'a AtomicBool);

impl Drop for StopOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// A helper's last act, also when it panics: one fewer running, and the caller woken to see it.
pub(crate) struct Finished<'a> {
    pub(crate) running: &'a AtomicUsize,
    pub(crate) caller: &'a std::thread::Thread,
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
pub(crate) fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
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
