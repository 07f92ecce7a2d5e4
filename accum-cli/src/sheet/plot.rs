//! Draws a [`Chart`] as a self-contained SVG with plotters' SVG backend:
//! a title with its legend, a grid with the ticks of [`ticks`](super::ticks)
//! (linear, decades or powers of two), axis titles, and further x scales
//! below the axis.
//!
//! Text is SVG text, sized in pixels of the drawing; a page shows the
//! drawing made for its width (640 wide in a column, 360 wide on a phone,
//! [`render_narrow`]) so that text is not shrunk below 10 px. Every string
//! goes through [`escape::svg`] (hidden characters shown) and plotters
//! writes markup characters as references.
//!
//! Hovering over a line shows its values with no script: each series gets
//! transparent targets along it, each with an SVG `<title>` (`loss at
//! 1,024 examples: 2.3456`), at most [`HOVER_TARGETS`] a series.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::chart::{Axis, Chart, Scale, Series, Style, Tone};
use super::ticks::{Mapping, Ticks, label, linear_ticks, step_of, ticks_for};
use crate::escape;

/// Size of a drawing in a column, in pixels.
const NORMAL: (u32, u32) = (640, 300);
/// Size of a drawing across a wide page.
const WIDE: (u32, u32) = (1200, 360);
/// Size of a drawing on a phone (a page narrower than 700 px): drawn for
/// its width rather than scaled down from [`NORMAL`].
const NARROW: (u32, u32) = (360, 300);
/// Hover targets drawn along one series at most.
const HOVER_TARGETS: usize = 48;
/// Height added for each further x scale.
const SCALE_ROW: u32 = 30;
/// Height of a panel above the main one, with the gap above it.
const ABOVE_PANEL: u32 = 104;
/// Room between two panels.
const PANEL_GAP: u32 = 14;
/// Height of the row above the plot where marks are labelled.
const MARK_ROW: u32 = 16;
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
/// Vertical marks (stage starts): apart from the series' colours.
const MARK: RGBColor = RGBColor(0x7c, 0x3a, 0xed);

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

/// The chart as an SVG document for a phone's width.
pub(crate) fn render_narrow(chart: &Chart) -> String {
    render_sized(chart, NARROW)
}

