//! Independent simulations on scoped OS threads, results in input order.
//!
//! Every in-process driver (the CLI's search, sweep, replications, schedule, disaggregated
//! sizing and calibration) spreads its jobs with [`map_in_order`]. Items are dealt out
//! round-robin, so each thread gets a mix of cheap and costly jobs (low and high rates,
//! short and long hours), and the answer never depends on the number of threads.

use super::SimError;

/// Most threads a driver starts, whatever the caller asks for.
pub const MAX_THREADS: usize = 64;

/// The error a driver reports when one of its threads panicked: a defect, said plainly
/// rather than taking the whole process down.
pub fn thread_lost() -> SimError {
    SimError::Config {
        field: "worker",
        message: "a simulation thread stopped unexpectedly",
    }
}

/// Threads the in-process drivers use: the machine's parallelism (1 on wasm).
pub fn default_threads() -> usize {
    if cfg!(target_arch = "wasm32") {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// `f` of every item, in the items' order, on up to `threads` threads (1, or wasm, where
/// there are no threads: the calling thread). Each thread stops at its first error; the
/// error returned is that of the earliest item that failed, as a sequential run would
/// return. A thread that panics turns into [`thread_lost`].
pub fn map_in_order<T, R, E, F>(items: &[T], threads: usize, f: F) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send + From<SimError>,
    F: Fn(&T) -> Result<R, E> + Sync,
{
    let threads = if cfg!(target_arch = "wasm32") {
        1
    } else {
        threads.clamp(1, MAX_THREADS).min(items.len())
    };
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    // Thread t takes items t, t + threads, t + 2·threads, … and returns its results up to
    // its first error, with that error's item index.
    type Part<R, E> = (Vec<R>, Option<(usize, E)>);
    let parts: Vec<Option<Part<R, E>>> = std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut done = Vec::with_capacity(items.len() / threads + 1);
                    for k in (t..items.len()).step_by(threads) {
                        match f(&items[k]) {
                            Ok(r) => done.push(r),
                            Err(e) => return (done, Some((k, e))),
                        }
                    }
                    (done, None)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().ok()).collect()
    });
    let mut first_error: Option<(usize, E)> = None;
    let mut columns = Vec::with_capacity(threads);
    for part in parts {
        let Some((done, error)) = part else {
            return Err(thread_lost().into());
        };
        if let Some((k, e)) = error {
            if first_error.as_ref().is_none_or(|(j, _)| k < *j) {
                first_error = Some((k, e));
            }
        }
        columns.push(done.into_iter());
    }
    if let Some((_, e)) = first_error {
        return Err(e);
    }
    // No thread failed, so every thread returned all of its items: interleave them back.
    let mut out = Vec::with_capacity(items.len());
    for k in 0..items.len() {
        match columns[k % threads].next() {
            Some(r) => out.push(r),
            None => return Err(thread_lost().into()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square_or_fail(x: &u32) -> Result<u64, SimError> {
        if *x >= 1000 {
            return Err(SimError::Config {
                field: "x",
                message: if *x == 1000 { "first" } else { "later" },
            });
        }
        Ok(u64::from(*x) * u64::from(*x))
    }

    #[test]
    fn results_come_back_in_input_order_on_any_number_of_threads() {
        let items: Vec<u32> = (0..37).collect();
        let sequential: Vec<u64> = items.iter().map(|x| square_or_fail(x).unwrap()).collect();
        for threads in [0, 1, 2, 3, 5, 8, 37, 100, 1000] {
            let got = map_in_order(&items, threads, square_or_fail).expect("no error");
            assert_eq!(got, sequential, "threads {threads}");
        }
        let none: Vec<u64> = map_in_order(&[], 4, square_or_fail).expect("empty");
        assert!(none.is_empty());
    }

    #[test]
    fn the_earliest_failing_item_gives_the_error() {
        // Item 10 fails with "first"; later items (on other threads too) with "later".
        let mut items: Vec<u32> = (0..40).collect();
        items[10] = 1000;
        for k in [11, 13, 22, 39] {
            items[k] = 1001;
        }
        for threads in [1, 2, 3, 4, 7] {
            let err = map_in_order(&items, threads, square_or_fail).expect_err("fails");
            assert_eq!(
                err,
                SimError::Config {
                    field: "x",
                    message: "first"
                },
                "threads {threads}"
            );
        }
    }

    #[test]
    fn a_panicking_thread_is_an_error_not_a_crash() {
        let items: Vec<u32> = (0..8).collect();
        let err = map_in_order(&items, 4, |x: &u32| -> Result<u32, SimError> {
            if *x == 5 {
                panic!("a defect in one job");
            }
            Ok(*x)
        })
        .expect_err("the panic is reported");
        assert_eq!(err, thread_lost());
    }
}
