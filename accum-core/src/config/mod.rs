//! The canonical training config, derived with the crate's own
//! `#[derive(AccumConfig)]`: the `[batch]` plan, an optional `[parallel]`
//! device layout (`accum::plan::global-batch`), an optional `[run]` header, and the engine
//! sections, each with defaults.
//!
//! ```
//! use accum_core::AccumConfig;
//! use accum_core::config::TrainingConfig;
//!
//! let config: TrainingConfig = toml::from_str(r#"
//!     [run]
//!     name = "tiny"
//!
//!     [batch]
//!     micro_batch = 2
//!     accumulation = 8
//!     replicas = 2
//!     global_batch = 32
//! "#)?;
//! assert_eq!(config.plan()?.effective_batch().get(), 32);
//! assert_eq!(config.run.name_or("train"), "tiny");
//!
//! // Only `[batch]` is needed; the run is then named after its file.
//! let minimal: TrainingConfig = toml::from_str("[batch]\nmicro_batch = 4\naccumulation = 2\nreplicas = 1\n")?;
//! assert!(minimal.validate()?.is_empty());
//! assert_eq!(minimal.run.name_or("train"), "train");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Replicas come either from `batch.replicas` or from `[parallel]`
//! (`D = world_size / (tensor·pipeline·context)`); both may be given when they
//! agree. `validate` reports when neither is.
//!
//! ## Adding a section
//!
//! The engine sections (loss, precision, optimizer, schedule, data, model,
//! log) join [`TrainingConfig`] the way `batch` and `parallel` do:
//!
//! 1. On the section struct: `#[derive(…, Serialize, Deserialize,
//!    AccumConfig)]`, `#[cfg_attr(feature = "schema", derive(JsonSchema))]`,
//!    `#[accum(crate = "crate", section)]` and
//!    `#[serde(deny_unknown_fields)]`. Deriving on every section, even one
//!    without roles, is what makes the compiler reject `warmup_steps: u64`
//!    there (`accum::span`) and puts `x-accum-unit` on its typed fields in the schema.
//! 2. In [`TrainingConfig`]: `#[accum(nested)] pub schedule: ScheduleSection,`
//!    — or `Option<ScheduleSection>` with `#[serde(default,
//!    skip_serializing_if = "Option::is_none")]` for an optional section.
//! 3. A plan role is given once in the whole config (checked at compile time
//!    through the nested field tables): `seq_len` lives in `[batch]`, so a
//!    `[data]` section must not mark its own field `#[accum(seq_len)]`.
//! 4. Sections with floats cannot be `Eq`: drop `Eq` from the derives of
//!    [`TrainingConfig`] then.
//! 5. Review the schema snapshot diff (`cargo insta review`).

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod partial;

use crate::plan::{LinearRamp, StageSpec};
use crate::settings::EngineConfig;
use crate::settings::{
    DataSection, LogSection, LossSection, ModelSection, OptimizerSection, PrecisionSection,
    ScheduleSection,
};
use crate::{AccumConfig, Code, FieldPath, Finding, Findings};

/// A whole training config.
// `variable_length`: the built-in data's sequences run from `data.min_len`
// to `data.max_len`, and the engine counts the tokens of each update, so
// lengths in tokens need no fixed `seq_len` (`accum::calc::tokens`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, AccumConfig)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
// `check`: the engine sections' ranges are findings of `validate()` too, so
// that `plan()` refuses what `accum validate` refuses.
#[accum(crate = "crate", variable_length, check = Self::settings_findings)]
#[serde(deny_unknown_fields)]
pub struct TrainingConfig {
    /// What the run is called and why it exists. Optional: without a name,
    /// the run is named after its config file.
    #[serde(default, skip_serializing_if = "RunSection::is_empty")]
    pub run: RunSection,
    /// The accumulation plan: `m`, `A`, and `D` or a layout.
    #[accum(nested)]
    pub batch: BatchSection,
    /// The device layout, when devices are split by tensor, pipeline or
    /// context parallelism.
    #[accum(nested)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<ParallelSection>,
    /// How the loss of a group is normalized.
    #[accum(nested)]
    #[serde(default)]
    pub loss: LossSection,
    /// Precision and dynamic loss scaling.
    #[accum(nested)]
    #[serde(default)]
    pub precision: PrecisionSection,
    /// The optimizer and gradient clipping.
    #[accum(nested)]
    #[serde(default)]
    pub optimizer: OptimizerSection,
    /// The learning-rate schedule, in any unit; it steps per applied update.
    #[accum(nested)]
    #[serde(default)]
    pub schedule: ScheduleSection,
    /// The built-in synthetic data and the last-group policy.
    #[accum(nested)]
    #[serde(default)]
    pub data: DataSection,
    /// The built-in reference model's sizes.
    #[accum(nested)]
    #[serde(default)]
    pub model: ModelSection,
    /// How often to log, and against which axis.
    #[accum(nested)]
    #[serde(default)]
    pub log: LogSection,
}

