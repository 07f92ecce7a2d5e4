//! The reduction across data-parallel replicas (SPEC R9, R17).
//!
//! [`Reducer`] is the small collective interface the group loop needs: a
//! count all-reduce (to fix the group's global denominator before the first
//! backward pass, R5), one gradient all-reduce per group after the last
//! microbatch (no synchronisation for the first `A − 1`), and abort. Both
//! all-reduces *sum*: every replica already weighted its tokens by the
//! global denominator, so the sum is exactly the large-batch gradient,
//! whatever the token counts per replica. (The usual "average over D"
//! equals this sum when each replica divides by `N/D`; with unequal token
//! counts only the global denominator is right.)
//!
//! [`InProcess`] implements it for replicas that are threads of one process
//! (the default); `mpi::Mpi` (cargo feature `mpi`) implements it with one
//! process per replica. A backend says which ranks run in this process
//! ([`Reducer::local_ranks`]); the engine runs those and learns what the
//! others did through [`Reducer::all_gather`] (the example ids they really
//! loaded, R9, and their loss sums and counters for the report).

use std::fmt;
use std::ops::Range;
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::tensor::Tensors;

/// A collective failed because a replica aborted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReduceError {
    /// Why the collective was aborted.
    pub reason: String,
}

impl fmt::Display for ReduceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the reduction was aborted: {}", self.reason)
    }
}

impl std::error::Error for ReduceError {}

/// Collectives across the `D` data-parallel replicas of one group.
/// Every replica calls each collective once per group, in the same order.
pub trait Reducer: Sync {
    /// `D`.
    fn replicas(&self) -> usize;

    /// Element-wise sum of `counts` over all replicas, written back to every
    /// replica's `counts`.
    fn all_reduce_counts(&self, rank: usize, counts: &mut [u64]) -> Result<(), ReduceError>;

    /// Element-wise sum of `grads` over all replicas, written back to every
    /// replica's `grads`.
    fn all_reduce_grads(&self, rank: usize, grads: &mut Tensors) -> Result<(), ReduceError>;

    /// The ranks whose replicas run in this process, each calling every
    /// collective: all of them for threads, one for a process per replica.
    fn local_ranks(&self) -> Range<usize> {
        0..self.replicas()
    }

    /// Every replica's `local` (all of the same length), concatenated in
    /// rank order. The default is a sum all-reduce in which each rank fills
    /// only its own slot: exact, because the other ranks add zeros.
    fn all_gather(&self, rank: usize, local: &[u64]) -> Result<Vec<u64>, ReduceError> {
        let n = local.len();
        let mut slots = vec![0; n * self.replicas()];
        slots[rank * n..(rank + 1) * n].copy_from_slice(local);
        self.all_reduce_counts(rank, &mut slots)?;
        Ok(slots)
    }

    /// Aborts: every pending and future collective fails with `reason`, so
    /// no replica waits forever for one that failed.
    fn abort(&self, reason: &str);
}

#[cfg(feature = "mpi")]
pub mod mpi;

/// A shared reducer, so its owner can keep a handle (e.g. to synchronize
/// the processes' exit) while the engine uses it.
impl<R: Reducer + Send + Sync + ?Sized> Reducer for std::sync::Arc<R> {
    fn replicas(&self) -> usize {
        (**self).replicas()
    }
    fn all_reduce_counts(&self, rank: usize, counts: &mut [u64]) -> Result<(), ReduceError> {
        (**self).all_reduce_counts(rank, counts)
    }
    fn all_reduce_grads(&self, rank: usize, grads: &mut Tensors) -> Result<(), ReduceError> {
        (**self).all_reduce_grads(rank, grads)
    }
    fn local_ranks(&self) -> Range<usize> {
        (**self).local_ranks()
    }
    fn all_gather(&self, rank: usize, local: &[u64]) -> Result<Vec<u64>, ReduceError> {
        (**self).all_gather(rank, local)
    }
    fn abort(&self, reason: &str) {
        (**self).abort(reason);
    }
}

#[derive(Debug)]
struct Shared {
    arrived: usize,
    generation: u64,
    aborted: Option<String>,
    counts: Vec<u64>,
    grads: Option<Tensors>,
    contributions: usize,
}

/// The in-process reducer: replicas are threads sharing one accumulator.
#[derive(Debug)]
pub struct InProcess {
    replicas: usize,
    shared: Mutex<Shared>,
    wake: Condvar,
}

