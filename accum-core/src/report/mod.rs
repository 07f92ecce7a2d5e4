//! The run report: everything a run sheet (`accum::sheet`) needs, serde-serializable
//! with stable keys — counters in named units (`accum::span`), per-update statistics,
//! the loss curve against its declared axis, memory peaks (`accum::run::memory`) and dropped
//! example ids (`accum::plan::partial-group`).
//!
//! A report has a bounded size, whatever the length of the run: the loss
//! curve and the per-update statistics are kept in [`Decimated`] buffers
//! (at most [`CURVE_CAPACITY`] points and [`KEPT_UPDATES`] updates, evenly
//! spread over the run: when a buffer fills, every other entry is dropped
//! and the spacing doubles), beside exact running summaries
//! ([`RunSummary`]). Every update at full resolution can be streamed to a
//! JSON Lines file beside the report ([`StatsStream`], `stream.rs`); the
//! report names it in [`RunReport::stats_stream`].
//!
//! Reading the logged points: [`logged_points`] gives the loss curve of a
//! report whichever form was written — from the stream beside it when the
//! report names one (every log point), else from the report's own bounded
//! curve.

use serde::{Deserialize, Serialize};

pub(crate) mod provenance;
mod read;
pub(crate) mod stream;

pub use provenance::Provenance;

pub use stream::{
    LoggedPoints, MAX_STREAM_BYTES, StatsError, StatsErrorKind, StatsLine, StatsStream,
    StreamedUpdates, logged_points, read_updates, stream_file, streamed_updates,
};

// The memory peaks a report holds; their one public path is here.
pub use crate::memory::{MemoryBreakdown, MemoryReport, ReplicaPeaks};
use crate::plan::{LastGroup, Plan};
use crate::settings::{LogAxis, Normalization, OptimizerKind, PrecisionMode};
use crate::units::{Examples, Microbatches, Tokens, UnitKind, Updates};

/// JSON has no NaN or infinity: such values are written as `null` and read
/// back as NaN, so a report with a skipped attempt still round-trips.
mod non_finite_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        if value.is_finite() {
            serializer.serialize_f64(*value)
        } else {
            serializer.serialize_none()
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
    }
}

/// The format tag of [`RunReport`] JSON.
pub const REPORT_FORMAT: &str = "accum-run/1";

/// The plan a run used, as plain numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSummary {
    /// `m`.
    pub micro_batch: u64,
    /// `A`.
    pub accumulation: u64,
    /// `D`.
    pub replicas: u64,
    /// `B = m·A·D`.
    pub effective_batch: u64,
    /// `L`, when fixed.
    pub seq_len: Option<u64>,
}

impl From<&Plan> for PlanSummary {
    fn from(plan: &Plan) -> Self {
        PlanSummary {
            micro_batch: plan.micro_batch(),
            accumulation: plan.accumulation(),
            replicas: plan.replicas(),
            effective_batch: plan.effective_batch().get(),
            seq_len: plan.seq_len(),
        }
    }
}

/// `m 8 × A 4 × D 2 = B 64`, as [`Plan`] shows itself (without `L`).
impl std::fmt::Display for PlanSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::units::group_digits as n;
        write!(
            f,
            "m {} × A {} × D {} = B {}",
            n(self.micro_batch),
            n(self.accumulation),
            n(self.replicas),
            n(self.effective_batch)
        )
    }
}

/// The warnings a run report carries, from what the run measured: memory
/// that grows across groups, and attempts skipped for non-finite
/// gradients. The engine's and the recorder's reports say them alike.
pub(crate) fn run_warnings(memory: &MemoryReport, counters: &Counters) -> Vec<String> {
    let mut warnings = Vec::new();
    if memory.peak_grows {
        warnings.push(crate::memory::GROWTH_WARNING.to_owned());
    }
    if counters.skipped_updates > 0 {
        warnings.push(format!(
            "{} update attempt(s) skipped for non-finite gradients",
            counters.skipped_updates
        ));
    }
    warnings
}

