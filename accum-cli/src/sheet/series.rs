//! Every read of a run report's series — its update attempts and its logged
//! loss points — goes through [`read`], so that the sheet follows the
//! report's format in one place.
//!
//! A report keeps bounded series (its loss curve and some of its attempts,
//! evenly spread over a long run); when it names a stats stream beside it,
//! the stream holds every attempt and every logged point, and is read
//! instead (`accum_core::report::logged_points`, `streamed_updates`).
//!
//! A stream is never held in memory: it is read line by line, twice. The
//! first pass counts the points of each line the sheet draws (and checks
//! every line); the second thins each line as it comes, keeping only what
//! is drawn — per bucket of the x axis its first, lowest, highest and last
//! point ([`Decimator`]), the interval means ([`Means`]), evenly spaced
//! markers ([`Thinner`]) — and the running sums of the headline's first
//! and last windows. A sheet of ten million attempts holds a few thousand
//! points, and the extremes of every line are among them.

use std::path::Path;

use accum_core::group_digits;
use accum_core::report::{
    CurvePoint, Decimated, LossChange, RunReport, StatsError, UpdateStats, logged_points,
    stream_file, streamed_updates,
};
use accum_core::settings::LogAxis;

use super::chart::{Decimator, MAX_LINE_POINTS, MAX_MARKERS, Means, Series, Style, Thinner, Tone};

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

/// The lines a sheet draws from a run's attempts, each thinned to what a
/// drawing shows: `[x, y]` points, only finite ones, in x order.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Lines {
    /// The loss of every applied update (finite ones): how many there are,
    /// the line thinned, and its interval means when it is dense.
    pub(crate) losses: LossLine,
    /// The learning rate of every applied update.
    pub(crate) lrs: Vec<[f64; 2]>,
    /// Whether some applied update had a positive learning rate.
    pub(crate) any_lr: bool,
    /// The gradient norm of every applied update.
    pub(crate) norms: Vec<[f64; 2]>,
    /// The smallest and largest finite positive gradient norm of the
    /// applied updates, `(∞, 0)` without any.
    pub(crate) norm_range: (f64, f64),
    /// The loss scale of every attempt.
    pub(crate) scales: Vec<[f64; 2]>,
    /// Markers of the skipped attempts at their loss, at zero, at their
    /// gradient norm and at their loss scale.
    pub(crate) skipped: [Vec<[f64; 2]>; 4],
    /// How many skipped attempts were read.
    pub(crate) skipped_read: u64,
    /// The x of the first and the last attempt read.
    pub(crate) x_range: Option<(f64, f64)>,
}

/// The loss of every applied update, thinned.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LossLine {
    /// Applied updates with a finite loss.
    pub(crate) count: u64,
    /// Their points, thinned to [`MAX_LINE_POINTS`] keeping each bucket's
    /// extremes (every point when no more).
    pub(crate) points: Vec<[f64; 2]>,
    /// The means of [`INTERVALS`] runs of consecutive points, and the
    /// points per run; or, with `mean_width`, of stretches of the x axis
    /// of that width (0 points per run).
    pub(crate) means: (Vec<(f64, f64)>, usize),
    /// The width on the x axis of the stretches the means are taken over,
    /// with the axis' unit, when they are (a comparison's one window for
    /// every run).
    pub(crate) mean_width: Option<(f64, &'static str)>,
}

