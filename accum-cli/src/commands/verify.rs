//! `accum verify`: the pre-flight check (SPEC R12) — one update computed as
//! `A` microbatches on `D` replicas and as one large batch on the same
//! examples, compared within a documented tolerance (R10).

use accum_core::config::TrainingConfig;
use accum_core::verify::{Tolerance, VerifyReport, verify};

use crate::cli::{Format, VerifyArgs};
use crate::error::{CliError, Exit};
use crate::load::load_checked;
use crate::output::{print_json, print_text};

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
    let report = verify(&checked.plan, &config, tolerance)
        .map_err(|err| CliError::invalid(format!("{}: {err}", checked.doc.name)))?;
    if warmup_off && args.format == Format::Text {
        eprintln!(
            "note: the check runs the first update at the peak learning rate (warmup {} would start at 0)",
            checked.config.schedule.warmup
        );
    }
    match args.format {
        Format::Json => print_json(&report)?,
        Format::Text => print_text(&render(&checked.doc.name, &checked.plan, &report))?,
    }
    Ok(if report.passed {
        Exit::Ok
    } else {
        Exit::Invalid
    })
}

/// The rule a pre-flight check tests, by the check's name in the core's
/// report (`accum_core::verify`); a check the table does not know points
/// to the pre-flight rule itself.
fn rule_of(check: &str) -> &'static str {
    match check {
        "same examples" => "accum::run::data-parallel",
        "weighted loss" => "accum::run::normalization",
        "finite gradients" => "accum::run::loss-scale",
        "group boundary" => "accum::run::zeroing",
        "update count" => "accum::run::scheduler",
        "gradient equivalence" | "parameter equivalence" => "accum::verify::equivalence",
        _ => "accum::verify::preflight",
    }
}

fn render(name: &str, plan: &accum_core::Plan, report: &VerifyReport) -> String {
    let mut out = format!(
        "pre-flight check of {name}: one update as {} vs one batch of {}\n",
        plan.batch_formula(),
        plan.effective_batch().get()
    );
    for check in &report.checks {
        out.push_str(&format!(
            "  {} {:<28} {}\n",
            if check.passed { "pass" } else { "FAIL" },
            check.name,
            check.detail
        ));
        if !check.passed {
            out.push_str(&format!(
                "       {:<28} `{} explain {}` says what it checks and how to fix it\n",
                "",
                crate::cli::bin_name(),
                rule_of(&check.name)
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
    out.push_str(if report.passed {
        "all checks passed\n"
    } else {
        "some checks failed: fix them before a campaign\n"
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table names every check the core runs: a renamed or new check
    /// fails here instead of pointing to the general rule.
    #[test]
    fn every_check_of_the_core_points_to_its_own_rule() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/tiny.toml"
        ))
        .expect("the tiny fixture");
        let config: TrainingConfig = toml::from_str(&text).expect("a valid config");
        let plan = accum_core::AccumConfig::plan(&config).expect("a plan");
        let report = verify(&plan, &config.engine_config(), Tolerance::default()).expect("runs");
        assert!(report.checks.len() >= 6, "{:?}", report.checks);
        for check in &report.checks {
            let code = rule_of(&check.name);
            assert_ne!(
                code, "accum::verify::preflight",
                "`{}` has no rule",
                check.name
            );
            assert!(crate::rules::find(code).is_some(), "{code} has no entry");
        }
    }
}
