//! `accum run`'s text: the ramp-up in one line, and the summary of a run
//! report at the end.

use std::path::Path;
use std::time::Duration;

use accum_core::estimate::ByteSize;
use accum_core::group_digits;
use accum_core::plan::StagedPlan;
use accum_core::report::{RunReport, StageCounters};

use crate::style::{Styled, Tone};

/// `"16 → 32 → 64 in 3 stages"`; the middle is elided past five stages.
pub(crate) fn ramp_text(stages: &StagedPlan) -> String {
    let batches: Vec<String> = stages
        .stages()
        .iter()
        .map(|stage| group_digits(stage.plan().effective_batch().get()))
        .collect();
    let shown = if batches.len() > 5 {
        format!(
            "{} → {} → … → {}",
            batches[0],
            batches[1],
            batches[batches.len() - 1]
        )
    } else {
        batches.join(" → ")
    };
    format!("{shown} in {} stages", batches.len())
}

/// `"1 example"`, `"2,048 examples"`.
pub(crate) fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", group_digits(n))
    }
}

/// What `accum run` prints at the end in text: the counters, the loss, the
/// stages, memory, warnings and where the outputs are. The first line is
/// green for a run that ended, yellow for one Ctrl-C stopped; warnings are
/// yellow.
pub(crate) fn summary(
    report: &RunReport,
    elapsed: Duration,
    report_path: Option<&Path>,
    dump: Option<&Path>,
) -> Styled {
    let c = &report.counters;
    let secs = elapsed.as_secs_f64().max(1e-9);
    let mut styled = Styled::new();
    let done = format!(
        "{} in {:.2} s",
        plural(c.applied_updates.get(), "applied update"),
        secs
    );
    if report.stopped_early {
        styled.toned(
            format!("{done} (stopped early by Ctrl-C; the last group was not applied)"),
            Tone::Warn,
        );
    } else {
        styled.toned(done, Tone::Pass);
    }
    styled.push("\n");
    let mut out = String::new();
    out.push_str(&format!(
        "  attempts {}, skipped {}, microbatches {}, backward passes {}, scheduler steps {}\n",
        group_digits(c.update_attempts),
        group_digits(c.skipped_updates),
        group_digits(c.microbatches.get()),
        group_digits(c.backward_passes),
        group_digits(c.scheduler_steps.get())
    ));
    out.push_str(&format!(
        "  examples {}, supervised tokens {} ({} tokens/s)\n",
        group_digits(c.examples.get()),
        group_digits(c.supervised_tokens.get()),
        group_digits((c.supervised_tokens.get() as f64 / secs) as u64)
    ));
    if let Some(loss) = report.loss_headline() {
        out.push_str(&format!(
            "  loss {} (exact, over {} applied updates)\n",
            loss.exact(),
            group_digits(loss.count)
        ));
        if let Some(means) = loss.means_text() {
            out.push_str(&format!("  loss means {means}\n"));
        }
    }
    if report.stages.len() > 1 {
        out.push_str(&stage_lines(&report.stages));
    }
    out.push_str(&format!(
        "  peak accounted memory per replica {} (activations {})",
        ByteSize::new(report.memory.peak_bytes),
        ByteSize::new(report.memory.peak_activation_bytes),
    ));
    styled.push(std::mem::take(&mut out));
    if report.memory.peak_grows {
        styled.push("; ").toned(
            "WARNING: memory kept between microbatches grows across groups",
            Tone::Warn,
        );
    }
    styled.push("\n");
    if c.dropped_examples.get() > 0 {
        out.push_str(&format!(
            "  dropped {} in partial groups (ids in the report)\n",
            plural(c.dropped_examples.get(), "example")
        ));
    }
    styled.push(std::mem::take(&mut out));
    for warning in &report.warnings {
        styled
            .push("  ")
            .toned("warning", Tone::Warn)
            .push(format!(": {warning}\n"));
    }
    if let Some(path) = report_path {
        out.push_str(&format!("  report: {}\n", accum_core::shown::path(path)));
    }
    if let Some(dir) = dump {
        out.push_str(&format!("  dump: {}\n", accum_core::shown::path(dir)));
    }
    styled.push(out);
    styled
}

/// One line per stage of a batch ramp-up: its batch, its updates, and what
/// the run did in it.
fn stage_lines(stages: &[StageCounters]) -> String {
    let mut out = String::from("  stages:\n");
    for (i, stage) in stages.iter().enumerate() {
        // The last stage lasts to the end of the run: up to its last update.
        let first = stage.first_update.get();
        let last = stage.last_update.map(|last| last.get()).or_else(|| {
            (stage.applied_updates.get() > 0).then(|| first + stage.applied_updates.get() - 1)
        });
        let range = match last {
            Some(last) => format!("updates {}–{}", group_digits(first), group_digits(last)),
            None => format!("updates {}–", group_digits(first)),
        };
        out.push_str(&format!(
            "    {}: B {} (A {}), {range}: applied {}, attempts {}, skipped {}, microbatches {}, examples {}, tokens {}\n",
            i + 1,
            group_digits(stage.plan.effective_batch),
            group_digits(stage.plan.accumulation),
            group_digits(stage.applied_updates.get()),
            group_digits(stage.attempts),
            group_digits(stage.skipped),
            group_digits(stage.microbatches.get()),
            group_digits(stage.examples.get()),
            group_digits(stage.tokens.get()),
        ));
    }
    out
}
