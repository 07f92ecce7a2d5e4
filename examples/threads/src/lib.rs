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
//!   with an error instead of a hang;
//! - the loop checkpoints every K updates and resumes from a checkpoint
//!   ([`Checkpoint`]): rank 0 saves `driver.state()` with the model's
//!   parameters as JSON, written to a temporary file and renamed; a resumed
//!   run builds its drivers with `Driver::builder(..).resume(state)`, which
//!   continues the data, the counters and the warmup in O(1), replays
//!   nothing and reads no example's length up front. The plan may change if
//!   the global batch stays (4 ranks → 2 with the accumulation doubled).
//!   The optimizer is plain SGD: its only state is the learning rate, and
//!   that is the schedule's position, inside the driver's state.

use std::error::Error;
use std::path::{Path, PathBuf};

use accum::driver::{Driver, DriverNote, DriverState, Outcome};
use accum::fsio::{Durability, Naming, write_atomic};
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
    (0..n).map(example).collect()
}

/// Where the loop reads its examples: by id, one at a time, when a group
/// needs them. Only the number of examples is known up front, as for a
/// stream whose lengths are known once an example is read.
pub trait Source: Sync {
    /// The number of examples.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Example `id`, read now.
    fn example(&self, id: usize) -> Example;
}

impl Source for [Example] {
    fn len(&self) -> usize {
        <[Example]>::len(self)
    }
    fn example(&self, id: usize) -> Example {
        self[id].clone()
    }
}

impl Source for Vec<Example> {
    fn len(&self) -> usize {
        <[Example]>::len(self)
    }
    fn example(&self, id: usize) -> Example {
        self[id].clone()
    }
}

/// Example `i` of [`data`], made when it is read.
fn example(i: usize) -> Example {
    (0..3 + (i * 7) % 10)
        .map(|t| {
            let x = ((i * 13 + t * 5) % 17) as f64 / 17.0;
            (x, 3.0 * x - 1.0)
        })
        .collect()
}

/// The examples of [`data`] as a stream: each is made when it is read,
/// and the reads are counted, so a test can see which lengths a run
/// needed.
#[derive(Debug)]
pub struct Stream {
    n: usize,
    reads: std::sync::atomic::AtomicU64,
}

