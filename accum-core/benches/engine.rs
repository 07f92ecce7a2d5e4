//! Engine benchmarks: time per update, supervised tokens/s, model FLOP
//! utilization against this machine's real sgemm peak, and allocations per
//! update, for three splits of one batch at one and two replicas and one
//! and two threads per replica; then where the time of one update goes
//! (matmul, element-wise, optimizer, reduction); then divan's own tables.
//!
//! Benchmark model: V=256, H=64, F=256, lengths uniform in 16..=128, AdamW,
//! 256 examples per replica (so every update is one full epoch of `B`
//! examples and the token count per update is constant).
//!
//! The PyTorch reference (`benches/pytorch_tokenmlp.py`, same model, data
//! lengths and plans) writes a JSON file; give its path in
//! `ACCUM_PYTORCH_JSON` and the summary prints its time per update and the
//! ratio beside each plan. `ACCUM_BENCH_UPDATES` sets the timed updates per
//! plan (default 6, after 2 warm-up updates).
//!
//! Allocations are counted by a global allocator (stats_alloc). The matrix
//! products are matrixmultiply's, which allocates and frees one packing
//! buffer per product (it takes no buffer from the caller); the summary
//! prints all allocations per update and, apart, those that are not such
//! packing buffers (the engine's own), which the steady state keeps at 0.

use std::alloc::System;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use accum_core::data::{Batch, Dataset};
use accum_core::engine::{Engine, EngineConfig, Observer, RunOptions};
use accum_core::model::{GradScale, Model, Team};
use accum_core::optim::Optimizer;
use accum_core::plan::Plan;
use accum_core::report::{Counters, UpdateStats};
use accum_core::settings::{
    DataSection, ModelSection, Normalization, OptimizerSection, ScheduleSection,
};
use accum_core::tensor::{accumulate, gemm, gemm_calls};
use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};
use ndarray::Array2;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

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

fn engine(m: u64, a: u64, d: u64, threads: usize) -> Engine {
    let plan = Plan::new(m, a, d).expect("a valid plan");
    Engine::new(plan, &config(d))
        .expect("a valid config")
        .with_threads(threads)
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

/// The sgemm kernel matrixmultiply picks on this processor.
fn kernel() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "matrixmultiply AVX-512F kernel";
        }
        if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2")
        {
            return "matrixmultiply FMA+AVX2 kernel";
        }
        if std::arch::is_x86_feature_detected!("avx") {
            return "matrixmultiply AVX kernel";
        }
    }
    "matrixmultiply portable kernel"
}

/// The fastest of `reps` timed `n³` matmuls on one thread: the minimum is
/// the figure least disturbed by other load on a shared machine.
fn sgemm_seconds(n: usize, reps: u32) -> f64 {
    let a = Array2::<f32>::from_elem((n, n), 0.5);
    let b = Array2::<f32>::from_elem((n, n), 0.25);
    let mut c = Array2::<f32>::zeros((n, n));
    gemm(1.0, &a.view(), &b.view(), 0.0, &mut c.view_mut());
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            gemm(1.0, &a.view(), &b.view(), 0.0, &mut c.view_mut());
            black_box(&c);
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// CPU seconds this process has used (user + system, all threads), from
/// `/proc/self/stat` (Linux; clock ticks assumed at 100 Hz). `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (in parentheses): utime is field 14,
    // stime field 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Records the time and allocations of each update of a run, and stops it
/// after `updates` updates.
struct Clock<'a> {
    stop: &'a AtomicBool,
    warmup: usize,
    updates: usize,
    seen: usize,
    last: Option<Instant>,
    times: Vec<f64>,
    tokens: u64,
    region: Option<Region<'static, System>>,
    gemms: u64,
    allocations: usize,
    gemm_calls: u64,
    cpu: Option<f64>,
}

