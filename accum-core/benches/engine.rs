//! Engine benchmarks: the core's FMA peak and how it is derived, the
//! single-thread sgemm of matrixmultiply and of faer (the engine's) on the
//! benchmark's own product shapes, then time per update, supervised
//! tokens/s, model FLOP utilization against both the FMA peak and the best
//! sgemm measured, and allocations per update, for three splits of one
//! batch at one and two replicas and one and two threads per replica; then
//! where the time of one update goes (matmul, element-wise, optimizer,
//! reduction); then divan's own tables.
//!
//! Benchmark model: V=256, H=64, F=256, lengths uniform in 16..=128, AdamW,
//! 256 examples per replica (so every update is one full epoch of `B`
//! examples and the token count per update is constant).
//!
//! The PyTorch reference (`benches/pytorch_tokenmlp.py`, same model, data
//! lengths and plans) writes a JSON file; give its path in
//! `ACCUM_PYTORCH_JSON` and the summary prints its time per update and the
//! ratio beside each plan, and its sgemm (`torch.mm` on one thread, the BLAS
//! its wheel links) as a column of the sgemm table. `ACCUM_BENCH_UPDATES` sets the timed updates per
//! plan (default 6, after 2 warm-up updates).
//!
//! Allocations are counted by a global allocator (stats_alloc), all of them:
//! the matrix products pack into a buffer each thread keeps, so the steady
//! state allocates nothing.

use std::alloc::System;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use accum_core::engine::kernels::{MatRef, accumulate, gemm, gemm_kernel, mat, mat_mut};
use accum_core::engine::{
    Dataset, Engine, GradScale, Model, Observer, Optimizer, PackedMicrobatch, RunOptions, Team,
};
use accum_core::plan::Plan;
use accum_core::report::{Counters, UpdateStats};
use accum_core::settings::EngineConfig;
use accum_core::settings::{
    DataSection, ModelSection, Normalization, OptimizerSection, ScheduleSection,
};
use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};
use ndarray::ArrayView2;
use ndarray::linalg::general_mat_mul;
use pulp::{Simd, WithSimd};
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

/// The sgemm kernel matrixmultiply picks on this processor (ndarray's
/// `general_mat_mul`, with matrixmultiply's `avx512` feature).
fn matrixmultiply_kernel() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "AVX-512F";
        }
        if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2")
        {
            return "FMA+AVX2";
        }
        if std::arch::is_x86_feature_detected!("avx") {
            return "AVX";
        }
    }
    "portable"
}

