//! The sheet as one self-contained HTML file: inline CSS and SVG, no
//! script, no external resources, every value escaped. Laid out for
//! reading: a summary band, then preparation and trial with their plots and
//! tables side by side on a wide screen and stacked on a narrow one.

use std::fmt::Write as _;

use super::chart::Chart;
use super::{Sheet, Table, plot};
use crate::escape;

pub(crate) const STYLE: &str = "\
:root{--ink:#111827;--soft:#374151;--muted:#6b7280;--line:#e5e7eb;--bg:#f5f6f8;--accent:#2563eb;--alert:#b91c1c}\
*{box-sizing:border-box}\
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}\
main{max-width:1280px;margin:0 auto;padding:28px 28px 40px}\
.kicker{margin:0;color:var(--accent);font-weight:600;text-transform:uppercase;letter-spacing:.08em;font-size:12px}\
h1{margin:2px 0 4px;font-size:28px;line-height:1.2;overflow-wrap:anywhere}\
.notes{margin:4px 0;color:var(--soft);max-width:62rem}\
.meta{margin:6px 0 0;color:var(--muted);font-size:13px}\
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eceef2;padding:1px 5px;border-radius:4px;overflow-wrap:anywhere}\
.summary{display:grid;grid-template-columns:repeat(auto-fit,minmax(190px,1fr));gap:12px;margin:22px 0 6px}\
.card{background:#fff;border:1px solid var(--line);border-radius:10px;padding:12px 16px;border-top:3px solid var(--accent)}\
.card .label{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.05em}\
.card .value{font-size:25px;font-weight:650;font-variant-numeric:tabular-nums;line-height:1.25;margin:4px 0 2px}\
.card .detail{font-size:12.5px;color:var(--soft)}\
.card.alert{border-top-color:var(--alert);background:#fef2f2}.card.alert .value{color:var(--alert)}\
h2{font-size:20px;margin:32px 0 12px;padding-bottom:6px;border-bottom:2px solid var(--line);display:flex;gap:12px;align-items:baseline;flex-wrap:wrap}\
h2 small{font-size:14px;font-weight:400;color:var(--muted)}\
.grid{display:grid;gap:16px;grid-template-columns:repeat(auto-fit,minmax(min(100%,540px),1fr));align-items:start;margin-bottom:16px}\
.panel{background:#fff;border:1px solid var(--line);border-radius:10px;padding:14px 16px;min-width:0}\
.panel h3{margin:0 0 6px;font-size:15px}\
.columns{columns:2 520px;column-gap:16px;margin-bottom:16px}.columns>.panel{break-inside:avoid;margin-bottom:16px}.columns>figure.panel{display:block}\
.featured{margin-bottom:16px}.featured .narrow{display:none}\
@media (max-width:900px){.featured .wide{display:none}.featured .narrow{display:block}}\
figure{margin:0}figure svg{display:block;width:100%;height:auto}figure .phone{display:none}\
@media (max-width:700px){figure .normal{display:none}figure .phone{display:block}.featured .narrow{display:none}}\
figcaption{font-size:13px;color:var(--soft);margin-top:4px}\
table{border-collapse:collapse;width:100%;font-size:13.5px}\
th,td{text-align:left;vertical-align:top;padding:5px 8px 5px 0;border-top:1px solid var(--line)}\
tr:first-child>*{border-top:none}\
th{font-weight:500;color:var(--soft);width:30%}\
td.v{font-variant-numeric:tabular-nums;font-weight:600;white-space:nowrap;padding-right:12px}td.long{white-space:normal;min-width:12em}\
td.n{color:var(--muted);font-size:13px}\
.plans{grid-column:1/-1}.plans table{table-layout:fixed}.plans th{width:11em}.plans td.v.long{min-width:0;overflow-wrap:anywhere}.plans th[scope=col]{width:auto;overflow-wrap:anywhere}\
@media (max-width:700px){.plans th{width:7em}.plans table{font-size:12.5px}}\
.warnings{background:#fffbeb;border:1px solid #fcd34d;border-radius:10px;padding:10px 16px;margin:0 0 16px}\
.warnings h3{margin:0;font-size:14px;color:#92400e}.warnings ul{margin:4px 0 0;padding-left:20px}\
.empty{color:var(--muted)}\
.mismatch{background:#fef2f2;border:1px solid #fca5a5;border-radius:10px;padding:10px 16px;margin:10px 0;color:var(--alert)}.mismatch ul{margin:4px 0 0;padding-left:20px}.changed{background:#fffbeb;border:1px solid #fcd34d;border-radius:10px;padding:8px 16px;margin:10px 0;font-size:13.5px;overflow-wrap:anywhere}\
.stages{margin-bottom:16px}.stages .lead{margin:0 0 8px;color:var(--soft);font-size:13.5px;max-width:70rem}\
.stages .scroll{overflow-x:auto}.stages table{min-width:720px}\
.stages th{width:auto;font-size:12.5px;color:var(--muted);vertical-align:bottom;border-bottom:2px solid var(--line);white-space:nowrap;padding-right:14px}.stages th.group{text-align:center;border-bottom:1px solid var(--line)}.stages thead tr:first-child>*{border-top:none}\
.stages td{font-variant-numeric:tabular-nums;white-space:nowrap;padding-right:14px}.stages .num{text-align:right}\
.stages tbody tr:first-child>*{border-top:none}.stages thead tr+tr>th{border-top:none}.stages tr.gap td{color:var(--muted);text-align:center}.stages tr.unreached td{color:var(--muted)}\
.stages .note{margin:8px 0 0;color:var(--alert);font-size:13.5px}.stages .remark{margin:8px 0 0;color:var(--soft);font-size:13.5px}\
footer{margin-top:36px;color:var(--muted);font-size:12px}\
@media (max-width:700px){main{padding:16px 12px}.card .value{font-size:21px}td.v{white-space:normal}th{width:auto}}\
@media print{body{background:#fff}.panel,.card,figure{break-inside:avoid}h2,h3{break-after:avoid}figure .phone{display:none}}";

