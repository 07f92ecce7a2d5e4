//! Batches that change during the run, as accum's config writes them.
//!
//! A framework's ramp-up or batch schedule is imported as `[batch.ramp]` (a
//! linear ramp, stepped exactly as Megatron-LM's ramp-up calculator steps
//! it) or `[[batch.stages]]` (each stage's batch and where it ends), with
//! `[batch]` holding the batch after the ramp. Core's [`StagedPlan`] checks
//! and resolves both; nothing here re-does its arithmetic. Lengths the file
//! counts in iterations or optimizer steps are converted through the stages
//! (`schedule-shift`), and export refuses a ramp a framework cannot express.

use std::ops::Range;

use accum_core::Code;
use accum_core::config::partial::PartialConfig;
use accum_core::plan::{LinearRamp, Plan, StageError, StageSpec, StagedPlan};
use accum_core::{FieldPath, Span, UnitKind, Updates, group_digits};

use crate::diagnostic::Diagnostic;

/// How accum's config writes a changing batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `[batch.ramp]`.
    Ramp(LinearRamp),
    /// `[[batch.stages]]`, the stages before the batch of `[batch]`.
    Stages(Vec<StageSpec>),
}

/// A framework's changing batch, resolved into stages.
pub(crate) struct Staged {
    /// What the config writes.
    pub(crate) form: Form,
    /// The stages it gives, on the imported plan.
    pub(crate) plan: StagedPlan,
    /// The framework's key that states it (`--rampup-batch-size`), for findings.
    pub(crate) key: String,
    /// Where it is written.
    pub(crate) range: Range<usize>,
}

/// A length the file counts in updates (Megatron's iterations, Lightning's
/// optimizer steps).
pub(crate) struct StepLength {
    /// The framework's key (`--train-iters`, `trainer.max_steps`).
    pub(crate) key: String,
    /// Its path.
    pub(crate) path: Vec<String>,
    /// Where it is written.
    pub(crate) range: Range<usize>,
    /// The value, in updates.
    pub(crate) updates: u64,
    /// The framework's key that counts the same length in samples, when it
    /// has one (`--train-samples`).
    pub(crate) in_samples: Option<&'static str>,
}

/// The staged plan a partial config describes on its plan: core's rules,
/// as a full config resolves them (`BatchSection::staged_plan`).
pub(crate) fn staged_plan(config: &PartialConfig, plan: &Plan) -> Result<StagedPlan, StageError> {
    match (&config.batch.stages, &config.batch.ramp) {
        (Some(stages), _) => StagedPlan::ramp_to(plan, stages),
        (None, Some(ramp)) => StagedPlan::linear(plan, ramp),
        (None, None) => Ok(StagedPlan::constant(*plan)),
    }
}

/// The `[[batch.stages]]` that give `staged`: every stage but the last,
/// each with its global batch and where it ends (in examples, or in tokens
/// when `in_tokens` and the plan has a sequence length).
pub(crate) fn specs_of(staged: &StagedPlan, in_tokens: bool) -> Vec<StageSpec> {
    let stages = staged.stages();
    stages
        .windows(2)
        .map(|pair| {
            let next = &pair[1];
            let until = match next.tokens_before() {
                Some(tokens) if in_tokens => Span::new(tokens.get(), UnitKind::Token),
                _ => Span::new(next.examples_before().get(), UnitKind::Example),
            };
            StageSpec::global_batch(pair[0].plan().effective_batch().get()).until(until)
        })
        .collect()
}

