//! `accum verify`: the pre-flight check (`accum::verify::preflight`) — one update computed as
//! `A` microbatches on `D` replicas and as one large batch on the same
//! examples, compared within a documented tolerance (`accum::verify::equivalence`). With a batch
//! ramp-up, one update of each stage: the stage's first, against one batch
//! of the stage's `B`.

use accum_core::config::TrainingConfig;
use accum_core::verify::{self, StagedVerifyReport, Tolerance, VerifyReport};
use accum_core::{AccumConfig, Code, group_digits};

use crate::cli::{Format, VerifyArgs};
use crate::error::{CliError, Exit};
use crate::load::load_checked;
use crate::output::eprintln_safe;
use crate::output::{print_json, print_styled};
use crate::style::{Styled, Tone};

pub(crate) fn run(args: &VerifyArgs) -> Result<Exit, CliError> {
    let checked = load_checked::<TrainingConfig>(&args.file, TrainingConfig::check)?;
    let tolerance = Tolerance {
        rtol: args.rtol.unwrap_or(Tolerance::default().rtol),
        atol: args.atol.unwrap_or(Tolerance::default().atol),
        ..Tolerance::default()
    };
    let mut config = checked.config.engine_config();
    // A warmup starts at a learning rate of 0: the first update would not
    // move the parameters and their comparison would pass trivially.
    let warmup_off = config.schedule.warmup.value() > 0;
    if warmup_off {
        config.schedule.warmup = accum_core::Span::of(accum_core::Updates::ZERO);
    }
    // `check` has accepted the stages already.
    let stages = checked
        .config
        .staged_plan()
        .map_err(|findings| CliError::invalid(format!("{}: {findings}", checked.doc.name)))?;
    let fail = |err| CliError::invalid(format!("{}: {err}", checked.doc.name));
    if warmup_off && args.format == Format::Text {
        eprintln_safe!(
            "note: the check runs {} at the peak learning rate (warmup {} would start at 0)",
            if stages.is_constant() {
                "the first update"
            } else {
                "each stage's update"
            },
            checked.config.schedule.warmup
        );
    }
    let passed = if stages.is_constant() {
        let report = verify::equivalence(&checked.plan, &config, tolerance).map_err(fail)?;
        match args.format {
            Format::Json => print_json(&report)?,
            Format::Text => print_styled(
                &render(&checked.doc.name, &checked.plan, &report).render(crate::style::stdout()),
            )?,
        }
        report.passed
    } else {
        let report = verify::stages(&stages, &config, tolerance).map_err(fail)?;
        match args.format {
            Format::Json => print_json(&report)?,
            Format::Text => print_styled(
                &render_stages(&checked.doc.name, &report).render(crate::style::stdout()),
            )?,
        }
        report.passed
    };
    Ok(if passed { Exit::Ok } else { Exit::Invalid })
}

/// The checks of one update; "pass" and the verdict in green, "FAIL" and
/// a failed verdict in red.
fn render(name: &str, plan: &accum_core::plan::Plan, report: &VerifyReport) -> Styled {
    let mut out = Styled::from(format!(
        "pre-flight check of {name}: one update as {} vs one batch of {}\n",
        plan.batch_formula(),
        plan.effective_batch().get()
    ));
    out.append(render_checks(report));
    if report.passed {
        out.toned("all checks passed", Tone::Pass).push("\n");
    } else {
        out.append(failed_line(String::new()));
    }
    out
}