impl Stream {
    /// A stream of `n` examples, none read yet.
    pub fn new(n: usize) -> Stream {
        Stream {
            n,
            reads: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Examples read so far (an example read twice counts twice).
    pub fn reads(&self) -> u64 {
        self.reads.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Source for Stream {
    fn len(&self) -> usize {
        self.n
    }
    fn example(&self, id: usize) -> Example {
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        example(id)
    }
}

/// What a checkpoint holds: the driver's position (rank 0's, the same on
/// every rank) and the model's parameters after the same update. SGD keeps
/// no state of its own; its learning rate is the schedule's position,
/// inside `state`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// The driver's state after the update.
    pub state: DriverState,
    /// The parameters `(w, b)` after the update.
    pub params: (f64, f64),
}

impl Checkpoint {
    /// Writes the checkpoint as JSON to `path`: a temporary file in the
    /// same folder, then a rename, so `path` holds the previous checkpoint
    /// or this one, never part of one.
    pub fn save(&self, path: &Path) -> Result<(), BoxError> {
        let json = serde_json::to_vec_pretty(self)?;
        write_atomic(path, &json, Durability::Synced, Naming::Given)?;
        Ok(())
    }

    /// Reads a checkpoint [`save`](Self::save) wrote; a state of another
    /// version is refused, never misread.
    pub fn load(path: &Path) -> Result<Checkpoint, BoxError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the checkpoint: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a checkpoint of this loop: {e}", path.display()).into())
    }
}

/// How a run checkpoints, resumes and stops.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Save a checkpoint to this file every so many updates.
    pub checkpoint: Option<(PathBuf, Updates)>,
    /// Continue from this checkpoint.
    pub resume: Option<Checkpoint>,
    /// Consent to resume under another global batch.
    pub allow_global_batch_change: bool,
    /// Stop inside the group of this attempt (1-based, counted over the
    /// whole run), after its first microbatch, as a killed process would:
    /// the group's work is lost and nothing more is saved.
    pub kill_inside: Option<u64>,
}

/// The summed gradient of `ids`' squared errors at `(w, b)`, each token's
/// divided by `denominator`: `[∂/∂w, ∂/∂b]`.
pub fn gradient(data: &[Example], ids: &[usize], params: (f64, f64), denominator: f64) -> [f64; 2] {
    let examples: Vec<&Example> = ids.iter().map(|&id| &data[id]).collect();
    gradient_of(&examples, params, denominator)
}

/// The summed gradient of `examples`' squared errors, as [`gradient`].
fn gradient_of(examples: &[&Example], (w, b): (f64, f64), denominator: f64) -> [f64; 2] {
    let mut grad = [0.0; 2];
    for &(x, y) in examples.iter().flat_map(|e| e.iter()) {
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
    /// The reduced gradient of the run's first update (the first after
    /// the resume, for a resumed run).
    pub first_gradient: [f64; 2],
    /// Updates applied before this run started: 0, or the resumed
    /// checkpoint's.
    pub resumed_after: u64,
    /// The example ids of every update of this run, sorted.
    pub ids: Vec<Vec<usize>>,
    /// Whether the run was stopped by [`Options::kill_inside`].
    pub killed: bool,
    /// Per applied update of this run: the tokens trained before it, and
    /// its rate.
    pub rates: Vec<(u64, f64)>,
    /// The loss of every update of this run.
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
    train_with(config, plan, data, &Options::default())
}

/// [`train`], reading `data` as it goes, with checkpoints, a resume or a
/// kill as `options` say.
pub fn train_with<S: Source + ?Sized>(
    config: &Config,
    plan: Plan,
    data: &S,
    options: &Options,
) -> Result<Run, BoxError> {
    let d = plan.replicas() as usize;
    let reducer = InProcess::new(d);
    let members = (0..d)
        .map(|rank| reducer.member(rank))
        .collect::<Result<Vec<Member>, _>>()?;
    let runs: Vec<Result<Run, BoxError>> = std::thread::scope(|s| {
        let handles: Vec<_> = members
            .into_iter()
            .map(|member| s.spawn(move || rank(config, plan, data, options, &member)))
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
fn rank<S: Source + ?Sized>(
    config: &Config,
    plan: Plan,
    data: &S,
    options: &Options,
    member: &Member,
) -> Result<Run, BoxError> {
    let rank = member.rank();
    let optim = &config.optim;
    let schedule = Schedule::counted(
        ScheduleKind::Cosine,
        optim.lr,
        optim.warmup,
        optim.total,
        plan,
    )?;
    let mut builder = Driver::builder(plan, data.len())
        .seed(config.seed)
        .rank(rank)
        .schedule(schedule)
        .interval(config.eval_every);
    if let Some((_, every)) = &options.checkpoint {
        builder = builder.interval(*every);
    }
    if options.allow_global_batch_change {
        builder = builder.allow_global_batch_change();
    }
    // The model starts where the checkpoint left it; the driver, at its
    // update boundary: the same data order, counters and warmup, in O(1).
    let (mut w, mut b) = match &options.resume {
        Some(checkpoint) => {
            builder = builder.resume(checkpoint.state.clone());
            checkpoint.params
        }
        None => (0.0_f64, 0.0_f64),
    };
    let mut driver = builder.build()?;
    let resumed_after = driver.progress().updates.get();
    let mut first_gradient = None;
    let (mut rates, mut losses, mut log, mut ids) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    while let Some(mut group) = driver.next_group()? {
        // The group's tokens over every rank, before the first backward pass.
        let den = group.denominator(
            Normalization::PerToken,
            |id| data.example(id).len() as u64,
            member,
        )?;
        // Zeroed once per group; each microbatch adds its part. The loss
        // rides along in the same all-reduce.
        let mut sums = [0.0_f64; 3];
        let kill = options.kill_inside == Some(group.attempt());
        for (i, mb) in group.microbatches().enumerate() {
            if kill && i == 1 {
                break;
            }
            let examples: Vec<Example> = mb.ids.iter().map(|&id| data.example(id)).collect();
            let examples: Vec<&Example> = examples.iter().collect();
            let g = gradient_of(&examples, (w, b), den.value);
            sums[0] += g[0];
            sums[1] += g[1];
            for &(x, y) in examples.iter().flat_map(|e| e.iter()) {
                sums[2] += (w * x + b - y).powi(2) / den.value;
            }
            // `mb.sync`: after this microbatch's backward pass, the all-reduce.
        }
        if kill {
            // Killed after the group's first microbatch: every rank stops
            // here, before the all-reduce, and the group's work is lost.
            return Ok(Run {
                params: (w, b),
                first_gradient: first_gradient.unwrap_or_default(),
                resumed_after,
                ids,
                killed: true,
                rates,
                losses,
                warmup_end: Updates::new(0),
                progress: *driver.progress(),
                notes: driver.notes(),
                log,
            });
        }
        member.all_reduce_f64(rank, &mut sums)?;
        let mut group_ids: Vec<usize> = group.ids().collect();
        group_ids.sort_unstable();
        ids.push(group_ids);
        first_gradient.get_or_insert([sums[0], sums[1]]);
        let lr = driver.lr().ok_or("a schedule was given")?;
        rates.push((driver.progress().tokens.get(), lr));
        losses.push(sums[2]);
        (w, b) = (w - lr * sums[0], b - lr * sums[1]);
        let progress = *driver.finish(group, Outcome::Applied)?;
        // At an update boundary the parameters and the position agree.
        // The position is the same on every rank: rank 0 saves it.
        if let Some((path, every)) = &options.checkpoint
            && rank == 0
            && driver.every(*every)
        {
            let checkpoint = Checkpoint {
                state: driver.state(),
                params: (w, b),
            };
            checkpoint.save(path)?;
        }
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
        resumed_after,
        ids,
        killed: false,
        rates,
        losses,
        warmup_end: schedule.warmup(),
        progress: *driver.progress(),
        notes: driver.notes(),
        log,
    })
}
