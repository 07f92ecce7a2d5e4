//! The sheet as one self-contained HTML file: inline CSS and SVG, no script,
//! no external resources, every value escaped.

use std::fmt::Write as _;

use super::{Sheet, Table, escape_html, svg};

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}\
h1{font-size:1.6rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}\
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ddd;padding:.25rem .6rem;text-align:left;vertical-align:top}\
th{background:#f4f4f4}td.v{font-variant-numeric:tabular-nums;white-space:nowrap}td.n{color:#555}\
blockquote{color:#444;border-left:3px solid #ccc;margin-left:0;padding-left:1rem}.warn{color:#8a4b00}";

/// Renders the sheet.
pub fn render(sheet: &Sheet) -> String {
    let mut out = String::new();
    let title = format!("Run sheet: {}", sheet.name);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape_html(&title),
        escape_html(&title)
    );
    if let Some(notes) = &sheet.notes {
        let _ = writeln!(out, "<blockquote>{}</blockquote>", escape_html(notes));
    }
    let _ = writeln!(
        out,
        "<p>Configuration: <code>{}</code></p>",
        escape_html(&sheet.config)
    );
    let _ = writeln!(out, "<section id=\"preparation\">\n<h2>Preparation</h2>");
    for table in &sheet.preparation {
        table_html(&mut out, table);
    }
    let _ = writeln!(out, "</section>\n<section id=\"trial\">\n<h2>Trial</h2>");
    match &sheet.trial {
        None => {
            let _ = writeln!(
                out,
                "<p>No run report given (<code>accum sheet FILE --report RUN.json</code>).</p>"
            );
        }
        Some(trial) => {
            let _ = writeln!(
                out,
                "<p>Observed in <code>{}</code>.</p>",
                escape_html(&trial.source)
            );
            for table in &trial.tables {
                table_html(&mut out, table);
            }
            let _ = writeln!(
                out,
                "<h3>Loss against {}</h3>\n<figure>{}</figure>",
                escape_html(&trial.curve.axis),
                svg::render(&trial.curve)
            );
            if !trial.warnings.is_empty() {
                let _ = writeln!(out, "<h3>Warnings</h3>\n<ul>");
                for warning in &trial.warnings {
                    let _ = writeln!(out, "<li class=\"warn\">{}</li>", escape_html(warning));
                }
                let _ = writeln!(out, "</ul>");
            }
        }
    }
    let _ = writeln!(
        out,
        "</section>\n<section id=\"accepted\">\n<h2>Accepted results</h2>"
    );
    match &sheet.accepted {
        Some(text) => {
            let _ = writeln!(out, "<p>{}</p>", escape_html(text));
        }
        None => {
            let _ = writeln!(
                out,
                "<p>None yet: a trial is not an accepted result until someone reviews it.</p>"
            );
        }
    }
    out.push_str("</section>\n</body>\n</html>\n");
    out
}

fn table_html(out: &mut String, table: &Table) {
    let _ = writeln!(
        out,
        "<h3>{}</h3>\n<table>\n<tr><th></th><th>value</th><th>note</th></tr>",
        escape_html(&table.title)
    );
    for row in &table.rows {
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td class=\"v\">{}</td><td class=\"n\">{}</td></tr>",
            escape_html(&row.label),
            escape_html(&row.value),
            escape_html(&row.note)
        );
    }
    out.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sheet::sample;

    #[test]
    fn self_contained_and_escaped() {
        let html = render(&sample());
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("tiny &lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("<svg xmlns="));
        assert!(!html.contains("src=\"http"));
        assert!(html.contains("Content-Security-Policy"));
        let prep = html.find("id=\"preparation\"").expect("preparation");
        let trial = html.find("id=\"trial\"").expect("trial");
        assert!(prep < trial);
    }
}
