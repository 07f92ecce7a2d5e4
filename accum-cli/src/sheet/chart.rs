//! What a sheet plots, as data: any series against any axis, with more
//! scales of the same x axis below it (updates, examples and tokens of one
//! run), further panels above it that share its x axis (the batch above the
//! learning rate), and vertical marks across every panel (where a stage of
//! a batch ramp-up starts). [`plot`](super::plot) draws a [`Chart`]; the
//! JSON sheet carries it as it is, so other tools can draw the same points.

use serde::Serialize;

/// Points a line keeps at most; longer series are thinned by
/// [`decimate`] so that a long run stays a readable, small drawing.
pub(crate) const MAX_LINE_POINTS: usize = 1_200;

/// Markers a series keeps at most.
pub(crate) const MAX_MARKERS: usize = 400;

/// One plot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Chart {
    /// A short stable name (`"schedule"`, `"loss"`, …): the file suffix of
    /// the SVG written beside a Markdown sheet.
    pub(crate) id: String,
    /// The title drawn above the plot.
    pub(crate) title: String,
    /// One sentence that says how to read it.
    pub(crate) caption: String,
    /// The x axis.
    pub(crate) x: Axis,
    /// Further scales of the x axis drawn below it, such as examples and
    /// tokens under updates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) x_scales: Vec<Scale>,
    /// The y axis.
    pub(crate) y: Axis,
    /// What is drawn, in drawing order.
    pub(crate) series: Vec<Series>,
    /// Panels drawn above this one, top first, with the same x axis (the
    /// batch above the learning rate).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) above: Vec<Panel>,
    /// Vertical marks across every panel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) marks: Option<Marks>,
}

/// A panel above a chart's main one: its own y axis and series against the
/// chart's x axis.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Panel {
    /// The panel's y axis.
    pub(crate) y: Axis,
    /// What is drawn in it, in drawing order.
    pub(crate) series: Vec<Series>,
}

/// Vertical marks at places on the x axis, such as the starts of the
/// stages of a batch ramp-up.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Marks {
    /// What the marks are, for the legend (`"stage starts"`).
    pub(crate) name: String,
    /// Where they are.
    pub(crate) at: Vec<Mark>,
}

/// One vertical mark.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Mark {
    /// Its place on the x axis.
    pub(crate) x: f64,
    /// A short label drawn at its top (`"B 64"`), when there is room.
    pub(crate) label: String,
}

/// An axis.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Axis {
    /// Its title, with the unit (`"updates"`, `"learning rate"`).
    pub(crate) label: String,
    /// Logarithmic (base 10, or base 2 for loss scales) or linear.
    pub(crate) log: Option<LogBase>,
    /// Whether the range starts at zero (counts, learning rates).
    pub(crate) from_zero: bool,
    /// Whether values are whole counts: no tick between two integers.
    pub(crate) integer: bool,
}

impl Axis {
    /// A linear axis.
    pub(crate) fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            log: None,
            from_zero: false,
            integer: false,
        }
    }

    /// A linear axis of whole counts starting at zero.
    pub(crate) fn count(label: impl Into<String>) -> Axis {
        Axis {
            from_zero: true,
            integer: true,
            ..Axis::linear(label)
        }
    }

    /// A logarithmic axis.
    pub(crate) fn log(label: impl Into<String>, base: LogBase) -> Axis {
        Axis {
            log: Some(base),
            ..Axis::linear(label)
        }
    }
}

/// The base of a logarithmic axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LogBase {
    /// Decades.
    Ten,
    /// Doublings, labelled as powers of two (loss scales).
    Two,
}

/// Another scale of the x axis: `value = f(x)`, piecewise linear through
/// `knots` (sorted by x). One knot pair per stage boundary is enough when
/// the batch changes during a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Scale {
    /// Its title (`"examples"`, `"tokens"`).
    pub(crate) label: String,
    /// `[x, value]` pairs.
    pub(crate) knots: Vec<[f64; 2]>,
    /// Whether the values are an expectation (variable lengths): labels
    /// get a `≈`.
    pub(crate) approximate: bool,
}

impl Scale {
    /// The scale's value at primary `x`, extended linearly past the ends.
    pub(crate) fn value_at(&self, x: f64) -> f64 {
        interpolate(&self.knots, x, false)
    }

    /// The primary x where the scale reads `value`.
    pub(crate) fn x_at(&self, value: f64) -> f64 {
        interpolate(&self.knots, value, true)
    }
}