impl Observer for Clock<'_> {
    fn on_update(&mut self, stats: &UpdateStats, _counters: &Counters) {
        let now = Instant::now();
        self.seen += 1;
        if self.seen > self.warmup
            && let Some(last) = self.last
        {
            self.times.push((now - last).as_secs_f64());
            self.tokens = stats.tokens.get();
        }
        if self.seen == self.warmup {
            // Read before the allocation count starts: reading /proc allocates.
            self.cpu = cpu_seconds();
            self.gemms = gemm_calls();
            self.region = Some(Region::new(GLOBAL));
        }
        if self.seen == self.warmup + self.updates {
            if let Some(region) = &self.region {
                self.allocations = region.change().allocations;
            }
            self.gemm_calls = gemm_calls() - self.gemms;
            self.cpu = cpu_seconds().zip(self.cpu).map(|(end, start)| end - start);
            self.stop.store(true, Ordering::Relaxed);
        }
        self.last = Some(Instant::now());
    }
}

struct Measured {
    ms: f64,
    /// CPU milliseconds per update over all threads (a 10 ms clock).
    cpu_ms: Option<f64>,
    tokens_per_s: f64,
    mfu: f64,
    allocations: f64,
    own_allocations: f64,
    peak_bytes: u64,
}

fn measure(plan: (u64, u64, u64), threads: usize, updates: usize, peak_gflops: f64) -> Measured {
    let mut e = engine(plan.0, plan.1, plan.2, threads);
    let stop = AtomicBool::new(false);
    let mut clock = Clock {
        stop: &stop,
        warmup: 2,
        updates,
        seen: 0,
        last: None,
        times: Vec::with_capacity(updates + 2),
        tokens: 0,
        region: None,
        gemms: 0,
        allocations: 0,
        gemm_calls: 0,
        cpu: None,
    };
    let report = {
        let mut options = RunOptions {
            stop: Some(&stop),
            ..RunOptions::default()
        }
        .observe(&mut clock);
        e.run(&mut options).expect("a run")
    };
    let mut times = clock.times.clone();
    times.sort_by(f64::total_cmp);
    let secs = times[times.len() / 2];
    let rate = clock.tokens as f64 / secs;
    let flops = e.model().flops_per_token().unwrap_or(0) as f64 * rate;
    let cores = plan.2 as f64 * threads as f64;
    Measured {
        ms: secs * 1e3,
        cpu_ms: clock.cpu.map(|c| c * 1e3 / updates as f64),
        tokens_per_s: rate,
        mfu: flops / cores / (peak_gflops * 1e9),
        allocations: clock.allocations as f64 / updates as f64,
        own_allocations: (clock.allocations as f64 - clock.gemm_calls as f64) / updates as f64,
        peak_bytes: report.memory.peak_bytes,
    }
}

/// PyTorch's milliseconds per update for `(m, A, D, threads)`, from the
/// reference script's JSON output named in `ACCUM_PYTORCH_JSON`.
fn pytorch(plans: &serde_json::Value, plan: (u64, u64, u64), threads: usize) -> Option<f64> {
    plans["results"].as_array()?.iter().find_map(|r| {
        let same = r["m"].as_u64() == Some(plan.0)
            && r["a"].as_u64() == Some(plan.1)
            && r["d"].as_u64() == Some(plan.2)
            && r["threads"].as_u64() == Some(threads as u64);
        same.then(|| r["ms_per_update"].as_f64()).flatten()
    })
}

