//! Every read of a run report's series — its update attempts and its logged
//! loss points — goes through [`read`], so that the sheet follows the
//! report's format in one place.
//!
//! A report keeps bounded series (its loss curve and some of its attempts,
//! evenly spread over a long run); when it names a stats stream beside it,
//! the stream holds every attempt and every logged point, and is read
//! instead (`accum_core::report::logged_points`, `read_updates`).

use std::path::Path;

use accum_core::group_digits;
use accum_core::report::{
    CurvePoint, Decimated, LossChange, RunReport, UpdateStats, logged_points, read_updates,
};
use accum_core::settings::LogAxis;

use super::chart::{Series, Style, Tone, interval_means};

/// Applied updates past which a loss line is drawn as interval means over
/// a faint line of every update.
const DENSE: usize = 120;

/// Intervals a dense loss line is cut into.
const INTERVALS: usize = 100;

/// Logged points a sheet keeps at most; past it they are evenly spread.
const LOGGED_CAPACITY: usize = 4096;

/// One update attempt, at its place in the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Attempt {
    /// Applied updates after this attempt.
    pub(crate) updates: u64,
    /// Examples processed up to and including this attempt.
    pub(crate) examples: u64,
    /// Supervised tokens processed up to and including this attempt.
    pub(crate) tokens: u64,
    /// Whether the parameters changed (false: skipped).
    pub(crate) applied: bool,
    /// The group's normalized loss.
    pub(crate) loss: f64,
    /// The unscaled gradient norm before clipping.
    pub(crate) grad_norm: f64,
    /// The loss scale during the group.
    pub(crate) loss_scale: f64,
    /// The learning rate used (0 when skipped).
    pub(crate) lr: f64,
}

impl Attempt {
    /// The attempt's position on `axis`: the count the engine logs against
    /// after this attempt.
    pub(crate) fn at(&self, axis: LogAxis) -> f64 {
        (match axis {
            LogAxis::Updates => self.updates,
            LogAxis::Examples => self.examples,
            LogAxis::Tokens => self.tokens,
        }) as f64
    }
}

/// The series of one run, as the sheet plots them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunSeries {
    /// The axis the run logged its loss against.
    pub(crate) axis: LogAxis,
    /// Logged loss points `(x on the axis, loss)`: every one, or evenly
    /// spread ones when there are more than a sheet keeps.
    pub(crate) logged: Vec<(f64, f64)>,
    /// How many points the run logged (at least `logged.len()`).
    pub(crate) logged_total: u64,
    /// Update attempts in order: every one when the report or its stream
    /// has them all, else the report's evenly spread ones.
    pub(crate) attempts: Vec<Attempt>,
    /// Whether `attempts` holds every attempt of the run.
    pub(crate) every_attempt: bool,
    /// What could not be read (a stream that is missing or damaged), for
    /// the sheet's warnings.
    pub(crate) problems: Vec<String>,
    /// How the loss moved from the first applied updates to the last, over
    /// the attempts read.
    pub(crate) loss_change: Option<LossChange>,
    /// Attempts the run made (at least `attempts.len()`).
    pub(crate) attempts_total: u64,
}