impl TrainingConfig {
    /// The engine-facing sections, for [`Engine::new`](crate::engine::Engine::new).
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            loss: self.loss.clone(),
            precision: self.precision.clone(),
            optimizer: self.optimizer.clone(),
            schedule: self.schedule.clone(),
            data: self.data.clone(),
            model: self.model.clone(),
            log: self.log.clone(),
        }
    }

    /// Every problem of the config: the plan's findings (with field paths),
    /// its stages', its lengths' (a warmup in updates under a ramp-up is a
    /// warning), and the engine sections' (ranges, `min_len ≤ max_len`, …).
    /// What [`AccumConfig::validate`] finds, which runs the engine
    /// sections' checks too: `Ok` with the warnings when no finding is an
    /// error, else `Err` with every finding. The plan with its ramp-up is
    /// [`AccumConfig::staged_plan`], behind the same checks.
    ///
    /// Beside them, a valid plan that the built-in engine cannot hold
    /// (buffers past what can be allocated) is a warning: `run` and
    /// `verify` refuse it, so it is said before they do. Without the
    /// `engine` feature there is no engine to hold it, and no such warning.
    pub fn check(&self) -> Result<Findings, Findings> {
        #[cfg_attr(
            not(feature = "engine"),
            allow(unused_mut, reason = "the engine's warning")
        )]
        let mut result = AccumConfig::validate(self);
        #[cfg(feature = "engine")]
        if let Ok(warnings) = &mut result
            && let Ok(stages) = self.staged_plan()
            && let Some(refusal) = crate::engine::buffer_refusal(&stages, &self.engine_config())
        {
            let (path, label) = match refusal {
                crate::engine::EngineError::GroupTooLarge { .. } => {
                    ("batch.accumulation", "too many microbatches to run")
                }
                _ => ("batch.micro_batch", "too large to run"),
            };
            warnings.push(
                Finding::new(
                    refusal.code().unwrap_or(Code::Memory),
                    FieldPath::parse(path),
                    format!("`accum run` and `accum verify` cannot run this plan: {refusal}"),
                    label.to_owned(),
                )
                .warning(),
            );
        }
        result
    }

    /// The engine sections' findings (ranges, `min_len ≤ max_len`, …), as
    /// `#[accum(check = …)]` adds them to [`AccumConfig::validate`].
    fn settings_findings(&self) -> Findings {
        // A setting's message says what is wrong and what to use, in one
        // sentence; it is kept whole.
        self.engine_config()
            .validate()
            .into_iter()
            .map(|error| {
                Finding::new(
                    Code::Settings,
                    FieldPath::parse(error.key),
                    format!("`{}` {}", error.key, error.message),
                    "out of range".to_owned(),
                )
            })
            .collect()
    }
}

/// `[run]`: the run's name and notes, for the run sheet.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// A short name for the run. Default: the config file's name without
    /// its extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Free text: what is being tried, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

impl RunSection {
    /// The run's name, or `file_stem` when the config gives none: only the
    /// loader knows the file, so it resolves the default.
    pub fn name_or<'a>(&'a self, file_stem: &'a str) -> &'a str {
        self.name.as_deref().unwrap_or(file_stem)
    }

    /// Whether the section says nothing (it is then left out when written).
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.notes.is_none()
    }
}

/// `[batch]`: the accumulation plan, `B = m·A·D`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, AccumConfig)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[accum(crate = "crate", section)]
#[serde(deny_unknown_fields)]
pub struct BatchSection {
    /// `m`: examples per microbatch per data-parallel replica.
    #[accum(micro_batch)]
    pub micro_batch: u64,
    /// `A`: microbatches (forward + backward) per optimizer update, per replica.
    #[accum(accumulation)]
    pub accumulation: u64,
    /// `D`: data-parallel replicas. Give this or `[parallel]`.
    #[accum(replicas)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u64>,
    /// `B`: the intended effective batch, checked against `m·A·D`.
    #[accum(global_batch)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_batch: Option<u64>,
    /// `L`: tokens per example, when lengths are fixed.
    #[accum(seq_len)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_len: Option<u64>,
    /// A batch ramp-up in stages: the smaller batches the run trains at
    /// before it reaches the one above, each with its global batch (or
    /// accumulation) and where it ends (`until = "2B tokens"`), in order.
    #[accum(stages)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<StageSpec>>,
    /// A linear batch ramp-up to the batch above, as Megatron-LM's
    /// `--rampup-batch-size`: `start`, `increment` and the length `over`
    /// which it grows. Give this or `stages`, not both.
    #[accum(ramp)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<LinearRamp>,
}