/// Where one update of m=32/A=8/D=1 on one thread goes: the model's
/// matrix products replayed with the same shapes, the rest of the model
/// (packing and element-wise work), the optimizer, and everything else
/// of the loop (group assembly, checks, norm, zeroing).
fn profile(update_ms: f64) {
    let plan = (32u64, 8u64, 1u64);
    let mut e = engine(plan.0, plan.1, plan.2, 1);
    e.step(&mut RunOptions::default()).expect("an update");
    let data = Dataset::synthetic(&config(1).data);
    let by_id = |id: u64| &data.examples()[id as usize];
    let microbatches: Vec<Batch> = e
        .last_group_ids()
        .chunks(plan.0 as usize)
        .map(|ids| Batch::of(ids.iter().map(|&id| by_id(id))))
        .collect();
    let model = e.model();
    let scale = GradScale {
        normalization: Normalization::PerToken,
        denominator: 1e5,
        loss_scale: 1.0,
        ignore_index: -100,
    };
    let mut grads = model.params().zeros_like();
    let mut ws = model.workspace(plan.0 as usize * 128);
    let best = |f: &mut dyn FnMut()| {
        f();
        (0..5)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .fold(f64::INFINITY, f64::min)
    };
    let model_ms = best(&mut || {
        for b in &microbatches {
            model.forward_backward_team(b, &scale, &mut grads, &mut ws, &Team::single());
        }
    });
    // The six products of each microbatch, with its row count n.
    let (h, f, v) = (64, 256, 256);
    let ns: Vec<usize> = microbatches.iter().map(Batch::positions).collect();
    let nmax = ns.iter().copied().max().unwrap_or(0);
    let x = Array2::<f32>::from_elem((nmax, h), 0.1);
    let hid = Array2::<f32>::from_elem((nmax, f), 0.1);
    let mut hid_out = Array2::<f32>::zeros((nmax, f));
    let mut logits = Array2::<f32>::zeros((nmax, v));
    let mut dx = Array2::<f32>::zeros((nmax, h));
    let w1 = Array2::<f32>::from_elem((h, f), 0.1);
    let w2 = Array2::<f32>::from_elem((f, v), 0.1);
    let mut gw1 = Array2::<f32>::zeros((h, f));
    let mut gw2 = Array2::<f32>::zeros((f, v));
    let matmul_ms = best(&mut || {
        for &n in &ns {
            let rows = |a: &Array2<f32>| a.slice_axis(ndarray::Axis(0), (0..n).into()).to_owned();
            let (xn, hn) = (rows(&x), rows(&hid));
            let mut hid_n = hid_out.slice_axis_mut(ndarray::Axis(0), (0..n).into());
            gemm(1.0, &xn.view(), &w1.view(), 1.0, &mut hid_n);
            let mut lg = logits.slice_axis_mut(ndarray::Axis(0), (0..n).into());
            gemm(1.0, &hn.view(), &w2.view(), 1.0, &mut lg);
            let lg = logits.slice_axis(ndarray::Axis(0), (0..n).into());
            gemm(1.0, &hn.t(), &lg, 1.0, &mut gw2.view_mut());
            let mut dh = hid_out.slice_axis_mut(ndarray::Axis(0), (0..n).into());
            gemm(1.0, &lg, &w2.t(), 0.0, &mut dh);
            gemm(1.0, &xn.t(), &hn.view(), 1.0, &mut gw1.view_mut());
            let mut dxn = dx.slice_axis_mut(ndarray::Axis(0), (0..n).into());
            gemm(1.0, &hn.view(), &w1.t(), 0.0, &mut dxn);
        }
    });
    let mut params = model.params().clone();
    let mut opt = Optimizer::from_section(&OptimizerSection::default());
    opt.step(&mut params, &grads, 1e-3);
    let optimizer_ms = best(&mut || opt.step_scaled(&mut params, &grads, 1e-3, 0.5));
    let mut other = grads.clone();
    let reduction_ms = best(&mut || other.add_assign(&grads));
    let elementwise_ms = (model_ms - matmul_ms).max(0.0);
    let rest_ms = (update_ms - model_ms - optimizer_ms).max(0.0);
    println!("\nwhere one update goes (m32_a8_d1, 1 thread, {update_ms:.1} ms):");
    let row = |what: &str, ms: f64, note: &str| {
        println!(
            "  {what:<12} {ms:>8.2} ms {:>6.1}%  {note}",
            100.0 * ms / update_ms
        );
    };
    row(
        "matmul",
        matmul_ms,
        "6 products per microbatch, same shapes, replayed",
    );
    row(
        "elementwise",
        elementwise_ms,
        "packing, tanh, softmax + cross-entropy, tanh backward, scatter",
    );
    row(
        "optimizer",
        optimizer_ms,
        "AdamW, one pass (unscale and clip folded in)",
    );
    row(
        "reduction",
        0.0,
        &format!("none at D=1; summing a second replica's gradient costs {reduction_ms:.3} ms"),
    );
    row(
        "loop",
        rest_ms,
        "group assembly, checks, norm, zeroing, timing noise",
    );
}