/// `schedule-shift`: the batch changes while lengths count updates. Each
/// length is given in examples (and tokens) through the stages, against
/// what it would be at the full batch. `None` when no length counts
/// updates: lengths in samples or tokens keep their meaning.
pub(crate) fn shift_finding(staged: &Staged, lengths: &[StepLength]) -> Option<Diagnostic> {
    if lengths.is_empty() || staged.plan.is_constant() {
        return None;
    }
    let full = *staged.plan.final_plan();
    let b = full.effective_batch().get();
    let mut parts = Vec::new();
    let mut instead = Vec::new();
    for length in lengths {
        let n = Updates::new(length.updates);
        let (Ok(examples), Some(at_full)) =
            (staged.plan.examples_at(n), length.updates.checked_mul(b))
        else {
            continue;
        };
        let (tokens, full_tokens) = match (staged.plan.tokens_at(n), full.seq_len()) {
            (Ok(t), Some(len)) => (
                format!(" ({} tokens)", group_digits(t.get())),
                format!(" ({} tokens)", group_digits(at_full.saturating_mul(len))),
            ),
            _ => (String::new(), String::new()),
        };
        parts.push(format!(
            "{} {} = {} examples{tokens} through the stages, not {} examples{full_tokens} as at the full batch",
            length.key,
            group_digits(length.updates),
            group_digits(examples.get()),
            group_digits(at_full),
        ));
        if let Some(key) = length.in_samples {
            instead.push(format!("{key} {}", examples.get()));
        }
    }
    if parts.is_empty() {
        return None;
    }
    let first = staged.plan.first_plan().effective_batch().get();
    let help = if instead.len() == lengths.len() {
        format!(
            "to keep these lengths whatever the stages, count them in samples: {} (the same lengths as now)",
            instead.join(", ")
        )
    } else {
        "accum's config keeps these lengths in updates, counted through the stages as the framework counts them; count them in examples or tokens to keep their meaning whatever the stages".to_owned()
    };
    let mut finding = Diagnostic::error(
        Code::StageShift,
        lengths[0].path.clone(),
        format!(
            "{} changes the global batch during the run ({} at the start, {} at the end), so a length counted in updates covers another number of examples than at the full batch: {}",
            staged.key,
            group_digits(first),
            group_digits(b),
            parts.join("; ")
        ),
    )
    .warning()
    .help(help)
    .at(lengths[0].range.clone(), "counts updates of changing size");
    for length in &lengths[1..] {
        finding = finding.also(length.path.clone(), length.range.clone(), "counts updates");
    }
    Some(finding.also(
        FieldPath::parse(&staged.key),
        staged.range.clone(),
        "the batch changes here",
    ))
}

/// Why a config whose batch changes is refused by a framework with one
/// accumulation for the whole run (`lacks` says so), with the fixes:
/// nothing of the ramp is dropped silently.
pub(crate) fn one_accumulation(lacks: &str, config: &PartialConfig, staged: &StagedPlan) -> String {
    format!(
        "{lacks}, so the {} stages (global batch {}) cannot be written; export to megatron (--rampup-batch-size or --step-batch-size-schedule) or nemo (model.rampup_batch_size), which change the batch during the run, or to lightning when every stage ends at a whole epoch; or remove {} from the config to train with the global batch {} from the first update",
        staged.stages().len(),
        batches(staged),
        stages_key(config),
        group_digits(staged.final_plan().effective_batch().get())
    )
}

/// The config's key that states its stages: `batch.ramp` or `batch.stages`.
pub(crate) fn stages_key(config: &PartialConfig) -> &'static str {
    if config.batch.ramp.is_some() {
        "batch.ramp"
    } else {
        "batch.stages"
    }
}

/// The stages' global batches, `32 → 64 → 128`.
pub(crate) fn batches(staged: &StagedPlan) -> String {
    staged
        .stages()
        .iter()
        .map(|s| group_digits(s.plan().effective_batch().get()))
        .collect::<Vec<_>>()
        .join(" → ")
}

/// A ramp over samples that gives the same stages as `ramp` on `plan`, for
/// the frameworks whose ramp-up counts samples: `ramp` itself when it is
/// over examples, or its length in examples when that steps the batch the
/// same way.
pub(crate) fn ramp_in_samples(ramp: &LinearRamp, staged: &StagedPlan) -> Option<LinearRamp> {
    if ramp.over.unit() == UnitKind::Example {
        return Some(*ramp);
    }
    let plan = staged.final_plan();
    let samples = match ramp.over.unit() {
        UnitKind::Token => {
            let len = plan.seq_len()?;
            ramp.over
                .value()
                .is_multiple_of(len)
                .then(|| ramp.over.value() / len)?
        }
        _ => return None,
    };
    let candidate = LinearRamp {
        over: Span::new(samples, UnitKind::Example),
        ..*ramp
    };
    match StagedPlan::linear(plan, &candidate) {
        Ok(same) if same == *staged => Some(candidate),
        _ => None,
    }
}
