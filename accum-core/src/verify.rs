//! The pre-flight equivalence check (`accum::verify::equivalence`, `accum::verify::preflight`): one update computed as
//! `A` microbatches × `D` replicas and as one large batch on the same
//! examples, compared numerically — never promised bit-exact.
//!
//! The default [`Tolerance`] is `rtol = 1e-4`, `atol = 1e-6`,
//! `param_rtol = 1e-2`. Gradients pass when
//! `max |g_acc − g_big| ≤ atol + rtol · max |g_big|`; f32 sums in a different
//! order differ by about `1e-7` relative, so `1e-4` has ample room and still
//! catches any wrong weighting (a double division by `A` is off by `1 − 1/A`).
//! Parameters after the update pass when
//! `max |p_acc − p_big| ≤ atol + param_rtol · max |Δp_big|` — relative to the
//! size of the update, not of the weights, so a wrong update cannot hide
//! behind large weights. That bound is looser because AdamW divides by
//! `√v + eps`: where `|g| ≈ eps` a gradient difference of `1e-8` moves the
//! update by a visible fraction of `lr` (observed: `4e-4` of the largest
//! update). With SGD the proptest holds parameters to `1e-4` of the update.
//!
//! A plan with stages (batch ramp-up) is checked stage by stage
//! ([`stages`]): for each stage, its first update — on the examples
//! the staged run gives that update when every attempt is applied — as the
//! stage's `A` microbatches × `D` replicas against one batch of the stage's
//! `B`, from the initial parameters.

use serde::{Deserialize, Serialize};

use crate::code::Code;
use crate::driver::{Position, survey};
use crate::engine::{Engine, EngineConfig, EngineError, MicrobatchEvent, Observer, RunOptions};
use crate::model::Model;
use crate::plan::{Plan, StagedPlan};
use crate::report::PlanSummary;
use crate::tensor::Tensors;
use crate::units::Updates;

/// Tolerance of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Relative part, times the reference magnitude.
    pub rtol: f64,
    /// Absolute part.
    pub atol: f64,
    /// Relative part for parameters after the update, times the largest
    /// update element.
    pub param_rtol: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            rtol: 1e-4,
            atol: 1e-6,
            param_rtol: 1e-2,
        }
    }
}

impl Tolerance {
    fn allows(&self, diff: f64, reference: f64) -> bool {
        diff <= self.atol + self.rtol * reference
    }

    fn allows_param(&self, diff: f64, update: f64) -> bool {
        diff <= self.atol + self.param_rtol * update
    }
}

/// One line of the checklist.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The rule the check tests (`accum::run::data-parallel`), which
    /// `accum explain` prints.
    pub code: Code,
    /// Short name (`"same examples"`).
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// The numbers behind it.
    pub detail: String,
}

/// The result of [`equivalence`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// Whether every check passed.
    pub passed: bool,
    /// The tolerance used.
    pub tolerance: Tolerance,
    /// The checklist, in order.
    pub checks: Vec<Check>,
    /// Largest absolute gradient difference.
    pub max_abs_grad_diff: f64,
    /// Largest absolute gradient difference ÷ largest reference gradient element.
    pub max_rel_grad_diff: f64,
    /// Largest absolute parameter difference after the update.
    pub max_abs_param_diff: f64,
    /// Largest absolute parameter difference ÷ largest reference update element.
    pub max_rel_param_diff: f64,
    /// Loss of the accumulated group.
    pub loss_accumulated: f64,
    /// Loss of the large batch.
    pub loss_large_batch: f64,
    /// The mean of microbatch mean token losses: a different objective (`accum::run::normalization`).
    pub mean_of_microbatch_means: f64,
    /// Examples in the group.
    pub examples: u64,
    /// Supervised tokens in the group.
    pub tokens: u64,
    /// Microbatches of the accumulated group, over all replicas.
    pub microbatches: u64,
}

#[derive(Default)]
struct Means {
    means: Vec<f64>,
}

impl Observer for Means {
    fn on_microbatch(&mut self, event: &MicrobatchEvent) {
        if event.tokens > 0 {
            self.means.push(event.mean_token_loss);
        }
    }
}

fn max_abs_delta(after: &Tensors, before: &Tensors) -> f64 {
    f64::from(after.max_abs_diff(before))
}

/// Runs the check for the built-in model and data of `config`.
pub fn equivalence(
    plan: &Plan,
    config: &EngineConfig,
    tolerance: Tolerance,
) -> Result<VerifyReport, EngineError> {
    let accumulated = Engine::new(plan, config)?;
    let large_plan = Plan::new(plan.effective_batch().get(), 1, 1)?;
    let large = Engine::new(large_plan, config)?;
    compare(accumulated, large, tolerance, &mut RunOptions::default())
}