/// Counters of the whole run (`accum::span`, `accum::run::loss-scale`, `accum::run::scheduler`). An attempt that was skipped is
/// not an update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Microbatches over all replicas.
    pub microbatches: Microbatches,
    /// Backward passes over all replicas (one per microbatch).
    pub backward_passes: u64,
    /// Update attempts (groups completed).
    pub update_attempts: u64,
    /// Applied optimizer updates.
    pub applied_updates: Updates,
    /// Attempts skipped for non-finite gradients.
    pub skipped_updates: u64,
    /// Examples processed, over all replicas.
    pub examples: Examples,
    /// Supervised tokens processed, over all replicas.
    pub supervised_tokens: Tokens,
    /// Scheduler steps (`accum::run::scheduler`: equal to applied updates).
    pub scheduler_steps: Updates,
    /// Gradient reductions across replicas (one per attempt, `accum::run::data-parallel`, `accum::calc::scaling`).
    pub grad_reductions: u64,
    /// Gradient zeroings per replica (one per attempt, after it, `accum::run::zeroing`).
    pub grad_zeroings: u64,
    /// Examples dropped by the last-group policy (`accum::plan::partial-group`).
    pub dropped_examples: Examples,
    /// Epochs started.
    pub epochs: u64,
}

/// Counters of one replica.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaCounters {
    /// Microbatches this replica processed.
    pub microbatches: Microbatches,
    /// Backward passes this replica ran.
    pub backward_passes: u64,
    /// Examples this replica processed.
    pub examples: Examples,
    /// Supervised tokens this replica processed.
    pub supervised_tokens: Tokens,
}

/// Counters of one stage of a batch ramp-up: the stage's plan and
/// updates, and what the run did in it (`accum::span`, `accum::run::loss-scale`, `accum::run::scheduler`). Summed over the stages,
/// the counts equal the run's [`Counters`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageCounters {
    /// The stage's plan: `A`, and so `B`, change from stage to stage.
    pub plan: PlanSummary,
    /// The stage's first update, counted from 1.
    pub first_update: Updates,
    /// The stage's last update, counted from 1; `None` for the last stage,
    /// which lasts to the end of the run.
    pub last_update: Option<Updates>,
    /// Applied optimizer updates in the stage.
    pub applied_updates: Updates,
    /// Update attempts in the stage, applied or skipped.
    pub attempts: u64,
    /// Attempts skipped for non-finite gradients (the stage's update is
    /// retried under the same stage).
    pub skipped: u64,
    /// Microbatches over all replicas.
    pub microbatches: Microbatches,
    /// Examples processed, over all replicas.
    pub examples: Examples,
    /// Supervised tokens processed, over all replicas.
    pub tokens: Tokens,
}

impl StageCounters {
    /// A stage of `plan` from update `first_update` to `last_update`
    /// (counted from 1), before any attempt.
    pub fn new(plan: &Plan, first_update: Updates, last_update: Option<Updates>) -> StageCounters {
        StageCounters {
            plan: PlanSummary::from(plan),
            first_update,
            last_update,
            applied_updates: Updates::ZERO,
            attempts: 0,
            skipped: 0,
            microbatches: Microbatches::ZERO,
            examples: Examples::ZERO,
            tokens: Tokens::ZERO,
        }
    }

    /// Adds one update attempt of the stage.
    pub fn add(&mut self, stats: &UpdateStats) {
        self.attempts += 1;
        if stats.applied {
            self.applied_updates += Updates::ONE;
        } else {
            self.skipped += 1;
        }
        self.microbatches += stats.microbatches;
        self.examples += stats.examples;
        self.tokens += stats.tokens;
    }
}

/// One update attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpdateStats {
    /// Attempt number, 1-based.
    pub attempt: u64,
    /// Epoch of the group, 0-based.
    pub epoch: u64,
    /// The stage of a batch ramp-up the group ran under, 0-based (an index
    /// into [`RunReport::stages`]); 0 for a constant plan.
    #[serde(default)]
    pub stage: usize,
    /// Whether the parameters changed (false: skipped, non-finite).
    pub applied: bool,
    /// Applied updates after this attempt.
    pub updates: Updates,
    /// The group's normalized loss (`null` in JSON when not finite).
    #[serde(with = "non_finite_as_null")]
    pub loss: f64,
    /// The group's denominator (supervised tokens, examples or 1).
    pub denominator: f64,
    /// Examples in the group.
    pub examples: Examples,
    /// Supervised tokens in the group.
    pub tokens: Tokens,
    /// Microbatches in the group, over all replicas.
    pub microbatches: Microbatches,
    /// Whether this was a last partial group (`accum::plan::partial-group`).
    pub partial: bool,
    /// Learning rate used (0 when skipped).
    pub lr: f64,
    /// Global gradient norm, unscaled, before clipping (`null` in JSON when
    /// not finite, as for a skipped attempt).
    #[serde(with = "non_finite_as_null")]
    pub grad_norm: f64,
    /// Whether clipping changed the gradient.
    pub clipped: bool,
    /// Loss scale during the group (1 unless fp16).
    pub loss_scale: f64,
}