/// Who a loss line belongs to, for its legend.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LossLegend<'a> {
    /// The one run of a sheet: the legend names the light line of every
    /// update (`name`) and the bold one of its means.
    Sheet(&'a str),
    /// One of several compared runs, by its name: one entry per run, on
    /// its bold line.
    Run(&'a str),
}

/// The lines of a loss of every applied update: the points themselves
/// when they are few; when dense, every point as a faint line and the mean
/// of each interval of consecutive updates over it. Returns the series and
/// a sentence on how they are drawn.
pub(crate) fn loss_lines(
    legend: LossLegend<'_>,
    points: &[(f64, f64)],
    tone: Tone,
) -> (Vec<Series>, String) {
    let name = match legend {
        LossLegend::Sheet(name) | LossLegend::Run(name) => name,
    };
    if points.len() <= DENSE {
        let series = Series::new(name, Style::LineWithPoints, tone, points.iter().copied());
        return (vec![series], "each dot is one update".to_owned());
    }
    let (means, size) = interval_means(points, INTERVALS);
    let size_text = group_digits(size as u64);
    let (faint_name, mean_name) = match legend {
        LossLegend::Sheet(name) => (name.to_owned(), format!("mean of {size_text} updates")),
        LossLegend::Run(name) => (
            String::new(),
            format!("{name} (mean of {size_text} updates)"),
        ),
    };
    let faint = Series::new(faint_name, Style::Faint, tone, points.iter().copied());
    let mean = Series::new(mean_name, Style::Line, tone, means);
    (
        vec![faint, mean],
        format!(
            "the light line is every update, the bold line the mean of each {} consecutive updates",
            group_digits(size as u64)
        ),
    )
}

impl RunSeries {
    /// The loss of every applied update the series holds, at its place on
    /// `axis`.
    pub(crate) fn applied_losses(&self, axis: LogAxis) -> Vec<(f64, f64)> {
        self.attempts
            .iter()
            .filter(|a| a.applied && a.loss.is_finite())
            .map(|a| (a.at(axis), a.loss))
            .collect()
    }

    /// The learning rate of every applied update, at its place on `axis`.
    pub(crate) fn applied_lrs(&self, axis: LogAxis) -> Vec<(f64, f64)> {
        self.attempts
            .iter()
            .filter(|a| a.applied)
            .map(|a| (a.at(axis), a.lr))
            .collect()
    }
}

/// The series of `report`, read from the file `report_path` (whose folder
/// holds the stats stream the report names, if any).
pub(crate) fn read(report: &RunReport, report_path: &Path) -> RunSeries {
    let mut problems = Vec::new();
    let mut logged = Decimated::<CurvePoint>::new(LOGGED_CAPACITY);
    let mut from_stream = false;
    match logged_points(report, report_path) {
        Ok(points) => {
            from_stream = points.from_stream();
            for point in points {
                match point {
                    Ok(point) => logged.push(point),
                    Err(err) => {
                        problems.push(format!("the loss curve stops early: {err}"));
                        break;
                    }
                }
            }
        }
        Err(err) => {
            problems.push(format!("the loss curve is the report's own: {err}"));
            report
                .loss_curve
                .points
                .iter()
                .for_each(|p| logged.push(*p));
        }
    }
    // The report's own curve keeps one point per `stride` log intervals.
    let logged_total = if from_stream {
        logged.offered()
    } else {
        logged
            .offered()
            .saturating_mul(report.loss_curve.stride.max(1))
    };

    let (updates, every_attempt) = update_stats(report, report_path, &mut problems);
    RunSeries {
        loss_change: LossChange::of(&updates),
        attempts_total: report.counters.update_attempts.max(updates.len() as u64),
        axis: report.loss_curve.axis,
        logged: logged
            .items()
            .iter()
            .map(|p| (p.x as f64, p.loss))
            .collect(),
        logged_total,
        attempts: attempts(&updates),
        every_attempt,
        problems,
    }
}

/// The update attempts of `report`: every one from the stats stream it
/// names, when that reads, else the report's own (every one, or evenly
/// spread ones); with whether they are every attempt. A stream that does
/// not read is noted in `problems`.
pub(crate) fn update_stats(
    report: &RunReport,
    report_path: &Path,
    problems: &mut Vec<String>,
) -> (Vec<UpdateStats>, bool) {
    let streamed = accum_core::report::stream_file(report, report_path)
        .transpose()
        .map(|path| path.and_then(|path| read_updates(&path)));
    match streamed {
        Some(Ok(updates)) => (updates, true),
        Some(Err(err)) => {
            problems.push(format!("the attempts are the report's own: {err}"));
            (report.updates.clone(), report.updates_stride <= 1)
        }
        None => (report.updates.clone(), report.updates_stride <= 1),
    }
}

/// Attempts with running positions. Positions in examples and tokens are
/// sums over the attempts; where only some attempts are kept (attempt
/// numbers jump), each kept one stands for the attempts since the previous
/// kept one.
pub(crate) fn attempts(updates: &[UpdateStats]) -> Vec<Attempt> {
    let mut examples = 0u64;
    let mut tokens = 0u64;
    let mut previous = 0u64;
    updates
        .iter()
        .map(|u| {
            let stands_for = u.attempt.saturating_sub(previous).max(1);
            previous = u.attempt;
            examples = examples.saturating_add(u.examples.get().saturating_mul(stands_for));
            tokens = tokens.saturating_add(u.tokens.get().saturating_mul(stands_for));
            Attempt {
                updates: u.updates.get(),
                examples,
                tokens,
                applied: u.applied,
                loss: u.loss,
                grad_norm: u.grad_norm,
                loss_scale: u.loss_scale,
                lr: u.lr,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use accum_core::report::{CurvePoint, UpdateStats};
    use accum_core::{Examples, Microbatches, Tokens, Updates};

    fn attempt(n: u64, applied: bool, updates: u64, loss: f64) -> UpdateStats {
        UpdateStats {
            attempt: n,
            epoch: 0,
            stage: 0,
            applied,
            updates: Updates::new(updates),
            loss,
            denominator: 40.0,
            examples: Examples::new(4),
            tokens: Tokens::new(40),
            microbatches: Microbatches::new(2),
            partial: false,
            lr: 0.1,
            grad_norm: if applied { 1.5 } else { f64::NAN },
            clipped: false,
            loss_scale: 1024.0,
        }
    }

    #[test]
    fn positions_accumulate_and_the_final_loss_is_the_last_finite() {
        let mut report = crate::sheet::tests::report();
        report.updates = vec![
            attempt(1, false, 0, 3.0),
            attempt(2, true, 1, 2.5),
            attempt(3, true, 2, 2.0),
        ];
        report.loss_curve.axis = LogAxis::Tokens;
        report.loss_curve.points = vec![
            CurvePoint { x: 80, loss: 2.5 },
            CurvePoint {
                x: 120,
                loss: f64::NAN,
            },
        ];
        let run = read(&report, Path::new("run.json"));
        assert!(run.problems.is_empty() && run.every_attempt);
        assert_eq!(run.logged_total, 2);
        assert_eq!(
            run.attempts
                .iter()
                .map(|a| (a.updates, a.examples, a.tokens))
                .collect::<Vec<_>>(),
            vec![(0, 4, 40), (1, 8, 80), (2, 12, 120)]
        );
        assert_eq!(run.attempts[2].at(LogAxis::Tokens), 120.0);
        let change = run.loss_change.expect("applied updates");
        assert_eq!((change.first, change.last, change.of), (2.5, 2.0, 2));
        assert_eq!(
            run.applied_losses(LogAxis::Tokens),
            [(80.0, 2.5), (120.0, 2.0)]
        );
        assert_eq!(run.attempts_total, 3);

        let mut sparse = report.clone();
        sparse.updates = vec![attempt(1, true, 1, 3.0), attempt(4, true, 4, 2.0)];
        sparse.updates_stride = 3;
        let run = read(&sparse, Path::new("run.json"));
        let kept: Vec<(u64, u64)> = run
            .attempts
            .iter()
            .map(|a| (a.examples, a.tokens))
            .collect();
        assert_eq!(
            kept,
            vec![(4, 40), (16, 160)],
            "a kept attempt stands for the gap"
        );
        assert!(!run.every_attempt);
    }

    #[test]
    fn a_dense_loss_is_every_update_under_its_interval_means() {
        let points: Vec<(f64, f64)> = (1..=400)
            .map(|i| (f64::from(i), f64::from(i % 3)))
            .collect();
        let (sheet, how) = loss_lines(
            LossLegend::Sheet("loss of every update"),
            &points,
            Tone::Primary,
        );
        let names: Vec<(&str, Style, usize)> = sheet
            .iter()
            .map(|s| (s.name.as_str(), s.style, s.points.len()))
            .collect();
        assert_eq!(
            names,
            [
                ("loss of every update", Style::Faint, 400),
                ("mean of 4 updates", Style::Line, 100)
            ]
        );
        assert!(how.contains("each 4 consecutive updates"), "{how}");
        let (run, _) = loss_lines(LossLegend::Run("flat"), &points, Tone::Run(0));
        assert_eq!(
            (run[0].name.as_str(), run[1].name.as_str()),
            ("", "flat (mean of 4 updates)")
        );
        // Few points: every one drawn with a dot, under the legend's name.
        let (few, how) = loss_lines(LossLegend::Run("flat"), &points[..20], Tone::Run(0));
        assert_eq!(
            (few.len(), few[0].style, few[0].name.as_str()),
            (1, Style::LineWithPoints, "flat")
        );
        assert_eq!(how, "each dot is one update");
    }

    #[test]
    fn a_missing_stream_falls_back_to_the_report_and_says_so() {
        let mut report = crate::sheet::tests::report();
        report.updates = vec![attempt(1, true, 1, 3.0)];
        report.loss_curve.points = vec![CurvePoint { x: 1, loss: 3.0 }];
        report.stats_stream = Some("run.stats.jsonl".into());
        let dir = std::env::temp_dir().join(format!("accum-sheet-series-{}", std::process::id()));
        let run = read(&report, &dir.join("run.json"));
        assert_eq!(run.logged, vec![(1.0, 3.0)]);
        assert_eq!(run.attempts.len(), 1);
        assert_eq!(run.problems.len(), 2, "{:?}", run.problems);
        assert!(
            run.problems[0].contains("run.stats.jsonl"),
            "{:?}",
            run.problems
        );
    }
}