fn interpolate(knots: &[[f64; 2]], at: f64, inverse: bool) -> f64 {
    let (from, to) = if inverse { (1, 0) } else { (0, 1) };
    let segment = |a: &[f64; 2], b: &[f64; 2]| {
        let span = b[from] - a[from];
        if span == 0.0 {
            a[to]
        } else {
            a[to] + (at - a[from]) / span * (b[to] - a[to])
        }
    };
    match knots {
        [] => at,
        [only] => only[to],
        [first, second, ..] if at <= first[from] => segment(first, second),
        _ => {
            let index = knots
                .windows(2)
                .position(|w| at <= w[1][from])
                .unwrap_or(knots.len() - 2);
            segment(&knots[index], &knots[index + 1])
        }
    }
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Style {
    /// A line.
    Line,
    /// A line with a dot on every point (every logged point visible).
    LineWithPoints,
    /// A line that holds its value until the next point (a loss scale).
    Step,
    /// Crosses, one per point (events such as skipped updates).
    Crosses,
    /// A dashed reference line (a clipping threshold, the end of warmup).
    Reference,
    /// A thin, light line under a bolder one: every point of a noisy
    /// series beneath its interval means.
    Faint,
}

/// The colour role of a series: the renderer picks the colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Tone {
    /// The main quantity.
    Primary,
    /// A second quantity.
    Secondary,
    /// Something went wrong here (skipped updates).
    Alert,
    /// Context (reference lines).
    Muted,
    /// One run of several compared, by its index: colours of different
    /// lightness, so that the runs stay apart when printed in grey.
    Run(u8),
}

/// One series of points.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Series {
    /// Its name in the legend.
    pub(crate) name: String,
    /// How it is drawn.
    pub(crate) style: Style,
    /// Its colour role.
    pub(crate) tone: Tone,
    /// `[x, y]` pairs in x order; only finite values.
    pub(crate) points: Vec<[f64; 2]>,
}

impl Series {
    /// A series of the finite points among `points`, thinned to what a
    /// drawing can show.
    pub(crate) fn new(
        name: impl Into<String>,
        style: Style,
        tone: Tone,
        points: impl IntoIterator<Item = (f64, f64)>,
    ) -> Series {
        let finite: Vec<[f64; 2]> = points
            .into_iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(x, y)| [x, y])
            .collect();
        let points = match style {
            Style::Crosses => thin(finite, MAX_MARKERS),
            Style::Reference => finite,
            Style::Line | Style::LineWithPoints | Style::Step | Style::Faint => {
                decimate(finite, MAX_LINE_POINTS)
            }
        };
        Series {
            name: name.into(),
            style,
            tone,
            points,
        }
    }
}

/// Thins a line to about `max` points: the x range is cut into buckets and
/// each bucket keeps its first, lowest, highest and last point, so spikes
/// stay visible.
pub(crate) fn decimate(points: Vec<[f64; 2]>, max: usize) -> Vec<[f64; 2]> {
    let mut line = Decimator::new(points.len() as u64, max);
    points.into_iter().for_each(|p| line.push(p));
    line.finish()
}

/// [`decimate`] one point at a time, for a series read from a stream:
/// told how many points will come (a first pass counts them), it keeps
/// only the current bucket's first, lowest, highest and last point, so its
/// memory is the output's, whatever the length of the run. The minimum and
/// the maximum of the whole series are always among the points kept.
#[derive(Clone, Debug)]
pub(crate) struct Decimator {
    /// Points per bucket (1: every point is kept).
    size: u64,
    /// Points of the current bucket so far.
    filled: u64,
    /// The current bucket's first, lowest, highest and last point, with
    /// their places in the bucket.
    first: (u64, [f64; 2]),
    low: (u64, [f64; 2]),
    high: (u64, [f64; 2]),
    last: (u64, [f64; 2]),
    out: Vec<[f64; 2]>,
}

impl Decimator {
    /// A line of `total` points thinned to about `max`.
    pub(crate) fn new(total: u64, max: usize) -> Decimator {
        let buckets = (max / 4).max(1) as u64;
        let size = if total <= max as u64 {
            1
        } else {
            total.div_ceil(buckets)
        };
        let none = (0, [0.0; 2]);
        Decimator {
            size,
            filled: 0,
            first: none,
            low: none,
            high: none,
            last: none,
            out: Vec::with_capacity(total.min(max as u64) as usize),
        }
    }