/// The series of one run, as the sheet plots them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunSeries {
    /// The axis the lines are drawn against: the one the run logged its
    /// loss against, or the comparison's.
    pub(crate) axis: LogAxis,
    /// Logged loss points `(x on the axis, loss)`: every one, or evenly
    /// spread ones when there are more than a sheet keeps.
    pub(crate) logged: Vec<(f64, f64)>,
    /// How many points the run logged (at least `logged.len()`).
    pub(crate) logged_total: u64,
    /// The lines drawn from the attempts.
    pub(crate) lines: Lines,
    /// How many attempts were read: every one when the report or its
    /// stream has them all, else the report's evenly spread ones.
    pub(crate) attempts_read: u64,
    /// Whether the attempts read are every attempt of the run.
    pub(crate) every_attempt: bool,
    /// What could not be read (a stream that is missing or damaged), for
    /// the sheet's warnings.
    pub(crate) problems: Vec<String>,
    /// How the loss moved from the first applied updates to the last, over
    /// the attempts read.
    pub(crate) loss_change: Option<LossChange>,
    /// Attempts the run made (at least `attempts_read`).
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
/// when they are few; when dense, every point as a faint line (thinned,
/// keeping each bucket's extremes) and the mean of each interval of
/// consecutive updates over it. Returns the series and a sentence on how
/// they are drawn.
pub(crate) fn loss_lines(
    legend: LossLegend<'_>,
    losses: &LossLine,
    tone: Tone,
) -> (Vec<Series>, String) {
    let name = match legend {
        LossLegend::Sheet(name) | LossLegend::Run(name) => name,
    };
    let points = losses.points.iter().map(|p| (p[0], p[1]));
    if losses.count <= DENSE as u64 {
        let series = Series::new(name, Style::LineWithPoints, tone, points);
        return (vec![series], "each dot is one update".to_owned());
    }
    let (means, size) = &losses.means;
    // What one mean is taken over: a run of consecutive updates, or a
    // stretch of the axis (a comparison's one window for every run).
    let over = match losses.mean_width {
        Some((width, unit)) => format!("{} {unit}", super::setting(width)),
        None => format!("{} updates", group_digits(*size as u64)),
    };
    let (faint_name, mean_name) = match legend {
        LossLegend::Sheet(name) => (name.to_owned(), format!("mean of {over}")),
        LossLegend::Run(name) => (String::new(), name.to_owned()),
    };
    let faint = Series::new(faint_name, Style::Faint, tone, points);
    let mean = Series::new(mean_name, Style::Line, tone, means.iter().copied());
    let how = match losses.mean_width {
        Some(_) => format!(
            "the light line is every update, the bold line the mean over each {over} of the axis, from the first update's loss"
        ),
        None => format!(
            "the light line is every update, the bold line the mean of each {} consecutive updates, from the first update's loss",
            group_digits(*size as u64)
        ),
    };
    (vec![faint, mean], how)
}

/// The series of `report`, read from the file `report_path` (whose folder
/// holds the stats stream the report names, if any), with the attempts'
/// lines drawn against `axis`.
pub(crate) fn read(report: &RunReport, report_path: &Path, axis: LogAxis) -> RunSeries {
    read_with(report, report_path, axis, None)
}

/// [`read`], with the loss's means taken over stretches of `window` of the
/// axis when it is given (a comparison's one window for every run).
pub(crate) fn read_with(
    report: &RunReport,
    report_path: &Path,
    axis: LogAxis,
    window: Option<f64>,
) -> RunSeries {
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

    let source = attempt_source(report, report_path, &mut problems);
    // First pass: how many points each line gets, and whether the stream
    // reads to its end; second pass: the lines themselves.
    let (census, source) = match Census::of(&source, axis) {
        Ok(census) => (census, source),
        Err(err) => {
            problems.push(format!("the attempts are the report's own: {err}"));
            let own = AttemptSource::Report(&report.updates);
            (Census::of(&own, axis).unwrap_or_default(), own)
        }
    };
    let every_attempt = match source {
        AttemptSource::Stream(_) => true,
        AttemptSource::Report(_) => report.updates_stride <= 1,
    };
    let mut drawing = Drawing::new(&census, axis, window);
    if let Err(err) = source.each(|a| drawing.push(&a)) {
        // The stream changed between the two passes.
        problems.push(format!("the attempts stop early: {err}"));
    }
    let (lines, loss_change) = drawing.finish();
    RunSeries {
        loss_change,
        attempts_total: report.counters.update_attempts.max(census.attempts),
        axis,
        logged: logged
            .items()
            .iter()
            .map(|p| (p.x as f64, p.loss))
            .collect(),
        logged_total,
        lines,
        attempts_read: census.attempts,
        every_attempt,
        problems,
    }
}

/// Where a run's attempts are read from.
#[derive(Clone, Debug)]
enum AttemptSource<'a> {
    /// The stats stream beside the report: every attempt.
    Stream(std::path::PathBuf),
    /// The report's own attempts (every one, or evenly spread ones).
    Report(&'a [UpdateStats]),
}

/// The stream `report` names when it can be read, else the report's own
/// attempts, with the reason in `problems`.
fn attempt_source<'a>(
    report: &'a RunReport,
    report_path: &Path,
    problems: &mut Vec<String>,
) -> AttemptSource<'a> {
    match stream_file(report, report_path) {
        Ok(Some(path)) => AttemptSource::Stream(path),
        Ok(None) => AttemptSource::Report(&report.updates),
        Err(err) => {
            problems.push(format!("the attempts are the report's own: {err}"));
            AttemptSource::Report(&report.updates)
        }
    }
}