/// One point of the loss curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Position on the declared axis (updates, examples or tokens).
    pub x: u64,
    /// The group's normalized loss.
    #[serde(with = "non_finite_as_null")]
    pub loss: f64,
}

/// The loss curve against a declared axis (`accum::span`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LossCurve {
    /// The x axis.
    pub axis: LogAxis,
    /// Points: one per log interval, or one per `stride` log intervals once
    /// the run has logged more than [`CURVE_CAPACITY`] points.
    pub points: Vec<CurvePoint>,
    /// Log intervals between two kept points (1: every point is kept).
    #[serde(default = "one")]
    pub stride: u64,
}

fn one() -> u64 {
    1
}

/// Points a report's loss curve holds at most.
pub const CURVE_CAPACITY: usize = 1024;

/// Update attempts a report keeps at most in [`RunReport::updates`].
pub const KEPT_UPDATES: usize = 1024;

/// A fixed-capacity series that keeps every `stride`-th entry of a stream
/// (by its 0-based index), evenly spread over the whole stream: when it is
/// full, every other kept entry is dropped and the stride doubles. Memory
/// is bounded by the capacity whatever the stream's length.
#[derive(Clone, Debug, PartialEq)]
pub struct Decimated<T> {
    items: Vec<T>,
    stride: u64,
    next: u64,
    capacity: usize,
}

impl<T> Decimated<T> {
    /// An empty series of at most `capacity` entries (at least 2).
    pub fn new(capacity: usize) -> Decimated<T> {
        let capacity = capacity.max(2);
        Decimated {
            items: Vec::with_capacity(capacity),
            stride: 1,
            next: 0,
            capacity,
        }
    }

    /// Offers the next entry of the stream; it is kept when its index is a
    /// multiple of the stride. Never allocates after [`Decimated::new`].
    pub fn push(&mut self, item: T) {
        let index = self.next;
        self.next += 1;
        if !index.is_multiple_of(self.stride) {
            return;
        }
        if self.items.len() == self.capacity {
            // Keep entries 0, 2, 4, … (indices multiple of the new stride).
            let mut i = 0;
            self.items.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride *= 2;
            if !index.is_multiple_of(self.stride) {
                return;
            }
        }
        self.items.push(item);
    }

    /// The kept entries, in stream order.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// Stream entries between two kept ones.
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// Entries offered so far.
    pub fn offered(&self) -> u64 {
        self.next
    }

    /// The series as it stood after `offered` entries, of which `items`
    /// were kept every `stride` (a report's bounded list, read back), to
    /// continue it. Entries beyond the capacity are dropped.
    pub(crate) fn resume(
        mut items: Vec<T>,
        stride: u64,
        offered: u64,
        capacity: usize,
    ) -> Decimated<T> {
        let capacity = capacity.max(2);
        items.truncate(capacity);
        items.reserve_exact(capacity - items.len());
        Decimated {
            items,
            stride: stride.max(1),
            next: offered,
            capacity,
        }
    }
}

/// Running figures of one statistic over the applied updates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Values seen (finite ones).
    pub count: u64,
    /// The smallest.
    #[serde(with = "non_finite_as_null")]
    pub min: f64,
    /// The largest.
    #[serde(with = "non_finite_as_null")]
    pub max: f64,
    /// The mean.
    #[serde(with = "non_finite_as_null")]
    pub mean: f64,
    /// The first.
    #[serde(with = "non_finite_as_null")]
    pub first: f64,
    /// The last.
    #[serde(with = "non_finite_as_null")]
    pub last: f64,
}

impl Summary {
    /// Adds a value (non-finite values are not counted).
    pub fn add(&mut self, value: f64) {
        if !value.is_finite() {
            return;
        }
        if self.count == 0 {
            *self = Summary {
                count: 1,
                min: value,
                max: value,
                mean: value,
                first: value,
                last: value,
            };
            return;
        }
        self.count += 1;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.mean += (value - self.mean) / self.count as f64;
        self.last = value;
    }
}

