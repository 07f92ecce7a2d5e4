//! Gradient all-reduce time per update against gradient bytes (`accum::calc::scaling`), for
//! the MPI backend next to in-process threads. Needs the `mpi` feature and
//! a launcher; every rank runs the same fixed schedule (no adaptive
//! sampling, so the collectives of all ranks match):
//!
//! ```text
//! cargo bench -p accum-core --features mpi --bench allreduce --no-run
//! mpirun -n 2 --mca btl self,tcp --mca btl_tcp_if_include lo target/release/deps/allreduce-<hash>
//! ```
//!
//! Rank 0 prints one row per size: bytes, mean time per all-reduce and the
//! algorithm bandwidth (bytes / time), for MPI and for `D` threads of one
//! process through `InProcess`; plus the small count all-reduce that fixes a
//! group's denominator.

use std::time::{Duration, Instant};

use accum_core::engine::Tensors;
use accum_core::replica::mpi::Mpi;
use accum_core::replica::{InProcess, Reducer};
use ndarray::{ArrayD, IxDyn};

/// Gradient sizes in f32 elements: 1 KiB … 64 MiB.
const SIZES: [usize; 7] = [
    256,
    4 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
    16 << 20,
];

fn grads(numel: usize, value: f32) -> Tensors {
    Tensors::new(vec![(
        "g".to_owned(),
        ArrayD::from_elem(IxDyn(&[numel]), value),
    )])
}

/// Repetitions so that one size moves about 512 MiB (at least 5, at most 2000).
fn reps(numel: usize) -> usize {
    ((128 << 20) / numel).clamp(5, 2000)
}

fn time_mpi(mpi: &Mpi, numel: usize) -> Duration {
    let rank = mpi.rank();
    let mut g = grads(numel, 1.0);
    for _ in 0..2 {
        mpi.all_reduce_grads(rank, &mut g).expect("all-reduce");
    }
    mpi.barrier().expect("barrier");
    let n = reps(numel);
    let start = Instant::now();
    for _ in 0..n {
        mpi.all_reduce_grads(rank, &mut g).expect("all-reduce");
    }
    mpi.barrier().expect("barrier");
    start.elapsed() / n as u32
}

fn time_threads(d: usize, numel: usize) -> Duration {
    let reducer = InProcess::new(d);
    let n = reps(numel);
    let times: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..d)
            .map(|rank| {
                let reducer = &reducer;
                s.spawn(move || {
                    let mut g = grads(numel, 1.0);
                    for _ in 0..2 {
                        reducer.all_reduce_grads(rank, &mut g).expect("all-reduce");
                    }
                    let start = Instant::now();
                    for _ in 0..n {
                        reducer.all_reduce_grads(rank, &mut g).expect("all-reduce");
                    }
                    start.elapsed()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    times.into_iter().max().unwrap_or_default() / n as u32
}

fn main() {
    // `cargo bench` passes `--bench`; the schedule is fixed either way.
    let mpi = Mpi::init().expect("mpi starts once");
    let d = mpi.world_size();
    let lead = mpi.rank() == 0;
    if lead {
        println!("all-reduce of f32 gradients, D = {d} (sum, one call per update)");
        println!(
            "{:>12} {:>14} {:>12} {:>14} {:>12}",
            "bytes", "mpi µs", "mpi GB/s", "threads µs", "threads GB/s"
        );
    }
    for numel in SIZES {
        let bytes = numel * 4;
        let t_mpi = time_mpi(&mpi, numel);
        // Threads on rank 0 only, after the MPI measurement of this size.
        let t_threads = if lead {
            time_threads(d, numel)
        } else {
            Duration::ZERO
        };
        mpi.barrier().expect("barrier");
        if lead {
            let gbs = |t: Duration| bytes as f64 / t.as_secs_f64().max(1e-12) / 1e9;
            println!(
                "{bytes:>12} {:>14.1} {:>12.2} {:>14.1} {:>12.2}",
                t_mpi.as_secs_f64() * 1e6,
                gbs(t_mpi),
                t_threads.as_secs_f64() * 1e6,
                gbs(t_threads)
            );
        }
    }
    // The count all-reduce that fixes a group's denominator (`accum::run::normalization`, `accum::run::group`).
    let rank = mpi.rank();
    let n = 2000;
    let mut counts = [1u64, 2];
    mpi.barrier().expect("barrier");
    let start = Instant::now();
    for _ in 0..n {
        mpi.all_reduce_counts(rank, &mut counts).expect("counts");
        counts = [1, 2];
    }
    let t = start.elapsed() / n;
    if lead {
        println!(
            "count all-reduce (2 × u64, with the status exchange): {:.1} µs",
            t.as_secs_f64() * 1e6
        );
    }
}
