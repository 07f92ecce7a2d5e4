//! Engine benchmarks (issue 4): time per update and supervised tokens/s for
//! three splits of one batch at one and two replicas, a 512³ sgemm as the
//! utilization reference, the gradient accumulate kernel against a plain
//! copy, and peak accounted memory per plan.
//!
//! Benchmark model: V=256, H=64, F=256, lengths uniform in 16..=128, AdamW,
//! 256 examples per replica (so every update is one full epoch of `B`
//! examples and the token count per update is constant).
//!
//! Before divan's own measurements, `main` prints a summary table (one
//! timed pass per plan, the sgemm reference, model FLOP utilization and
//! memory peaks), because utilization and memory need figures from several
//! benchmarks of the same run.

use std::hint::black_box;
use std::time::Instant;

use accum_core::engine::{Engine, EngineConfig, RunOptions};
use accum_core::model::Model;
use accum_core::plan::Plan;
use accum_core::settings::{DataSection, ModelSection, OptimizerSection, ScheduleSection};
use accum_core::tensor::accumulate;
use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};
use ndarray::Array2;
use ndarray::linalg::general_mat_mul;

/// The plans measured: (m, A, D).
const PLANS: [(u64, u64, u64); 6] = [
    (256, 1, 1),
    (32, 8, 1),
    (8, 32, 1),
    (256, 1, 2),
    (32, 8, 2),
    (8, 32, 2),
];

fn config(replicas: u64) -> EngineConfig {
    EngineConfig {
        data: DataSection {
            examples: 256 * replicas,
            min_len: 16,
            max_len: 128,
            vocab: 256,
            seed: 1,
            ..DataSection::default()
        },
        model: ModelSection {
            hidden: 64,
            ffn: 256,
        },
        optimizer: OptimizerSection::default(),
        schedule: ScheduleSection {
            total: Some("1000000 updates".parse().expect("a valid span")),
            ..ScheduleSection::default()
        },
        ..EngineConfig::default()
    }
}

fn engine(m: u64, a: u64, d: u64) -> Engine {
    let plan = Plan::new(m, a, d).expect("a valid plan");
    Engine::new(&plan, &config(d)).expect("a valid config")
}

fn label((m, a, d): (u64, u64, u64)) -> String {
    format!("m{m}_a{a}_d{d}")
}

fn parse(label: &str) -> (u64, u64, u64) {
    PLANS
        .into_iter()
        .find(|p| self::label(*p) == label)
        .expect("a known plan label")
}