/// Renders the sheet.
pub(crate) fn render(sheet: &Sheet) -> String {
    let mut out = String::new();
    let title = format!("Run sheet: {}", sheet.name);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n<header>\n\
         <p class=\"kicker\">Run sheet</p>\n<h1>{}</h1>\n",
        escape::html(&title),
        escape::html(&sheet.name)
    );
    if let Some(notes) = &sheet.notes {
        let _ = writeln!(out, "<p class=\"notes\">{}</p>", escape::html_prose(notes));
    }
    if !sheet.mismatch.is_empty() {
        out.push_str("<div class=\"mismatch\" role=\"alert\"><strong>The run report does not belong to this configuration</strong> (rendered with <code>--force</code>): the preparation and the trial describe different runs.<ul>");
        for said in &sheet.mismatch {
            let _ = write!(out, "<li>{}</li>", escape::html_prose(said));
        }
        out.push_str("</ul></div>\n");
    }
    if let Some(changed) = &sheet.config_changed {
        let _ = writeln!(
            out,
            "<p class=\"changed\">The configuration file changed since the run; its plan and length did not: {}.</p>",
            escape::html_prose(changed)
        );
    }
    let _ = write!(
        out,
        "<p class=\"meta\">Configuration <code>{}</code>",
        escape::html(&sheet.config)
    );
    if let Some(trial) = &sheet.trial {
        let _ = write!(
            out,
            " · run report <code>{}</code>",
            escape::html(&trial.source)
        );
    }
    out.push_str("</p>\n");
    if let Some(facts) = sheet
        .provenance
        .as_ref()
        .map(super::provenance_facts)
        .filter(|f| !f.is_empty())
    {
        let _ = writeln!(
            out,
            "<p class=\"meta\">{}</p>",
            escape::html_prose(&facts.join(" · "))
        );
    }
    out.push_str("</header>\n");

    out.push_str("<section class=\"summary\" aria-label=\"Summary\">\n");
    for card in &sheet.summary.cards {
        let _ = writeln!(
            out,
            "<div class=\"card{}\"><div class=\"label\">{}</div><div class=\"value\">{}</div><div class=\"detail\">{}</div></div>",
            if card.alert { " alert" } else { "" },
            escape::html(&card.label),
            escape::html(&card.value),
            escape::html_prose(&card.detail)
        );
    }
    out.push_str("</section>\n");

    let prep = &sheet.preparation;
    out.push_str(
        "<section id=\"preparation\">\n<h2>Preparation <small>what the configuration says, before any run</small></h2>\n",
    );
    // The schedule beside the plan; the other tables below, two abreast.
    // Without a plot, every table goes into the columns. With a ramp-up,
    // its two plots side by side, then its stages across the page.
    let rest = match prep.tables.split_first() {
        _ if prep.stages.is_some() => {
            if !prep.charts.is_empty() {
                out.push_str("<div class=\"grid\">\n");
                for chart in &prep.charts {
                    figure(&mut out, chart);
                }
                out.push_str("</div>\n");
            }
            if let Some(stages) = &prep.stages {
                stages.grid().html(&mut out);
            }
            &prep.tables[..]
        }
        Some((first, rest)) if !prep.charts.is_empty() => {
            out.push_str("<div class=\"grid\">\n");
            for chart in &prep.charts {
                figure(&mut out, chart);
            }
            panel(&mut out, first);
            out.push_str("</div>\n");
            rest
        }
        _ => &prep.tables[..],
    };
    columns(&mut out, &[], rest);
    out.push_str("</section>\n");

    out.push_str("<section id=\"trial\">\n");
    match &sheet.trial {
        None => {
            out.push_str(
                "<h2>Trial</h2>\n<p class=\"empty\">No run report given (<code>accum sheet FILE --report RUN.json</code>).</p>\n",
            );
        }
        Some(trial) => {
            let _ = writeln!(
                out,
                "<h2>Trial <small>observed in <code>{}</code></small></h2>",
                escape::html(&trial.source)
            );
            if !trial.warnings.is_empty() {
                out.push_str("<div class=\"warnings\" role=\"note\"><h3>Warnings</h3>\n<ul>\n");
                for warning in &trial.warnings {
                    let _ = writeln!(out, "<li>{}</li>", escape::html_prose(warning));
                }
                out.push_str("</ul></div>\n");
            }
            if let Some(stages) = &trial.stages {
                stages.grid().html(&mut out);
            }
            // The loss across the page, then the other plots and the
            // tables two abreast.
            let (featured, others) = trial
                .charts
                .split_first()
                .map_or((None, &[][..]), |(f, r)| (Some(f), r));
            if let Some(chart) = featured {
                wide_figure(&mut out, chart);
            }
            // Pairs of plots side by side; an odd one goes with the tables.
            if others.len() % 2 == 0 {
                if !others.is_empty() {
                    out.push_str("<div class=\"grid\">\n");
                    for chart in others {
                        figure(&mut out, chart);
                    }
                    out.push_str("</div>\n");
                }
                columns(&mut out, &[], &trial.tables);
            } else {
                columns(&mut out, others, &trial.tables);
            }
        }
    }
    out.push_str("</section>\n<section id=\"accepted\">\n<h2>Accepted results</h2>\n");
    match &sheet.accepted {
        Some(text) => {
            let _ = writeln!(out, "<p>{}</p>", escape::html_prose(text));
        }
        None => out.push_str(
            "<p class=\"empty\">None yet: a trial is not an accepted result until someone reviews it.</p>\n",
        ),
    }
    let _ = write!(
        out,
        "</section>\n<footer>{}</footer>\n</main>\n</body>\n</html>\n",
        escape::html(sheet.format)
    );
    out
}