/// The check of one stage of a plan with stages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageCheck {
    /// The stage, counted from 0.
    pub stage: usize,
    /// The stage's plan.
    pub plan: PlanSummary,
    /// The update checked: the stage's first, counted from 1.
    pub update: Updates,
    /// The check of that update against one batch of the stage's `B`.
    pub check: VerifyReport,
}

/// The result of [`stages`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StagedVerifyReport {
    /// Whether every stage checked passed.
    pub passed: bool,
    /// The stages of the plan; past [`MAX_CHECKED_STAGES`], not all are checked.
    pub stage_count: usize,
    /// One check per stage checked, in order.
    pub stages: Vec<StageCheck>,
}

/// Stages a pre-flight check runs at most: each costs its `A` microbatches
/// and one batch of its `B` examples, and a linear ramp-up may have a stage
/// per increment (a ramp of 99,999 stages would run for hours). Past it,
/// the stages checked are the first, the last, the one with the largest
/// `B` and the one with the largest `A`, and an even spread of others
/// within [`CHECKED_EXAMPLES_PER_LARGEST`].
pub const MAX_CHECKED_STAGES: usize = 16;

/// Past [`MAX_CHECKED_STAGES`], the examples of the stages checked total at
/// most this many times the largest stage's `B`: the check costs about what
/// checking the largest stage twice would, whatever the number of stages.
pub const CHECKED_EXAMPLES_PER_LARGEST: u64 = 2;

/// The stages checked, in order, given each stage's `B` and `A`: all of
/// them up to [`MAX_CHECKED_STAGES`]; past it the first, the last, the one
/// with the largest `B` and the one with the largest `A`, and the finest
/// even spread of at most [`MAX_CHECKED_STAGES`] stages whose examples fit
/// in [`CHECKED_EXAMPLES_PER_LARGEST`] times the largest `B` (the four alone
/// when none does).
fn checked_stages(batches: &[u64], accumulations: &[u64]) -> Vec<usize> {
    let count = batches.len();
    if count <= MAX_CHECKED_STAGES {
        return (0..count).collect();
    }
    let argmax = |values: &[u64]| {
        (0..values.len())
            .max_by_key(|&i| (values[i], std::cmp::Reverse(i)))
            .unwrap_or(0)
    };
    let largest = argmax(batches);
    let required = [0, count - 1, largest, argmax(accumulations)];
    let budget = batches[largest].saturating_mul(CHECKED_EXAMPLES_PER_LARGEST);
    let spread = |even: usize| {
        let mut chosen: Vec<usize> = (0..even)
            .map(|i| i * (count - 1) / (even - 1).max(1))
            .chain(required)
            .collect();
        chosen.sort_unstable();
        chosen.dedup();
        chosen
    };
    (2..=MAX_CHECKED_STAGES - 2)
        .rev()
        .map(spread)
        .find(|chosen| {
            chosen
                .iter()
                .map(|&i| batches[i])
                .fold(0u64, u64::saturating_add)
                <= budget
        })
        .unwrap_or_else(|| spread(2))
}

/// Runs the check once per stage of `stages`, for the built-in model and
/// data of `config`: the stage's first update, on the examples a run of
/// the staged plan gives it when every attempt is applied, computed as the
/// stage's `A` microbatches × `D` replicas and as one batch of its `B`,
/// from the initial parameters (`accum::verify::equivalence`, `accum::verify::preflight`). A constant plan gives one check,
/// the same as [`equivalence`]'s.
pub fn stages(
    stages: &StagedPlan,
    config: &EngineConfig,
    tolerance: Tolerance,
) -> Result<StagedVerifyReport, EngineError> {
    // The whole staged engine first: it checks the config, the stages
    // against the data and the schedule, and holds the data and the initial
    // model every check starts from.
    let whole = Engine::new(stages, config)?;
    let examples = whole.dataset().len();
    let mut starts = Vec::with_capacity(stages.stages().len());
    survey(stages, examples as u64, config.data.last_group, |_, at| {
        starts.push(at);
    })
    .map_err(EngineError::StageGroup)?;
    let engine = |plan: &Plan, at: Position| -> Result<Engine, EngineError> {
        let mut e =
            Engine::with_model(plan, config, whole.model().clone(), whole.dataset().clone())?;
        e.seek(at);
        Ok(e)
    };
    let all = stages.stages();
    let batches: Vec<u64> = all
        .iter()
        .map(|s| s.plan().effective_batch().get())
        .collect();
    let accumulations: Vec<u64> = all.iter().map(|s| s.plan().accumulation()).collect();
    let chosen = checked_stages(&batches, &accumulations);
    let mut checks = Vec::with_capacity(chosen.len());
    for index in chosen {
        let (stage, at) = (&all[index], starts[index]);
        let plan = stage.plan();
        let large_plan = Plan::new(plan.effective_batch().get(), 1, 1)?;
        let check = compare(
            engine(plan, at)?,
            engine(&large_plan, at)?,
            tolerance,
            &mut RunOptions::default(),
        )?;
        checks.push(StageCheck {
            stage: index,
            plan: PlanSummary::from(plan),
            update: Updates::new(stage.start().get() + 1),
            check,
        });
    }
    Ok(StagedVerifyReport {
        passed: checks.iter().all(|c| c.check.passed),
        stage_count: all.len(),
        stages: checks,
    })
}

