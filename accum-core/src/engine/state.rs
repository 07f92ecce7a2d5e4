//! The engine's position as a value: [`EngineState`], taken at an update
//! boundary with [`Engine::state`] and put back with [`Engine::resume`] to
//! continue a run bit for bit, on the same plan or on another of the same
//! global batch (another `m`, `A` or `D`).
//!
//! It holds the walk's position and counters as a [`DriverState`] (the
//! data cursor, the schedule's position, the loss scaler's scale and growth
//! tracker, the plan it was taken under), the model's parameters, the
//! optimizer's state (its steps and moments), the report so far with what
//! continues it (the kept attempts and loss points, the next log point),
//! and the engine's settings, so that a resume under other settings is
//! refused with what differs. The engine draws no random number during a
//! run (the data's order comes from the seed and the epoch, the model's
//! initial weights from the seed), so there is no generator state to save.
//!
//! Restoring is O(1) in the run's length: nothing is replayed (the epoch's
//! order is drawn again from the seed, O(N) in the data set). A state is
//! always at an update boundary: a group stopped inside (Ctrl-C) is not in
//! it, and the resumed run redoes that group from its first microbatch.
//!
//! Its files are the checkpoint folder's (`crate::checkpoint`):
//! [`EngineState::to_files`] gives the JSON of `state.json` and the bytes of
//! `tensors.bin` (every parameter, then every optimizer state tensor, as
//! little-endian `f32`), [`EngineState::from_files`] reads them back,
//! refusing another format ([`CHECKPOINT_FORMAT`]), a layout that does not
//! add up and bytes whose checksum differs.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Engine, EngineConfig};
use crate::code::Code;
use crate::driver::{DriverState, Progress, ResumeError, describe_batches};
use crate::memory::MemoryTracker;
use crate::model::Model;
use crate::report::{
    CURVE_CAPACITY, Decimated, KEPT_UPDATES, PlanSummary, RecorderPosition, RunReport, Segment,
};
use crate::tensor::Tensors;
use crate::units::group_digits;

/// The format of a checkpoint this accum writes and reads, the `format`
/// field of its `state.json`.
pub const CHECKPOINT_FORMAT: &str = "accum-checkpoint/1";

/// The file of a checkpoint holding the tensors' values.
pub const TENSORS_FILE: &str = "tensors.bin";

/// The most tensors a checkpoint lists (a bound on reading one).
const MAX_TENSORS: usize = 4096;

/// Where an [`Engine`] stands at an update boundary, with everything it
/// needs to continue exactly. See the module header, and `docs/loop.md`,
/// "Resume", for the files it is saved to.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineState {
    head: Head,
    /// Every parameter, then every optimizer state tensor, flat.
    values: Vec<f32>,
}

/// What `state.json` holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    format: String,
    /// Applied updates when the state was taken (also in `driver`), for
    /// people reading the file.
    updates: u64,
    /// The engine's settings, by section, as a config writes them.
    settings: serde_json::Value,
    /// The walk, counters, schedule and loss scaler.
    driver: DriverState,
    /// The model's parameters: names and shapes, in order.
    tensors: Vec<SavedTensor>,
    /// The optimizer's steps and state tensors (each of the parameters'
    /// layout, after them in `tensors.bin`).
    optimizer: SavedOptimizer,
    /// Bytes of `tensors.bin`, and their FNV-1a 64-bit hash in hex.
    values: SavedValues,
    /// Skipped attempts in a row before the next.
    skips_in_a_row: u64,
    /// The report so far, with its recorder position.
    report: RunReport,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedTensor {
    name: String,
    shape: Vec<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedOptimizer {
    steps: u64,
    state_tensors: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedValues {
    bytes: u64,
    fnv1a64: String,
}

/// FNV-1a, 64 bits: a checksum of `tensors.bin` that needs no dependency.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// One setting that differs between a state and the engine resuming it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingDifference {
    /// Dotted key path, e.g. `loss.normalization`.
    pub key: String,
    /// The value in the state, as JSON.
    pub saved: String,
    /// The value in the engine's settings, as JSON.
    pub now: String,
}

/// A state cannot be read, or does not fit the engine that would continue
/// from it: continuing would be another run, silently.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateError {
    /// `state.json` is of another format, or has none.
    Format {
        /// Its `format`, if it has one.
        found: Option<String>,
    },
    /// The files do not read as this format's.
    Unreadable {
        /// What is wrong.
        reason: String,
    },
    /// The engine's settings differ from the state's.
    Settings {
        /// Every setting that differs, in key order.
        differences: Vec<SettingDifference>,
    },
    /// The walk does not fit (data, seed, last-group policy, `seq_len`,
    /// global batch).
    Driver(ResumeError),
    /// The model's parameters have another layout.
    Layout {
        /// What differs.
        reason: String,
    },
}