/// A plot in a column: the column's drawing, and on a phone the drawing
/// made for its width (text stays at its size rather than shrinking).
pub(crate) fn figure(out: &mut String, chart: &Chart) {
    let _ = writeln!(
        out,
        "<figure class=\"panel\" id=\"{}\">\n<div class=\"normal\">{}</div>\n<div class=\"phone\">{}</div>\n<figcaption>{}</figcaption>\n</figure>",
        escape::html(&chart.id),
        plot::render(chart),
        plot::render_narrow(chart),
        escape::html_prose(&chart.caption)
    );
}

/// Plots and tables in two balanced columns (one on a narrow screen).
fn columns(out: &mut String, charts: &[Chart], tables: &[Table]) {
    if charts.is_empty() && tables.is_empty() {
        return;
    }
    out.push_str("<div class=\"columns\">\n");
    for chart in charts {
        figure(out, chart);
    }
    for table in tables {
        panel(out, table);
    }
    out.push_str("</div>\n");
}

/// A plot across the page: the wide drawing on a wide screen, the column
/// drawing on a narrower one and the phone's on a phone (so that its text
/// stays legible).
fn wide_figure(out: &mut String, chart: &Chart) {
    let _ = writeln!(
        out,
        "<figure class=\"panel featured\" id=\"{}\">\n<div class=\"wide\">{}</div>\n<div class=\"narrow normal\">{}</div>\n<div class=\"phone\">{}</div>\n<figcaption>{}</figcaption>\n</figure>",
        escape::html(&chart.id),
        plot::render_wide(chart),
        plot::render(chart),
        plot::render_narrow(chart),
        escape::html_prose(&chart.caption)
    );
}

