//! A training loop of one's own, in plain Rust, driven by accum.
//!
//! The model is a line `y = w·x + b` fitted to sequences of `(x, y)` points
//! of different lengths: every point is a supervised token, and the loss is
//! the mean squared error per token of each update's whole group. The
//! "framework" is a few lines of arithmetic; the rest is what any loop
//! needs, and accum gives it:
//!
//! - the config is the user's own struct, derived with `AccumConfig`:
//!   nested `batch`, `parallel` and `optim` sections, 8 devices with tensor
//!   parallel 2 (so `D = 4` data-parallel ranks), lengths with their units;
//! - the driver deals each update's examples to the ranks and microbatches,
//!   and counts the group's tokens before the first backward pass;
//! - the schedule is counted on the run: its warmup in tokens ends on the
//!   update whose real token count reaches it, exact for variable-length
//!   data, and the run ends on the update whose examples reach its total;
//! - the ranks are threads; each sums its gradient through its rank's
//!   `Member` of one `InProcess` reducer, on a plain `[f64]`, in rank order
//!   (so two runs give the same bits), and a rank that fails ends the others
//!   with an error instead of a hang.

use std::error::Error;

use accum::driver::{Driver, DriverNote, Outcome};
use accum::plan::Plan;
use accum::replica::{InProcess, Member, Reducer};
use accum::schedule::Schedule;
use accum::settings::{Normalization, ScheduleKind};
use accum::{AccumConfig, Span, Updates};
use serde::{Deserialize, Serialize};

/// Errors of the example, sendable across the rank threads.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// The user's config (`config.toml`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema, AccumConfig)]
#[accum(variable_length)]
pub struct Config {
    /// The seed of the data order.
    pub seed: u64,
    /// How often the loop logs the loss.
    #[accum(every)]
    pub eval_every: Updates,
    /// The batch.
    #[accum(nested)]
    pub batch: BatchSection,
    /// The devices.
    #[accum(nested)]
    pub parallel: ParallelSection,
    /// The optimizer and its schedule.
    #[accum(nested)]
    pub optim: OptimSection,
}

/// `[batch]`: `m` and `B`; `A` follows when it is not given.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema, AccumConfig)]
#[accum(section)]
pub struct BatchSection {
    /// Examples per microbatch per rank.
    #[accum(micro_batch)]
    pub micro_batch: u32,
    /// Microbatches per update per rank.
    #[accum(accumulation)]
    pub accumulation: Option<u32>,
    /// Examples per update.
    #[accum(global_batch)]
    pub global_batch: u32,
}

/// `[parallel]`: the devices; the data-parallel ranks are what tensor
/// parallelism leaves.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema, AccumConfig)]
#[accum(section)]
pub struct ParallelSection {
    /// All devices.
    #[accum(world_size)]
    pub world_size: u32,
    /// Devices that split one copy of the model.
    #[accum(tensor_parallel)]
    pub tensor_parallel: u32,
}

/// `[optim]`: SGD with a cosine schedule.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema, AccumConfig)]
#[accum(section)]
pub struct OptimSection {
    /// The peak learning rate.
    pub lr: f64,
    /// The warmup, in any unit ("2k tokens").
    #[accum(warmup)]
    pub warmup: Span,
    /// The run's length, in any unit ("1200 examples").
    #[accum(total)]
    pub total: Span,
}

/// Reads and checks a config: every problem at once, each with its field.
pub fn load(text: &str) -> Result<(Config, Plan), BoxError> {
    let config: Config = toml::from_str(text)?;
    if let Err(findings) = config.validate() {
        return Err(findings.to_string().into());
    }
    let plan = config.plan()?;
    Ok((config, plan))
}

/// One example: a sequence of `(x, y)` points, each a supervised token.
pub type Example = Vec<(f64, f64)>;

/// `n` examples of 3 to 12 points on the line `y = 3x − 1`.
pub fn data(n: usize) -> Vec<Example> {
    (0..n)
        .map(|i| {
            (0..3 + (i * 7) % 10)
                .map(|t| {
                    let x = ((i * 13 + t * 5) % 17) as f64 / 17.0;
                    (x, 3.0 * x - 1.0)
                })
                .collect()
        })
        .collect()
}

/// Supervised tokens of an example: its points.
fn tokens(data: &[Example], id: usize) -> u64 {
    data[id].len() as u64
}