impl StateError {
    /// The rule of docs/rules.md a resume past the error would break, when
    /// there is one.
    pub fn code(&self) -> Option<Code> {
        match self {
            StateError::Settings { differences } => differences
                .iter()
                .any(|d| d.key == "loss.normalization")
                .then_some(Code::Normalization),
            StateError::Driver(e) => e.code(),
            _ => None,
        }
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::Format { found: Some(found) } => write!(
                f,
                "the checkpoint is of format `{found}`, and this accum reads `{CHECKPOINT_FORMAT}`: \
                 resume it with the accum that wrote it, or start a new run"
            ),
            StateError::Format { found: None } => write!(
                f,
                "the file has no `format`: it is not a checkpoint `accum run --checkpoint` wrote"
            ),
            StateError::Unreadable { reason } => write!(
                f,
                "the checkpoint of format `{CHECKPOINT_FORMAT}` does not read: {reason}; resume \
                 from a checkpoint as accum wrote it, or from an earlier one"
            ),
            StateError::Settings { differences } => {
                let list: Vec<String> = differences
                    .iter()
                    .map(|d| format!("`{}` is {} there and {} here", d.key, d.saved, d.now))
                    .collect();
                write!(
                    f,
                    "the checkpoint was taken under other settings: {}; continuing would be another \
                     run: resume under the checkpoint's settings, or start a new run",
                    list.join(", ")
                )
            }
            StateError::Driver(ResumeError::GlobalBatch { update, saved, now }) => write!(
                f,
                "the checkpoint was taken after update {} under {}, and this plan has {}: another \
                 global batch averages every later update over another number of examples; keep B \
                 (change micro_batch, accumulation or replicas so that m × A × D stays)",
                group_digits(update.get()),
                describe_batches(saved),
                describe_batches(now)
            ),
            StateError::Driver(ResumeError::SeqLen { saved, now }) => {
                let text = |s: &Option<u64>| s.map_or_else(|| "none".to_owned(), group_digits);
                write!(
                    f,
                    "the checkpoint was taken under seq_len {}, and this plan has {}: lengths in \
                     tokens would be read through another length; resume under seq_len {}",
                    text(saved),
                    text(now),
                    text(saved)
                )
            }
            StateError::Driver(e) => write!(f, "{e}"),
            StateError::Layout { reason } => write!(
                f,
                "the checkpoint's parameters do not fit this model: {reason}; resume under the \
                 checkpoint's [model] and [data] settings"
            ),
        }
    }
}

impl std::error::Error for StateError {}

crate::code::debug_as_display!(StateError);

/// The engine's settings by section, as a config writes them.
fn settings_value(config: &EngineConfig) -> serde_json::Value {
    serde_json::json!({
        "loss": config.loss,
        "precision": config.precision,
        "optimizer": config.optimizer,
        "schedule": config.schedule,
        "data": config.data,
        "model": config.model,
        "log": config.log,
    })
}

/// The leaves where `saved` and `now` differ, as dotted paths.
fn differences(
    path: &str,
    saved: &serde_json::Value,
    now: &serde_json::Value,
    out: &mut Vec<SettingDifference>,
) {
    use serde_json::Value;
    match (saved, now) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                differences(
                    &path,
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (a, b) if a != b => out.push(SettingDifference {
            key: path.to_owned(),
            saved: a.to_string(),
            now: b.to_string(),
        }),
        _ => {}
    }
}

impl EngineState {
    /// Applied updates when the state was taken.
    pub fn updates(&self) -> u64 {
        self.head.updates
    }

    /// The walk's, schedule's and loss scaler's part.
    pub fn driver(&self) -> &DriverState {
        &self.head.driver
    }

    /// The report as it stood when the state was taken.
    pub fn report(&self) -> &RunReport {
        &self.head.report
    }

    /// The plan of the next update under the saved plan.
    pub fn saved_plan(&self) -> PlanSummary {
        self.head.driver.next_plan()
    }

    /// The two files of a checkpoint: the JSON of `state.json` and the
    /// bytes of [`TENSORS_FILE`].
    pub fn to_files(&self) -> (String, Vec<u8>) {
        let mut bytes = Vec::with_capacity(self.values.len() * 4);
        for v in &self.values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let mut head = self.head.clone();
        head.values = SavedValues {
            bytes: bytes.len() as u64,
            fnv1a64: format!("{:016x}", fnv1a64(&bytes)),
        };
        let mut json =
            serde_json::to_string_pretty(&head).expect("an engine state always serializes");
        json.push('\n');
        (json, bytes)
    }