impl AttemptSource<'_> {
    /// Calls `f` with every attempt in order, at its running position, one
    /// at a time. Positions in examples and tokens are sums over the
    /// attempts; where only some attempts are kept (attempt numbers jump),
    /// each kept one stands for the attempts since the previous kept one.
    fn each(&self, mut f: impl FnMut(Attempt)) -> Result<(), StatsError> {
        self.each_update(|_, attempt| f(attempt))
    }

    /// [`AttemptSource::each`] with each attempt's own statistics too.
    fn each_update(&self, mut f: impl FnMut(&UpdateStats, Attempt)) -> Result<(), StatsError> {
        let mut position = Position::default();
        match self {
            AttemptSource::Report(updates) => {
                updates.iter().for_each(|u| f(u, position.next(u)));
            }
            AttemptSource::Stream(path) => {
                for u in streamed_updates(path)? {
                    let u = u?;
                    let attempt = position.next(&u);
                    f(&u, attempt);
                }
            }
        }
        Ok(())
    }
}

/// The update attempts of a run for the CSV of every attempt, read one at
/// a time whatever the run's length: every one from the stats stream its
/// report names, when that reads to its end, else the report's own (every
/// one, or evenly spread ones).
#[derive(Debug)]
pub(crate) struct Attempts<'a>(AttemptSource<'a>);

impl<'a> Attempts<'a> {
    /// The attempts of `report`, read from `report_path`: a stream it
    /// names is read through once here, a line at a time, to know that it
    /// reads to its end; one that does not is noted in `problems`, and the
    /// report's own attempts are used.
    pub(crate) fn of(
        report: &'a RunReport,
        report_path: &Path,
        problems: &mut Vec<String>,
    ) -> Attempts<'a> {
        let source = attempt_source(report, report_path, problems);
        if let AttemptSource::Stream(_) = source
            && let Err(err) = source.each_update(|_, _| {})
        {
            problems.push(format!("the attempts are the report's own: {err}"));
            return Attempts(AttemptSource::Report(&report.updates));
        }
        Attempts(source)
    }

    /// The attempts `updates` list, in order.
    #[cfg(any(test, feature = "harness"))]
    pub(crate) fn listed(updates: &'a [UpdateStats]) -> Attempts<'a> {
        Attempts(AttemptSource::Report(updates))
    }

    /// Calls `f` with every attempt and its running position, in order; an
    /// error is a stream that changed since it was first read.
    pub(crate) fn each(&self, f: impl FnMut(&UpdateStats, Attempt)) -> Result<(), StatsError> {
        self.0.each_update(f)
    }
}

/// The running sums that place attempts on the examples and tokens axes.
#[derive(Clone, Copy, Debug, Default)]
struct Position {
    examples: u64,
    tokens: u64,
    previous: u64,
}

impl Position {
    fn next(&mut self, u: &UpdateStats) -> Attempt {
        let stands_for = u.attempt.saturating_sub(self.previous).max(1);
        self.previous = u.attempt;
        self.examples = self
            .examples
            .saturating_add(u.examples.get().saturating_mul(stands_for));
        self.tokens = self
            .tokens
            .saturating_add(u.tokens.get().saturating_mul(stands_for));
        Attempt {
            updates: u.updates.get(),
            examples: self.examples,
            tokens: self.tokens,
            applied: u.applied,
            loss: u.loss,
            grad_norm: u.grad_norm,
            loss_scale: u.loss_scale,
            lr: u.lr,
        }
    }
}

/// A finite point, or none.
fn finite(x: f64, y: f64) -> Option<[f64; 2]> {
    (x.is_finite() && y.is_finite()).then_some([x, y])
}

/// The point an attempt gives each line, in the order of [`Census::counts`]:
/// loss, learning rate and gradient norm of an applied update, the loss
/// scale of any attempt, and the four markers of a skipped one.
fn points(a: &Attempt, axis: LogAxis) -> [Option<[f64; 2]>; 8] {
    let x = a.at(axis);
    let applied = |y: f64| if a.applied { finite(x, y) } else { None };
    let skipped = |y: f64| if a.applied { None } else { finite(x, y) };
    [
        applied(a.loss),
        applied(a.lr),
        applied(a.grad_norm),
        finite(x, a.loss_scale),
        skipped(a.loss),
        skipped(0.0),
        skipped(a.grad_norm),
        skipped(a.loss_scale),
    ]
}