fn render_sized(chart: &Chart, (width, height): (u32, u32)) -> String {
    let size = (width, drawing_height(chart, width, height));
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

/// The colours of compared runs, in order: their lightness (Rec. 709
/// luma) is about 58, 114, 176 and 10 of 255, so that printed in grey the
/// runs stay apart; from the second run on, lines are also dashed.
const RUNS: [RGBColor; 4] = [
    RGBColor(0x1e, 0x3a, 0x8a),
    RGBColor(0xea, 0x58, 0x0c),
    RGBColor(0x84, 0xcc, 0x16),
    RGBColor(0x0a, 0x0a, 0x0a),
];

fn tone_color(tone: Tone) -> RGBColor {
    match tone {
        Tone::Primary => BLUE,
        Tone::Secondary => TEAL,
        Tone::Alert => RED,
        Tone::Muted => GREY,
        Tone::Run(i) => RUNS[usize::from(i) % RUNS.len()],
    }
}

/// Dashes of a compared run's lines (`None`: solid): the first run solid,
/// the others dashed, each with its own rhythm.
fn run_dashes(tone: Tone) -> Option<(u32, u32)> {
    match tone {
        Tone::Run(0) | Tone::Primary | Tone::Secondary | Tone::Alert | Tone::Muted => None,
        Tone::Run(i) => Some((4 + 3 * u32::from(i % 3), 3)),
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

/// Text from a chart (titles, names, labels) as plotters draws it: through
/// the SVG channel's escaper, [`escape::svg`]. Every `Text` of a drawing
/// takes its string from here or from a number.
fn drawn(text: &str) -> String {
    escape::svg(text).into_owned()
}

/// A frame with the title and one line of text in it.
fn message(title: &str, line: &str, width: u32) -> Result<String, Failure> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, 120)).into_drawing_area();
        root.fill(&WHITE)?;
        root.draw(&Text::new(
            drawn(title),
            (12, 12),
            text(14.0, &INK).pos(Pos::new(HPos::Left, VPos::Top)),
        ))?;
        root.draw(&Rectangle::new([(12, 36), (width as i32 - 12, 108)], FRAME))?;
        root.draw(&Text::new(
            drawn(line),
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

/// One panel: its y axis and series (the main one last).
struct PanelRef<'a> {
    y: &'a Axis,
    series: &'a [Series],
}

/// Every panel of a chart, top first: those above, then the main one.
fn panels(chart: &Chart) -> Vec<PanelRef<'_>> {
    chart
        .above
        .iter()
        .map(|p| PanelRef {
            y: &p.y,
            series: &p.series,
        })
        .chain(std::iter::once(PanelRef {
            y: &chart.y,
            series: &chart.series,
        }))
        .collect()
}

/// The height a drawing of `chart` needs for a main plot of `height`.
fn drawing_height(chart: &Chart, width: u32, height: u32) -> u32 {
    // A legend of more rows than one below the title gets their room, so
    // that the plot keeps its height (estimated at 7 px a character of
    // 12 px text; `heading` places the entries).
    let entries: Vec<usize> = chart
        .above
        .iter()
        .flat_map(|p| p.series.iter())
        .chain(chart.series.iter())
        .filter(|s| !s.name.is_empty())
        .map(|s| s.name.chars().count() * 7 + 44)
        .chain(chart.marks.iter().map(|m| m.name.chars().count() * 7 + 44))
        .collect();
    let room = (width as usize).saturating_sub(32).max(1);
    let (mut rows, mut x) = (1u32, 0usize);
    for w in entries {
        if x > 0 && x + w > room {
            rows += 1;
            x = 0;
        }
        x += w;
    }
    height
        + ROW as u32 * (rows - 1)
        + SCALE_ROW * chart.x_scales.len() as u32
        + ABOVE_PANEL * chart.above.len() as u32
        + if chart.marks.is_some() { MARK_ROW } else { 0 }
}

fn draw(chart: &Chart, size: (u32, u32)) -> Result<String, Failure> {
    let panels = panels(chart);
    let xs: Vec<f64> = panels
        .iter()
        .flat_map(|p| p.series.iter())
        .flat_map(|s| s.points.iter().map(|p| p[0]))
        .chain(chart.marks.iter().flat_map(|m| m.at.iter().map(|m| m.x)))
        .collect();
    let has_data = panels.iter().any(|panel| {
        panel.series.iter().any(|s| {
            s.style != Style::Reference
                && s.points
                    .iter()
                    .any(|p| Mapping { log: panel.y.log }.to_axis(p[1]).is_some())
        })
    });
    if !has_data {
        return message(&chart.title, "no finite values to plot", size.0);
    }
    let x_ticks = ticks_for(&chart.x, &xs, if size.0 < 500 { 4 } else { 7 }, false);
    let mut hover: Vec<(i32, i32, String)> = Vec::new();

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        let mut top = heading(&root, chart, size.0)?;
        if chart.marks.is_some() {
            top += MARK_ROW;
        }
        let bottom = BOTTOM_AREA + SCALE_ROW * chart.x_scales.len() as u32;
        let last = panels.len() - 1;
        for (index, panel) in panels.iter().enumerate() {
            let is_main = index == last;
            let height = if is_main {
                size.1.saturating_sub(top)
            } else {
                ABOVE_PANEL
            };
            let area = root.clone().shrink((0, top), (size.0, height));
            top += height;
            let ys: Vec<f64> = panel
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p[1]))
                .collect();
            let y_ticks = ticks_for(panel.y, &ys, if is_main { 5 } else { 3 }, true);
            let mut builder = ChartBuilder::on(&area);
            builder
                .margin_top(if index == 0 { 0 } else { PANEL_GAP })
                .margin_right(20)
                .margin_left(8)
                .margin_bottom(if is_main { 6 } else { 0 })
                .x_label_area_size(if is_main { bottom } else { 0 })
                .y_label_area_size(LEFT_AREA);
            let plot = builder.build_cartesian_2d(x_ticks.range.clone(), y_ticks.range.clone())?;
            let (px, py) = plot.plotting_area().get_pixel_range();
            let at = |x: f64, y: f64| plot.backend_coord(&(x, y));
            let column = |x: f64| at(x, y_ticks.range.start).0;

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
                let c = column(x);
                root.draw(&PathElement::new(vec![(c, py.start), (c, py.end)], GRID))?;
                if is_main {
                    root.draw(&PathElement::new(vec![(c, py.end), (c, py.end + 5)], FRAME))?;
                    root.draw(&Text::new(
                        label(value, step_of(&x_ticks.values), None, x_ticks.integer),
                        (c, py.end + 8),
                        text(12.0, &LABEL).pos(Pos::new(HPos::Center, VPos::Top)),
                    ))?;
                }
            }
            root.draw(&PathElement::new(
                vec![(px.start, py.start), (px.start, py.end), (px.end, py.end)],
                FRAME,
            ))?;
            root.draw(&Text::new(
                drawn(&panel.y.label),
                (14, (py.start + py.end) / 2),
                text(13.0, &INK)
                    .transform(FontTransform::Rotate270)
                    .pos(Pos::new(HPos::Center, VPos::Center)),
            ))?;

            // The marks across the panel, labelled above the top one.
            if let Some(marks) = &chart.marks {
                let mut free_from = i32::MIN;
                for mark in &marks.at {
                    let Some(x) = x_ticks.mapping.to_axis(mark.x) else {
                        continue;
                    };
                    if !(x_ticks.range.start..=x_ticks.range.end).contains(&x) {
                        continue;
                    }
                    let c = column(x);
                    root.draw(&DashedPathElement::new(
                        vec![(c, py.start), (c, py.end)],
                        4,
                        3,
                        MARK.stroke_width(1),
                    ))?;
                    if index == 0 && !mark.label.is_empty() {
                        let style = text(11.0, &MARK);
                        let (w, _) = root.estimate_text_size(&mark.label, &style)?;
                        let left = c - w as i32 / 2;
                        if left >= free_from && c + (w as i32) / 2 <= px.end + 16 {
                            root.draw(&Text::new(
                                drawn(&mark.label),
                                (c, py.start - 4),
                                style.pos(Pos::new(HPos::Center, VPos::Bottom)),
                            ))?;
                            free_from = c + w as i32 / 2 + 6;
                        }
                    }
                }
            }

            if is_main {
                // Axis titles: x centred below, or, with further scales,
                // every scale's title left of its row.
                if chart.x_scales.is_empty() {
                    root.draw(&Text::new(
                        drawn(&chart.x.label),
                        ((px.start + px.end) / 2, py.end + 28),
                        text(13.0, &INK).pos(Pos::new(HPos::Center, VPos::Top)),
                    ))?;
                } else {
                    root.draw(&Text::new(
                        drawn(&chart.x.label),
                        (px.start - 8, py.end + 8),
                        text(12.0, &INK).pos(Pos::new(HPos::Right, VPos::Top)),
                    ))?;
                    for (row, scale) in chart.x_scales.iter().enumerate() {
                        let top = py.end + 8 + SCALE_ROW as i32 * (row as i32 + 1) - 4;
                        draw_scale(&root, scale, &x_ticks, &px, top, &column)?;
                    }
                }
            }

            // The series, clipped to the panel, and their hover targets.
            let area = plot.plotting_area();
            for series in panel.series {
                draw_series(area, series, x_ticks.mapping, y_ticks.mapping)?;
                if series.style == Style::Reference {
                    continue;
                }
                let points: Vec<([f64; 2], (f64, f64))> = series
                    .points
                    .iter()
                    .filter_map(|p| {
                        let x = x_ticks.mapping.to_axis(p[0])?;
                        let y = y_ticks.mapping.to_axis(p[1])?;
                        Some((*p, (x, y)))
                    })
                    .collect();
                let step = points.len().div_ceil(HOVER_TARGETS).max(1);
                let name = if series.name.is_empty() {
                    panel.y.label.as_str()
                } else {
                    series.name.as_str()
                };
                for (i, (p, (x, y))) in points.iter().enumerate() {
                    if i % step != 0 && i + 1 != points.len() {
                        continue;
                    }
                    let (px_at, py_at) = at(*x, *y);
                    if !(px.start..=px.end).contains(&px_at)
                        || !(py.start..=py.end).contains(&py_at)
                    {
                        continue;
                    }
                    hover.push((
                        px_at,
                        py_at,
                        format!(
                            "{name} at {} {}: {}",
                            hover_number(p[0]),
                            chart.x.label,
                            hover_number(p[1])
                        ),
                    ));
                }
            }
        }
        root.present()?;
    }
    if !hover.is_empty()
        && let Some(end) = svg.rfind("</svg>")
    {
        let mut targets = String::from("<g class=\"hover\" fill=\"#000\" fill-opacity=\"0\">");
        for (x, y, title) in &hover {
            targets.push_str(&format!(
                "<circle cx=\"{x}\" cy=\"{y}\" r=\"7\"><title>{}</title></circle>",
                // As plotters writes text: the five XML references.
                escape::html(&drawn(title)).replace("&#39;", "&apos;")
            ));
        }
        targets.push_str("</g>\n");
        svg.insert_str(end, &targets);
    }
    Ok(svg)
}