    /// Reads the two files [`EngineState::to_files`] wrote, refusing
    /// another format, a layout that does not add up and bytes whose
    /// size or checksum differs from the one `state.json` records.
    pub fn from_files(json: &str, bytes: &[u8]) -> Result<EngineState, StateError> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| StateError::Unreadable {
                reason: format!("state.json is not JSON ({e})"),
            })?;
        match value.get("format").and_then(serde_json::Value::as_str) {
            Some(CHECKPOINT_FORMAT) => {}
            found => {
                return Err(StateError::Format {
                    found: found.map(str::to_owned).or_else(|| {
                        value
                            .get("format")
                            .filter(|v| !v.is_null())
                            .map(ToString::to_string)
                    }),
                });
            }
        }
        let head: Head = serde_json::from_value(value).map_err(|e| StateError::Unreadable {
            reason: format!("state.json: {e}"),
        })?;
        if head.tensors.len() > MAX_TENSORS {
            return Err(StateError::Unreadable {
                reason: format!(
                    "state.json lists {} tensors, more than the {MAX_TENSORS} a checkpoint holds",
                    group_digits(head.tensors.len() as u64)
                ),
            });
        }
        let numel = head
            .tensors
            .iter()
            .try_fold(0u64, |sum, t| {
                t.shape
                    .iter()
                    .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
                    .and_then(|n| sum.checked_add(n))
            })
            .and_then(|n| n.checked_mul(1 + head.optimizer.state_tensors as u64))
            .and_then(|n| n.checked_mul(4));
        if numel != Some(bytes.len() as u64) || head.values.bytes != bytes.len() as u64 {
            return Err(StateError::Unreadable {
                reason: format!(
                    "{TENSORS_FILE} holds {} bytes, and state.json describes {}",
                    group_digits(bytes.len() as u64),
                    numel.map_or_else(|| "more than fit in memory".to_owned(), group_digits)
                ),
            });
        }
        let hash = format!("{:016x}", fnv1a64(bytes));
        if hash != head.values.fnv1a64 {
            return Err(StateError::Unreadable {
                reason: format!(
                    "{TENSORS_FILE} has checksum {hash}, and state.json records {}",
                    head.values.fnv1a64
                ),
            });
        }
        if head.report.recorder.is_none() {
            return Err(StateError::Unreadable {
                reason: "its report has no recorder position".to_owned(),
            });
        }
        let values = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(EngineState { head, values })
    }
}

/// The tensors of `layout`'s names and shapes, filled from `values`.
fn tensors_from(layout: &Tensors, values: &[f32]) -> Tensors {
    let mut t = layout.zeros_like();
    let mut at = 0;
    for slice in t.slices_mut() {
        slice.copy_from_slice(&values[at..at + slice.len()]);
        at += slice.len();
    }
    t
}

impl<M: Model> Engine<M> {
    /// Where the engine stands: its position, model, optimizer, loss
    /// scaler and report so far. Between two groups (after
    /// [`Engine::step`], or after [`Engine::run_until`] returns) it is an
    /// update boundary; after a stop inside a group it is the boundary
    /// before that group.
    pub fn state(&self) -> EngineState {
        let c = &self.counters;
        let progress = Progress {
            updates: c.applied_updates,
            microbatches: c.microbatches,
            examples: c.examples,
            tokens: c.supervised_tokens,
            attempts: c.update_attempts,
            skipped: c.skipped_updates,
            partial: self.partial_updates,
        };
        let driver = DriverState::of_walk(
            self.groups.walk(),
            self.groups.position(),
            progress,
            self.groups.dropped.clone(),
            Some(self.schedule.position()),
        )
        .with_scaler(&self.scaler);
        let params = self.model.params();
        let (steps, moments) = self.optimizer.saved();
        let mut values = Vec::with_capacity(params.numel() * (1 + moments.len()));
        for t in std::iter::once(params).chain(moments.iter().copied()) {
            for slice in t.slices() {
                values.extend_from_slice(slice);
            }
        }
        let mut report = self.report();
        report.stopped_early = false;
        report.recorder = Some(RecorderPosition {
            log_every: self.config.log.every.value(),
            log_unit: self.config.log.every.unit(),
            next_log: self.next_log,
            logged: self.curve.offered(),
            passes: self.replicas[0].counters.microbatches.get(),
        });
        EngineState {
            head: Head {
                format: CHECKPOINT_FORMAT.to_owned(),
                updates: c.applied_updates.get(),
                settings: settings_value(&self.config),
                driver,
                tensors: params
                    .iter()
                    .map(|(name, t)| SavedTensor {
                        name: name.to_owned(),
                        shape: t.shape().to_vec(),
                    })
                    .collect(),
                optimizer: SavedOptimizer {
                    steps,
                    state_tensors: moments.len(),
                },
                values: SavedValues {
                    bytes: 0,
                    fnv1a64: String::new(),
                },
                skips_in_a_row: self.skips_in_a_row,
                report,
            },
            values,
        }
    }