    /// The next point of the line.
    pub(crate) fn push(&mut self, point: [f64; 2]) {
        if self.size == 1 {
            self.out.push(point);
            return;
        }
        let at = (self.filled, point);
        if self.filled == 0 {
            (self.first, self.low, self.high) = (at, at, at);
        } else {
            // The first lowest and the last highest, as `min_by` and
            // `max_by` pick them.
            if point[1].total_cmp(&self.low.1[1]).is_lt() {
                self.low = at;
            }
            if point[1].total_cmp(&self.high.1[1]).is_ge() {
                self.high = at;
            }
        }
        self.last = at;
        self.filled += 1;
        if self.filled == self.size {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.filled == 0 {
            return;
        }
        let mut keep = [self.first, self.low, self.high, self.last];
        keep.sort_unstable_by_key(|(at, _)| *at);
        let mut previous = None;
        for (at, point) in keep {
            if previous != Some(at) {
                self.out.push(point);
                previous = Some(at);
            }
        }
        self.filled = 0;
    }

    /// The thinned line.
    pub(crate) fn finish(mut self) -> Vec<[f64; 2]> {
        self.flush();
        self.out
    }
}

/// Interval means of a dense series: the points cut into `intervals`
/// runs of consecutive points of equal count (the last may be shorter),
/// each drawn at its mean x and mean y. Returns the points themselves when
/// there are no more than `intervals`, and the count of points per interval.
/// (A sheet draws them with [`Means`], one point at a time.)
#[cfg(test)]
pub(crate) fn interval_means(points: &[(f64, f64)], intervals: usize) -> (Vec<(f64, f64)>, usize) {
    let finite = points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite());
    let mut means = Means::new(finite.clone().count() as u64, intervals);
    finite.for_each(|&p| means.push(p));
    means.finish()
}

/// [`interval_means`] one finite point at a time, told how many will come:
/// it keeps the running sums of the current interval only. An interval is
/// a run of consecutive points ([`Means::new`]) or a stretch of the x axis
/// ([`Means::over_axis`], the same for every compared run). The first
/// point is kept as it is, the mean of the one update so far, so that the
/// line starts where the run starts.
#[derive(Clone, Debug)]
pub(crate) struct Means {
    size: u64,
    /// The interval's width on the x axis, when intervals are stretches of it.
    width: Option<f64>,
    /// The x of the first point, and the stretch of the current interval.
    origin: Option<f64>,
    stretch: i64,
    filled: u64,
    sum: (f64, f64),
    out: Vec<(f64, f64)>,
}

impl Means {
    /// Means of `total` points over at most `intervals` intervals.
    pub(crate) fn new(total: u64, intervals: usize) -> Means {
        let intervals = intervals.max(1) as u64;
        let size = if total <= intervals {
            1
        } else {
            total.div_ceil(intervals)
        };
        Means {
            size,
            width: None,
            origin: None,
            stretch: 0,
            filled: 0,
            sum: (0.0, 0.0),
            out: Vec::with_capacity(total.min(intervals) as usize + 1),
        }
    }

    /// Means over stretches of `width` of the x axis, from the first point.
    pub(crate) fn over_axis(width: f64) -> Means {
        Means {
            width: Some(width).filter(|w| w.is_finite() && *w > 0.0),
            ..Means::new(u64::MAX, 1)
        }
    }

    /// The next point.
    pub(crate) fn push(&mut self, (x, y): (f64, f64)) {
        if self.size == 1 && self.width.is_none() {
            self.out.push((x, y));
            return;
        }
        let origin = *self.origin.get_or_insert_with(|| {
            self.out.push((x, y));
            x
        });
        if let Some(width) = self.width {
            let stretch = ((x - origin) / width).floor() as i64;
            if stretch != self.stretch {
                self.flush();
                self.stretch = stretch;
            }
        }
        self.sum = (self.sum.0 + x, self.sum.1 + y);
        self.filled += 1;
        if self.width.is_none() && self.filled == self.size {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.filled > 0 {
            let n = self.filled as f64;
            self.out.push((self.sum.0 / n, self.sum.1 / n));
            (self.filled, self.sum) = (0, (0.0, 0.0));
        }
    }

    /// The means, and the points per interval (0 when intervals are
    /// stretches of the axis).
    pub(crate) fn finish(mut self) -> (Vec<(f64, f64)>, usize) {
        self.flush();
        let size = if self.width.is_some() {
            0
        } else {
            usize::try_from(self.size).unwrap_or(usize::MAX)
        };
        (self.out, size)
    }
}

/// Keeps about `max` evenly spaced points (markers: each is an event, and
/// past a few hundred they merge into a band anyway).
fn thin(points: Vec<[f64; 2]>, max: usize) -> Vec<[f64; 2]> {
    let mut marks = Thinner::new(points.len() as u64, max);
    points.into_iter().for_each(|p| marks.push(p));
    marks.out
}

/// [`thin`] one point at a time, told how many will come.
#[derive(Clone, Debug)]
pub(crate) struct Thinner {
    step: u64,
    seen: u64,
    out: Vec<[f64; 2]>,
}

impl Thinner {
    /// Markers of `total` points thinned to about `max`.
    pub(crate) fn new(total: u64, max: usize) -> Thinner {
        let step = if total <= max as u64 {
            1
        } else {
            total.div_ceil(max as u64)
        };
        Thinner {
            step,
            seen: 0,
            out: Vec::new(),
        }
    }

