//! One replica per MPI process (cargo feature `mpi`, Open MPI or any MPI
//! through the `mpi` crate): `mpirun -n D` starts `D` processes, rank `r`
//! runs replica `r` (`accum::run::data-parallel`).
//!
//! Every collective opens with a one-integer status all-reduce (the lowest
//! failed rank, or the world size when none failed), then moves its data.
//! A replica that fails calls [`Reducer::abort`], which joins the status
//! all-reduce that the others are already waiting in, as failed, and
//! broadcasts its reason; every process then returns that reason from the
//! collective instead of blocking forever, and stops before the update.
//! After an abort every collective fails at once, without communication.

use std::fmt;
use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

use ::mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use ::mpi::environment::Universe;
use ::mpi::topology::{Communicator, SimpleCommunicator};
use ::mpi::{Rank, Threading};

use super::{ReduceError, Reducer};
use crate::tensor::Tensors;

/// MPI could not be started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MpiError {
    /// MPI was already initialized in this process.
    AlreadyInitialized,
}

impl fmt::Display for MpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MpiError::AlreadyInitialized => write!(
                f,
                "mpi is already initialized in this process; create one `Mpi` per process"
            ),
        }
    }
}

impl std::error::Error for MpiError {}

/// The MPI reducer: this process is rank [`Mpi::rank`] of
/// [`Mpi::world_size`] and runs that one replica. Dropping it finalizes MPI.
pub struct Mpi {
    // Finalizes MPI when dropped. The communicator is built per call from
    // the world handle (`SimpleCommunicator` is not `Send`).
    _universe: Universe,
    rank: usize,
    size: usize,
    aborted: Mutex<Option<String>>,
    /// Send and receive buffers of the gradient all-reduce, kept between
    /// groups so an update allocates nothing.
    buffers: Mutex<(Vec<f32>, Vec<f32>)>,
}

impl fmt::Debug for Mpi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mpi")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl Mpi {
    /// Initializes MPI (collectives are called from one thread) and reads
    /// this process's rank and the world size. A process started without
    /// `mpirun` is a world of one.
    pub fn init() -> Result<Mpi, MpiError> {
        let (universe, _) = ::mpi::initialize_with_threading(Threading::Funneled)
            .ok_or(MpiError::AlreadyInitialized)?;
        let world = universe.world();
        Ok(Mpi {
            rank: usize::try_from(world.rank()).unwrap_or(0),
            size: usize::try_from(world.size()).unwrap_or(1).max(1),
            _universe: universe,
            aborted: Mutex::new(None),
            buffers: Mutex::new((Vec::new(), Vec::new())),
        })
    }

    /// This process's rank, 0-based.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Processes in the world: `D`.
    pub fn world_size(&self) -> usize {
        self.size
    }

    /// A barrier that fails like any collective when a replica aborted.
    pub fn barrier(&self) -> Result<(), ReduceError> {
        self.exchange_status(None)
    }

    /// A plain barrier that also works after an abort: every rank calls it
    /// once its error is printed, so that no rank exits (and makes `mpirun`
    /// end the job) before the others have said why they stop.
    pub fn barrier_at_exit(&self) {
        SimpleCommunicator::world().barrier();
    }

    fn aborted(&self) -> MutexGuard<'_, Option<String>> {
        self.aborted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Status all-reduce, failed when `reason` is given: `Err` with the
    /// reason of the lowest failed rank when any rank failed, after which
    /// this reducer stays aborted.
    fn exchange_status(&self, reason: Option<&str>) -> Result<(), ReduceError> {
        if let Some(reason) = self.aborted().clone() {
            return Err(ReduceError { reason });
        }
        let world = SimpleCommunicator::world();
        let mine: Rank = Rank::try_from(if reason.is_some() {
            self.rank
        } else {
            self.size
        })
        .unwrap_or(Rank::MAX);
        let mut first: Rank = 0;
        world.all_reduce_into(&mine, &mut first, SystemOperation::min());
        let Ok(first) = usize::try_from(first) else {
            return self.fail("the status all-reduce returned a negative rank".into());
        };
        if first >= self.size {
            return Ok(());
        }
        // The lowest failed rank tells everyone why.
        let root = world.process_at_rank(Rank::try_from(first).unwrap_or(0));
        let own = if first == self.rank {
            reason.unwrap_or_default().as_bytes().to_vec()
        } else {
            Vec::new()
        };
        let mut len = own.len() as u64;
        root.broadcast_into(&mut len);
        let mut bytes = own;
        bytes.resize(usize::try_from(len).unwrap_or(0), 0);
        root.broadcast_into(&mut bytes[..]);
        self.fail(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn fail(&self, reason: String) -> Result<(), ReduceError> {
        let mut aborted = self.aborted();
        let reason = aborted.get_or_insert(reason).clone();
        Err(ReduceError { reason })
    }
}

impl Reducer for Mpi {
    fn replicas(&self) -> usize {
        self.size
    }

    fn local_ranks(&self) -> Range<usize> {
        self.rank..self.rank + 1
    }

    fn all_reduce_counts(&self, _rank: usize, counts: &mut [u64]) -> Result<(), ReduceError> {
        self.exchange_status(None)?;
        let send = counts.to_vec();
        SimpleCommunicator::world().all_reduce_into(&send[..], counts, SystemOperation::sum());
        Ok(())
    }

    fn all_reduce_grads(&self, _rank: usize, grads: &mut Tensors) -> Result<(), ReduceError> {
        self.exchange_status(None)?;
        // One all-reduce of all parameters, not one per tensor.
        let mut buffers = self
            .buffers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (send, sum) = &mut *buffers;
        send.clear();
        send.extend(grads.slices().flatten());
        sum.clear();
        sum.resize(send.len(), 0.0);
        SimpleCommunicator::world().all_reduce_into(
            &send[..],
            &mut sum[..],
            SystemOperation::sum(),
        );
        let mut rest = &sum[..];
        for slice in grads.slices_mut() {
            let (head, tail) = rest.split_at(slice.len());
            slice.copy_from_slice(head);
            rest = tail;
        }
        Ok(())
    }

    fn all_reduce_f32(&self, _rank: usize, values: &mut [f32]) -> Result<(), ReduceError> {
        self.exchange_status(None)?;
        let send = values.to_vec();
        SimpleCommunicator::world().all_reduce_into(&send[..], values, SystemOperation::sum());
        Ok(())
    }

    fn all_reduce_f64(&self, _rank: usize, values: &mut [f64]) -> Result<(), ReduceError> {
        self.exchange_status(None)?;
        let send = values.to_vec();
        SimpleCommunicator::world().all_reduce_into(&send[..], values, SystemOperation::sum());
        Ok(())
    }

    fn all_gather(&self, _rank: usize, local: &[u64]) -> Result<Vec<u64>, ReduceError> {
        self.exchange_status(None)?;
        let mut all = vec![0u64; local.len() * self.size];
        SimpleCommunicator::world().all_gather_into(local, &mut all[..]);
        Ok(all)
    }

    fn abort(&self, reason: &str) {
        if self.aborted().is_some() {
            return;
        }
        // Join the collective the others wait in, as failed; the result is
        // the (lowest failed rank's) reason, now stored.
        let _ = self.exchange_status(Some(reason));
    }
}