/// Runs the check on two engines over the same model and data: `accumulated`
/// with the plan under test, `large` with `m = B, A = 1, D = 1`.
pub fn compare<M: Model>(
    mut accumulated: Engine<M>,
    mut large: Engine<M>,
    tolerance: Tolerance,
    options: &mut RunOptions<'_>,
) -> Result<VerifyReport, EngineError> {
    let before = accumulated.model().params().clone();
    accumulated.keep_gradient(true);
    large.keep_gradient(true);
    let mut means = Means::default();
    let mut acc_options = RunOptions {
        observers: vec![&mut means],
        stop: None,
        faults: std::mem::take(&mut options.faults),
    };
    let acc_stats = accumulated.step(&mut acc_options)?;
    let big_stats = large.step(&mut RunOptions::default())?;
    // A fresh engine always runs its first group: validation requires a
    // total of at least one update.
    let (Some(acc_stats), Some(big_stats)) = (acc_stats, big_stats) else {
        return Err(EngineError::NotEnoughData {
            examples: 0,
            effective_batch: accumulated.plan().effective_batch().get(),
        });
    };

    let mut checks = Vec::new();
    let mut check = |code: Code, name: &str, passed: bool, detail: String| {
        checks.push(Check {
            code,
            name: name.to_owned(),
            passed,
            detail,
        });
    };

    let mut ids_acc = accumulated.last_group_ids().to_vec();
    let mut ids_big = large.last_group_ids().to_vec();
    ids_acc.sort_unstable();
    ids_big.sort_unstable();
    let unique = {
        let mut d = ids_acc.clone();
        d.dedup();
        d.len() == ids_acc.len()
    };
    check(
        Code::DataParallel,
        "same examples",
        ids_acc == ids_big && unique,
        format!(
            "{} examples in the accumulated group, {} in the large batch, {}",
            ids_acc.len(),
            ids_big.len(),
            if ids_acc == ids_big && unique {
                "same ids, none twice"
            } else {
                "ids differ"
            }
        ),
    );

    let loss_diff = (acc_stats.loss - big_stats.loss).abs();
    let loss_ok = tolerance.allows(loss_diff, big_stats.loss.abs());
    check(
        Code::Normalization,
        "weighted loss",
        loss_ok,
        format!(
            "accumulated {:.6} vs large batch {:.6} (|Δ| = {loss_diff:.2e}); denominator {}",
            acc_stats.loss, big_stats.loss, acc_stats.denominator
        ),
    );

    let g_acc = accumulated
        .last_gradient()
        .expect("keep_gradient is on and one group ran");
    let g_big = large
        .last_gradient()
        .expect("keep_gradient is on and one group ran");
    let finite = g_acc.all_finite() && g_big.all_finite();
    check(
        Code::LossScale,
        "finite gradients",
        finite && acc_stats.applied && big_stats.applied,
        format!(
            "gradient norm {:.6} (accumulated) and {:.6} (large batch)",
            acc_stats.grad_norm, big_stats.grad_norm
        ),
    );

    let c = accumulated.counters();
    let expected_microbatches = acc_stats
        .examples
        .get()
        .div_ceil(accumulated.plan().micro_batch());
    let boundary_ok = c.grad_reductions == 1
        && c.grad_zeroings == 1
        && acc_stats.microbatches.get() == expected_microbatches;
    check(
        Code::Zeroing,
        "group boundary",
        boundary_ok,
        format!(
            "{} microbatches (expected {expected_microbatches}), {} gradient reduction(s), {} zeroing(s)",
            acc_stats.microbatches.get(),
            c.grad_reductions,
            c.grad_zeroings
        ),
    );
    check(
        Code::Scheduler,
        "update count",
        c.applied_updates.get() == 1
            && c.scheduler_steps.get() == 1
            && large.counters().applied_updates.get() == 1,
        format!(
            "{} applied update(s), {} scheduler step(s), {} attempt(s)",
            c.applied_updates.get(),
            c.scheduler_steps.get(),
            c.update_attempts
        ),
    );

    let grad_diff = f64::from(g_acc.max_abs_diff(g_big));
    let grad_ref = f64::from(g_big.max_abs());
    check(
        Code::Equivalence,
        "gradient equivalence",
        tolerance.allows(grad_diff, grad_ref),
        format!(
            "max |Δg| = {grad_diff:.2e}, max |g| = {grad_ref:.2e}, allowed {:.2e}",
            tolerance.atol + tolerance.rtol * grad_ref
        ),
    );
    let param_diff = f64::from(
        accumulated
            .model()
            .params()
            .max_abs_diff(large.model().params()),
    );
    let update_ref = max_abs_delta(large.model().params(), &before);
    check(
        Code::Equivalence,
        "parameter equivalence",
        tolerance.allows_param(param_diff, update_ref),
        format!(
            "max |Δp| = {param_diff:.2e}, max update = {update_ref:.2e}, allowed {:.2e}",
            tolerance.atol + tolerance.param_rtol * update_ref
        ),
    );

    let mean_of_means = if means.means.is_empty() {
        0.0
    } else {
        means.means.iter().sum::<f64>() / means.means.len() as f64
    };
    let passed = checks.iter().all(|c| c.passed);
    Ok(VerifyReport {
        passed,
        tolerance,
        checks,
        max_abs_grad_diff: grad_diff,
        max_rel_grad_diff: if grad_ref > 0.0 {
            grad_diff / grad_ref
        } else {
            grad_diff
        },
        max_abs_param_diff: param_diff,
        max_rel_param_diff: if update_ref > 0.0 {
            param_diff / update_ref
        } else {
            param_diff
        },
        loss_accumulated: acc_stats.loss,
        loss_large_batch: big_stats.loss,
        mean_of_microbatch_means: mean_of_means,
        examples: acc_stats.examples.get(),
        tokens: acc_stats.tokens.get(),
        microbatches: acc_stats.microbatches.get(),
    })
}