/// The fastest of `reps` runs of `f`, in seconds: on a shared machine the
/// minimum is the figure least disturbed by other load.
fn fastest(reps: u32, f: &mut dyn FnMut()) -> f64 {
    f();
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The core's clock in GHz: a chain of dependent steps of one add and one
/// xor (one cycle each on every x86-64 and AArch64 core, and a chain the
/// compiler can neither shorten nor fold) takes two cycles a step.
fn clock_ghz() -> f64 {
    const STEPS: u64 = 2_000_000;
    let (k1, k2) = (
        black_box(0x9e37_79b9_7f4a_7c15u64),
        black_box(0x1234_5678u64),
    );
    let secs = fastest(300, &mut || {
        let mut x = black_box(1u64);
        for _ in 0..STEPS / 4 {
            x = x.wrapping_add(k1) ^ k2;
            x = x.wrapping_add(k1) ^ k2;
            x = x.wrapping_add(k1) ^ k2;
            x = x.wrapping_add(k1) ^ k2;
        }
        black_box(x);
    });
    2.0 * STEPS as f64 / secs / 1e9
}

/// Independent fused multiply-adds on the widest f32 vectors the processor
/// has (the vector unit pulp detects at run time): 12 chains, enough to
/// cover an FMA latency of 4 cycles on 2 units or 6 on 2, and few enough to
/// stay in the 16 registers of AVX2.
struct FmaBurst {
    iters: usize,
}

impl WithSimd for FmaBurst {
    /// (seconds, f32 lanes of a vector, vector FMAs done).
    type Output = (f64, usize, usize);

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> (f64, usize, usize) {
        const CHAINS: usize = 12;
        let a = simd.splat_f32s(black_box(0.999_999));
        let b = simd.splat_f32s(black_box(1e-7));
        let mut acc = [simd.splat_f32s(1.0); CHAINS];
        let start = Instant::now();
        for _ in 0..self.iters {
            for r in &mut acc {
                *r = simd.mul_add_e_f32s(*r, a, b);
            }
        }
        let secs = start.elapsed().as_secs_f64();
        black_box(&acc);
        (secs, S::F32_LANES, self.iters * CHAINS)
    }
}

/// The core's f32 FMA peak: clock × lanes × FMA units × 2 FLOP.
struct Peak {
    ghz: f64,
    lanes: usize,
    fma_per_cycle: f64,
    units: f64,
    gflops: f64,
}

impl Peak {
    fn measure() -> Peak {
        let ghz = clock_ghz();
        let arch = pulp::Arch::new();
        let (secs, lanes, fmas) = (0..300)
            .map(|_| arch.dispatch(FmaBurst { iters: 50_000 }))
            .fold(
                (f64::INFINITY, 1, 0),
                |best, r| if r.0 < best.0 { r } else { best },
            );
        let fma_per_cycle = fmas as f64 / secs / (ghz * 1e9);
        // Units issue whole vector FMAs: the measured rate is a whole number
        // of them a cycle, less what the loop and the clock's noise cost.
        let units = fma_per_cycle.round().max(1.0);
        Peak {
            ghz,
            lanes,
            fma_per_cycle,
            units,
            gflops: ghz * lanes as f64 * units * 2.0,
        }
    }

    fn describe(&self) -> String {
        let width = match self.lanes {
            16 => "512-bit (AVX-512)",
            8 => "256-bit (AVX2)",
            4 => "128-bit",
            _ => "scalar",
        };
        format!(
            "FMA peak: {:.1} GFLOP/s per core = {:.2} GHz (measured: a chain of dependent add+xor steps, 2 cycles each) \
             × {} f32 lanes ({width} vectors, detected) × {} FMA units (measured: {:.2} vector FMAs a cycle on 12 independent chains) × 2 FLOP",
            self.gflops, self.ghz, self.lanes, self.units, self.fma_per_cycle
        )
    }
}

/// One of the benchmark's matrix products: `m × k` times `k × n`, each
/// operand stored row-major or transposed, as the model stores it.
struct Product {
    what: &'static str,
    m: usize,
    k: usize,
    n: usize,
    a_t: bool,
    b_t: bool,
    add: bool,
}

/// The six products of one microbatch of `rows` packed positions (H = 64,
/// F = 256, V = 256; more rows than tokens, so the embedding's three go
/// through the tokens: `[V, H]·[H, F]` instead of `[rows, H]·[H, F]`), and
/// the 512³ reference.
fn products(rows: usize) -> [Product; 7] {
    let p = |what, m, k, n, a_t, b_t, add| Product {
        what,
        m,
        k,
        n,
        a_t,
        b_t,
        add,
    };
    let (h, f, v) = (64, 256, 256);
    [
        p("embed·w1", v, h, f, false, false, false),
        p("h·w2", rows, f, v, false, false, true),
        p("dW2 += hᵀ·dlogits", f, rows, v, true, false, true),
        p("dlogits·w2ᵀ", rows, v, f, false, true, false),
        p("dW1 += embedᵀ·S", h, v, f, true, false, true),
        p("dEmbed += S·w1ᵀ", v, f, h, false, true, true),
        p("512³", 512, 512, 512, false, false, false),
    ]
}

/// GFLOP/s of the fastest of `reps` runs of `p` by matrixmultiply and by
/// the engine's [`gemm`] (faer).
fn time_product(p: &Product, reps: u32) -> (f64, f64) {
    let (ar, ac) = if p.a_t { (p.k, p.m) } else { (p.m, p.k) };
    let (br, bc) = if p.b_t { (p.n, p.k) } else { (p.k, p.n) };
    let a = vec![0.5f32; ar * ac];
    let b = vec![0.25f32; br * bc];
    let mut c = vec![0.0f32; p.m * p.n];
    let beta = if p.add { 1.0 } else { 0.0 };
    let flops = 2.0 * (p.m * p.k * p.n) as f64;
    let view = |buf, r, c| ArrayView2::from_shape((r, c), buf).expect("sized");
    let (av, bv) = (view(&a, ar, ac), view(&b, br, bc));
    let (av, bv) = (
        if p.a_t { av.t() } else { av },
        if p.b_t { bv.t() } else { bv },
    );
    let mm = fastest(reps, &mut || {
        let mut cv = ndarray::ArrayViewMut2::from_shape((p.m, p.n), &mut c[..]).expect("sized");
        general_mat_mul(1.0, &av, &bv, beta, &mut cv);
        black_box(&cv);
    });
    let (fa, fb) = (op(mat(&a, ar, ac), p.a_t), op(mat(&b, br, bc), p.b_t));
    let faer = fastest(reps, &mut || {
        gemm(mat_mut(&mut c, p.m, p.n), p.add, fa, fb);
        black_box(&c);
    });
    (flops / mm / 1e9, flops / faer / 1e9)
}

/// `m`, or its transpose.
fn op(m: MatRef<'_>, transpose: bool) -> MatRef<'_> {
    if transpose { m.transpose() } else { m }
}

/// PyTorch's sgemm on the same products, from the reference script's JSON
/// (`"sgemm"`): the BLAS it links, the rows of its own median m=32
/// microbatch, and GFLOP/s with the shape of each product by name.
struct TorchSgemm {
    blas: String,
    rows: u64,
    products: Vec<(String, [u64; 3], f64)>,
}

impl TorchSgemm {
    fn read(torch: &serde_json::Value) -> Option<TorchSgemm> {
        let sgemm = &torch["sgemm"];
        let products = sgemm["products"]
            .as_array()?
            .iter()
            .filter_map(|p| {
                let dim = |d: &str| p[d].as_u64();
                Some((
                    p["what"].as_str()?.to_owned(),
                    [dim("m")?, dim("k")?, dim("n")?],
                    p["gflops"].as_f64()?,
                ))
            })
            .collect();
        Some(TorchSgemm {
            blas: sgemm["blas"].as_str().unwrap_or("unknown").to_owned(),
            rows: sgemm["rows"].as_u64()?,
            products,
        })
    }

    fn gflops(&self, what: &str) -> Option<f64> {
        self.products
            .iter()
            .find_map(|(w, _, g)| (w == what).then_some(*g))
    }

    /// Seconds of the six products of its microbatch, in sequence.
    fn six_seconds(&self) -> f64 {
        self.products
            .iter()
            .filter(|(w, _, _)| w != "512³")
            .map(|(_, [m, k, n], g)| 2.0 * (m * k * n) as f64 / (g * 1e9))
            .sum()
    }
}

/// Prints the side-by-side sgemm table on the benchmark's product shapes
/// for `rows` packed positions (with PyTorch's column when its reference
/// JSON has one), and returns the best 512³ figure of the two Rust GEMMs.
fn gemm_table(rows: usize, peak: &Peak, torch: Option<&TorchSgemm>) -> f64 {
    println!(
        "\nsgemm on one thread, GFLOP/s (fastest of 40; % of the FMA peak), the six products of a microbatch of {rows} positions (m32_a8):"
    );
    let torch_head = torch.map_or_else(String::new, |t| {
        format!("  {:>16}", format!("PyTorch ({})", t.blas))
    });
    println!(
        "  {:<20} {:>16}  {:>16}  {:>16}{torch_head}",
        "product",
        "m × k × n",
        format!("matrixmultiply {}", matrixmultiply_kernel()),
        "faer (engine)"
    );
    let pct = |g: f64| format!("{g:.1} ({:.0}%)", 100.0 * g / peak.gflops);
    let mut best = 0.0f64;
    let mut total = [0.0f64; 3];
    for p in products(rows) {
        let (mm, faer) = time_product(&p, 40);
        let torch_cell = torch
            .and_then(|t| t.gflops(p.what))
            .map_or_else(String::new, |g| format!("  {:>16}", pct(g)));
        println!(
            "  {:<20} {:>16}  {:>16}  {:>16}{torch_cell}",
            p.what,
            format!("{}×{}×{}", p.m, p.k, p.n),
            pct(mm),
            pct(faer)
        );
        let flops = 2.0 * (p.m * p.k * p.n) as f64;
        if p.what == "512³" {
            best = mm.max(faer);
        } else {
            total[0] += flops;
            total[1] += flops / mm;
            total[2] += flops / faer;
        }
    }
    let ms = |t: f64| format!("{:.3} ms", t * 1e-6);
    let torch_total = torch.map_or_else(String::new, |t| {
        format!("  {:>16}", format!("{:.3} ms", t.six_seconds() * 1e3))
    });
    println!(
        "  {:<20} {:>16}  {:>16}  {:>16}{torch_total}",
        "the six, in sequence",
        format!("{:.2} GFLOP", total[0] / 1e9),
        ms(total[1]),
        ms(total[2])
    );
    if let Some(t) = torch {
        println!(
            "  PyTorch's column: torch.mm on its own data's median m=32 microbatch, {} positions",
            t.rows
        );
    }
    println!("engine products: {}", gemm_kernel());
    best
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
    allocations: usize,
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
            self.region = Some(Region::new(GLOBAL));
        }
        if self.seen == self.warmup + self.updates {
            if let Some(region) = &self.region {
                self.allocations = region.change().allocations;
            }
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
    /// Model FLOP/s per core.
    gflops: f64,
    allocations: f64,
    peak_bytes: u64,
}

fn measure(plan: (u64, u64, u64), threads: usize, updates: usize) -> Measured {
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
        allocations: 0,
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
        gflops: flops / cores / 1e9,
        allocations: clock.allocations as f64 / updates as f64,
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

/// An engine of m=32/A=8/D=1 after its first update, and that update's
/// microbatches.
fn m32_microbatches() -> (Engine, Vec<PackedMicrobatch>) {
    let mut e = engine(32, 8, 1, 1);
    e.step(&mut RunOptions::default()).expect("an update");
    let data = Dataset::synthetic(&config(1).data);
    let by_id = |id: u64| &data.examples()[id as usize];
    let microbatches = e
        .last_group_ids()
        .chunks(32)
        .map(|ids| PackedMicrobatch::of(ids.iter().map(|&id| by_id(id))))
        .collect();
    (e, microbatches)
}

/// Where one update of m=32/A=8/D=1 on one thread goes: the model's
/// matrix products replayed with the same shapes, the rest of the model
/// (packing and element-wise work), the optimizer, and everything else
/// of the loop (group assembly, checks, norm, zeroing).
fn profile(update_ms: f64) {
    let plan = (32u64, 8u64, 1u64);
    let (e, microbatches) = m32_microbatches();
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
    let ns: Vec<usize> = microbatches
        .iter()
        .map(PackedMicrobatch::positions)
        .collect();
    let nmax = ns.iter().copied().max().unwrap_or(0);
    // Through the tokens (more rows than tokens): the embedding's products
    // have V rows, S is the [V, F] sum of dz by token.
    let embed = vec![0.1f32; v * h];
    let mut table = vec![0.0f32; v * f];
    let hid = vec![0.1f32; nmax * f];
    let mut hid_out = vec![0.0f32; nmax * f];
    let mut logits = vec![0.0f32; nmax * v];
    let sums = vec![0.1f32; v * f];
    let w1 = vec![0.1f32; h * f];
    let w2 = vec![0.1f32; f * v];
    let mut gw1 = vec![0.0f32; h * f];
    let mut gw2 = vec![0.0f32; f * v];
    let mut gembed = vec![0.0f32; v * h];
    let matmul_ms = best(&mut || {
        for &n in &ns {
            let hn = mat(&hid, n, f);
            let (w1m, w2m, em, sm) = (
                mat(&w1, h, f),
                mat(&w2, f, v),
                mat(&embed, v, h),
                mat(&sums, v, f),
            );
            gemm(mat_mut(&mut table, v, f), false, em, w1m);
            gemm(mat_mut(&mut logits, n, v), true, hn, w2m);
            let lg = mat(&logits, n, v);
            gemm(mat_mut(&mut gw2, f, v), true, hn.transpose(), lg);
            gemm(mat_mut(&mut hid_out, n, f), false, lg, w2m.transpose());
            gemm(mat_mut(&mut gw1, h, f), true, em.transpose(), sm);
            gemm(mat_mut(&mut gembed, v, h), true, sm, w1m.transpose());
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
    let executed: f64 = ns
        .iter()
        .flat_map(|&n| products(n).into_iter().take(6))
        .map(|p| 2.0 * (p.m * p.k * p.n) as f64)
        .sum();
    let model_flops = ns.iter().sum::<usize>() as f64 * model.flops_per_token().unwrap_or(0) as f64;
    println!("\nwhere one update goes (m32_a8_d1, 1 thread, {update_ms:.1} ms):");
    println!(
        "  model FLOPs {:.2} GFLOP (6HF + 6FV a token, what MFU counts); products run {:.2} GFLOP ({:.0}%)",
        model_flops / 1e9,
        executed / 1e9,
        100.0 * executed / model_flops
    );
    let row = |what: &str, ms: f64, note: &str| {
        println!(
            "  {what:<12} {ms:>8.2} ms {:>6.1}%  {note}",
            100.0 * ms / update_ms
        );
    };
    row(
        "matmul",
        matmul_ms,
        "6 products per microbatch, same shapes, replayed (the embedding's through the tokens)",
    );
    row(
        "elementwise",
        elementwise_ms,
        "packing, tanh, softmax + cross-entropy, tanh backward, sums by token",
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
    let peak = Peak::measure();
    println!("{}", peak.describe());
    let rows = {
        let mut ns: Vec<usize> = m32_microbatches()
            .1
            .iter()
            .map(PackedMicrobatch::positions)
            .collect();
        ns.sort_unstable();
        ns[ns.len() / 2]
    };
    let torch_sgemm = torch.as_ref().and_then(TorchSgemm::read);
    let sgemm = gemm_table(rows, &peak, torch_sgemm.as_ref());
    println!(
        "sgemm peak: {sgemm:.1} GFLOP/s, the fastest 512³ above ({:.0}% of the FMA peak)\n",
        100.0 * sgemm / peak.gflops
    );
    println!(
        "{:<12} {:>3} {:>10} {:>8} {:>11} {:>8} {:>10} {:>12} {:>12} {:>14}",
        "plan",
        "thr",
        "ms/update",
        "cpu ms",
        "tokens/s",
        "MFU FMA",
        "MFU sgemm",
        "allocs/upd",
        "peak bytes",
        "PyTorch ms"
    );
    let mut m32 = [0.0f64; 3];
    for plan in PLANS {
        for threads in [1, 2] {
            let r = measure(plan, threads, updates);
            let torch_ms = torch.as_ref().and_then(|t| pytorch(t, plan, threads));
            println!(
                "{:<12} {:>3} {:>10.1} {:>8} {:>11.0} {:>7.1}% {:>9.1}% {:>12.1} {:>12} {:>14}",
                label(plan),
                threads,
                r.ms,
                r.cpu_ms
                    .map_or_else(|| "?".to_owned(), |c| format!("{c:.0}")),
                r.tokens_per_s,
                100.0 * r.gflops / peak.gflops,
                100.0 * r.gflops / sgemm,
                r.allocations,
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
    let one = measure((32, 8, 1), 1, updates);
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
    let a = vec![0.5f32; n * n];
    let b = vec![0.25f32; n * n];
    let mut c = vec![0.0f32; n * n];
    bencher
        .counter(ItemsCount::new(2 * n * n * n))
        .bench_local(|| {
            gemm(
                mat_mut(black_box(&mut c), n, n),
                false,
                mat(&a, n, n),
                mat(&b, n, n),
            );
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