/// Exact running summaries of the whole run, whatever was decimated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The group loss over applied updates.
    pub loss: Summary,
    /// The global gradient norm (unscaled, before clipping) over applied updates.
    pub grad_norm: Summary,
    /// Applied updates whose gradient was clipped (`accum::run::loss-scale`).
    pub clipped: u64,
    /// Last partial groups processed (`accum::plan::partial-group`).
    pub partial_groups: u64,
    /// The learning rate of the last applied update.
    pub last_lr: f64,
    /// The loss scale after the last attempt.
    pub last_loss_scale: f64,
}

impl RunSummary {
    /// Adds one update attempt.
    pub fn add(&mut self, stats: &UpdateStats) {
        if stats.applied {
            self.loss.add(stats.loss);
            self.grad_norm.add(stats.grad_norm);
            self.clipped += u64::from(stats.clipped);
            self.last_lr = stats.lr;
        }
        self.partial_groups += u64::from(stats.partial);
        self.last_loss_scale = stats.loss_scale;
    }
}

/// How the loss moved over a run: the mean group loss of its first
/// applied updates against that of its last ones, over windows of the
/// same length (a twentieth of the updates, at least one), so that the
/// change is not the noise of one group.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossChange {
    /// The mean loss of the first `window` applied updates.
    pub first: f64,
    /// The mean loss of the last `window` applied updates.
    pub last: f64,
    /// Updates in each window.
    pub window: usize,
    /// Applied updates (with a finite loss) the windows were taken from.
    pub of: usize,
}

impl LossChange {
    /// The change over `updates`' applied attempts with a finite loss, in
    /// order; `None` without any.
    pub fn of<'a>(updates: impl IntoIterator<Item = &'a UpdateStats>) -> Option<LossChange> {
        let losses: Vec<f64> = updates
            .into_iter()
            .filter(|u| u.applied && u.loss.is_finite())
            .map(|u| u.loss)
            .collect();
        let of = losses.len();
        if of == 0 {
            return None;
        }
        let window = (of / 20).max(1);
        let mean = |w: &[f64]| w.iter().sum::<f64>() / w.len() as f64;
        Some(LossChange {
            first: mean(&losses[..window]),
            last: mean(&losses[of - window..]),
            window,
            of,
        })
    }

    /// How the figures were computed: `"the first and the last applied
    /// update"` or `"means of the first and the last 10 of 200 applied
    /// updates"`.
    pub fn how(&self) -> String {
        if self.window == 1 {
            "the first and the last applied update's group loss".to_owned()
        } else {
            format!(
                "means of the first and the last {} of {} applied updates' group losses",
                crate::units::group_digits(self.window as u64),
                crate::units::group_digits(self.of as u64)
            )
        }
    }
}

/// The loss a run's headline gives, the same in the terminal, the sheet,
/// its Markdown and a comparison: the first, final and minimum group loss
/// of the applied updates, exact (the report's running [`RunSummary`]),
/// and the means of windows at both ends ([`LossChange`]) over the
/// updates the report keeps, named with their window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossHeadline {
    /// The first applied update's loss.
    pub first: f64,
    /// The last applied update's loss.
    pub last: f64,
    /// The smallest loss of an applied update.
    pub min: f64,
    /// Applied updates with a finite loss.
    pub count: u64,
    /// The windowed means, when the windows hold more than one update.
    pub means: Option<LossChange>,
    /// Whether the means are over the report's evenly spread updates
    /// rather than every update.
    pub spread: bool,
}

impl LossHeadline {
    /// A loss as every headline writes it: four decimals.
    pub fn loss(value: f64) -> String {
        format!("{value:.4}")
    }

    /// `4.2121 → 1.1151`.
    pub fn first_to_last(&self) -> String {
        format!("{} → {}", Self::loss(self.first), Self::loss(self.last))
    }

    /// `first 4.2121, final 1.1151, minimum 1.0717`.
    pub fn exact(&self) -> String {
        format!(
            "first {}, final {}, minimum {}",
            Self::loss(self.first),
            Self::loss(self.last),
            Self::loss(self.min)
        )
    }

    /// `2.5512 → 1.1156 (means of the first and the last 250 of 5,000
    /// applied updates' group losses)`, when there are windowed means.
    pub fn means_text(&self) -> Option<String> {
        let means = self.means?;
        Some(format!(
            "{} → {} ({}{})",
            Self::loss(means.first),
            Self::loss(means.last),
            means.how(),
            if self.spread {
                ", of the updates the report keeps, evenly spread"
            } else {
                ""
            }
        ))
    }
}