fn summary() {
    let updates: usize = std::env::var("ACCUM_BENCH_UPDATES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6)
        .max(1);
    let torch: Option<serde_json::Value> = std::env::var("ACCUM_PYTORCH_JSON")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str(&t).ok());
    let sgemm = sgemm_seconds(512, 40);
    let peak = 2.0 * 512f64.powi(3) / sgemm / 1e9;
    println!(
        "peak: sgemm 512³ on one thread, {}: {:.2} ms, {peak:.1} GFLOP/s (fastest of 40)",
        kernel(),
        sgemm * 1e3
    );
    println!(
        "{:<12} {:>3} {:>10} {:>8} {:>11} {:>7} {:>12} {:>10} {:>12} {:>12}",
        "plan",
        "thr",
        "ms/update",
        "cpu ms",
        "tokens/s",
        "MFU",
        "allocs/upd",
        "of accum",
        "peak bytes",
        "PyTorch ms"
    );
    let mut m32 = [0.0f64; 3];
    for plan in PLANS {
        for threads in [1, 2] {
            let r = measure(plan, threads, updates, peak);
            let torch_ms = torch.as_ref().and_then(|t| pytorch(t, plan, threads));
            println!(
                "{:<12} {:>3} {:>10.1} {:>8} {:>11.0} {:>6.1}% {:>12.1} {:>10.1} {:>12} {:>12}",
                label(plan),
                threads,
                r.ms,
                r.cpu_ms
                    .map_or_else(|| "?".to_owned(), |c| format!("{c:.0}")),
                r.tokens_per_s,
                r.mfu * 100.0,
                r.allocations,
                r.own_allocations,
                r.peak_bytes,
                torch_ms.map_or_else(|| "-".to_owned(), |t| format!("{t:.1} ({:.2}×)", r.ms / t)),
            );
            match (plan, threads) {
                ((32, 8, 1), 1) => m32[0] = r.tokens_per_s,
                ((32, 8, 1), 2) => m32[1] = r.tokens_per_s,
                ((32, 8, 2), 1) => m32[2] = r.tokens_per_s,
                _ => {}
            }
        }
    }
    println!(
        "m32_a8: D=1 on 2 threads ÷ D=1 on 1 thread = {:.2}×; D=2 ÷ D=1 (1 thread each) = {:.2}×",
        m32[1] / m32[0],
        m32[2] / m32[0]
    );
    let one = measure((32, 8, 1), 1, updates, peak);
    profile(one.ms);
}

fn main() {
    summary();
    divan::main();
}

/// One update (one group) of each plan, one thread per replica.
#[divan::bench(args = ["m256_a1_d1", "m32_a8_d1", "m8_a32_d1", "m256_a1_d2", "m32_a8_d2", "m8_a32_d2"], sample_count = 10, sample_size = 1)]
fn update(bencher: Bencher<'_, '_>, plan: &str) {
    let (m, a, d) = parse(plan);
    let mut e = engine(m, a, d, 1);
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
        .bench_local(|| {
            gemm(
                1.0,
                &a.view(),
                &b.view(),
                0.0,
                &mut black_box(&mut c).view_mut(),
            )
        });
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
