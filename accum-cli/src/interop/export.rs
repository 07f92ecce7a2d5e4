//! What every export shares: the plan of the config, the checks of values a
//! framework's file cannot hold, spans converted into the framework's unit,
//! and the notes about keys that are not written.

use accum_core::config::partial::PartialConfig;
use accum_core::plan::{LastGroup, Layout, Plan, Rounding, StagedPlan};
use accum_core::{Span, UnitKind};
use serde_json::{Map, Value, json};

use super::stages::{one_accumulation, staged_plan, stages_key};
use super::{ExportError, Exported, Framework};

/// One framework's writer: the file's text for a config, notes in `out`.
pub(crate) type Writer = fn(&PartialConfig, &mut Out) -> Result<String, ExportError>;

/// Writes the framework's file for a config with its `write`r, after the
/// checks every export shares.
pub(crate) fn export(
    framework: Framework,
    config: &PartialConfig,
    write: Writer,
) -> Result<Exported, ExportError> {
    check_finite(framework, config)?;
    let plan = config.plan()?;
    if config.batch.stages.is_some() && config.batch.ramp.is_some() {
        return Err(ExportError::Unsupported {
            framework,
            key: "batch.ramp",
            reason: "both batch.stages and batch.ramp are given; describe the ramp-up once, as stages or as a linear ramp".to_owned(),
        });
    }
    let staged = staged_plan(config, &plan).map_err(ExportError::Stages)?;
    // One accumulation for the whole run: a ramp is refused, never dropped.
    let lacks = match framework {
        Framework::DeepSpeed => Some(
            "DeepSpeed has one train_batch_size and gradient_accumulation_steps for the whole run",
        ),
        Framework::HuggingFace => {
            Some("the Trainer has one gradient_accumulation_steps for the whole run")
        }
        Framework::Axolotl => Some("axolotl has one gradient_accumulation_steps for the whole run"),
        Framework::LitGpt => {
            Some("LitGPT has one global_batch_size and micro_batch_size for the whole run")
        }
        Framework::Megatron | Framework::NeMo | Framework::Lightning => None,
    };
    let mut out = Out {
        framework,
        plan,
        staged,
        notes: Vec::new(),
    };
    if let Some(lacks) = lacks
        && !out.staged.is_constant()
    {
        let reason = one_accumulation(lacks, config, &out.staged);
        return Err(out.stages_refused(config, reason));
    }
    let text = write(config, &mut out)?;
    Ok(Exported {
        text,
        notes: out.notes,
    })
}

/// The state of one export: the plan, and the notes so far.
pub(crate) struct Out {
    pub(crate) framework: Framework,
    /// The plan of `[batch]`: the batch after the ramp, if there is one.
    pub(crate) plan: Plan,
    /// The stages of the config (one when the batch does not change).
    pub(crate) staged: StagedPlan,
    pub(crate) notes: Vec<String>,
}

impl Out {
    /// A key of the config the file does not carry, and why.
    pub(crate) fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// A span in `unit` through the stages, exactly, or the plan's error
    /// with the nearest values.
    pub(crate) fn span_in(
        &self,
        key: &'static str,
        framework_key: &'static str,
        span: Span,
        unit: UnitKind,
    ) -> Result<u64, ExportError> {
        self.staged
            .convert(span.value(), span.unit(), unit, Rounding::Exact)
            .map_err(|source| ExportError::NotWhole {
                framework: self.framework,
                key,
                framework_key,
                span,
                source,
            })
    }

    /// Each length that is set, in updates, under the framework's key:
    /// `(config key, length, framework key)`.
    pub(crate) fn insert_updates(
        &self,
        map: &mut Map<String, Value>,
        lengths: &[(&'static str, Option<Span>, &'static str)],
    ) -> Result<(), ExportError> {
        for &(key, span, framework_key) in lengths {
            if let Some(span) = span {
                let v = self.span_in(key, framework_key, span, UnitKind::Update)?;
                map.insert(framework_key.into(), json!(v));
            }
        }
        Ok(())
    }

    /// The Trainer's learning-rate schedule (Hugging Face's
    /// `TrainingArguments`, which axolotl hands on): the scheduler's type
    /// under `scheduler_key`, and `max_steps`, `warmup_steps` and
    /// `logging_steps` in optimizer steps.
    pub(crate) fn trainer_schedule(
        &self,
        c: &PartialConfig,
        root: &mut Map<String, Value>,
        scheduler_key: &str,
    ) -> Result<(), ExportError> {
        let s = &c.schedule;
        if let Some(kind) = s.kind {
            root.insert(
                scheduler_key.into(),
                json!(super::huggingface::scheduler_name(kind)),
            );
        }
        self.insert_updates(
            root,
            &[
                ("schedule.total", s.total, "max_steps"),
                ("schedule.warmup", s.warmup, "warmup_steps"),
                ("log.every", c.log.every, "logging_steps"),
            ],
        )
    }

    /// The layout of the plan (data-parallel when the config gives none).
    pub(crate) fn layout(&self) -> Layout {
        self.plan
            .layout()
            .unwrap_or(Layout::data_parallel(self.plan.replicas()))
    }