impl RunReport {
    /// The loss headline ([`LossHeadline`]); `None` without an applied
    /// update with a finite loss. A report written before the running
    /// summaries takes its exact figures from the updates it keeps.
    pub fn loss_headline(&self) -> Option<LossHeadline> {
        let change = LossChange::of(&self.updates);
        let loss = self.summary.loss;
        let (first, last, min, count) = if loss.count > 0 {
            (loss.first, loss.last, loss.min, loss.count)
        } else {
            let kept: Vec<f64> = self
                .updates
                .iter()
                .filter(|u| u.applied && u.loss.is_finite())
                .map(|u| u.loss)
                .collect();
            let (first, last) = (*kept.first()?, *kept.last()?);
            let min = kept.iter().copied().fold(f64::INFINITY, f64::min);
            (first, last, min, kept.len() as u64)
        };
        Some(LossHeadline {
            first,
            last,
            min,
            count,
            means: change.filter(|c| c.window > 1),
            spread: self.updates_stride > 1,
        })
    }
}

/// Examples a last partial group dropped (`accum::plan::partial-group`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedGroup {
    /// Epoch, 0-based.
    pub epoch: u64,
    /// Example ids, in data order.
    pub ids: Vec<u64>,
}

/// A stretch of a run between two resumes (`docs/loop.md`, "Resume"):
/// where it starts, and the plan of its first update. A report that lists
/// no segments is one segment, the whole run ([`RunReport::run_segments`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// Update attempts before the segment.
    pub attempts: u64,
    /// Applied updates before the segment: its first update is the next.
    pub updates: Updates,
    /// Examples processed before the segment (every attempt's, as the
    /// loss curve counts them).
    pub examples: Examples,
    /// Supervised tokens processed before the segment (likewise).
    pub tokens: Tokens,
    /// The plan of the segment's first update.
    pub plan: PlanSummary,
    /// Whether the run resumed here (false for the first segment).
    pub resumed: bool,
    /// At a resume under another plan (another `m`, `A` or `D`, or by
    /// consent another `B`): the plan the run was saved under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_from: Option<PlanSummary>,
}

/// What a [`Recorder`](crate::driver::Recorder) needs beyond the report to
/// continue it exactly after a resume: its log interval and where it
/// stands, and the microbatches of replica 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecorderPosition {
    /// The log interval's value.
    pub log_every: u64,
    /// The log interval's unit.
    pub log_unit: UnitKind,
    /// The count, in the interval's unit, at which the next point is logged.
    pub next_log: u64,
    /// Points logged so far (the loss curve keeps an even spread of them).
    pub logged: u64,
    /// Microbatches of replica 0 over all attempts: the microbatch axis.
    pub passes: u64,
}