/// A value in a hover title: four significant figures, grouped when whole.
fn hover_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        super::setting(value)
    } else if value != 0.0 && (value.abs() < 1e-3 || value.abs() >= 1e6) {
        format!("{value:.3e}")
    } else {
        format!("{value:.4}")
    }
}

fn draw_series<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    area: &DrawingArea<DB, CT>,
    series: &Series,
    xm: Mapping,
    ym: Mapping,
) -> Result<(), Failure>
where
    DB::ErrorType: 'static,
{
    let color = tone_color(series.tone);
    let points = mapped(series, xm, ym);
    match series.style {
        Style::Line => match run_dashes(series.tone) {
            Some((dash, gap)) => {
                area.draw(&DashedPathElement::new(
                    points,
                    dash,
                    gap,
                    color.stroke_width(2),
                ))?;
            }
            None => area.draw(&PathElement::new(points, color.stroke_width(2)))?,
        },
        Style::Faint => {
            area.draw(&PathElement::new(points, color.mix(0.3).stroke_width(1)))?;
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
    Ok(())
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
        drawn(&scale.label),
        (px.start - 8, top + 4),
        text(12.0, &INK).pos(Pos::new(HPos::Right, VPos::Top)),
    ))?;
    let step = step_of(&ticks.values);
    // A scale that bends (a batch ramp-up) can bring two ticks close: the
    // tick stays, its label only where it does not run into the previous one.
    let style = text(12.0, &LABEL);
    let mut free_from = i32::MIN;
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
        let (w, _) = root.estimate_text_size(&shown, &style)?;
        let half = w as i32 / 2;
        if c - half < free_from {
            continue;
        }
        free_from = c + half + 8;
        root.draw(&Text::new(
            shown,
            (c, top + 6),
            style.pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
    }
    Ok(())
}

/// The title on the left of the top row and the legend on its right, or
/// on a row of its own when both do not fit. Returns the height they take.
fn heading(root: &Area<'_>, chart: &Chart, width: u32) -> Result<u32, Failure> {
    let title_style = font(15.0).style(FontStyle::Bold).color(&INK);
    root.draw(&Text::new(
        drawn(&chart.title),
        (12, ROW / 2 + 4),
        title_style.pos(Pos::new(HPos::Left, VPos::Center)),
    ))?;
    let style = text(12.0, &LABEL);
    // Every panel's named series, top first, then the marks.
    let mut entries: Vec<(&str, Style, Tone, RGBColor)> = chart
        .above
        .iter()
        .flat_map(|p| p.series.iter())
        .chain(chart.series.iter())
        .filter(|s| !s.name.is_empty())
        .map(|s| (s.name.as_str(), s.style, s.tone, tone_color(s.tone)))
        .collect();
    if let Some(marks) = chart.marks.as_ref().filter(|m| !m.at.is_empty()) {
        entries.push((marks.name.as_str(), Style::Reference, Tone::Muted, MARK));
    }
    let mut widths = Vec::with_capacity(entries.len());
    for (name, _, _, _) in &entries {
        widths.push(root.estimate_text_size(name, &style)?.0 as i32);
    }
    // Each entry: a 20-pixel swatch, a gap of 6, the name, a gap of 18.
    let legend: i32 = widths.iter().map(|w| w + 44).sum();
    let (title, _) = root.estimate_text_size(&chart.title, &title_style)?;
    let right = width as i32 - 20;
    let beside = 12 + title as i32 + 24 + legend <= right;
    // Where each entry's swatch starts, and on which row: beside the title,
    // right-aligned, when all fit there; else in rows below it, left to
    // right, a new row when the next entry would cross the right edge, so
    // that no two entries overlap whatever their number.
    let mut placed: Vec<(i32, i32)> = Vec::with_capacity(entries.len());
    let rows = if beside {
        let mut end = right;
        for w in widths.iter().rev() {
            let swatch = end - w - 26;
            placed.push((swatch, ROW / 2 + 4));
            end = swatch - 18;
        }
        placed.reverse();
        0
    } else {
        let mut row = 1;
        let mut x = 12;
        for w in &widths {
            if x > 12 && x + 26 + w > right {
                row += 1;
                x = 12;
            }
            placed.push((x, ROW * row + ROW / 2 + 4));
            x += w + 44;
        }
        row
    };
    for ((name, style_of, tone, color), (swatch, baseline)) in entries.iter().zip(&placed) {
        let (swatch, baseline) = (*swatch, *baseline);
        root.draw(&Text::new(
            drawn(name),
            (swatch + 26, baseline),
            style.pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
        let color = *color;
        let line = vec![(swatch, baseline), (swatch + 20, baseline)];
        match style_of {
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
            Style::Faint => {
                root.draw(&PathElement::new(line, color.mix(0.3).stroke_width(1)))?;
            }
            Style::Line | Style::Step => match run_dashes(*tone) {
                Some((dash, gap)) => {
                    root.draw(&DashedPathElement::new(
                        line,
                        dash,
                        gap,
                        color.stroke_width(2),
                    ))?;
                }
                None => root.draw(&PathElement::new(line, color.stroke_width(2)))?,
            },
        }
    }
    Ok(if rows == 0 {
        ROW as u32 + 16
    } else {
        (rows as u32 + 1) * ROW as u32 + 14
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
            above: vec![],
            marks: None,
        }
    }

    /// Whether `svg` is markup of plotters' own tags and references only:
    /// every `<` opens one of its elements, every `&` one of the five
    /// references, and no hidden character is left but its line breaks.
    fn only_own_markup(svg: &str) -> bool {
        let tags = [
            "<svg",
            "</svg",
            "<text",
            "</text",
            "<rect",
            "<line",
            "<polyline",
            "<circle",
            "<path",
            "<polygon",
            "<g",
            "</g",
            "<title",
            "</title",
            "</circle",
            "<?xml",
        ];
        let references = ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"];
        svg.match_indices('<')
            .all(|(i, _)| tags.iter().any(|t| svg[i..].starts_with(t)))
            && svg
                .match_indices('&')
                .all(|(i, _)| references.iter().any(|r| svg[i..].starts_with(r)))
            && !svg
                .chars()
                .any(|c| crate::escape::is_hidden(c) && c != '\n')
            && svg.matches("<text").count() == svg.matches("</text>").count()
    }

    #[test]
    fn hostile_names_stay_text_of_the_drawing() {
        use crate::sheet::chart::{Mark, Marks};
        for s in crate::escape::hostile::hostile_strings() {
            let mut drawn = chart(
                vec![Series::new(
                    s.clone(),
                    Style::Line,
                    Tone::Primary,
                    (1..=3).map(|i| (f64::from(i), f64::from(i))),
                )],
                Axis::linear(&s),
            );
            drawn.title.clone_from(&s);
            drawn.x = Axis::count(&s);
            drawn.marks = Some(Marks {
                name: s.clone(),
                at: vec![Mark {
                    x: 2.0,
                    label: s.clone(),
                }],
            });
            let svg = render(&drawn);
            assert!(only_own_markup(&svg), "{s:?}: {svg}");
            let failed = message(&s, &s, 640).expect("draws");
            assert!(only_own_markup(&failed), "{s:?}: {failed}");
        }
    }

    #[test]
    fn compared_runs_stay_apart_in_grey() {
        // Rec. 709 luma of each run's colour: printed in grey, any two runs
        // differ by at least a sixth of the range.
        let luma = |c: RGBColor| {
            0.2126 * f64::from(c.0) + 0.7152 * f64::from(c.1) + 0.0722 * f64::from(c.2)
        };
        for (i, a) in RUNS.iter().enumerate() {
            for b in &RUNS[i + 1..] {
                let (la, lb) = (luma(*a), luma(*b));
                assert!(
                    (la - lb).abs() > 255.0 / 6.0,
                    "{a:?} {la:.0} and {b:?} {lb:.0}"
                );
            }
        }
        // And from the second run on, dashed: two runs differ in the line too.
        assert_eq!(run_dashes(Tone::Run(0)), None);
        assert!(run_dashes(Tone::Run(1)).is_some());
        assert_ne!(run_dashes(Tone::Run(1)), run_dashes(Tone::Run(2)));
        let chart = chart(
            vec![
                Series::new("a", Style::Line, Tone::Run(0), [(0.0, 1.0), (1.0, 2.0)]),
                Series::new("b", Style::Line, Tone::Run(1), [(0.0, 2.0), (1.0, 1.0)]),
            ],
            Axis::linear("loss"),
        );
        let svg = render(&chart);
        assert!(svg.contains("stroke=\"#1E3A8A\""), "{svg}");
        assert!(svg.contains("stroke=\"#EA580C\""), "{svg}");
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
            12 + 1 + 12,
            "every point, the legend's, and a hover target at each point"
        );
        assert_eq!(svg.matches("<title>").count(), 12, "{svg}");
        assert!(
            svg.contains("<title>loss &lt;i&gt; at 12 updates: 0.2500</title>"),
            "{svg}"
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

    /// The batch above the learning rate, with two stage starts: both
    /// panels, their axis titles, the marks' labels and the legend entry.
    #[test]
    fn panels_above_and_marks_across() {
        use crate::sheet::chart::{Mark, Marks, Panel};
        let mut c = chart(
            vec![Series::new(
                "learning rate",
                Style::Line,
                Tone::Primary,
                [(0.0, 0.0), (30.0, 3e-3), (200.0, 0.0)],
            )],
            Axis {
                from_zero: true,
                ..Axis::linear("learning rate")
            },
        );
        c.above = vec![Panel {
            y: Axis::count("batch B"),
            series: vec![Series::new(
                "batch B",
                Style::Step,
                Tone::Secondary,
                [(0.0, 16.0), (20.0, 32.0), (60.0, 64.0), (200.0, 64.0)],
            )],
        }];
        c.marks = Some(Marks {
            name: "stage start".into(),
            at: vec![
                Mark {
                    x: 20.0,
                    label: "B 32".into(),
                },
                Mark {
                    x: 60.0,
                    label: "B 64".into(),
                },
            ],
        });
        let svg = render(&c);
        let height = drawing_height(&c, NORMAL.0, NORMAL.1);
        assert_eq!(height, NORMAL.1 + ABOVE_PANEL + MARK_ROW);
        assert!(svg.contains(&format!("height=\"{height}\"")), "{svg}");
        for text in ["batch B", "learning rate", "B 32", "B 64", "stage start"] {
            assert!(svg.contains(&format!(">\n{text}\n<")), "{text} in {svg}");
        }
        // Each mark is a dashed vertical line in its own colour, down
        // through both panels.
        let mut columns: std::collections::BTreeMap<i32, (i32, i32)> = Default::default();
        for line in svg.lines().filter(|l| l.contains("stroke=\"#7C3AED\"")) {
            let points = line.split("points=\"").nth(1).expect("points");
            let xy: Vec<i32> = points
                .split([',', ' ', '"'])
                .filter_map(|v| v.parse().ok())
                .collect();
            if let [x1, y1, x2, y2] = xy[..]
                && x1 == x2
            {
                let range = columns.entry(x1).or_insert((y1, y2));
                *range = (range.0.min(y1), range.1.max(y2));
            }
        }
        assert_eq!(columns.len(), 2, "{columns:?}");
        for (top, bottom) in columns.values() {
            assert!(bottom - top > ABOVE_PANEL as i32 + 100, "{top}..{bottom}");
        }
    }

    /// A scale that bends keeps its ticks but drops labels that would run
    /// into the previous one.
    #[test]
    fn crowded_scale_labels_are_left_out() {
        let mut c = chart(
            vec![Series::new(
                "learning rate",
                Style::Line,
                Tone::Primary,
                [(0.0, 1.0), (400_000.0, 1.0)],
            )],
            Axis::linear("learning rate"),
        );
        // 200 updates in the first 1% of the axis, 100 in the rest.
        c.x_scales = vec![Scale {
            label: "updates".into(),
            knots: vec![[0.0, 0.0], [4_000.0, 200.0], [400_000.0, 300.0]],
            approximate: false,
        }];
        let svg = render(&c);
        let labels = |t: &str| svg.contains(&format!(">\n{t}\n<"));
        assert!(labels("0") && labels("300"), "{svg}");
        assert!(!labels("100"), "100 sits on 0: {svg}");
    }
}