/// The summed gradient of `ids`' squared errors at `(w, b)`, each token's
/// divided by `denominator`: `[∂/∂w, ∂/∂b]`.
pub fn gradient(data: &[Example], ids: &[usize], (w, b): (f64, f64), denominator: f64) -> [f64; 2] {
    let mut grad = [0.0; 2];
    for &(x, y) in ids.iter().flat_map(|&id| &data[id]) {
        let err = w * x + b - y;
        grad[0] += 2.0 * err * x / denominator;
        grad[1] += 2.0 * err / denominator;
    }
    grad
}

/// What a run did, as rank 0 saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The parameters at the end, `(w, b)`.
    pub params: (f64, f64),
    /// The reduced gradient of the first update.
    pub first_gradient: [f64; 2],
    /// Per applied update: the tokens trained before it, and its rate.
    pub rates: Vec<(u64, f64)>,
    /// The loss of every update.
    pub losses: Vec<f64>,
    /// The update in which the warmup ended.
    pub warmup_end: Updates,
    /// Updates, examples and tokens at the end.
    pub progress: accum::driver::Progress,
    /// What the run did that the lengths do not say.
    pub notes: Vec<DriverNote>,
    /// The log lines, one per `eval_every`.
    pub log: Vec<String>,
}

/// Trains on `data` with `plan.replicas()` ranks, one thread each, and
/// returns rank 0's run; every rank's error is reported.
pub fn train(config: &Config, plan: Plan, data: &[Example]) -> Result<Run, BoxError> {
    let d = plan.replicas() as usize;
    let reducer = InProcess::new(d);
    let members = (0..d)
        .map(|rank| reducer.member(rank))
        .collect::<Result<Vec<Member>, _>>()?;
    let runs: Vec<Result<Run, BoxError>> = std::thread::scope(|s| {
        let handles: Vec<_> = members
            .into_iter()
            .map(|member| s.spawn(move || rank(config, plan, data, &member)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a rank panicked".into())))
            .collect()
    });
    let mut runs = runs.into_iter();
    let first = runs.next().ok_or("no rank ran")?;
    for other in runs {
        other?;
    }
    first
}

/// One rank's loop. When it returns, with a result or an error, its
/// member is dropped: a rank still waiting for it gets an error.
fn rank(config: &Config, plan: Plan, data: &[Example], member: &Member) -> Result<Run, BoxError> {
    let rank = member.rank();
    let optim = &config.optim;
    let schedule = Schedule::counted(
        ScheduleKind::Cosine,
        optim.lr,
        optim.warmup,
        optim.total,
        plan,
    )?;
    let mut driver = Driver::builder(plan, data.len())
        .seed(config.seed)
        .rank(rank)
        .schedule(schedule)
        .interval(config.eval_every)
        .build()?;
    let (mut w, mut b) = (0.0_f64, 0.0_f64);
    let mut first_gradient = None;
    let (mut rates, mut losses, mut log) = (Vec::new(), Vec::new(), Vec::new());
    while let Some(mut group) = driver.next_group()? {
        // The group's tokens over every rank, before the first backward pass.
        let den = group.denominator(Normalization::PerToken, |id| tokens(data, id), member)?;
        // Zeroed once per group; each microbatch adds its part. The loss
        // rides along in the same all-reduce.
        let mut sums = [0.0_f64; 3];
        for mb in group.microbatches() {
            let g = gradient(data, mb.ids, (w, b), den.value);
            sums[0] += g[0];
            sums[1] += g[1];
            for &(x, y) in mb.ids.iter().flat_map(|&id| &data[id]) {
                sums[2] += (w * x + b - y).powi(2) / den.value;
            }
            // `mb.sync`: after this microbatch's backward pass, the all-reduce.
        }
        member.all_reduce_f64(rank, &mut sums)?;
        first_gradient.get_or_insert([sums[0], sums[1]]);
        let lr = driver.lr().ok_or("a schedule was given")?;
        rates.push((driver.progress().tokens.get(), lr));
        losses.push(sums[2]);
        (w, b) = (w - lr * sums[0], b - lr * sums[1]);
        let progress = *driver.finish(group, Outcome::Applied)?;
        if driver.every(config.eval_every) {
            log.push(format!(
                "{:>4} updates {:>6} examples {:>6} tokens  lr {lr:.4}  loss {:.3e}",
                progress.updates.get(),
                progress.examples.get(),
                progress.tokens.get(),
                sums[2]
            ));
        }
    }
    let schedule = driver.schedule().ok_or("a schedule was given")?;
    Ok(Run {
        params: (w, b),
        first_gradient: first_gradient.ok_or("no update ran")?,
        rates,
        losses,
        warmup_end: schedule.warmup(),
        progress: *driver.progress(),
        notes: driver.notes(),
        log,
    })
}
