//! A resumed run on the sheet and in a comparison: where each segment
//! starts (a resume, and the plan when it changed), as marks on the
//! trial's plots, beside the stage starts of a ramp-up, and as a table.

use accum_core::group_digits;
use accum_core::report::{RunReport, Segment};
use accum_core::settings::LogAxis;

use super::chart::{Mark, Marks};
use super::schedule::MAX_STAGE_MARKS;
use super::trained::stage_marks;
use super::{Row, Table};

/// Whether the report is of a run that was resumed.
pub(crate) fn resumed(report: &RunReport) -> bool {
    report.segments.iter().any(|s| s.resumed)
}

/// Where a segment starts on `axis`: the count before its first attempt.
fn start_on(segment: &Segment, axis: LogAxis) -> f64 {
    (match axis {
        LogAxis::Updates => segment.updates.get(),
        LogAxis::Examples => segment.examples.get(),
        LogAxis::Tokens => segment.tokens.get(),
    }) as f64
}

/// `resumed`, or `resumed: m 4 × A 8 × D 1 = B 32` where the plan changed.
fn label(segment: &Segment) -> String {
    match &segment.changed_from {
        Some(_) => format!("resumed: {}", segment.plan),
        None => "resumed".to_owned(),
    }
}

/// The vertical marks of a run's trial plots on `axis`: where each stage
/// of a ramp-up starts and where the run resumed, in x order; `None` when
/// there is neither. Past [`MAX_STAGE_MARKS`] resumes, only the last is
/// marked.
pub(crate) fn run_marks(report: &RunReport, axis: LogAxis) -> Option<Marks> {
    let stages = stage_marks(report, axis);
    let resumes: Vec<&Segment> = report.segments.iter().filter(|s| s.resumed).collect();
    let shown = &resumes[resumes.len().saturating_sub(MAX_STAGE_MARKS)..];
    let mut at: Vec<Mark> = shown
        .iter()
        .map(|s| Mark {
            x: start_on(s, axis),
            label: label(s),
        })
        .collect();
    let name = match (&stages, shown.is_empty()) {
        (None, true) => return None,
        (None, false) => "resume".to_owned(),
        (Some(stages), true) => stages.name.clone(),
        (Some(stages), false) => format!("{}, resume", stages.name),
    };
    at.extend(stages.into_iter().flat_map(|m| m.at));
    at.sort_by(|a, b| a.x.total_cmp(&b.x));
    Some(Marks { name, at })
}

/// The sentence under the trial's plots that says what the resume marks
/// are, when the run resumed.
pub(crate) fn marks_sentence(report: &RunReport) -> Option<String> {
    let resumes = report.segments.iter().filter(|s| s.resumed).count();
    match resumes {
        0 => None,
        1 => Some("A dashed line marks where the run resumed (see Segments).".to_owned()),
        n if n > MAX_STAGE_MARKS => Some(format!(
            "The run resumed {} times; dashed lines mark the last {MAX_STAGE_MARKS} resumes (see Segments).",
            group_digits(n as u64)
        )),
        n => Some(format!(
            "Dashed lines mark where the run resumed, {} times (see Segments).",
            group_digits(n as u64)
        )),
    }
}

/// Where a segment starts, in words: `from the start` or `after update 40`.
fn start_text(segment: &Segment) -> String {
    if segment.updates.get() == 0 && !segment.resumed {
        "from the start".to_owned()
    } else {
        format!("after update {}", group_digits(segment.updates.get()))
    }
}

/// What a segment is: its plan, and how it began.
fn how(segment: &Segment) -> String {
    match (&segment.changed_from, segment.resumed) {
        (Some(before), _) => format!("resumed under another plan; saved under {before}"),
        (None, true) => "resumed under the same plan".to_owned(),
        (None, false) => "the run's start".to_owned(),
    }
}

