//! Draws a [`Chart`] as a self-contained SVG with plotters' SVG backend:
//! a title with its legend, a grid with the ticks of [`ticks`](super::ticks)
//! (linear, decades or powers of two), axis titles, and further x scales
//! below the axis.
//!
//! Text is SVG text, sized in pixels of a 640-wide drawing, so it stays
//! legible when a page scales the drawing to its column. plotters escapes
//! every string it writes.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::chart::{Axis, Chart, Scale, Series, Style, Tone};
use super::ticks::{Mapping, Ticks, label, linear_ticks, step_of, ticks_for};

/// Size of a drawing in a column, in pixels.
const NORMAL: (u32, u32) = (640, 300);
/// Size of a drawing across a wide page.
const WIDE: (u32, u32) = (1200, 360);
/// Height added for each further x scale.
const SCALE_ROW: u32 = 30;
const FONT: &str = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif";
/// The title row, and the legend's row when it does not fit beside the title.
const ROW: i32 = 22;
const LEFT_AREA: u32 = 64;
const BOTTOM_AREA: u32 = 44;

const INK: RGBColor = RGBColor(0x1f, 0x29, 0x37);
const LABEL: RGBColor = RGBColor(0x4b, 0x55, 0x63);
const GRID: RGBColor = RGBColor(0xe5, 0xe7, 0xeb);
const FRAME: RGBColor = RGBColor(0x9c, 0xa3, 0xaf);
const BLUE: RGBColor = RGBColor(0x25, 0x63, 0xeb);
const TEAL: RGBColor = RGBColor(0x0d, 0x94, 0x88);
const RED: RGBColor = RGBColor(0xdc, 0x26, 0x26);
const GREY: RGBColor = RGBColor(0x6b, 0x72, 0x80);

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Failure = Box<dyn std::error::Error>;

/// The chart as an SVG document sized for a column. A chart without finite
/// points says so in its frame.
pub(crate) fn render(chart: &Chart) -> String {
    render_sized(chart, NORMAL)
}

/// The chart as a wide SVG document, for a plot across a whole page.
pub(crate) fn render_wide(chart: &Chart) -> String {
    render_sized(chart, WIDE)
}

fn render_sized(chart: &Chart, (width, height): (u32, u32)) -> String {
    let size = (width, height + SCALE_ROW * chart.x_scales.len() as u32);
    match draw(chart, size) {
        Ok(svg) => svg,
        // Drawing into a string does not fail in practice; if it does, the
        // sheet still gets a drawing that says why.
        Err(err) => message(
            &chart.title,
            &format!("cannot draw this plot: {err}"),
            width,
        )
        .unwrap_or_default(),
    }
}

fn tone_color(tone: Tone) -> RGBColor {
    match tone {
        Tone::Primary => BLUE,
        Tone::Secondary => TEAL,
        Tone::Alert => RED,
        Tone::Muted => GREY,
    }
}

/// The font at `size` pixels (plotters' SVG backend writes
/// `font-size = size / 1.24`).
fn font(size: f64) -> FontDesc<'static> {
    (FONT, size * 1.24).into_font()
}

fn text(size: f64, color: &RGBColor) -> TextStyle<'static> {
    font(size).color(color)
}

/// A frame with the title and one line of text in it.
fn message(title: &str, line: &str, width: u32) -> Result<String, Failure> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, 120)).into_drawing_area();
        root.fill(&WHITE)?;
        root.draw(&Text::new(
            title.to_owned(),
            (12, 12),
            text(14.0, &INK).pos(Pos::new(HPos::Left, VPos::Top)),
        ))?;
        root.draw(&Rectangle::new([(12, 36), (width as i32 - 12, 108)], FRAME))?;
        root.draw(&Text::new(
            line.to_owned(),
            (width as i32 / 2, 72),
            text(13.0, &LABEL).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        root.present()?;
    }
    Ok(svg)
}

/// The points of a series in axis space; values a log axis cannot show are
/// left out.
fn mapped(series: &Series, x: Mapping, y: Mapping) -> Vec<(f64, f64)> {
    series
        .points
        .iter()
        .filter_map(|[px, py]| Some((x.to_axis(*px)?, y.to_axis(*py)?)))
        .collect()
}