/// The first pass: how many attempts, and how many points each line gets.
#[derive(Clone, Copy, Debug, Default)]
struct Census {
    attempts: u64,
    counts: [u64; 8],
}

impl Census {
    fn of(source: &AttemptSource<'_>, axis: LogAxis) -> Result<Census, StatsError> {
        let mut census = Census::default();
        source.each(|a| {
            census.attempts += 1;
            for (count, point) in census.counts.iter_mut().zip(points(&a, axis)) {
                *count += u64::from(point.is_some());
            }
        })?;
        Ok(census)
    }
}

/// The second pass: every line thinned as its points come.
struct Drawing {
    axis: LogAxis,
    /// The stretch of the axis the loss's means are taken over, if any.
    window: Option<f64>,
    losses: Decimator,
    means: Means,
    lrs: Decimator,
    norms: Decimator,
    scales: Decimator,
    skipped: [Thinner; 4],
    lines: Lines,
    /// The headline's windows: the first and the last `window` losses.
    change: Change,
}

/// The sums of the first and last windows of the applied losses, for
/// [`LossChange`], with the windows known from the first pass.
#[derive(Clone, Copy, Debug, Default)]
struct Change {
    of: u64,
    window: u64,
    seen: u64,
    first: f64,
    last: f64,
}

impl Drawing {
    fn new(census: &Census, axis: LogAxis, window: Option<f64>) -> Drawing {
        let [losses, lrs, norms, scales, s0, s1, s2, s3] = census.counts;
        let of = losses;
        Drawing {
            axis,
            window,
            losses: Decimator::new(losses, MAX_LINE_POINTS),
            means: window.map_or_else(|| Means::new(losses, INTERVALS), Means::over_axis),
            lrs: Decimator::new(lrs, MAX_LINE_POINTS),
            norms: Decimator::new(norms, MAX_LINE_POINTS),
            scales: Decimator::new(scales, MAX_LINE_POINTS),
            skipped: [s0, s1, s2, s3].map(|n| Thinner::new(n, MAX_MARKERS)),
            lines: Lines {
                norm_range: (f64::INFINITY, 0.0),
                ..Lines::default()
            },
            change: Change {
                of,
                // As `LossChange::of` takes them: a twentieth, at least one.
                window: (of / 20).max(1),
                ..Change::default()
            },
        }
    }

    fn push(&mut self, a: &Attempt) {
        let x = a.at(self.axis);
        let lines = &mut self.lines;
        lines.x_range = Some(lines.x_range.map_or((x, x), |(first, _)| (first, x)));
        let [loss, lr, norm, scale, s0, s1, s2, s3] = points(a, self.axis);
        if let Some(p) = loss {
            self.losses.push(p);
            self.means.push((p[0], p[1]));
            let c = &mut self.change;
            if c.seen < c.window {
                c.first += p[1];
            }
            if c.seen >= c.of.saturating_sub(c.window) {
                c.last += p[1];
            }
            c.seen += 1;
        }
        if let Some(p) = lr {
            self.lrs.push(p);
        }
        lines.any_lr |= a.applied && a.lr > 0.0;
        if let Some(p) = norm {
            self.norms.push(p);
            if p[1] > 0.0 {
                lines.norm_range = (lines.norm_range.0.min(p[1]), lines.norm_range.1.max(p[1]));
            }
        }
        if let Some(p) = scale {
            self.scales.push(p);
        }
        for (marks, p) in self.skipped.iter_mut().zip([s0, s1, s2, s3]) {
            if let Some(p) = p {
                marks.push(p);
            }
        }
        lines.skipped_read += u64::from(!a.applied);
    }

    fn finish(self) -> (Lines, Option<LossChange>) {
        let c = self.change;
        // The second pass saw what the first counted, unless the stream
        // changed in between: then the windows are the ones read.
        let change = (c.seen > 0 && c.seen == c.of).then(|| LossChange {
            first: c.first / c.window as f64,
            last: c.last / c.window as f64,
            window: c.window as usize,
            of: c.of as usize,
        });
        let lines = Lines {
            losses: LossLine {
                count: c.seen,
                points: self.losses.finish(),
                means: self.means.finish(),
                mean_width: self.window.map(|w| (w, self.axis.key())),
            },
            lrs: self.lrs.finish(),
            norms: self.norms.finish(),
            scales: self.scales.finish(),
            skipped: self.skipped.map(Thinner::finish),
            ..self.lines
        };
        (lines, change)
    }
}

