//! The loss curve as a self-contained SVG: no script, no external
//! references, every label escaped.

use std::fmt::Write as _;

use super::{Curve, escape_html};

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 260.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 44.0;

/// Renders the curve; an empty curve renders a frame that says so.
pub fn render(curve: &Curve) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="loss against {axis}" class="loss-curve">"#,
        axis = escape_html(&curve.axis)
    );
    let _ = write!(
        out,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
    );
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let _ = write!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888888"/>"##
    );
    let finite: Vec<(f64, f64)> = curve
        .points
        .iter()
        .filter(|p| p.x.is_finite() && p.loss.is_finite())
        .map(|p| (p.x, p.loss))
        .collect();
    if finite.is_empty() {
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" font-family="sans-serif" font-size="13">no finite loss values</text></svg>"#,
            LEFT + plot_w / 2.0,
            TOP + plot_h / 2.0
        );
        return out;
    }
    let (x_min, x_max) = bounds(finite.iter().map(|p| p.0));
    let (y_min, y_max) = bounds(finite.iter().map(|p| p.1));
    let sx = |x: f64| LEFT + (x - x_min) / (x_max - x_min) * plot_w;
    let sy = |y: f64| TOP + (1.0 - (y - y_min) / (y_max - y_min)) * plot_h;
    let points: Vec<String> = finite
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
        .collect();
    let _ = write!(
        out,
        r##"<polyline fill="none" stroke="#1f5fbf" stroke-width="1.5" points="{}"/>"##,
        points.join(" ")
    );
    for (value, y) in [(y_max, TOP), (y_min, TOP + plot_h)] {
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="end" font-family="sans-serif" font-size="11">{}</text>"#,
            LEFT - 6.0,
            y + 4.0,
            format_number(value)
        );
    }
    for (value, x, anchor) in [(x_min, LEFT, "start"), (x_max, LEFT + plot_w, "end")] {
        let _ = write!(
            out,
            r#"<text x="{x}" y="{}" text-anchor="{anchor}" font-family="sans-serif" font-size="11">{}</text>"#,
            TOP + plot_h + 16.0,
            format_number(value)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle" font-family="sans-serif" font-size="12">{}</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 8.0,
        escape_html(&curve.axis)
    );
    let _ = write!(
        out,
        r#"<text x="14" y="{}" text-anchor="middle" font-family="sans-serif" font-size="12" transform="rotate(-90 14 {})">loss</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    out.push_str("</svg>");
    out
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

fn format_number(value: f64) -> String {
    if value.abs() >= 1000.0 && value.fract() == 0.0 {
        crate::sheet::group(value as u64)
    } else if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sheet::{Point, sample};

    #[test]
    fn draws_a_polyline_with_escaped_labels() {
        let mut curve = sample().trial.expect("sample has a trial").curve;
        curve.axis = "<b>updates</b>".into();
        let svg = render(&curve);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains("<polyline"));
        assert_eq!(
            svg.matches(',').count() - svg.matches(", ").count(),
            10,
            "{svg}"
        );
        assert!(svg.contains("&lt;b&gt;updates&lt;/b&gt;"));
        assert!(!svg.contains("<script"));
    }

    #[test]
    fn empty_or_non_finite_curves_say_so() {
        let curve = Curve {
            axis: "tokens".into(),
            points: vec![Point {
                x: 1.0,
                loss: f64::NAN,
            }],
        };
        assert!(render(&curve).contains("no finite loss values"));
        let flat = Curve {
            axis: "tokens".into(),
            points: vec![Point { x: 1.0, loss: 2.0 }],
        };
        assert!(render(&flat).contains("<polyline"));
    }
}