/// `[parallel]`: all devices and the degrees that split one model copy;
/// only what is left are replicas.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, AccumConfig)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[accum(crate = "crate", section)]
#[serde(deny_unknown_fields)]
pub struct ParallelSection {
    /// All devices of the job.
    #[accum(world_size)]
    pub world_size: u64,
    /// Tensor-parallel degree (default 1).
    #[accum(tensor_parallel)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor: Option<u64>,
    /// Pipeline-parallel degree (default 1).
    #[accum(pipeline_parallel)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<u64>,
    /// Context (sequence) parallel degree (default 1).
    #[accum(context_parallel)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Rounding;
    use crate::units::{UnitKind, Updates};

    fn config(batch: &str) -> TrainingConfig {
        toml::from_str(&format!("[batch]\n{batch}")).expect("valid TOML")
    }

    const BASE: &str = "micro_batch = 4\naccumulation = 16\nreplicas = 2\nseq_len = 1000\n";

    #[test]
    fn stages_ramp_up_to_the_batch_of_the_section() {
        let c = config(&format!(
            "{BASE}[[batch.stages]]\nglobal_batch = 32\nuntil = \"1.6M tokens\"\n\
             [[batch.stages]]\nglobal_batch = 64\nuntil = \"4.8M tokens\"\n"
        ));
        assert_eq!(c.check(), Ok(Findings::default()));
        let staged = c.staged_plan().expect("valid stages");
        let batches: Vec<u64> = staged
            .stages()
            .iter()
            .map(|s| s.plan().effective_batch().get())
            .collect();
        assert_eq!(batches, [32, 64, 128]);
        assert_eq!(staged.stages()[2].start(), Updates::new(100));
        assert_eq!(
            staged.to_updates(6_080_000, UnitKind::Token, Rounding::Exact),
            Ok(Updates::new(110))
        );
    }

    #[test]
    fn a_linear_ramp_ends_at_the_batch_of_the_section() {
        let c = config(&format!(
            "{BASE}[batch.ramp]\nstart = 32\nincrement = 32\nover = \"9600 examples\"\n"
        ));
        let staged = c.staged_plan().expect("valid ramp");
        assert_eq!(staged.final_plan().effective_batch().get(), 128);
        assert_eq!(staged.first_plan().effective_batch().get(), 32);
    }

    #[test]
    fn stage_problems_are_findings_at_their_fields() {
        let c = config(&format!(
            "{BASE}[[batch.stages]]\nglobal_batch = 36\nuntil = \"10 updates\"\n"
        ));
        let findings = c.check().expect_err("36 is not a multiple of m·D = 8");
        assert_eq!(findings.codes(), [Code::StageBatch]);
        assert_eq!(findings.paths(), ["batch.stages[0].global_batch"]);

        let c = config(&format!(
            "{BASE}[[batch.stages]]\nglobal_batch = 32\nuntil = \"1000 examples\"\n"
        ));
        let findings = c
            .check()
            .expect_err("1,000 examples is not whole updates of 32");
        assert_eq!(findings.codes(), [Code::StageBoundary]);
        assert_eq!(findings.paths(), ["batch.stages[0].until"]);
        let fix = findings
            .iter()
            .next()
            .and_then(|f| f.fix.clone())
            .expect("a fix");
        assert_eq!(
            fix.text,
            "use until = \"992 examples\" or \"1024 examples\""
        );

        let c = config(&format!(
            "{BASE}[[batch.stages]]\nglobal_batch = 32\n[batch.ramp]\nstart = 32\nincrement = 32\nover = \"1k examples\"\n"
        ));
        let findings = c.check().expect_err("both forms");
        assert_eq!(findings.codes(), [Code::StageOrder]);
        assert_eq!(findings.paths(), ["batch.ramp"]);

        let c = config(&format!(
            "{BASE}[batch.ramp]\nstart = 36\nincrement = 4\nover = \"1k examples\"\n"
        ));
        let findings = c
            .check()
            .expect_err("128 − 36 is a multiple of 4, but 36 is not of m·D = 8");
        assert_eq!(findings.codes(), [Code::Ramp]);
        assert_eq!(findings.paths(), ["batch.ramp.start"]);
    }

    const STAGES: &str = "[[batch.stages]]\nglobal_batch = 32\nuntil = \"1.6M tokens\"\n\
                          [[batch.stages]]\nglobal_batch = 64\nuntil = \"4.8M tokens\"\n";