#[cfg(test)]
mod checked_stage_tests {
    use super::*;

    #[test]
    fn a_short_plan_checks_every_stage() {
        assert_eq!(checked_stages(&[4, 8, 4], &[1, 2, 1]), [0, 1, 2]);
        let equal = vec![64; MAX_CHECKED_STAGES];
        assert_eq!(
            checked_stages(&equal, &equal),
            (0..MAX_CHECKED_STAGES).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_long_ramp_checks_an_even_spread_within_the_budget() {
        // A linear ramp B = 1, 2, …, 99,999 (m = D = 1, so A = B).
        let ramp: Vec<u64> = (1..=99_999).collect();
        let chosen = checked_stages(&ramp, &ramp);
        assert!(chosen.len() <= MAX_CHECKED_STAGES, "{chosen:?}");
        assert!(
            chosen.len() >= 3,
            "a spread, not the ends alone: {chosen:?}"
        );
        assert_eq!(chosen.first(), Some(&0));
        assert_eq!(chosen.last(), Some(&99_998));
        assert!(chosen.windows(2).all(|w| w[0] < w[1]));
        let examples: u64 = chosen.iter().map(|&i| ramp[i]).sum();
        assert!(
            examples <= CHECKED_EXAMPLES_PER_LARGEST * 99_999,
            "{examples} examples for {chosen:?}"
        );
    }

    #[test]
    fn the_largest_stages_are_checked_wherever_they_are() {
        // Up, then down: the largest B and the largest A are in the middle
        // and at different stages (m changes between them).
        let mut batches: Vec<u64> = (1..=40).chain((1..40).rev()).collect();
        let mut accumulations = batches.clone();
        batches[37] = 400;
        accumulations[50] = 500;
        let chosen = checked_stages(&batches, &accumulations);
        for stage in [0, 37, 50, batches.len() - 1] {
            assert!(chosen.contains(&stage), "{stage} in {chosen:?}");
        }
        let examples: u64 = chosen.iter().map(|&i| batches[i]).sum();
        assert!(examples <= CHECKED_EXAMPLES_PER_LARGEST * 400, "{chosen:?}");
    }

    #[test]
    fn equal_stages_past_the_limit_check_the_required_ones_only() {
        let equal = vec![64; 40];
        assert_eq!(checked_stages(&equal, &equal), [0, 39]);
    }
}
