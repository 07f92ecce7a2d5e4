//! A training loop of one's own on accum's smallest layer: a derived
//! config and the loop driver, with no tensor crate and no command line
//! (`accum = { default-features = false, features = ["derive"] }`,
//! docs/architecture.md "Layers").
//!
//! The model is a line `y = w·x + b` fitted to sequences of `(x, y)` pairs
//! of different lengths, in plain `f64` arithmetic: the driver gives each
//! update's examples, their microbatches and the per-token denominator, the
//! schedule gives the learning rate.

use accum::driver::{Driver, DriverError, Outcome};
use accum::plan::Rounding;
use accum::replica::{InProcess, ReduceError};
use accum::schedule::{Schedule, ScheduleError};
use accum::settings::{Normalization, ScheduleKind};
use accum::{AccumConfig, Findings, Span};
use serde::Deserialize;

/// The run's config, as a user writes it: the plan's roles and two lengths
/// in units said out loud.
#[derive(Debug, Deserialize, AccumConfig)]
pub struct Train {
    /// Examples per microbatch (`m`).
    #[accum(micro_batch)]
    pub micro_batch: u32,
    /// Microbatches accumulated per update (`A`).
    #[accum(accumulation)]
    pub accumulation: u32,
    /// Data-parallel replicas (`D`).
    #[accum(replicas)]
    pub replicas: u32,
    /// Examples per update, checked against `m·A·D`.
    #[accum(global_batch)]
    pub global_batch: Option<u32>,
    /// The learning rate's warmup, e.g. `"40 examples"`.
    #[accum(warmup)]
    pub warmup: Span,
    /// The run's length, e.g. `"100 updates"`.
    #[accum(total)]
    pub total: Span,
    /// The peak learning rate.
    pub lr: f64,
}

/// One example: a sequence of `(x, y)` pairs on the line `y = 3x − 1`.
pub type Example = Vec<(f64, f64)>;

/// `n` examples of 3 to 7 pairs each.
pub fn data(n: usize) -> Vec<Example> {
    (0..n)
        .map(|i| {
            (0..3 + i % 5)
                .map(|t| {
                    let x = ((i * 7 + t) % 10) as f64 / 10.0;
                    (x, 3.0 * x - 1.0)
                })
                .collect()
        })
        .collect()
}

/// What went wrong in a run.
#[derive(Debug)]
pub enum RunError {
    /// The config breaks a plan rule.
    Config(Findings),
    /// The schedule does not fit the plan.
    Schedule(ScheduleError),
    /// The driver refused a step.
    Driver(DriverError),
    /// The reduction across replicas failed.
    Reduce(ReduceError),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Config(findings) => write!(f, "{findings}"),
            RunError::Schedule(err) => write!(f, "{err}"),
            RunError::Driver(err) => write!(f, "{err}"),
            RunError::Reduce(err) => write!(f, "{err}"),
        }
    }
}

impl std::error::Error for RunError {}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The slope learnt.
    pub w: f64,
    /// The intercept learnt.
    pub b: f64,
    /// The mean per-token loss of each update, in order.
    pub losses: Vec<f64>,
    /// Updates applied.
    pub updates: u64,
    /// Examples seen.
    pub examples: u64,
}

/// The gradient of the per-token squared error over `examples`, each
/// token's loss divided by `den`: `(∂w, ∂b, loss)`.
pub fn gradient(data: &[Example], examples: &[usize], w: f64, b: f64, den: f64) -> (f64, f64, f64) {
    let (mut gw, mut gb, mut loss) = (0.0, 0.0, 0.0);
    for &(x, y) in examples.iter().flat_map(|&id| &data[id]) {
        let err = w * x + b - y;
        loss += err * err / den;
        gw += 2.0 * err * x / den;
        gb += 2.0 * err / den;
    }
    (gw, gb, loss)
}

/// Fits the line with the plan and schedule of `train`, on one replica in
/// this process. Every update's gradient is accumulated over its
/// microbatches and divided once by the group's token count.
pub fn fit(train: &Train, data: &[Example], seed: u64) -> Result<Fitted, RunError> {
    let plan = train.plan().map_err(RunError::Config)?;
    let schedule = Schedule::from_spans(
        ScheduleKind::Linear,
        train.lr,
        train.warmup,
        train.total,
        &plan,
        Rounding::Up,
    )
    .map_err(RunError::Schedule)?;
    let mut driver = Driver::builder(plan, data.len())
        .seed(seed)
        .schedule(schedule)
        .build()
        .map_err(RunError::Driver)?;
    let reducer = InProcess::new(1);
    let (mut w, mut b) = (0.0_f64, 0.0_f64);
    let mut losses = Vec::new();
    while let Some(mut group) = driver.next_group().map_err(RunError::Driver)? {
        let den = group
            .denominator(
                Normalization::PerToken,
                |id| data[id].len() as u64,
                &reducer,
            )
            .map_err(RunError::Driver)?;
        let (mut gw, mut gb, mut loss) = (0.0, 0.0, 0.0);
        for microbatch in group.microbatches() {
            let (dw, db, l) = gradient(data, microbatch.ids, w, b, den.value);
            gw += dw;
            gb += db;
            loss += l;
        }
        let lr = driver.lr().unwrap_or(train.lr);
        w -= lr * gw;
        b -= lr * gb;
        losses.push(loss);
        driver
            .finish(group, Outcome::Applied)
            .map_err(RunError::Driver)?;
    }
    let progress = driver.progress();
    Ok(Fitted {
        w,
        b,
        losses,
        updates: progress.updates.get(),
        examples: progress.examples.get(),
    })
}