/// Everything a run observed. A report is read capped per field (a text
/// at 4,096 bytes, a list at a bound of its own, `read.rs`), with a note
/// in `warnings` of what was cut.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "read::ReadReport")]
pub struct RunReport {
    /// Always [`REPORT_FORMAT`].
    pub format: String,
    /// The plan; with a batch ramp-up, the full batch the run reaches
    /// after it (its last stage's), and each stage's in `stages`.
    pub plan: PlanSummary,
    /// Model dimensions (`{"kind", "vocab", "hidden", "ffn"}` for the reference model).
    pub model: serde_json::Value,
    /// Precision mode.
    pub precision: PrecisionMode,
    /// Whether dynamic loss scaling was on (fp16 only).
    pub loss_scaling: bool,
    /// Loss normalization.
    pub normalization: Normalization,
    /// Last-group policy.
    pub last_group: LastGroup,
    /// Optimizer kind.
    pub optimizer: OptimizerKind,
    /// Scheduled length of the run, in updates.
    pub total_updates: Updates,
    /// Warmup, in updates.
    pub warmup_updates: Updates,
    /// Examples in one epoch of the data.
    pub data_examples: Examples,
    /// Supervised tokens in one epoch of the data.
    pub data_tokens: Tokens,
    /// Whole-run counters.
    pub counters: Counters,
    /// Counters per stage of a batch ramp-up, for every stage the run
    /// reached, in order (one entry for a constant plan). At most one per
    /// stage of the plan.
    #[serde(default)]
    pub stages: Vec<StageCounters>,
    /// Counters per replica, in rank order.
    pub replicas: Vec<ReplicaCounters>,
    /// Update attempts: every one up to [`KEPT_UPDATES`], then evenly
    /// spread over the run (one per `updates_stride` attempts).
    pub updates: Vec<UpdateStats>,
    /// Attempts between two kept entries of `updates` (1: all are kept).
    #[serde(default = "one")]
    pub updates_stride: u64,
    /// Exact running figures of the whole run.
    #[serde(default)]
    pub summary: RunSummary,
    /// The JSON Lines file beside the report holding every update and log
    /// point at full resolution, if one was written (a file name, relative
    /// to the report's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats_stream: Option<String>,
    /// The loss curve at the log interval.
    pub loss_curve: LossCurve,
    /// Memory peaks (`accum::run::memory`).
    pub memory: MemoryReport,
    /// Dropped examples by epoch (`accum::plan::partial-group`): the first 64 dropped groups; the
    /// count of all dropped examples is in the counters.
    pub dropped: Vec<DroppedGroup>,
    /// Whether the run was stopped before its total (at a group boundary).
    pub stopped_early: bool,
    /// Findings a reader should see (for example a memory peak that grows).
    pub warnings: Vec<String>,
    /// Where the run resumed and where its plan changed, in order, the
    /// first segment first; empty for a run of one segment (every report
    /// before resumes). See [`RunReport::run_segments`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<Segment>,
    /// What a recorder continues the report from, in a report a
    /// [`Recorder`](crate::driver::Recorder) wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorder: Option<RecorderPosition>,
    /// Where the report comes from: run name, configuration file and hash,
    /// accum version, start, wall time, throughput, commit. Absent in
    /// reports written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

impl RunReport {
    /// The run's segments: those the report lists, or the one it is when
    /// it lists none (a run that never resumed, or a report written before
    /// resumes), from its start under its first stage's plan.
    pub fn run_segments(&self) -> Vec<Segment> {
        if !self.segments.is_empty() {
            return self.segments.clone();
        }
        vec![Segment {
            attempts: 0,
            updates: Updates::ZERO,
            examples: Examples::ZERO,
            tokens: Tokens::ZERO,
            plan: self.stages.first().map_or(self.plan, |s| s.plan),
            resumed: false,
            changed_from: None,
        }]
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a run report always serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::stream::stats_stream_beside;
    use super::*;

    fn attempt(n: u64, applied: bool, loss: f64) -> UpdateStats {
        UpdateStats {
            attempt: n,
            epoch: 0,
            stage: 0,
            applied,
            updates: Updates::new(n),
            loss,
            denominator: 1.0,
            examples: Examples::new(1),
            tokens: Tokens::new(1),
            microbatches: Microbatches::new(1),
            partial: false,
            lr: 0.0,
            grad_norm: 1.0,
            clipped: false,
            loss_scale: 1.0,
        }
    }

    #[test]
    fn the_loss_change_is_taken_over_windows_of_applied_updates() {
        // A short run: the first and the last update, a skipped one left out.
        let short = [
            attempt(1, true, 4.0),
            attempt(2, false, f64::NAN),
            attempt(3, true, 1.0),
        ];
        let change = LossChange::of(&short).expect("a change");
        assert_eq!(
            (change.first, change.last, change.window, change.of),
            (4.0, 1.0, 1, 2)
        );
        assert_eq!(
            change.how(),
            "the first and the last applied update's group loss"
        );
        // A long, noisy run: one group's noise does not decide the ends.
        let long: Vec<UpdateStats> = (1..=200)
            .map(|n| {
                let noise = if n % 2 == 0 { 0.5 } else { -0.5 };
                attempt(n, true, 3.0 - n as f64 / 100.0 + noise)
            })
            .collect();
        let change = LossChange::of(&long).expect("a change");
        assert_eq!((change.window, change.of), (10, 200));
        assert!(
            (change.first - (3.0 - 5.5 / 100.0)).abs() < 1e-12,
            "{change:?}"
        );
        assert!(
            (change.last - (3.0 - 195.5 / 100.0)).abs() < 1e-12,
            "{change:?}"
        );
        assert_eq!(
            change.how(),
            "means of the first and the last 10 of 200 applied updates' group losses"
        );
        assert_eq!(LossChange::of(&short[1..2]), None);
    }

    #[test]
    fn the_stats_stream_sits_beside_its_report() {
        assert_eq!(
            stats_stream_beside(std::path::Path::new("out/run.json")),
            std::path::Path::new("out/run.stats.jsonl")
        );
    }
}