    #[test]
    fn a_warmup_in_updates_under_a_ramp_is_a_warning_with_its_tokens() {
        // 200 updates: 50 × 32 + 50 × 64 + 100 × 128 = 17,600 examples
        // through the stages; 200 × 128,000 = 25.6M tokens at the full batch.
        let c = config(&format!(
            "{BASE}{STAGES}[schedule]\nwarmup = \"200 updates\"\ntotal = \"40M tokens\"\n"
        ));
        let findings = c.check().expect("warnings only: Ok, with the warning");
        assert!(!findings.has_errors(), "{findings}");
        assert_eq!(findings.codes(), [Code::StageShift]);
        assert_eq!(findings.paths(), ["schedule.warmup"]);
        let warning = findings.iter().next().expect("one");
        assert_eq!(warning.severity, crate::Severity::Warning);
        assert_eq!(
            warning.message,
            "`schedule.warmup` is 200 updates under a batch ramp-up: 17,600 examples and \
             17,600,000 tokens through the stages (25,600,000 tokens at the full batch)"
        );
        assert_eq!(warning.label, "in updates across 3 stages");
        assert_eq!(
            warning.fix.as_ref().map(|f| f.text.as_str()),
            Some(
                "write it in tokens or examples, which keep their meaning whatever the stages: \
                 \"17.6M tokens\" is its length through these stages"
            )
        );
        assert_eq!(warning.related[0].path, FieldPath::parse("batch.stages"));
        // The staged plan is still there: a warning does not stop a run.
        assert!(c.staged_plan().is_ok());

        // In tokens, the warmup keeps its meaning: nothing to say.
        let c = config(&format!(
            "{BASE}{STAGES}[schedule]\nwarmup = \"17.6M tokens\"\ntotal = \"40M tokens\"\n"
        ));
        assert_eq!(c.check(), Ok(Findings::default()));
        // Without a ramp-up, updates are a fixed number of tokens.
        let c = config(&format!("{BASE}[schedule]\nwarmup = \"200 updates\"\n"));
        assert_eq!(c.check(), Ok(Findings::default()));
    }

    #[test]
    fn a_warmup_inside_the_first_stage_names_one_stage_and_examples_without_seq_len() {
        let base = "micro_batch = 4\naccumulation = 16\nreplicas = 2\n";
        let c = config(&format!(
            "{base}[[batch.stages]]\nglobal_batch = 32\nuntil = \"50 updates\"\n\
             [schedule]\nwarmup = \"10 updates\"\n"
        ));
        let findings = c.check().expect("warnings only: Ok, with the warning");
        let warning = findings.iter().next().expect("one");
        assert_eq!(
            warning.message,
            "`schedule.warmup` is 10 updates under a batch ramp-up: 320 examples through the stages \
             (1,280 examples at the full batch)"
        );
        assert_eq!(warning.label, "in updates across 1 stage");
        // The built-in data counts its tokens (`variable_length`), so tokens
        // are proposed too, though their number depends on the data.
        assert_eq!(
            warning.fix.as_ref().map(|f| f.text.as_str()),
            Some(
                "write it in tokens or examples, which keep their meaning whatever the stages: \
                 \"320 examples\" is its length through these stages"
            )
        );
    }

    #[test]
    fn lengths_are_compared_through_the_stages() {
        // The run of 200 updates is 17.6M tokens through the stages, so a
        // warmup of 20M tokens is longer than the run, though 200 updates
        // at the full batch would be 25.6M tokens.
        let c = config(&format!(
            "{BASE}{STAGES}[schedule]\nwarmup = \"20M tokens\"\ntotal = \"200 updates\"\n"
        ));
        let findings = c.check().expect_err("too long");
        assert_eq!(findings.codes(), [Code::Warmup, Code::StageShift]);
        let longer = findings.iter().next().expect("the warmup");
        assert_eq!(
            longer.message,
            "`schedule.warmup` is 20M tokens, longer than the run (`schedule.total` is 200 updates = 17600k tokens)"
        );
        // 17.6M tokens is exactly the run: allowed, with the run's length in
        // updates a warning only.
        let c = config(&format!(
            "{BASE}{STAGES}[schedule]\nwarmup = \"17.6M tokens\"\ntotal = \"200 updates\"\n"
        ));
        assert_eq!(c.check().map(|f| f.codes()), Ok(vec![Code::StageShift]));
    }

    #[test]
    fn a_stage_without_its_end_is_named() {
        let c = config(&format!("{BASE}[[batch.stages]]\nglobal_batch = 32\n"));
        let findings = c.check().expect_err("no until");
        assert_eq!(findings.codes(), [Code::StageOrder]);
        assert_eq!(findings.paths(), ["batch.stages[0]"]);
    }
}
