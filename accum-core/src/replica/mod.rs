//! The reduction across data-parallel replicas
//! (`accum::run::data-parallel`).
//!
//! [`Reducer`] is the small collective interface the group loop needs: a
//! count all-reduce (to fix the group's global denominator before the first
//! backward pass, `accum::run::normalization`), one gradient all-reduce per
//! group after the last microbatch (no synchronisation for the first
//! `A − 1`), and abort. The all-reduces *sum*: every replica already
//! weighted its tokens by the global denominator, so the sum is exactly the
//! large-batch gradient, whatever the token counts per replica. (The usual
//! "average over D" equals this sum when each replica divides by `N/D`;
//! with unequal token counts only the global denominator is right.)
//! Gradients can be accum's [`Tensors`] or plain slices (`&mut [f32]`,
//! `&mut [f64]`): a loop of one's own needs no tensor type of accum's.
//!
//! [`InProcess`] implements it for replicas that are threads of one process:
//! it sums in rank order, so a run is bit-identical whatever order the
//! threads arrive in, and a thread that holds its rank's [`Member`] cannot
//! leave the others waiting: if it panics or returns, every collective the
//! others wait in, or call later, fails. `mpi::Mpi` (cargo feature `mpi`)
//! implements it with one process per replica. A backend says which ranks
//! run in this process ([`Reducer::local_ranks`]); the engine runs those
//! and learns what the others did through [`Reducer::all_gather`] (the
//! example ids they really loaded, and their loss sums and counters for the
//! report).

use std::fmt;
use std::ops::Range;

#[cfg(feature = "engine")]
use crate::tensor::Tensors;

mod in_process;

pub use in_process::{InProcess, Member};

/// A collective failed because a replica aborted.
#[derive(Clone, PartialEq, Eq)]
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
    /// replica's `grads` (the `engine` feature). By default the tensors go
    /// through [`Reducer::all_reduce_f32`] as one flat buffer, so a
    /// reducer written for plain slices serves the engine too.
    #[cfg(feature = "engine")]
    fn all_reduce_grads(&self, rank: usize, grads: &mut Tensors) -> Result<(), ReduceError> {
        let mut flat: Vec<f32> = grads.slices().flatten().copied().collect();
        self.all_reduce_f32(rank, &mut flat)?;
        let mut rest = &flat[..];
        for slice in grads.slices_mut() {
            let (head, tail) = rest.split_at(slice.len());
            slice.copy_from_slice(head);
            rest = tail;
        }
        Ok(())
    }

    /// Element-wise sum of `values` over all replicas, written back to
    /// every replica's `values`: gradients held in plain `f32` slices.
    fn all_reduce_f32(&self, rank: usize, values: &mut [f32]) -> Result<(), ReduceError>;

    /// Element-wise sum of `values` over all replicas, written back to
    /// every replica's `values`: gradients held in plain `f64` slices.
    fn all_reduce_f64(&self, rank: usize, values: &mut [f64]) -> Result<(), ReduceError>;

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
    #[cfg(feature = "engine")]
    fn all_reduce_grads(&self, rank: usize, grads: &mut Tensors) -> Result<(), ReduceError> {
        (**self).all_reduce_grads(rank, grads)
    }
    fn all_reduce_f32(&self, rank: usize, values: &mut [f32]) -> Result<(), ReduceError> {
        (**self).all_reduce_f32(rank, values)
    }
    fn all_reduce_f64(&self, rank: usize, values: &mut [f64]) -> Result<(), ReduceError> {
        (**self).all_reduce_f64(rank, values)
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

// `?` in `main` prints the sentence, not the fields.
crate::code::debug_as_display!(ReduceError);
