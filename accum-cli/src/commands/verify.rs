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

fn render(name: &str, plan: &accum_core::Plan, report: &VerifyReport) -> String {
    let mut out = format!(
        "pre-flight check of {name}: one update as {} vs one batch of {} (R12)\n",
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
    }
    out.push_str(&format!(
        "  gradients: max |Δ| {:.3e}, max rel {:.3e}; parameters after the update: max |Δ| {:.3e}\n",
        report.max_abs_grad_diff, report.max_rel_grad_diff, report.max_abs_param_diff
    ));
    out.push_str(&format!(
        "  loss: accumulated {:.6}, large batch {:.6}, mean of microbatch means {:.6} (not the objective, R4)\n",
        report.loss_accumulated, report.loss_large_batch, report.mean_of_microbatch_means
    ));
    out.push_str(&format!(
        "  tolerance: |Δ| ≤ {:e} + {:e}·|reference| (not bit-exact, R10)\n",
        report.tolerance.atol, report.tolerance.rtol
    ));
    out.push_str(if report.passed {
        "all checks passed\n"
    } else {
        "some checks failed: fix them before a campaign\n"
    });
    out
}