    /// The tensor, pipeline and context degrees to write, under the
    /// framework's `names` for them: those above 1 and those the config
    /// states (1 included).
    pub(crate) fn parallel_degrees(
        &self,
        c: &PartialConfig,
        names: [&'static str; 3],
    ) -> Vec<(&'static str, u64)> {
        let layout = self.layout();
        let stated = c.parallel.as_ref();
        [
            (layout.tensor, stated.and_then(|p| p.tensor)),
            (layout.pipeline, stated.and_then(|p| p.pipeline)),
            (layout.context, stated.and_then(|p| p.context)),
        ]
        .into_iter()
        .zip(names)
        .filter(|((degree, given), _)| *degree > 1 || given.is_some())
        .map(|((degree, _), name)| (name, degree))
        .collect()
    }

    /// The config's stages cannot be written to this framework, and why.
    pub(crate) fn stages_refused(&self, c: &PartialConfig, reason: String) -> ExportError {
        ExportError::Unsupported {
            framework: self.framework,
            key: stages_key(c),
            reason,
        }
    }

    /// The data's partial last group against what the framework does with it.
    pub(crate) fn check_last_group(
        &self,
        config: &PartialConfig,
        accepted: &[LastGroup],
        behaviour: &'static str,
    ) -> Result<(), ExportError> {
        let Some(examples) = config.data.examples else {
            return Ok(());
        };
        let policy = config.data.last_group.unwrap_or_default();
        let b = self.plan.effective_batch().get();
        if examples % b == 0 || accepted.contains(&policy) {
            return Ok(());
        }
        Err(ExportError::LastGroup {
            framework: self.framework,
            policy,
            examples,
            effective_batch: b,
            behaviour,
        })
    }

    /// Refuses a model-parallel layout for a framework that counts every
    /// device as a replica (`counts` says how it counts).
    pub(crate) fn require_data_parallel(&self, counts: &str) -> Result<(), ExportError> {
        match self.plan.layout() {
            Some(l) if l.world_size != self.plan.replicas() => Err(ExportError::Unsupported {
                framework: self.framework,
                key: "parallel",
                reason: format!(
                    "{counts}, so tensor {} × pipeline {} × context {} devices per model copy would count as replicas; \
                     export a data-parallel layout (world_size = replicas {})",
                    l.tensor,
                    l.pipeline,
                    l.context,
                    self.plan.replicas()
                ),
            }),
            _ => Ok(()),
        }
    }

    /// Notes for the keys of a section that no key of the file carries.
    pub(crate) fn not_written(&mut self, keys: &[(&str, bool)], why: &str) {
        let set: Vec<&str> = keys.iter().filter(|(_, on)| *on).map(|(k, _)| *k).collect();
        if !set.is_empty() {
            let fw = self.framework;
            self.note(format!("{} not written: {fw} {why}", set.join(", ")));
        }
    }
}

/// Every float of the config must be a finite number ≥ 0: a framework's
/// file cannot say `nan` (JSON would write `null`).
fn check_finite(framework: Framework, c: &PartialConfig) -> Result<(), ExportError> {
    let scale = c.precision.loss_scale.unwrap_or_default();
    let betas = c.optimizer.betas.unwrap_or([0.0, 0.0]);
    let values = [
        ("optimizer.clip_norm", c.optimizer.clip_norm),
        ("optimizer.lr", c.optimizer.lr),
        ("optimizer.eps", c.optimizer.eps),
        ("optimizer.weight_decay", c.optimizer.weight_decay),
        ("optimizer.momentum", c.optimizer.momentum),
        ("optimizer.betas", Some(betas[0])),
        ("optimizer.betas", Some(betas[1])),
        ("precision.loss_scale.init", scale.init),
        ("precision.loss_scale.growth_factor", scale.growth_factor),
        ("precision.loss_scale.backoff_factor", scale.backoff_factor),
    ];
    for (key, value) in values {
        if let Some(v) = value
            && !(v.is_finite() && v >= 0.0)
        {
            return Err(ExportError::Unsupported {
                framework,
                key,
                reason: format!("{v} is not a finite number ≥ 0; write a finite value"),
            });
        }
    }
    Ok(())
}

/// Formats a float the way JSON and Python write it (`1.0`, `0.0003`).
pub(crate) fn json_float(value: f64) -> String {
    serde_json::Number::from_f64(value).map_or_else(|| "null".to_owned(), |n| n.to_string())
}

/// A JSON object as pretty text with a final newline.
pub(crate) fn pretty(value: &serde_json::Value) -> String {
    let mut text = crate::escape::json(
        serde_json::to_string_pretty(value)
            .expect("a JSON value of strings, numbers and objects always serializes"),
    );
    text.push('\n');
    text
}

/// A JSON value as YAML, with serde-saphyr.
pub(crate) fn yaml(value: &serde_json::Value) -> String {
    serde_saphyr::to_string(value)
        .expect("a JSON value of strings, numbers and objects always serializes")
}
