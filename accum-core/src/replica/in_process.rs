//! The in-process reducer: replicas are threads of one process.
//!
//! Every collective is one round: each rank deposits its values in its own
//! slot, and the last rank to arrive sums the slots in rank order
//! (`0 + 1 + … + D−1`, whatever order the threads came in), so two runs of
//! the same loop give the same bits. The others wait for that rank; a
//! thread that holds its rank's [`Member`] cannot make them wait forever:
//! when the member is dropped — its thread returned, or unwound from a
//! panic — the reducer is aborted, and every collective the others wait in
//! or call later fails with the reason.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::{ReduceError, Reducer};
#[cfg(feature = "engine")]
use crate::tensor::Tensors;

/// What one round of a collective is: every rank must call the same one
/// with as many values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Round {
    /// The collective's name, as a caller wrote it.
    what: &'static str,
    /// Values each rank gives.
    len: usize,
}

/// Per-rank deposits of one element type, and their sum in rank order.
#[derive(Debug)]
struct Lane<T> {
    deposits: Vec<Vec<T>>,
    sum: Vec<T>,
}

impl<T: Copy + Default + std::ops::AddAssign> Lane<T> {
    fn new(replicas: usize) -> Lane<T> {
        Lane {
            deposits: (0..replicas).map(|_| Vec::new()).collect(),
            sum: Vec::new(),
        }
    }

    /// The deposits summed in rank order into `sum`.
    fn sum_in_rank_order(&mut self) {
        let (first, rest) = self
            .deposits
            .split_first()
            .expect("a reducer has at least one rank");
        self.sum.clear();
        self.sum.extend_from_slice(first);
        for deposit in rest {
            for (acc, &v) in self.sum.iter_mut().zip(deposit) {
                *acc += v;
            }
        }
    }
}

/// The element types a round can carry, each with its lane.
trait Element: Copy + Default + std::ops::AddAssign {
    fn lane(shared: &mut Shared) -> &mut Lane<Self>;
}

impl Element for u64 {
    fn lane(shared: &mut Shared) -> &mut Lane<u64> {
        &mut shared.counts
    }
}

impl Element for f32 {
    fn lane(shared: &mut Shared) -> &mut Lane<f32> {
        &mut shared.floats
    }
}

impl Element for f64 {
    fn lane(shared: &mut Shared) -> &mut Lane<f64> {
        &mut shared.doubles
    }
}

#[derive(Debug)]
struct Shared {
    /// Ranks that have deposited in the open round.
    arrived: Vec<bool>,
    /// How many of them.
    arrivals: usize,
    /// Completed rounds.
    generation: u64,
    /// The open round, once its first rank arrived.
    round: Option<Round>,
    aborted: Option<String>,
    /// Ranks whose [`Member`] was handed out.
    taken: Vec<bool>,
    counts: Lane<u64>,
    floats: Lane<f32>,
    doubles: Lane<f64>,
}

#[derive(Debug)]
struct Inner {
    replicas: usize,
    shared: Mutex<Shared>,
    wake: Condvar,
}

/// The in-process reducer: `D` replicas that are threads of one process.
///
/// Give each thread its rank's [`Member`] ([`InProcess::member`]) and call
/// the collectives through it: a thread that panics or returns early then
/// ends the others' collectives with an error instead of leaving them
/// waiting. The reducer itself implements [`Reducer`] too, for one thread
/// that runs every rank (accum's engine) and for `D = 1`, where no
/// collective waits.
///
/// ```
/// use accum_core::replica::{InProcess, Reducer};
///
/// let reducer = InProcess::new(2);
/// let sums: Vec<Vec<f64>> = std::thread::scope(|s| {
///     let handles: Vec<_> = (0..2)
///         .map(|rank| {
///             let member = reducer.member(rank).expect("each rank is taken once");
///             s.spawn(move || {
///                 let mut grad = vec![rank as f64 + 1.0, 0.5];
///                 member.all_reduce_f64(rank, &mut grad).map(|()| grad)
///             })
///         })
///         .collect();
///     handles.into_iter().map(|h| h.join().expect("no panic").expect("no abort")).collect()
/// });
/// assert_eq!(sums, [[3.0, 1.0], [3.0, 1.0]]);
/// ```
#[derive(Debug)]
pub struct InProcess {
    inner: Arc<Inner>,
}