/// The fastest of `reps` timed 512³-class matmuls: the minimum is the
/// figure least disturbed by other load on a shared machine.
fn sgemm_seconds(n: usize, reps: u32) -> f64 {
    let a = Array2::<f32>::from_elem((n, n), 0.5);
    let b = Array2::<f32>::from_elem((n, n), 0.25);
    let mut c = Array2::<f32>::zeros((n, n));
    general_mat_mul(1.0, &a, &b, 0.0, &mut c);
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            general_mat_mul(1.0, &a, &b, 0.0, &mut c);
            black_box(&c);
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// CPU seconds this process has used (user + system), from `/proc/self/stat`
/// (Linux; clock ticks assumed at 100 Hz). `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses): state is
    // field 3, utime field 14, stime field 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// How much two threads of independent 512³ matmuls gain over one, right
/// now: the ceiling for D=2 replicas on this machine (1.0 when the second
/// core is busy with other work).
fn two_thread_sgemm_speedup() -> f64 {
    let start = Instant::now();
    black_box(sgemm_seconds(512, 20));
    let one = start.elapsed().as_secs_f64();
    let start = Instant::now();
    std::thread::scope(|s| {
        let a = s.spawn(|| sgemm_seconds(512, 20));
        let b = s.spawn(|| sgemm_seconds(512, 20));
        black_box(a.join().expect("a matmul thread finishes"));
        black_box(b.join().expect("a matmul thread finishes"));
    });
    2.0 * one / start.elapsed().as_secs_f64()
}

fn summary() {
    let sgemm = sgemm_seconds(512, 40);
    let sgemm_gflops = 2.0 * 512f64.powi(3) / sgemm / 1e9;
    println!(
        "sgemm 512³ (fastest of 40): {:.2} ms, {sgemm_gflops:.1} GFLOP/s (one thread)",
        sgemm * 1e3
    );
    println!(
        "two threads of sgemm 512³ vs one, now: {:.2}× (the ceiling for D=2)",
        two_thread_sgemm_speedup()
    );
    println!(
        "{:<14} {:>10} {:>12} {:>12} {:>8} {:>10} {:>14} {:>16}",
        "plan",
        "ms/update",
        "tokens/upd",
        "tokens/s",
        "MFU",
        "cores",
        "peak bytes",
        "activation bytes"
    );
    let mut d1_rate = None;
    for plan in PLANS {
        let mut e = engine(plan.0, plan.1, plan.2);
        let mut options = RunOptions::default();
        // Warm-up update: allocates optimizer state, faults pages in.
        e.step(&mut options).expect("an update");
        // The fastest of a few updates (each update is one epoch of B
        // examples, so the token count is the same every time).
        let mut secs = f64::INFINITY;
        let mut tokens = 0;
        let cpu_before = cpu_seconds();
        let wall = Instant::now();
        for _ in 0..4 {
            let before = e.counters().supervised_tokens.get();
            let start = Instant::now();
            e.step(&mut options).expect("an update");
            secs = secs.min(start.elapsed().as_secs_f64());
            tokens = e.counters().supervised_tokens.get() - before;
        }
        // Cores this process really got while updating (others may be busy).
        let cores = cpu_seconds()
            .zip(cpu_before)
            .map(|(after, before)| (after - before) / wall.elapsed().as_secs_f64());
        let rate = tokens as f64 / secs;
        let flops = e.model().flops_per_token().unwrap_or(0) as f64 * rate;
        // Utilization per thread: D replicas run on D threads.
        let mfu = flops / plan.2 as f64 / (sgemm_gflops * 1e9);
        let report = e.report();
        println!(
            "{:<14} {:>10.1} {:>12} {:>12.0} {:>7.1}% {:>10} {:>14} {:>16}",
            label(plan),
            secs * 1e3,
            tokens,
            rate,
            mfu * 100.0,
            cores.map_or_else(|| "?".to_owned(), |c| format!("{c:.2}")),
            report.memory.peak_bytes,
            report.memory.peak_activation_bytes,
        );
        if plan == (32, 8, 1) {
            d1_rate = Some(rate);
        }
        if plan == (32, 8, 2)
            && let Some(r1) = d1_rate
        {
            println!("  D=2 / D=1 throughput (m32_a8): {:.2}×", rate / r1);
        }
    }
}

fn main() {
    summary();
    divan::main();
}

/// One update (one group) of each plan.
#[divan::bench(args = ["m256_a1_d1", "m32_a8_d1", "m8_a32_d1", "m256_a1_d2", "m32_a8_d2", "m8_a32_d2"], sample_count = 10, sample_size = 1)]
fn update(bencher: Bencher<'_, '_>, plan: &str) {
    let (m, a, d) = parse(plan);
    let mut e = engine(m, a, d);
    let mut options = RunOptions::default();
    e.step(&mut options).expect("an update");
    let tokens = e.report().data_tokens.get();
    bencher.counter(ItemsCount::new(tokens)).bench_local(|| {
        e.step(&mut options).expect("an update");
    });
}

/// The reference matmul, counted in floating-point operations.
#[divan::bench(sample_count = 20)]
fn sgemm_512(bencher: Bencher<'_, '_>) {
    let n = 512;
    let a = Array2::<f32>::from_elem((n, n), 0.5);
    let b = Array2::<f32>::from_elem((n, n), 0.25);
    let mut c = Array2::<f32>::zeros((n, n));
    bencher
        .counter(ItemsCount::new(2 * n * n * n))
        .bench_local(|| general_mat_mul(1.0, &a, &b, 0.0, black_box(&mut c)));
}

/// Elements: the benchmark model's gradient (98,816) and a 16 MiB buffer.
const SIZES: [usize; 2] = [98_816, 4 << 20];

/// `grad += g`, counted in bytes of gradient.
#[divan::bench(args = SIZES)]
fn accumulate_kernel(bencher: Bencher<'_, '_>, n: usize) {
    let mut dst = vec![1.0f32; n];
    let src = vec![0.5f32; n];
    bencher
        .counter(BytesCount::new(n * 4))
        .bench_local(|| accumulate(black_box(&mut dst), black_box(&src)));
}

/// A plain copy of the same size, for comparison.
#[divan::bench(args = SIZES)]
fn memcpy(bencher: Bencher<'_, '_>, n: usize) {
    let mut dst = vec![1.0f32; n];
    let src = vec![0.5f32; n];
    bencher
        .counter(BytesCount::new(n * 4))
        .bench_local(|| black_box(&mut dst).copy_from_slice(black_box(&src)));
}