fn draw(chart: &Chart, size: (u32, u32)) -> Result<String, Failure> {
    let xs: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p[0]))
        .collect();
    let ys: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p[1]))
        .collect();
    let has_data = chart.series.iter().any(|s| {
        s.style != Style::Reference
            && s.points
                .iter()
                .any(|p| Mapping { log: chart.y.log }.to_axis(p[1]).is_some())
    });
    if !has_data {
        return message(&chart.title, "no finite values to plot", size.0);
    }
    let x_ticks = ticks_for(&chart.x, &xs, 7, false);
    let y_ticks = ticks_for(&chart.y, &ys, 5, true);

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        let top = heading(&root, chart, size.0)?;
        let bottom = BOTTOM_AREA + SCALE_ROW * chart.x_scales.len() as u32;
        let mut builder = ChartBuilder::on(&root);
        builder
            .margin_top(top)
            .margin_right(20)
            .margin_left(8)
            .margin_bottom(6)
            .x_label_area_size(bottom)
            .y_label_area_size(LEFT_AREA);
        let plot = builder.build_cartesian_2d(x_ticks.range.clone(), y_ticks.range.clone())?;
        let (px, py) = plot.plotting_area().get_pixel_range();
        let at = |x: f64, y: f64| plot.backend_coord(&(x, y));

        // Grid and frame.
        for &value in &y_ticks.values {
            let y = y_ticks.position(value);
            if !y_ticks.range.contains(&y) && y != y_ticks.range.end {
                continue;
            }
            let (_, row) = at(x_ticks.range.start, y);
            root.draw(&PathElement::new(
                vec![(px.start, row), (px.end, row)],
                GRID,
            ))?;
            root.draw(&Text::new(
                label(
                    value,
                    step_of(&y_ticks.values),
                    y_ticks.mapping.log,
                    y_ticks.integer,
                ),
                (px.start - 8, row),
                text(12.0, &LABEL).pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
        }
        for &value in &x_ticks.values {
            let x = x_ticks.position(value);
            if x < x_ticks.range.start || x > x_ticks.range.end {
                continue;
            }
            let (column, _) = at(x, y_ticks.range.start);
            root.draw(&PathElement::new(
                vec![(column, py.start), (column, py.end)],
                GRID,
            ))?;
            root.draw(&PathElement::new(
                vec![(column, py.end), (column, py.end + 5)],
                FRAME,
            ))?;
            root.draw(&Text::new(
                label(value, step_of(&x_ticks.values), None, x_ticks.integer),
                (column, py.end + 8),
                text(12.0, &LABEL).pos(Pos::new(HPos::Center, VPos::Top)),
            ))?;
        }
        root.draw(&PathElement::new(
            vec![(px.start, py.start), (px.start, py.end), (px.end, py.end)],
            FRAME,
        ))?;

        // Axis titles: y rotated on the left; x centred below, or, with
        // further scales, every scale's title left of its row.
        root.draw(&Text::new(
            chart.y.label.clone(),
            (14, (py.start + py.end) / 2),
            text(13.0, &INK)
                .transform(FontTransform::Rotate270)
                .pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        if chart.x_scales.is_empty() {
            root.draw(&Text::new(
                chart.x.label.clone(),
                ((px.start + px.end) / 2, py.end + 28),
                text(13.0, &INK).pos(Pos::new(HPos::Center, VPos::Top)),
            ))?;
        } else {
            root.draw(&Text::new(
                chart.x.label.clone(),
                (px.start - 8, py.end + 8),
                text(12.0, &INK).pos(Pos::new(HPos::Right, VPos::Top)),
            ))?;
            for (row, scale) in chart.x_scales.iter().enumerate() {
                let top = py.end + 8 + SCALE_ROW as i32 * (row as i32 + 1) - 4;
                draw_scale(&root, scale, &x_ticks, &px, top, &|x| {
                    at(x, y_ticks.range.start).0
                })?;
            }
        }

        // The series, clipped to the plot.
        let area = plot.plotting_area();
        let xm = x_ticks.mapping;
        let ym = y_ticks.mapping;
        for series in &chart.series {
            let color = tone_color(series.tone);
            let points = mapped(series, xm, ym);
            match series.style {
                Style::Line => {
                    area.draw(&PathElement::new(points, color.stroke_width(2)))?;
                }
                Style::LineWithPoints => {
                    let radius = if points.len() > 150 { 1 } else { 3 };
                    area.draw(&PathElement::new(points.clone(), color.stroke_width(2)))?;
                    for p in points {
                        area.draw(&Circle::new(p, radius, color.filled()))?;
                    }
                }
                Style::Step => {
                    let mut stepped = Vec::with_capacity(points.len() * 2);
                    for (i, p) in points.iter().enumerate() {
                        if i > 0 {
                            stepped.push((p.0, points[i - 1].1));
                        }
                        stepped.push(*p);
                    }
                    area.draw(&PathElement::new(stepped, color.stroke_width(2)))?;
                }
                Style::Crosses => {
                    // Many events: smaller, thinner marks that still read as a band.
                    let (size, width) = if points.len() > 60 { (3, 1) } else { (4, 2) };
                    for p in points {
                        area.draw(&Cross::new(p, size, color.stroke_width(width)))?;
                    }
                }
                Style::Reference => {
                    area.draw(&DashedPathElement::new(points, 6, 4, color.stroke_width(1)))?;
                }
            }
        }
        root.present()?;
    }
    Ok(svg)
}

/// A further scale of the x axis: its own nice ticks, placed through the
/// scale's inverse.
fn draw_scale(
    root: &Area<'_>,
    scale: &Scale,
    primary: &Ticks,
    px: &Range<i32>,
    top: i32,
    column: &dyn Fn(f64) -> i32,
) -> Result<(), Failure> {
    let lo = scale.value_at(primary.range.start);
    let hi = scale.value_at(primary.range.end);
    let axis = Axis::count(scale.label.clone());
    let ticks = linear_ticks(&axis, lo.min(hi), lo.max(hi), 6, false);
    root.draw(&PathElement::new(
        vec![(px.start, top), (px.end, top)],
        GRID,
    ))?;
    root.draw(&Text::new(
        scale.label.clone(),
        (px.start - 8, top + 4),
        text(12.0, &INK).pos(Pos::new(HPos::Right, VPos::Top)),
    ))?;
    let step = step_of(&ticks.values);
    for value in ticks.values {
        let x = scale.x_at(value);
        if !(primary.range.start..=primary.range.end).contains(&x) {
            continue;
        }
        let c = column(x);
        root.draw(&PathElement::new(vec![(c, top), (c, top + 4)], FRAME))?;
        let mut shown = label(value, step, None, true);
        if scale.approximate && value != 0.0 {
            shown = format!("≈{shown}");
        }
        root.draw(&Text::new(
            shown,
            (c, top + 6),
            text(12.0, &LABEL).pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
    }
    Ok(())
}

/// The title on the left of the top row and the legend on its right, or
/// on a row of its own when both do not fit. Returns the height they take.
fn heading(root: &Area<'_>, chart: &Chart, width: u32) -> Result<u32, Failure> {
    let title_style = font(15.0).style(FontStyle::Bold).color(&INK);
    root.draw(&Text::new(
        chart.title.clone(),
        (12, ROW / 2 + 4),
        title_style.pos(Pos::new(HPos::Left, VPos::Center)),
    ))?;
    let style = text(12.0, &LABEL);
    let named: Vec<&Series> = chart.series.iter().filter(|s| !s.name.is_empty()).collect();
    let mut widths = Vec::with_capacity(named.len());
    for series in &named {
        widths.push(root.estimate_text_size(&series.name, &style)?.0 as i32);
    }
    // Each entry: a 20-pixel swatch, a gap of 6, the name, a gap of 18.
    let legend: i32 = widths.iter().map(|w| w + 44).sum();
    let (title, _) = root.estimate_text_size(&chart.title, &title_style)?;
    let right = width as i32 - 20;
    let beside = 12 + title as i32 + 24 + legend <= right;
    let baseline = if beside {
        ROW / 2 + 4
    } else {
        ROW + ROW / 2 + 4
    };
    let mut end = right;
    for (series, w) in named.iter().zip(&widths).rev() {
        let label_x = end - w;
        root.draw(&Text::new(
            series.name.clone(),
            (label_x, baseline),
            style.pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
        let color = tone_color(series.tone);
        let swatch = label_x - 26;
        let line = vec![(swatch, baseline), (swatch + 20, baseline)];
        match series.style {
            Style::Crosses => {
                root.draw(&Cross::new(
                    (swatch + 10, baseline),
                    4,
                    color.stroke_width(2),
                ))?;
            }
            Style::Reference => {
                root.draw(&DashedPathElement::new(line, 5, 3, color.stroke_width(1)))?;
            }
            Style::LineWithPoints => {
                root.draw(&PathElement::new(line, color.stroke_width(2)))?;
                root.draw(&Circle::new((swatch + 10, baseline), 3, color.filled()))?;
            }
            Style::Line | Style::Step => {
                root.draw(&PathElement::new(line, color.stroke_width(2)))?;
            }
        }
        end = swatch - 18;
    }
    Ok(if beside {
        ROW as u32 + 16
    } else {
        2 * ROW as u32 + 14
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sheet::chart::{LogBase, Series};

    fn chart(series: Vec<Series>, y: Axis) -> Chart {
        Chart {
            id: "test".into(),
            title: "Loss <b>".into(),
            caption: String::new(),
            x: Axis::count("updates"),
            x_scales: vec![],
            y,
            series,
        }
    }

    #[test]
    fn draws_text_grid_and_escaped_labels() {
        let svg = render(&chart(
            vec![Series::new(
                "loss <i>",
                Style::LineWithPoints,
                Tone::Primary,
                (1..=12).map(|i| (f64::from(i), 3.0 / f64::from(i))),
            )],
            Axis::linear("loss"),
        ));
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("Loss &lt;b&gt;"), "{svg}");
        assert!(svg.contains("loss &lt;i&gt;"), "{svg}");
        assert!(!svg.contains("<b>") && !svg.contains("<script"));
        assert_eq!(
            svg.matches("<circle").count(),
            12 + 1,
            "every point and the legend's"
        );
        // Tick labels between the ends of both axes.
        for tick in [">\n0\n<", ">\n2\n<", ">\n6\n<", ">\n12\n<", ">\n1.5\n<"] {
            assert!(svg.contains(tick), "{tick:?} in {svg}");
        }
    }

    #[test]
    fn empty_flat_and_extreme_charts_still_draw() {
        let empty = render(&chart(
            vec![Series::new(
                "loss",
                Style::Line,
                Tone::Primary,
                [(1.0, f64::NAN)],
            )],
            Axis::linear("loss"),
        ));
        assert!(empty.contains("no finite values to plot"), "{empty}");
        let flat = render(&chart(
            vec![Series::new(
                "loss",
                Style::Line,
                Tone::Primary,
                [(5.0, 2.0)],
            )],
            Axis::linear("loss"),
        ));
        assert!(flat.contains("<polyline"), "{flat}");
        let huge = render(&chart(
            vec![Series::new(
                "lr",
                Style::Line,
                Tone::Primary,
                [(0.0, 1e-300), (u64::MAX as f64, 1e300)],
            )],
            Axis::log("lr", LogBase::Ten),
        ));
        assert!(huge.contains("<polyline"), "{huge}");
        let tiny_span = render(&chart(
            vec![Series::new(
                "x",
                Style::Line,
                Tone::Primary,
                [(1e18, 1.0), (1e18 + 4096.0, 1.0)],
            )],
            Axis::linear("x"),
        ));
        assert!(tiny_span.contains("<polyline"), "{tiny_span}");
    }

    #[test]
    fn further_scales_get_their_own_ticks() {
        let mut c = chart(
            vec![Series::new(
                "learning rate",
                Style::Line,
                Tone::Primary,
                [(0.0, 0.0), (20.0, 1e-3), (300.0, 0.0)],
            )],
            Axis {
                from_zero: true,
                ..Axis::linear("learning rate")
            },
        );
        c.x_scales = vec![Scale {
            label: "examples".into(),
            knots: vec![[0.0, 0.0], [300.0, 19_200.0]],
            approximate: false,
        }];
        let svg = render(&c);
        assert!(svg.contains(">\nexamples\n<"), "{svg}");
        for tick in ["5k", "10k", "15k"] {
            assert!(svg.contains(&format!(">\n{tick}\n<")), "{tick} in {svg}");
        }
    }
}