impl InProcess {
    /// A reducer for `replicas` threads (at least 1).
    pub fn new(replicas: usize) -> InProcess {
        let replicas = replicas.max(1);
        InProcess {
            inner: Arc::new(Inner {
                replicas,
                shared: Mutex::new(Shared {
                    arrived: vec![false; replicas],
                    arrivals: 0,
                    generation: 0,
                    round: None,
                    aborted: None,
                    taken: vec![false; replicas],
                    counts: Lane::new(replicas),
                    floats: Lane::new(replicas),
                    doubles: Lane::new(replicas),
                }),
                wake: Condvar::new(),
            }),
        }
    }

    /// Rank `rank`'s member, to move into the thread that runs it. Each
    /// rank is handed out once; a rank outside `0..D` has none.
    pub fn member(&self, rank: usize) -> Result<Member, ReduceError> {
        let mut g = self.inner.lock();
        let replicas = self.inner.replicas;
        match g.taken.get_mut(rank) {
            None => Err(ReduceError {
                reason: format!(
                    "rank {rank} is not one of the reducer's {replicas} ranks; use a rank below {replicas}"
                ),
            }),
            Some(true) => Err(ReduceError {
                reason: format!(
                    "rank {rank}'s member was already handed out; take each rank's member once"
                ),
            }),
            Some(taken) => {
                *taken = true;
                Ok(Member {
                    inner: Arc::clone(&self.inner),
                    rank,
                })
            }
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        // No code of ours panics while holding the lock; a poisoned lock
        // still holds a consistent state, and `aborted` reports the rest.
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn abort(&self, reason: String) {
        let mut g = self.lock();
        if g.aborted.is_none() {
            g.aborted = Some(reason);
        }
        self.wake.notify_all();
    }

    /// One round of the collective `what` for `rank`: `deposit` writes its
    /// values into its slot; once every rank has deposited, the guard is
    /// handed back with the sum over the ranks, in rank order, in `T`'s
    /// lane.
    fn round<T: Element>(
        &self,
        what: &'static str,
        rank: usize,
        len: usize,
        deposit: impl FnOnce(&mut Vec<T>),
    ) -> Result<MutexGuard<'_, Shared>, ReduceError> {
        let mut g = self.lock();
        if let Some(reason) = &g.aborted {
            return Err(ReduceError {
                reason: reason.clone(),
            });
        }
        let round = Round { what, len };
        let refusal = if rank >= self.replicas {
            Some(format!(
                "rank {rank} called {what}, but the reducer has ranks 0 to {}",
                self.replicas - 1
            ))
        } else if g.arrived[rank] {
            Some(format!(
                "rank {rank} called {what} twice in one round; every rank calls each collective once, in the same order"
            ))
        } else {
            match g.round {
                Some(open) if open != round => Some(format!(
                    "rank {rank} called {what} with {len} value(s) while the other ranks are in {} with {}; \
                     every rank calls the same collectives, in the same order, with as many values",
                    open.what, open.len
                )),
                _ => None,
            }
        };
        if let Some(reason) = refusal {
            // The others could never complete this round.
            g.aborted.get_or_insert_with(|| reason.clone());
            self.wake.notify_all();
            return Err(ReduceError { reason });
        }
        g.round = Some(round);
        g.arrived[rank] = true;
        g.arrivals += 1;
        let slot = &mut T::lane(&mut g).deposits[rank];
        slot.clear();
        deposit(slot);
        let generation = g.generation;
        if g.arrivals == self.replicas {
            T::lane(&mut g).sum_in_rank_order();
            g.arrived.fill(false);
            g.arrivals = 0;
            g.round = None;
            g.generation += 1;
            self.wake.notify_all();
        }
        while g.generation == generation && g.aborted.is_none() {
            g = self
                .wake
                .wait(g)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if g.generation == generation {
            let reason = g.aborted.clone().expect("the wait ends on an abort");
            return Err(ReduceError { reason });
        }
        // The sum stays until every rank of this round has read it: the
        // next round's sum needs every rank's next deposit.
        Ok(g)
    }

    fn all_reduce_counts(&self, rank: usize, counts: &mut [u64]) -> Result<(), ReduceError> {
        if self.replicas == 1 {
            return Ok(());
        }
        let mut g = self.round::<u64>("all_reduce_counts", rank, counts.len(), |slot| {
            slot.extend_from_slice(counts);
        })?;
        counts.copy_from_slice(&u64::lane(&mut g).sum);
        Ok(())
    }

    fn all_reduce_f32(&self, rank: usize, values: &mut [f32]) -> Result<(), ReduceError> {
        if self.replicas == 1 {
            return Ok(());
        }
        let mut g = self.round::<f32>("all_reduce_f32", rank, values.len(), |slot| {
            slot.extend_from_slice(values);
        })?;
        values.copy_from_slice(&f32::lane(&mut g).sum);
        Ok(())
    }

    fn all_reduce_f64(&self, rank: usize, values: &mut [f64]) -> Result<(), ReduceError> {
        if self.replicas == 1 {
            return Ok(());
        }
        let mut g = self.round::<f64>("all_reduce_f64", rank, values.len(), |slot| {
            slot.extend_from_slice(values);
        })?;
        values.copy_from_slice(&f64::lane(&mut g).sum);
        Ok(())
    }

    #[cfg(feature = "engine")]
    fn all_reduce_grads(&self, rank: usize, grads: &mut Tensors) -> Result<(), ReduceError> {
        if self.replicas == 1 {
            return Ok(());
        }
        let mut g = self.round::<f32>("all_reduce_grads", rank, grads.numel(), |slot| {
            slot.extend(grads.slices().flatten());
        })?;
        let mut rest = &f32::lane(&mut g).sum[..];
        for slice in grads.slices_mut() {
            let (head, tail) = rest.split_at(slice.len());
            slice.copy_from_slice(head);
            rest = tail;
        }
        Ok(())
    }
}

impl Reducer for InProcess {
    fn replicas(&self) -> usize {
        self.inner.replicas
    }

    fn all_reduce_counts(&self, rank: usize, counts: &mut [u64]) -> Result<(), ReduceError> {
        self.inner.all_reduce_counts(rank, counts)
    }

    #[cfg(feature = "engine")]
    fn all_reduce_grads(&self, rank: usize, grads: &mut Tensors) -> Result<(), ReduceError> {
        self.inner.all_reduce_grads(rank, grads)
    }

    fn all_reduce_f32(&self, rank: usize, values: &mut [f32]) -> Result<(), ReduceError> {
        self.inner.all_reduce_f32(rank, values)
    }

    fn all_reduce_f64(&self, rank: usize, values: &mut [f64]) -> Result<(), ReduceError> {
        self.inner.all_reduce_f64(rank, values)
    }

    fn abort(&self, reason: &str) {
        self.inner.abort(reason.to_owned());
    }
}

/// One rank of an [`InProcess`] reducer, owned by the thread that runs it
/// ([`InProcess::member`]). It is a [`Reducer`] for that rank alone
/// ([`Reducer::local_ranks`] is that rank), to hand to the driver's
/// `group.count` and to call the gradient all-reduce through.
///
/// Dropping it — the thread's work returned, with a result or an error, or
/// unwound from a panic — aborts the reducer: any rank still waiting in a
/// collective, or calling one later, gets an error that names this rank
/// instead of waiting forever. Once every rank has made its last
/// collective, the abort reaches no one.
#[derive(Debug)]
pub struct Member {
    inner: Arc<Inner>,
    rank: usize,
}

impl Member {
    /// The rank this member stands for.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// `rank` as the caller gave it, if it is this member's.
    fn check(&self, rank: usize, what: &str) -> Result<(), ReduceError> {
        if rank == self.rank {
            return Ok(());
        }
        let reason = format!(
            "{what} was called as rank {rank} through rank {}'s member; give each thread its own rank's member \
             and the same rank to its driver (`.rank({})`)",
            self.rank, self.rank
        );
        self.inner.abort(reason.clone());
        Err(ReduceError { reason })
    }
}

impl Reducer for Member {
    fn replicas(&self) -> usize {
        self.inner.replicas
    }

    fn local_ranks(&self) -> std::ops::Range<usize> {
        self.rank..self.rank + 1
    }

    fn all_reduce_counts(&self, rank: usize, counts: &mut [u64]) -> Result<(), ReduceError> {
        self.check(rank, "all_reduce_counts")?;
        self.inner.all_reduce_counts(rank, counts)
    }

    #[cfg(feature = "engine")]
    fn all_reduce_grads(&self, rank: usize, grads: &mut Tensors) -> Result<(), ReduceError> {
        self.check(rank, "all_reduce_grads")?;
        self.inner.all_reduce_grads(rank, grads)
    }

    fn all_reduce_f32(&self, rank: usize, values: &mut [f32]) -> Result<(), ReduceError> {
        self.check(rank, "all_reduce_f32")?;
        self.inner.all_reduce_f32(rank, values)
    }

    fn all_reduce_f64(&self, rank: usize, values: &mut [f64]) -> Result<(), ReduceError> {
        self.check(rank, "all_reduce_f64")?;
        self.inner.all_reduce_f64(rank, values)
    }

    fn abort(&self, reason: &str) {
        self.inner.abort(reason.to_owned());
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let rank = self.rank;
        self.inner.abort(if std::thread::panicking() {
            format!("rank {rank} panicked; the other ranks stop instead of waiting for it")
        } else {
            format!(
                "rank {rank} left (its member was dropped) before this collective; \
                 every rank calls the same collectives until the run ends"
            )
        });
    }
}

#[cfg(test)]
#[cfg(feature = "engine")]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

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

    /// Values whose f32 sum depends on the order of the additions: summed
    /// in rank order, `((a0 + a1) + a2) + a3`.
    fn order_sensitive(rank: usize) -> Vec<f32> {
        let a = [1.0e8_f32, 1.0, -1.0e8, 3.0];
        let b = [0.1_f32, 1.0e-8, 7.0e7, -7.0e7];
        vec![a[rank], b[rank], a[(rank + 1) % 4] * 0.5]
    }

    #[test]
    fn slices_sum_in_rank_order_whatever_the_arrival_order() {
        let expected: Vec<f32> = (0..3)
            .map(|i| (1..4).fold(order_sensitive(0)[i], |acc, r| acc + order_sensitive(r)[i]))
            .collect();
        // The order matters for these values: summed from the last rank
        // down, the first element differs.
        let backwards = (0..3)
            .rev()
            .fold(order_sensitive(3)[0], |acc, r| acc + order_sensitive(r)[0]);
        assert_ne!(backwards.to_bits(), expected[0].to_bits());
        // Arrival orders: ranks delayed forwards, backwards, interleaved.
        for delays in [[0u64, 2, 4, 6], [6, 4, 2, 0], [4, 0, 6, 2]] {
            let reducer = InProcess::new(4);
            let sums: Vec<(Vec<f32>, Vec<f64>)> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..4)
                    .map(|rank| {
                        let member = reducer.member(rank).unwrap();
                        s.spawn(move || {
                            std::thread::sleep(Duration::from_millis(delays[rank]));
                            let mut floats = order_sensitive(rank);
                            member.all_reduce_f32(rank, &mut floats).unwrap();
                            let mut doubles: Vec<f64> = order_sensitive(rank)
                                .iter()
                                .map(|&v| f64::from(v) * 1e9)
                                .collect();
                            member.all_reduce_f64(rank, &mut doubles).unwrap();
                            (floats, doubles)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let expected64: Vec<f64> = (0..3)
                .map(|i| {
                    (1..4).fold(f64::from(order_sensitive(0)[i]) * 1e9, |acc, r| {
                        acc + f64::from(order_sensitive(r)[i]) * 1e9
                    })
                })
                .collect();
            for (floats, doubles) in sums {
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&floats), bits(&expected), "delays {delays:?}");
                assert_eq!(doubles, expected64, "delays {delays:?}");
            }
        }
    }

    #[test]
    fn a_panicking_rank_ends_the_others_with_an_error() {
        let reducer = InProcess::new(3);
        let (tx, rx) = mpsc::channel();
        let mut handles = Vec::new();
        for rank in 0..3 {
            let member = reducer.member(rank).unwrap();
            let tx = tx.clone();
            // Plain threads: a hang would leave them blocked, not the test.
            handles.push(std::thread::spawn(move || {
                let mut result = Ok(());
                for round in 0..4 {
                    assert!(
                        !(rank == 1 && round == 2),
                        "rank 1 fails in its third round"
                    );
                    let mut values = vec![round as f64; 2];
                    result = member.all_reduce_f64(rank, &mut values);
                    if result.is_err() {
                        break;
                    }
                }
                tx.send((rank, result)).unwrap();
            }));
        }
        drop(tx);
        let mut ended = Vec::new();
        for _ in 0..2 {
            let (rank, result) = rx
                .recv_timeout(Duration::from_secs(1))
                .expect("the other ranks end within a second");
            let err = result.unwrap_err();
            assert!(err.reason.contains("rank 1 panicked"), "{err}");
            ended.push(rank);
        }
        ended.sort_unstable();
        assert_eq!(ended, [0, 2]);
        let joined: Vec<bool> = handles.into_iter().map(|h| h.join().is_ok()).collect();
        assert_eq!(joined, [true, false, true]);
    }

    #[test]
    fn a_rank_that_leaves_ends_the_others_with_an_error() {
        let reducer = InProcess::new(2);
        let (tx, rx) = mpsc::channel();
        let stays = reducer.member(0).unwrap();
        let leaves = reducer.member(1).unwrap();
        let waiting = std::thread::spawn(move || {
            let mut counts = [1, 2];
            tx.send(stays.all_reduce_counts(0, &mut counts)).unwrap();
        });
        drop(leaves);
        let err = rx
            .recv_timeout(Duration::from_secs(1))
            .expect("the waiting rank ends within a second")
            .unwrap_err();
        assert!(err.reason.contains("rank 1 left"), "{err}");
        waiting.join().unwrap();
    }

    #[test]
    fn mismatched_collectives_and_ranks_are_errors_not_waits() {
        let reducer = InProcess::new(2);
        assert!(reducer.member(2).unwrap_err().reason.contains("not one of"));
        let zero = reducer.member(0).unwrap();
        assert!(reducer.member(0).unwrap_err().reason.contains("already"));
        let one = reducer.member(1).unwrap();
        // Rank 0's member used as rank 1.
        let err = zero.all_reduce_f32(1, &mut [1.0]).unwrap_err();
        assert!(err.reason.contains("through rank 0's member"), "{err}");
        assert!(
            one.all_reduce_f32(1, &mut [1.0]).is_err(),
            "aborted for all"
        );

        // A rank in another collective than the others.
        let reducer = InProcess::new(2);
        let (zero, one) = (reducer.member(0).unwrap(), reducer.member(1).unwrap());
        let (tx, rx) = mpsc::channel();
        let waiting = std::thread::spawn(move || {
            tx.send(zero.all_reduce_f32(0, &mut [1.0, 2.0])).unwrap();
        });
        // Rank 1 calls another collective, or the same with other lengths;
        // whichever arrives second is refused, and the other released.
        let second = one.all_reduce_f64(1, &mut [1.0]);
        let first = rx.recv_timeout(Duration::from_secs(1)).expect("released");
        let reasons: Vec<String> = [first, second]
            .into_iter()
            .map(|r| r.unwrap_err().reason)
            .collect();
        assert!(
            reasons.iter().all(|r| r.contains("same collectives")),
            "{reasons:?}"
        );
        waiting.join().unwrap();
    }

    #[test]
    fn members_that_end_together_leave_no_error_behind() {
        let reducer = InProcess::new(2);
        let results: Vec<Result<Vec<f32>, ReduceError>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..2)
                .map(|rank| {
                    let member = reducer.member(rank).unwrap();
                    s.spawn(move || {
                        let mut last = Vec::new();
                        for round in 0..50 {
                            let mut v = vec![round as f32 + rank as f32];
                            member.all_reduce_f32(rank, &mut v)?;
                            last = v;
                        }
                        Ok(last)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in results {
            assert_eq!(r.unwrap(), [49.0 + 49.0 + 1.0]);
        }
    }
}