/// The segments table of a resumed run: each segment's start, its plan
/// and how it began; `None` for a run that never resumed.
pub(crate) fn table(report: &RunReport) -> Option<Table> {
    if !resumed(report) {
        return None;
    }
    let rows = report
        .segments
        .iter()
        .enumerate()
        .map(|(i, segment)| {
            Row::new(
                format!("segment {}: {}", i + 1, start_text(segment)),
                segment.plan.to_string(),
                format!(
                    "{}; {} examples and {} supervised tokens before it",
                    how(segment),
                    group_digits(segment.examples.get()),
                    group_digits(segment.tokens.get())
                ),
            )
        })
        .collect();
    Some(Table {
        title: "Segments".into(),
        rows,
    })
}

/// The comparison's cell of a run's segments: `1 (never resumed)`, or each
/// segment's plan from its start.
pub(crate) fn compared(report: &RunReport) -> String {
    if !resumed(report) {
        return "1 (never resumed)".to_owned();
    }
    let each: Vec<String> = report
        .segments
        .iter()
        .map(|s| {
            format!(
                "{} {}{}",
                s.plan,
                start_text(s),
                if s.changed_from.is_some() {
                    " (re-planned)"
                } else {
                    ""
                }
            )
        })
        .collect();
    format!(
        "{}: {}",
        group_digits(each.len() as u64),
        crate::output::listed(&each)
    )
}

#[cfg(test)]
mod tests {
    use accum_core::report::PlanSummary;
    use accum_core::{Examples, Tokens, Updates};

    use super::*;

    fn plan(m: u64, a: u64, d: u64) -> PlanSummary {
        PlanSummary {
            micro_batch: m,
            accumulation: a,
            replicas: d,
            effective_batch: m * a * d,
            seq_len: None,
        }
    }

    fn segment(updates: u64, now: PlanSummary, before: Option<PlanSummary>) -> Segment {
        Segment {
            attempts: updates,
            updates: Updates::new(updates),
            examples: Examples::new(updates * 16),
            tokens: Tokens::new(updates * 160),
            plan: now,
            resumed: updates > 0,
            changed_from: before,
        }
    }

    fn resumed_report() -> RunReport {
        let mut report = super::super::tests::report();
        report.segments = vec![
            segment(0, plan(4, 2, 2), None),
            segment(4, plan(4, 2, 2), None),
            segment(7, plan(4, 4, 1), Some(plan(4, 2, 2))),
        ];
        report
    }

    #[test]
    fn a_run_that_never_resumed_has_no_marks_table_or_sentence() {
        let report = super::super::tests::report();
        assert!(run_marks(&report, LogAxis::Updates).is_none());
        assert!(table(&report).is_none());
        assert!(marks_sentence(&report).is_none());
        assert_eq!(compared(&report), "1 (never resumed)");
    }

    #[test]
    fn each_resume_is_marked_on_every_axis_with_the_plan_when_it_changed() {
        let report = resumed_report();
        let marks = run_marks(&report, LogAxis::Updates).expect("marks");
        assert_eq!(marks.name, "resume");
        let at: Vec<(f64, &str)> = marks.at.iter().map(|m| (m.x, m.label.as_str())).collect();
        assert_eq!(
            at,
            [(4.0, "resumed"), (7.0, "resumed: m 4 × A 4 × D 1 = B 16")]
        );
        let tokens = run_marks(&report, LogAxis::Tokens).expect("marks");
        assert_eq!(tokens.at[1].x, 7.0 * 160.0);
        let rows = table(&report).expect("table").rows;
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].label, "segment 1: from the start");
        assert_eq!(rows[2].label, "segment 3: after update 7");
        assert_eq!(rows[2].value, "m 4 × A 4 × D 1 = B 16");
        assert!(
            rows[2]
                .note
                .starts_with("resumed under another plan; saved under m 4 × A 2 × D 2 = B 16"),
            "{}",
            rows[2].note
        );
        assert_eq!(
            compared(&report),
            "3: m 4 × A 2 × D 2 = B 16 from the start, m 4 × A 2 × D 2 = B 16 after update 4, m 4 × A 4 × D 1 = B 16 after update 7 (re-planned)"
        );
    }
}
