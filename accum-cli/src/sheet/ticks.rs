//! Ticks and tick labels: "nice" linear steps (1, 2, 2.5, 5 × 10ⁿ), powers
//! of ten or two on logarithmic axes, and labels as people write numbers —
//! `2,048`, `12k`, `1.5e-3`, `2¹⁶`.

use std::ops::Range;

use super::chart::{Axis, LogBase};

/// Where a value sits on a drawn axis: linear, or its logarithm.
#[derive(Clone, Copy)]
pub(crate) struct Mapping {
    pub(crate) log: Option<LogBase>,
}

impl Mapping {
    pub(crate) fn to_axis(self, value: f64) -> Option<f64> {
        match self.log {
            None => Some(value),
            Some(_) if value <= 0.0 => None,
            Some(LogBase::Ten) => Some(value.log10()),
            Some(LogBase::Two) => Some(value.log2()),
        }
    }
}

/// Ticks of one axis: the drawn range (in axis space) and the labelled
/// values (in data space).
pub(crate) struct Ticks {
    pub(crate) range: Range<f64>,
    pub(crate) values: Vec<f64>,
    pub(crate) mapping: Mapping,
    pub(crate) integer: bool,
}

impl Ticks {
    pub(crate) fn position(&self, value: f64) -> f64 {
        self.mapping.to_axis(value).unwrap_or(self.range.start)
    }
}

/// A "nice" step nearest to `span / target`: 1, 2, 2.5 or 5 times a power
/// of ten.
fn nice_step(span: f64, target: usize) -> f64 {
    let raw = span / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let normalized = raw / magnitude;
    let factor = [(1.5, 1.0), (2.25, 2.0), (3.5, 2.5), (7.5, 5.0)]
        .into_iter()
        .find(|(below, _)| normalized < *below)
        .map_or(10.0, |(_, f)| f);
    factor * magnitude
}

/// Multiples of `step` within `lo..=hi`.
fn multiples(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step).ceil();
    let last = (hi / step).floor();
    if !(first.is_finite() && last.is_finite()) || last - first > 200.0 {
        return vec![lo, hi];
    }
    let mut out = Vec::new();
    let mut k = first;
    while k <= last {
        // Rounding away the float noise of `k * step` (0.30000000000000004).
        let value = k * step;
        let digits = (-step.log10().floor()).clamp(0.0, 15.0) as i32 + 2;
        let scale = 10f64.powi(digits);
        out.push((value * scale).round() / scale);
        k += 1.0;
    }
    out
}

/// The range of finite values, widened when empty or a single value.
fn extent(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    (lo <= hi).then_some((lo, hi))
}

/// Linear ticks over `lo..hi`; with `pad`, 5 % of room at either end (none
/// below a zero the axis starts from), as the data should not touch the frame.
pub(crate) fn linear_ticks(axis: &Axis, lo: f64, hi: f64, target: usize, pad: bool) -> Ticks {
    let mut lo = if axis.from_zero { lo.min(0.0) } else { lo };
    let mut hi = hi;
    // A single value, or a span lost in the magnitude: give it room.
    let floor = hi.abs().max(lo.abs()).max(1.0) * 1e-9;
    if hi - lo <= floor {
        let half = (hi.abs() * 0.1).max(if axis.integer { 1.0 } else { 0.5 });
        lo = if axis.from_zero && lo >= 0.0 {
            0.0
        } else {
            lo - half
        };
        hi += half;
    }
    if pad {
        let room = (hi - lo) * 0.05;
        if !(axis.from_zero && lo == 0.0) {
            lo -= room;
        }
        hi += room;
    }
    let mut step = nice_step(hi - lo, target);
    if axis.integer {
        step = step.max(1.0).round();
    }
    Ticks {
        values: multiples(lo, hi, step),
        range: lo..hi,
        mapping: Mapping { log: None },
        integer: axis.integer,
    }
}

/// Ticks at powers of the base over `lo..hi` (positive), with 5 % of room
/// at either end; within a decade or two, also at 2× and 5×.
fn log_ticks(base: LogBase, lo: f64, hi: f64) -> Ticks {
    let b = match base {
        LogBase::Ten => 10f64,
        LogBase::Two => 2f64,
    };
    let log = |v: f64| v.ln() / b.ln();
    let (mut start, mut end) = (log(lo), log(hi));
    let room = ((end - start) * 0.05).max(0.1);
    start -= room;
    end += room;
    if end - start < 1.0 {
        let middle = (start + end) / 2.0;
        start = middle - 0.5;
        end = middle + 0.5;
    }
    let first = start.ceil();
    let last = end.floor();
    let powers = (last - first).max(0.0) as usize + 1;
    let every = powers.div_ceil(8).max(1);
    let mut values = Vec::new();
    let mut k = first - 1.0;
    let mut index = 0;
    while k <= last && values.len() < 64 {
        let value = b.powf(k);
        if k >= first && index % every == 0 {
            values.push(value);
        }
        if k >= first {
            index += 1;
        }
        // Within one or two decades, 2× and 5× ticks help the reader.
        if base == LogBase::Ten && powers <= 2 {
            values.extend([2.0 * value, 5.0 * value].into_iter().filter(|v| {
                let at = log(*v);
                at >= start && at <= end
            }));
        }
        k += 1.0;
    }
    values.sort_by(f64::total_cmp);
    Ticks {
        range: start..end,
        values,
        mapping: Mapping { log: Some(base) },
        integer: false,
    }
}

pub(crate) fn ticks_for(axis: &Axis, values: &[f64], target: usize, pad: bool) -> Ticks {
    match axis.log {
        Some(base) => {
            let positive = values.iter().copied().filter(|v| *v > 0.0);
            match extent(positive) {
                Some((lo, hi)) => log_ticks(base, lo, hi),
                None => log_ticks(base, 1.0, 10.0),
            }
        }
        None => {
            let (lo, hi) = extent(values.iter().copied()).unwrap_or((0.0, 1.0));
            linear_ticks(axis, lo, hi, target, pad)
        }
    }
}