/// One block per stage: the stage's first update against one batch of the
/// stage's `B`, then a line per stage that failed.
fn render_stages(name: &str, report: &StagedVerifyReport) -> Styled {
    let head = if report.stages.len() == report.stage_count {
        format!(
            "pre-flight check of {name}: the first update of each of its {} stages vs one batch of the stage's size\n",
            report.stage_count
        )
    } else {
        format!(
            "pre-flight check of {name}: the first update of {} of its {} stages (the first, the last, the largest batch and accumulation, and stages evenly between, within twice the largest batch's examples; the other {} are not checked) vs one batch of the stage's size\n",
            report.stages.len(),
            group_digits(report.stage_count as u64),
            group_digits((report.stage_count - report.stages.len()) as u64)
        )
    };
    let mut out = Styled::from(head);
    for stage in &report.stages {
        let p = &stage.plan;
        out.push(format!(
            "stage {} (update {}): B = m·A·D = {} × {} × {} = {} vs one batch of {}\n",
            stage.stage + 1,
            group_digits(stage.update.get()),
            p.micro_batch,
            p.accumulation,
            p.replicas,
            group_digits(p.effective_batch),
            group_digits(p.effective_batch)
        ));
        out.append(render_checks(&stage.check));
    }
    let failed: Vec<String> = report
        .stages
        .iter()
        .filter(|s| !s.check.passed)
        .map(|s| (s.stage + 1).to_string())
        .collect();
    if failed.is_empty() {
        let verdict = if report.stages.len() == report.stage_count {
            "all checks passed in every stage"
        } else {
            "all checks passed in every stage checked"
        };
        out.toned(verdict, Tone::Pass).push("\n");
    } else {
        out.append(failed_line(format!(" in stage {}", failed.join(", "))));
    }
    out
}

/// The last line of a check that failed, `where` it failed: the pre-flight
/// rule's code, whose entry says how to read the checks.
fn failed_line(place: String) -> Styled {
    let mut line = Styled::new();
    line.toned(format!("some checks failed{place}"), Tone::Fail)
        .push(format!(
            ": fix them before a campaign ({})\n",
            Code::Preflight
        ));
    line
}

/// The checklist of one update, its differences and the tolerance.
fn render_checks(report: &VerifyReport) -> Styled {
    let mut styled = Styled::new();
    let mut out = String::new();
    for check in &report.checks {
        styled.push("  ");
        if check.passed {
            styled.toned("pass", Tone::Pass);
        } else {
            styled.toned("FAIL", Tone::Fail);
        }
        styled.push(format!(" {:<28} {}\n", check.name, check.detail));
        if !check.passed {
            styled.push(format!(
                "       {:<28} `{} explain {}` says what it checks and how to fix it\n",
                "",
                crate::output::bin_name(),
                check.code
            ));
        }
    }
    out.push_str(&format!(
        "  gradients: max |Δ| {:.3e}, max rel {:.3e}; parameters after the update: max |Δ| {:.3e}\n",
        report.max_abs_grad_diff, report.max_rel_grad_diff, report.max_abs_param_diff
    ));
    out.push_str(&format!(
        "  loss: accumulated {:.6}, large batch {:.6}, mean of microbatch means {:.6} (not the objective)\n",
        report.loss_accumulated, report.loss_large_batch, report.mean_of_microbatch_means
    ));
    out.push_str(&format!(
        "  tolerance: |Δ| ≤ {:e} + {:e}·|reference| (not bit-exact)\n",
        report.tolerance.atol, report.tolerance.rtol
    ));
    styled.push(out);
    styled
}

#[cfg(test)]
mod tests {
    use super::*;
    use accum_core::Family;

    /// Each check of the core names the rule it tests, and a failed one
    /// points to that rule's entry.
    #[test]
    fn every_check_of_the_core_points_to_its_own_rule() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/tiny.toml"
        ))
        .expect("the tiny fixture");
        let config: TrainingConfig = toml::from_str(&text).expect("a valid config");
        let plan = accum_core::AccumConfig::plan(&config).expect("a plan");
        let mut report = verify::equivalence(&plan, &config.engine_config(), Tolerance::default())
            .expect("runs");
        let codes: Vec<Code> = report.checks.iter().map(|c| c.code).collect();
        assert_eq!(
            codes,
            [
                Code::DataParallel,
                Code::Normalization,
                Code::LossScale,
                Code::Zeroing,
                Code::Scheduler,
                Code::Equivalence,
                Code::Equivalence
            ],
            "{:?}",
            report.checks
        );
        assert!(
            codes
                .iter()
                .all(|c| matches!(c.family(), Family::Run | Family::Verify))
        );
        report.checks[2].passed = false;
        let out = render_checks(&report).plain();
        assert!(
            out.contains("`accum explain accum::run::loss-scale` says what it checks"),
            "{out}"
        );
        assert_eq!(out.matches("explain").count(), 1, "{out}");
    }
}