    /// Puts a freshly built engine at `state`, after checking that it
    /// fits: the same settings, data, seed, `seq_len`, model layout, and
    /// the same global batch at every update (`accum::run::normalization`, `accum::calc::global-batch`).
    /// Another `m`, `A` or `D` of the same `B` is an elastic resume: the
    /// examples' order and the schedule carry over, and the report records
    /// the plan it was saved under. Gives that plan when it differs from
    /// this engine's next one. The report continues the state's, with a
    /// segment where the run resumed.
    pub fn resume(&mut self, state: EngineState) -> Result<Option<PlanSummary>, StateError> {
        let EngineState { head, values } = state;
        let mut diffs = Vec::new();
        differences(
            "",
            &head.settings,
            &settings_value(&self.config),
            &mut diffs,
        );
        if !diffs.is_empty() {
            return Err(StateError::Settings { differences: diffs });
        }
        let (_, changed_from) = head
            .driver
            .check(self.groups.walk(), false)
            .map_err(StateError::Driver)?;
        let params = self.model.params();
        let layout: Vec<SavedTensor> = params
            .iter()
            .map(|(name, t)| SavedTensor {
                name: name.to_owned(),
                shape: t.shape().to_vec(),
            })
            .collect();
        if layout != head.tensors {
            return Err(StateError::Layout {
                reason: format!(
                    "it has {} tensors, this model {} (or their names or shapes differ)",
                    head.tensors.len(),
                    layout.len()
                ),
            });
        }
        let n_states = head.optimizer.state_tensors;
        if n_states != 0 && n_states != self.optimizer.state_tensors() {
            return Err(StateError::Layout {
                reason: format!(
                    "it has {n_states} optimizer state tensor(s) per parameter, this optimizer {}",
                    self.optimizer.state_tensors()
                ),
            });
        }
        let numel = params.numel();
        let restored = tensors_from(params, &values[..numel]);
        let moments = (0..n_states)
            .map(|i| tensors_from(params, &values[numel * (1 + i)..numel * (2 + i)]))
            .collect();
        self.model.params_mut().copy_from(&restored);
        self.optimizer.restore(head.optimizer.steps, moments);
        let driver = &head.driver;
        if let Some(scaler) = driver.scaler() {
            self.scaler.restore(scaler);
        }
        if let Some(position) = driver.schedule_position() {
            self.schedule
                .set_position(position)
                .map_err(|(saved, now)| {
                    StateError::Driver(ResumeError::ScheduleKind { saved, now })
                })?;
        }
        self.groups.seek(driver.position());
        let report = head.report;
        let position = report
            .recorder
            .expect("a state read by `from_files` or taken by `state` has a recorder position");
        self.partial_updates = driver.progress().partial;
        self.groups.dropped = report.dropped.clone();
        self.groups.dropped_examples = report.counters.dropped_examples.get();
        let attempts = report.counters.update_attempts;
        self.counters = report.counters;
        self.stage_counters = report.stages.clone();
        for (i, r) in self.replicas.iter_mut().enumerate() {
            r.counters = report.replicas.get(i).copied().unwrap_or_default();
        }
        let mut segments = report.run_segments();
        segments.push(Segment {
            attempts,
            updates: report.counters.applied_updates,
            examples: report.counters.examples,
            tokens: report.counters.supervised_tokens,
            plan: PlanSummary::from(
                self.groups
                    .walk()
                    .plan_for_next(self.counters.applied_updates)
                    .1,
            ),
            resumed: true,
            changed_from,
        });
        self.segments = segments;
        if report.memory.replicas.len() == self.replicas.len() {
            self.memory = MemoryTracker::resume(&report.memory, attempts);
        }
        self.updates = Decimated::resume(
            report.updates,
            report.updates_stride,
            attempts,
            KEPT_UPDATES,
        );
        self.curve = Decimated::resume(
            report.loss_curve.points,
            report.loss_curve.stride,
            position.logged,
            CURVE_CAPACITY,
        );
        self.summary = report.summary;
        self.next_log = position.next_log;
        self.skips_in_a_row = head.skips_in_a_row;
        self.stopped_early = false;
        Ok(changed_from)
    }
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