/// A tick label: grouped digits for counts, `12k`/`1.5M` past ten
/// thousand, scientific notation for small values, powers of two as such.
pub(crate) fn label(value: f64, ticks_step: f64, base: Option<LogBase>, integer: bool) -> String {
    if value == 0.0 {
        return "0".into();
    }
    if base == Some(LogBase::Two) {
        let power = value.log2();
        if (power - power.round()).abs() < 1e-9 {
            return format!("2{}", superscript(power.round() as i64));
        }
    }
    let magnitude = value.abs();
    // Thousands in steps of thousands read as 2k, 4k, 6k.
    if magnitude >= 10_000.0 || (magnitude >= 1_000.0 && ticks_step >= 1_000.0) {
        return compact(value);
    }
    if integer || (value.fract() == 0.0 && magnitude >= 1.0) {
        return super::group(magnitude.round() as u64).pipe_sign(value < 0.0);
    }
    // Steps below a thousandth read better as 5e-4, 1e-3, 1.5e-3.
    if ticks_step.abs() < 1e-3 || (base.is_some() && magnitude < 1e-3) {
        let text = format!("{value:.1e}");
        return text.replace(".0e", "e");
    }
    let decimals = (-ticks_step.abs().log10().floor()).clamp(0.0, 6.0) as usize + 1;
    trim(&format!("{value:.decimals$}"))
}

trait PipeSign {
    fn pipe_sign(self, negative: bool) -> String;
}

impl PipeSign for String {
    fn pipe_sign(self, negative: bool) -> String {
        if negative { format!("−{self}") } else { self }
    }
}

fn trim(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text.to_owned()
    }
}

/// `12k`, `1.5M`, `2.1B`, `4T` with at most three significant digits (the
/// suffixes spans are written with), and `2.5e18` past them.
fn compact(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 1e15 {
        let text = format!("{magnitude:.2e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        return format!("{}e{exponent}", trim(mantissa)).pipe_sign(value < 0.0);
    }
    let (divisor, suffix) = [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(d, _)| magnitude >= *d)
        .unwrap_or((1.0, ""));
    let scaled = magnitude / divisor;
    let text = if scaled >= 100.0 {
        format!("{scaled:.0}")
    } else if scaled >= 10.0 {
        trim(&format!("{scaled:.1}"))
    } else {
        trim(&format!("{scaled:.2}"))
    };
    format!("{text}{suffix}").pipe_sign(value < 0.0)
}

fn superscript(n: i64) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut out = String::new();
    if n < 0 {
        out.push('⁻');
    }
    for c in n.unsigned_abs().to_string().chars() {
        out.push(DIGITS[c.to_digit(10).unwrap_or(0) as usize]);
    }
    out
}

pub(crate) fn step_of(ticks: &[f64]) -> f64 {
    match ticks {
        [a, b, ..] => (b - a).abs(),
        [a] => a.abs(),
        [] => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Axis labels use the suffixes a span is written and printed with:
    /// a billion is `B`, as in "2B tokens".
    #[test]
    fn large_labels_use_the_span_suffixes() {
        assert_eq!(compact(12_000.0), "12k");
        assert_eq!(compact(1_500_000.0), "1.5M");
        assert_eq!(compact(2_100_000_000.0), "2.1B");
        assert_eq!(compact(4e12), "4T");
        assert_eq!(compact(-3e9), "−3B", "a true minus sign");
    }

    #[test]
    fn nice_ticks_and_labels() {
        assert_eq!(nice_step(300.0, 7), 50.0);
        assert_eq!(nice_step(1.0, 5), 0.2);
        assert_eq!(nice_step(3.04, 5), 0.5);
        assert_eq!(multiples(0.0, 1.0, 0.25), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(multiples(0.1, 0.35, 0.1), vec![0.1, 0.2, 0.3]);
        assert_eq!(label(0.003, 0.0005, None, false), "3e-3");
        assert_eq!(label(0.0015, 0.0005, None, false), "1.5e-3");
        assert_eq!(label(0.004, 0.002, None, false), "0.004");
        assert_eq!(label(0.01, 0.002, None, false), "0.01");
        assert_eq!(label(2.5, 0.5, None, false), "2.5");
        assert_eq!(label(2048.0, 256.0, None, true), "2,048");
        assert_eq!(label(1_500_000.0, 500_000.0, None, true), "1.5M");
        assert_eq!(label(12_000.0, 2_000.0, None, true), "12k");
        assert_eq!(label(2.5e18, 2.5e18, None, true), "2.5e18");
        assert_eq!(label(4e12, 1e12, None, true), "4T");
        assert_eq!(label(4_000.0, 2_000.0, None, true), "4k");
        assert_eq!(label(1_000.0, 200.0, None, true), "1,000");
        assert_eq!(label(65536.0, 1.0, Some(LogBase::Two), false), "2¹⁶");
        assert_eq!(label(0.5, 1.0, Some(LogBase::Two), false), "2⁻¹");
        assert_eq!(label(-3.0, 1.0, None, false), "−3");
        let log = log_ticks(LogBase::Ten, 0.3, 4.0);
        assert_eq!(log.values, vec![0.5, 1.0, 2.0, 5.0]);
        let scale = log_ticks(LogBase::Two, 262_144.0, 16_777_216.0);
        assert_eq!(scale.values.first(), Some(&262_144.0));
        assert_eq!(scale.values.last(), Some(&16_777_216.0));
        assert_eq!(scale.values.len(), 7);
    }
}