fn panel(out: &mut String, table: &Table) {
    let _ = writeln!(
        out,
        "<div class=\"panel\">\n<h3>{}</h3>\n<table>",
        escape::html(&table.title)
    );
    for row in &table.rows {
        let _ = writeln!(
            out,
            "<tr><th scope=\"row\">{}</th><td class=\"{}\">{}</td><td class=\"n\">{}</td></tr>",
            escape::html(&row.label),
            // Short values stay on one line; long ones wrap like text.
            if row.value.chars().count() <= 24 {
                "v"
            } else {
                "v long"
            },
            escape::html_prose(&row.value),
            escape::html_prose(&row.note)
        );
    }
    out.push_str("</table>\n</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sheet::tests::fp16_sheet;

    #[test]
    fn self_contained_escaped_and_in_reading_order() {
        let (sheet, _) = fp16_sheet();
        let html = render(&sheet);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("Content-Security-Policy"));
        assert!(!html.contains("<script"), "no script element");
        assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
        assert!(html.contains("<h1>fp16 &lt;b&gt;tiny&lt;/b&gt; &amp; skipped</h1>"));
        assert!(html.contains("the first attempts overflow | the scale backs off"));
        // Code in the prose is code, not backticks (the model's note names
        // `accum run`).
        assert!(html.contains("<code>accum run</code>"), "{html}");
        assert!(!html.contains('`'), "no literal backtick");
        // The schedule; the loss wide, in a column and on a phone; the
        // learning rate used; gradient norm; loss scale: each in a column
        // and on a phone.
        assert_eq!(html.matches("<svg ").count(), 11);
        assert_eq!(html.matches("class=\"card").count(), 6);
        assert_eq!(html.matches("class=\"card alert\"").count(), 1);
        let order: Vec<usize> = [
            "class=\"summary\"",
            "id=\"preparation\"",
            "id=\"schedule\"",
            "id=\"trial\"",
            "id=\"loss\"",
            "id=\"grad-norm\"",
            "id=\"loss-scale\"",
            "id=\"accepted\"",
        ]
        .iter()
        .map(|needle| html.find(needle).unwrap_or_else(|| panic!("{needle}")))
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    }

    #[test]
    fn without_a_report_the_trial_says_how_to_get_one() {
        let (mut sheet, _) = fp16_sheet();
        sheet.trial = None;
        let html = render(&sheet);
        assert!(html.contains("No run report given"));
        assert_eq!(
            html.matches("<svg ").count(),
            2,
            "the schedule only, in a column and on a phone"
        );
    }

    #[test]
    fn a_ramp_up_puts_its_plots_abreast_and_its_stages_across() {
        let sheet = crate::sheet::tests::sheet_of(crate::sheet::tests::RAMPUP);
        let html = render(&sheet);
        assert_eq!(html.matches("<svg ").count(), 4);
        let order: Vec<usize> = [
            "id=\"schedule\"",
            "id=\"schedule-tokens\"",
            "id=\"stages\"",
            "<h3>Plan after the ramp-up</h3>",
        ]
        .iter()
        .map(|needle| html.find(needle).unwrap_or_else(|| panic!("{needle}")))
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        assert!(html.contains("<th scope=\"colgroup\" colspan=\"3\" class=\"group\">lasts</th>"));
        assert!(
            html.contains(
                "<tr><td class=\"num\">3</td><td>64 = 4 × 8 × 2</td><td class=\"num\">8</td>"
            ),
            "{html}"
        );
        assert!(html.contains("<td>the end of the run (235 updates)</td>"));
    }
}