    /// The next marker.
    pub(crate) fn push(&mut self, point: [f64; 2]) {
        if self.seen.is_multiple_of(self.step) {
            self.out.push(point);
        }
        self.seen += 1;
    }

    /// The markers kept.
    pub(crate) fn finish(self) -> Vec<[f64; 2]> {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_map_both_ways_through_their_knots() {
        let tokens = Scale {
            label: "tokens".into(),
            knots: vec![[0.0, 0.0], [10.0, 1000.0], [20.0, 3000.0]],
            approximate: false,
        };
        assert_eq!(tokens.value_at(5.0), 500.0);
        assert_eq!(tokens.value_at(15.0), 2000.0);
        assert_eq!(tokens.value_at(30.0), 5000.0, "extended past the end");
        assert_eq!(tokens.x_at(2000.0), 15.0);
        assert_eq!(tokens.x_at(500.0), 5.0);
        let flat = Scale {
            label: "updates".into(),
            knots: vec![[0.0, 0.0], [4.0, 0.0], [8.0, 4.0]],
            approximate: false,
        };
        assert_eq!(flat.value_at(2.0), 0.0);
        assert_eq!(flat.x_at(2.0), 6.0);
    }

    #[test]
    fn decimation_keeps_spikes_and_ends() {
        let mut points: Vec<[f64; 2]> = (0..10_000).map(|i| [f64::from(i), 1.0]).collect();
        points[5_000][1] = 50.0;
        points[7_000][1] = -3.0;
        let thinned = decimate(points, 400);
        assert!(thinned.len() <= 400, "{}", thinned.len());
        assert_eq!(thinned.first(), Some(&[0.0, 1.0]));
        assert_eq!(thinned.last(), Some(&[9_999.0, 1.0]));
        assert!(thinned.contains(&[5_000.0, 50.0]));
        assert!(thinned.contains(&[7_000.0, -3.0]));
        assert!(
            thinned.windows(2).all(|w| w[0][0] < w[1][0]),
            "x order kept"
        );
    }

    #[test]
    fn interval_means_average_consecutive_points() {
        let points: Vec<(f64, f64)> = (1..=10).map(|i| (f64::from(i), f64::from(i % 2))).collect();
        let (means, size) = interval_means(&points, 5);
        assert_eq!(size, 2);
        // The line starts at the first point, the mean of the run so far.
        assert_eq!(
            means,
            vec![
                (1.0, 1.0),
                (1.5, 0.5),
                (3.5, 0.5),
                (5.5, 0.5),
                (7.5, 0.5),
                (9.5, 0.5)
            ]
        );
        // Stretches of the axis: the same width whatever the points' spacing.
        let mut over = Means::over_axis(4.0);
        points.iter().for_each(|p| over.push(*p));
        assert_eq!(
            over.finish(),
            (vec![(1.0, 1.0), (2.5, 0.5), (6.5, 0.5), (9.5, 0.5)], 0)
        );
        let (means, size) = interval_means(&points, 3);
        assert_eq!(size, 4);
        assert_eq!(means.last(), Some(&(9.5, 0.5)), "a shorter last interval");
        let (few, size) = interval_means(&points[..3], 5);
        assert_eq!(
            (few.len(), size),
            (3, 1),
            "sparse points are kept as they are"
        );
    }

    #[test]
    fn series_drop_non_finite_points() {
        let s = Series::new(
            "loss",
            Style::Line,
            Tone::Primary,
            [
                (1.0, 2.0),
                (2.0, f64::NAN),
                (f64::INFINITY, 1.0),
                (3.0, 1.5),
            ],
        );
        assert_eq!(s.points, vec![[1.0, 2.0], [3.0, 1.5]]);
        let marks = Series::new(
            "skipped",
            Style::Crosses,
            Tone::Alert,
            (0..1000).map(|i| (f64::from(i), 0.0)),
        );
        assert!(marks.points.len() <= MAX_MARKERS);
    }
}

/// How the reader asked to see a run's plots (`--log-y`, `--range A..B`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct View {
    /// The loss on a logarithmic axis.
    pub(crate) log_y: bool,
    /// The part of the x axis shown, from and to (either end open).
    pub(crate) range: Option<(Option<f64>, Option<f64>)>,
}

impl View {
    /// The view of the command line's `--log-y` and `--range`.
    pub(crate) fn new(log_y: bool, range: Option<&str>) -> Result<View, String> {
        let range = range.map(parse_range).transpose()?;
        Ok(View { log_y, range })
    }