/// Attempts with running positions.
#[cfg(test)]
fn attempts(updates: &[UpdateStats]) -> Vec<Attempt> {
    let mut position = Position::default();
    updates.iter().map(|u| position.next(u)).collect()
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
        let run = read(&report, Path::new("run.json"), LogAxis::Tokens);
        assert!(run.problems.is_empty() && run.every_attempt);
        assert_eq!(run.logged_total, 2);
        assert_eq!(
            attempts(&report.updates)
                .iter()
                .map(|a| (a.updates, a.examples, a.tokens))
                .collect::<Vec<_>>(),
            vec![(0, 4, 40), (1, 8, 80), (2, 12, 120)]
        );
        assert_eq!(
            run.lines.scales,
            [[40.0, 1024.0], [80.0, 1024.0], [120.0, 1024.0]]
        );
        assert_eq!(run.lines.x_range, Some((40.0, 120.0)));
        let change = run.loss_change.expect("applied updates");
        assert_eq!((change.first, change.last, change.of), (2.5, 2.0, 2));
        assert_eq!(run.lines.losses.points, [[80.0, 2.5], [120.0, 2.0]]);
        assert_eq!(run.lines.losses.count, 2);
        // The skipped attempt: a marker at its loss and at zero, none at
        // its gradient norm (not a number).
        assert_eq!(run.lines.skipped_read, 1);
        assert_eq!(run.lines.skipped[0], [[40.0, 3.0]]);
        assert_eq!(run.lines.skipped[1], [[40.0, 0.0]]);
        assert!(run.lines.skipped[2].is_empty());
        assert_eq!(run.attempts_total, 3);
        assert_eq!(run.attempts_read, 3);
        // Against updates, the same attempts at their update counts.
        let by_update = read(&report, Path::new("run.json"), LogAxis::Updates);
        assert_eq!(by_update.lines.losses.points, [[1.0, 2.5], [2.0, 2.0]]);

        let mut sparse = report.clone();
        sparse.updates = vec![attempt(1, true, 1, 3.0), attempt(4, true, 4, 2.0)];
        sparse.updates_stride = 3;
        let kept: Vec<(u64, u64)> = attempts(&sparse.updates)
            .iter()
            .map(|a| (a.examples, a.tokens))
            .collect();
        assert_eq!(
            kept,
            vec![(4, 40), (16, 160)],
            "a kept attempt stands for the gap"
        );
        let run = read(&sparse, Path::new("run.json"), LogAxis::Tokens);
        assert_eq!(run.lines.losses.points, [[40.0, 3.0], [160.0, 2.0]]);
        assert!(!run.every_attempt);
    }

    /// A loss line of `points`, as a read of them would give it.
    fn loss_line(points: &[(f64, f64)]) -> LossLine {
        let report_of = |n: u64| attempt(n, true, n, 0.0);
        let mut report = crate::sheet::tests::report();
        report.updates = points
            .iter()
            .enumerate()
            .map(|(i, &(_, y))| UpdateStats {
                loss: y,
                ..report_of(i as u64 + 1)
            })
            .collect();
        read(&report, Path::new("run.json"), LogAxis::Updates)
            .lines
            .losses
    }

    #[test]
    fn a_dense_loss_is_every_update_under_its_interval_means() {
        let points: Vec<(f64, f64)> = (1..=400)
            .map(|i| (f64::from(i), f64::from(i % 3)))
            .collect();
        let line = loss_line(&points);
        let (sheet, how) = loss_lines(
            LossLegend::Sheet("loss of every update"),
            &line,
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
                ("mean of 4 updates", Style::Line, 101)
            ]
        );
        assert!(how.contains("each 4 consecutive updates"), "{how}");
        let (run, _) = loss_lines(LossLegend::Run("flat"), &line, Tone::Run(0));
        assert_eq!((run[0].name.as_str(), run[1].name.as_str()), ("", "flat"));
        // Few points: every one drawn with a dot, under the legend's name.
        let (few, how) = loss_lines(
            LossLegend::Run("flat"),
            &loss_line(&points[..20]),
            Tone::Run(0),
        );
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
        let run = read(&report, &dir.join("run.json"), LogAxis::Updates);
        assert_eq!(run.logged, vec![(1.0, 3.0)]);
        assert_eq!(run.attempts_read, 1);
        assert_eq!(run.problems.len(), 2, "{:?}", run.problems);
        assert!(
            run.problems[0].contains("run.stats.jsonl"),
            "{:?}",
            run.problems
        );
    }
}
