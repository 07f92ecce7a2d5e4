//! The canonical training config, derived with the crate's own
//! `#[derive(AccumConfig)]`: the `[batch]` plan, an optional `[parallel]`
//! device layout (SPEC R3), an optional `[run]` header, and the engine
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
//! assert_eq!(minimal.validate(), Ok(()));
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
//! 1. On the section struct: `#[derive(…, Serialize, Deserialize, JsonSchema,
//!    AccumConfig)]`, `#[accum(crate = "crate", section)]` and
//!    `#[serde(deny_unknown_fields)]`. Deriving on every section, even one
//!    without roles, is what makes the compiler reject `warmup_steps: u64`
//!    there (R1) and puts `x-accum-unit` on its typed fields in the schema.
//! 2. In [`TrainingConfig`]: `#[accum(nested)] pub schedule: ScheduleSection,`
//!    — or `Option<ScheduleSection>` with `#[serde(default,
//!    skip_serializing_if = "Option::is_none")]` for an optional section.
//! 3. A plan role is given once in the whole config (checked at compile time
//!    through the nested field tables): `seq_len` lives in `[batch]`, so a
//!    `[data]` section must not mark its own field `#[accum(seq_len)]`.
//! 4. Sections with floats cannot be `Eq`: drop `Eq` from the derives of
//!    [`TrainingConfig`] then.
//! 5. Review the schema snapshot diff (`cargo insta review`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod partial;

use crate::engine::EngineConfig;
use crate::plan::{Fix, LinearRamp, Plan, StageSpec, StagedPlan};
use crate::settings::{
    DataSection, LogSection, LossSection, ModelSection, OptimizerSection, PrecisionSection,
    ScheduleSection,
};
use crate::{AccumConfig, Code, FieldPath, Finding, Findings};

/// A whole training config.
// `variable_length`: the built-in data's sequences run from `data.min_len`
// to `data.max_len`, and the engine counts the tokens of each update, so
// lengths in tokens need no fixed `seq_len` (R15).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(crate = "crate", variable_length)]
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

    /// The plan with its batch ramp-up: the stages of `[batch]`, or one
    /// stage for the whole run. Stops at the plan's first problem; use
    /// [`check`](Self::check) to see all of them.
    pub fn staged_plan(&self) -> Result<StagedPlan, Findings> {
        let plan = self.plan().map_err(|err| {
            let mut findings = Findings::default();
            findings.push(Finding::from_error(&err, FieldPath::parse("batch")));
            findings
        })?;
        self.batch.staged_plan(&plan)
    }

    /// Every problem of the config: the plan's findings (with field paths),
    /// its stages', and the engine sections' (ranges, `min_len ≤ max_len`, …).
    pub fn check(&self) -> Result<(), Findings> {
        let mut findings = match AccumConfig::validate(self) {
            Ok(()) => match self.plan() {
                Ok(plan) => match self.batch.staged_plan(&plan) {
                    Ok(_) => Findings::default(),
                    Err(stages) => stages,
                },
                Err(_) => Findings::default(),
            },
            Err(findings) => findings,
        };
        // A setting's message says what is wrong and what to use, in one
        // sentence; it is kept whole.
        findings.extend(self.engine_config().validate().into_iter().map(|error| {
            Finding::new(
                Code::Settings,
                FieldPath::parse(error.key),
                format!("`{}` {}", error.key, error.message),
                "out of range".to_owned(),
            )
        }));
        findings.into_result()
    }
}

/// `[run]`: the run's name and notes, for the run sheet.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, AccumConfig)]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<StageSpec>>,
    /// A linear batch ramp-up to the batch above, as Megatron-LM's
    /// `--rampup-batch-size`: `start`, `increment` and the length `over`
    /// which it grows. Give this or `stages`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<LinearRamp>,
}

impl BatchSection {
    /// The staged plan on `plan` (the batch above, after the ramp), with the
    /// problems of the stages as findings at their fields.
    pub fn staged_plan(&self, plan: &Plan) -> Result<StagedPlan, Findings> {
        let at = FieldPath::parse("batch");
        let resolved = match (&self.stages, &self.ramp) {
            (Some(_), Some(_)) => {
                let mut findings = Findings::default();
                findings.push(
                    Finding::new(
                        Code::StageOrder,
                        at.child("ramp"),
                        "both `stages` and `ramp` are given".to_owned(),
                        "give one of the two".to_owned(),
                    )
                    .with_fix(Fix::text(
                        "describe the ramp-up once: as stages, or as a linear ramp",
                    ))
                    .with_related(
                        at.child("stages"),
                        None,
                        "also a ramp-up".to_owned(),
                    ),
                );
                return Err(findings);
            }
            (Some(stages), None) => {
                StagedPlan::ramp_to(plan, stages).map_err(|err| (err, at.child("stages")))
            }
            (None, Some(ramp)) => {
                StagedPlan::linear(plan, ramp).map_err(|err| (err, at.child("ramp")))
            }
            (None, None) => Ok(StagedPlan::constant(*plan)),
        };
        resolved.map_err(|(err, at)| {
            let mut findings = Findings::default();
            findings.push(Finding::from_stage_error(&err, &at));
            findings
        })
    }
}

/// `[parallel]`: all devices and the degrees that split one model copy;
/// only what is left are replicas.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, AccumConfig)]
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
        assert_eq!(c.check(), Ok(()));
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

    #[test]
    fn a_stage_without_its_end_is_named() {
        let c = config(&format!("{BASE}[[batch.stages]]\nglobal_batch = 32\n"));
        let findings = c.check().expect_err("no until");
        assert_eq!(findings.codes(), [Code::StageOrder]);
        assert_eq!(findings.paths(), ["batch.stages[0]"]);
    }
}