    /// `chart` as the view shows it: the loss on a log axis, and only the
    /// points and marks inside the range, each said in the caption.
    pub(crate) fn apply(&self, chart: &mut Chart) {
        if self.log_y && chart.id == "loss" {
            chart.y = Axis::log(chart.y.label.clone(), LogBase::Ten);
            chart.caption.push_str(" The loss axis is logarithmic.");
        }
        if let Some((from, to)) = self.range {
            let inside = |x: f64| from.is_none_or(|f| x >= f) && to.is_none_or(|t| x <= t);
            for series in chart
                .series
                .iter_mut()
                .chain(chart.above.iter_mut().flat_map(|p| p.series.iter_mut()))
            {
                series.points.retain(|p| inside(p[0]));
            }
            if let Some(marks) = &mut chart.marks {
                marks.at.retain(|m| inside(m.x));
            }
            let shown = match (from, to) {
                (Some(f), Some(t)) => {
                    format!("from {} to {}", super::setting(f), super::setting(t))
                }
                (Some(f), None) => format!("from {} on", super::setting(f)),
                (None, Some(t)) => format!("up to {}", super::setting(t)),
                (None, None) => "all".to_owned(),
            };
            chart
                .caption
                .push_str(&format!(" Shown: {} {shown}.", chart.x.label));
        }
    }
}

/// `A..B`, `A..` or `..B`: numbers on the x axis (`1e6`, `250000`).
fn parse_range(text: &str) -> Result<(Option<f64>, Option<f64>), String> {
    let (a, b) = text.split_once("..").ok_or_else(|| {
        format!(
            "--range `{text}` is not a range: write it as A..B, A.. or ..B (for example 1000..5000)"
        )
    })?;
    let end = |s: &str| -> Result<Option<f64>, String> {
        let s = s.trim().replace(['_', ','], "");
        if s.is_empty() {
            return Ok(None);
        }
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(Some)
            .ok_or_else(|| format!("--range `{text}`: `{s}` is not a number; write it as A..B, for example 1000..5000"))
    };
    let (from, to) = (end(a)?, end(b)?);
    if let (Some(f), Some(t)) = (from, to)
        && f >= t
    {
        return Err(format!(
            "--range `{text}` is empty: its start is not below its end; write it as A..B with A < B"
        ));
    }
    Ok((from, to))
}

#[cfg(test)]
mod view_tests {
    use super::*;

    #[test]
    fn ranges_read_as_written() {
        assert_eq!(parse_range("1000..5000"), Ok((Some(1000.0), Some(5000.0))));
        assert_eq!(parse_range("1e3.."), Ok((Some(1000.0), None)));
        assert_eq!(parse_range("..2,000"), Ok((None, Some(2000.0))));
        assert!(parse_range("5..5").is_err());
        assert!(parse_range("5-6").is_err());
        assert!(parse_range("a..6").is_err());
    }

    #[test]
    fn a_view_keeps_what_is_inside_and_says_so() {
        let mut chart = Chart {
            id: "loss".into(),
            title: "Loss".into(),
            caption: "The loss.".into(),
            x: Axis::count("updates"),
            x_scales: vec![],
            y: Axis::linear("loss"),
            series: vec![Series::new(
                "loss",
                Style::Line,
                Tone::Primary,
                [(1.0, 4.0), (2.0, 3.0), (3.0, 2.0)],
            )],
            above: vec![],
            marks: None,
        };
        let view = View::new(true, Some("2..")).expect("a view");
        view.apply(&mut chart);
        assert_eq!(chart.series[0].points, [[2.0, 3.0], [3.0, 2.0]]);
        assert_eq!(chart.y.log, Some(LogBase::Ten));
        assert_eq!(
            chart.caption,
            "The loss. The loss axis is logarithmic. Shown: updates from 2 on."
        );
    }
}