impl InProcess {
    /// A reducer for `replicas` threads.
    pub fn new(replicas: usize) -> InProcess {
        InProcess {
            replicas: replicas.max(1),
            shared: Mutex::new(Shared {
                arrived: 0,
                generation: 0,
                aborted: None,
                counts: Vec::new(),
                grads: None,
                contributions: 0,
            }),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // A panicking replica poisons the lock; the state is still consistent
        // for abort purposes, so keep going and let `aborted` report it.
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until every replica has arrived; returns the guard again.
    fn barrier<'a>(
        &'a self,
        mut guard: MutexGuard<'a, Shared>,
    ) -> Result<MutexGuard<'a, Shared>, ReduceError> {
        if let Some(reason) = &guard.aborted {
            return Err(ReduceError {
                reason: reason.clone(),
            });
        }
        let generation = guard.generation;
        guard.arrived += 1;
        if guard.arrived == self.replicas {
            guard.arrived = 0;
            guard.generation += 1;
            self.wake.notify_all();
            return Ok(guard);
        }
        while guard.generation == generation && guard.aborted.is_none() {
            guard = self
                .wake
                .wait(guard)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        match &guard.aborted {
            Some(reason) if guard.generation == generation => Err(ReduceError {
                reason: reason.clone(),
            }),
            _ => Ok(guard),
        }
    }
}

impl Reducer for InProcess {
    fn replicas(&self) -> usize {
        self.replicas
    }

    fn all_reduce_counts(&self, _rank: usize, counts: &mut [u64]) -> Result<(), ReduceError> {
        if self.replicas == 1 {
            return Ok(());
        }
        let mut g = self.lock();
        if g.contributions == 0 {
            g.counts.clear();
            g.counts.resize(counts.len(), 0);
        }
        for (acc, &c) in g.counts.iter_mut().zip(counts.iter()) {
            *acc += c;
        }
        g.contributions += 1;
        let g = self.barrier(g)?;
        counts.copy_from_slice(&g.counts);
        let mut g = self.barrier(g)?;
        g.contributions = 0;
        drop(self.barrier(g)?);
        Ok(())
    }

    fn all_reduce_grads(&self, _rank: usize, grads: &mut Tensors) -> Result<(), ReduceError> {
        if self.replicas == 1 {
            return Ok(());
        }
        let mut g = self.lock();
        let contributions = g.contributions;
        match (&mut g.grads, contributions) {
            (Some(acc), 0) if acc.same_layout(grads) => acc.copy_from(grads),
            (Some(acc), _) if acc.same_layout(grads) => acc.add_assign(grads),
            _ => g.grads = Some(grads.clone()),
        }
        g.contributions += 1;
        let g = self.barrier(g)?;
        grads.copy_from(g.grads.as_ref().expect("the accumulator was filled above"));
        let mut g = self.barrier(g)?;
        g.contributions = 0;
        drop(self.barrier(g)?);
        Ok(())
    }

    fn abort(&self, reason: &str) {
        let mut g = self.lock();
        if g.aborted.is_none() {
            g.aborted = Some(reason.to_owned());
        }
        self.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    fn grads(v: f32) -> Tensors {
        Tensors::new(vec![("g".into(), ArrayD::from_elem(IxDyn(&[3]), v))])
    }

    #[test]
    fn sums_across_threads_repeatedly() {
        let reducer = InProcess::new(3);
        let results: Vec<(Vec<u64>, f32)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..3)
                .map(|rank| {
                    let reducer = &reducer;
                    s.spawn(move || {
                        let mut last = (Vec::new(), 0.0);
                        for round in 0..5u64 {
                            let mut counts = vec![rank as u64 + 1, round];
                            reducer.all_reduce_counts(rank, &mut counts).unwrap();
                            let mut g = grads(rank as f32 + round as f32);
                            reducer.all_reduce_grads(rank, &mut g).unwrap();
                            last = (counts, g.value(0)[[0]]);
                        }
                        last
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (counts, g) in results {
            assert_eq!(counts, vec![6, 12]);
            assert_eq!(g, 0.0 + 1.0 + 2.0 + 3.0 * 4.0);
        }
    }

    #[test]
    fn all_gather_concatenates_in_rank_order() {
        let reducer = InProcess::new(3);
        let gathered: Vec<Vec<u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..3u64)
                .map(|rank| {
                    let reducer = &reducer;
                    s.spawn(move || {
                        reducer
                            .all_gather(rank as usize, &[rank * 10 + 1, u64::MAX - rank])
                            .unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for g in gathered {
            assert_eq!(g, vec![1, u64::MAX, 11, u64::MAX - 1, 21, u64::MAX - 2]);
        }
        assert_eq!(reducer.local_ranks(), 0..3);
    }

    #[test]
    fn abort_releases_waiting_replicas() {
        let reducer = InProcess::new(2);
        let err = std::thread::scope(|s| {
            let waiting = s.spawn(|| {
                let mut counts = vec![1];
                reducer.all_reduce_counts(0, &mut counts)
            });
            std::thread::sleep(std::time::Duration::from_millis(20));
            reducer.abort("replica 1 failed: microbatch 0 is empty");
            waiting.join().unwrap()
        });
        let err = err.unwrap_err();
        assert!(err.to_string().contains("replica 1 failed"), "{err}");
        let mut g = grads(1.0);
        assert!(reducer.all_reduce_grads(1, &mut g).is_err());
    }
}
