//! `accum compare RUN.json RUN.json…`: two or more runs side by side, from
//! their reports alone (no configuration needed): their plans in one table
//! and their loss, learning rate and gradient norm overlaid against
//! examples or tokens. Building the comparison is `crate::sheet::compare`'s.

use std::path::Path;

use accum_core::settings::LogAxis;

use crate::cli::{CompareArgs, CompareAxis};
use crate::commands::sheet::read_report;
use crate::error::{CliError, Exit};
use crate::sheet::compare::{Compared, compare};

/// The runs' labels: each report's run name (its provenance), else its
/// file stem. Runs that share a name are labelled by their file stems
/// instead, or by their paths where the stems are shared too; a report
/// given twice takes its position after its label.
fn names(paths: &[&Path], run_names: &[Option<&str>]) -> Vec<String> {
    let stem = |p: &Path| {
        p.file_stem().map_or_else(
            || p.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        )
    };
    let shared =
        |labels: &[String], label: &String| labels.iter().filter(|l| *l == label).count() > 1;
    let stems: Vec<String> = paths.iter().map(|p| stem(p)).collect();
    let files: Vec<String> = paths
        .iter()
        .zip(&stems)
        .map(|(path, s)| {
            if shared(&stems, s) {
                path.display().to_string()
            } else {
                s.clone()
            }
        })
        .collect();
    let first: Vec<String> = run_names
        .iter()
        .zip(&files)
        .map(|(name, file)| name.map_or_else(|| file.clone(), str::to_owned))
        .collect();
    let second: Vec<String> = first
        .iter()
        .zip(&files)
        .map(|(label, file)| {
            if shared(&first, label) {
                file.clone()
            } else {
                label.clone()
            }
        })
        .collect();
    second
        .iter()
        .enumerate()
        .map(|(n, label)| {
            if shared(&second, label) {
                format!("{label} #{}", n + 1)
            } else {
                label.clone()
            }
        })
        .collect()
}

/// The one smoothing window of a comparison, on its axis: a hundredth of
/// the longest run's length on the axis, rounded to 1, 2 or 5 times a power
/// of ten, so that every run's bold line averages the same stretch of data.
fn common_window(reports: &[accum_core::report::RunReport], axis: LogAxis) -> f64 {
    let longest = reports
        .iter()
        .map(|r| match axis {
            LogAxis::Updates => r.counters.applied_updates.get(),
            LogAxis::Examples => r.counters.examples.get(),
            LogAxis::Tokens => r.counters.supervised_tokens.get(),
        })
        .max()
        .unwrap_or(0) as f64;
    let raw = (longest / 100.0).max(1.0);
    let decade = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|m| m * decade >= raw)
        .unwrap_or(10.0);
    step * decade
}

pub(crate) fn run(args: &CompareArgs) -> Result<Exit, CliError> {
    // The output's name says the format (`crate::outfile`), checked before the work.
    crate::sheet::output::format_for(args.output.as_deref(), args.format, "compare")?;
    let reports = args
        .reports
        .iter()
        .map(|path| read_report(path))
        .collect::<Result<Vec<_>, _>>()?;
    let axis = match args.axis {
        CompareAxis::Tokens => LogAxis::Tokens,
        CompareAxis::Examples => LogAxis::Examples,
        CompareAxis::Updates => LogAxis::Updates,
    };
    let window = common_window(&reports, axis);
    let paths: Vec<&Path> = args.reports.iter().map(|p| p.as_path()).collect();
    let run_names: Vec<Option<&str>> = reports
        .iter()
        .map(|r| r.provenance.as_ref().and_then(|p| p.run_name.as_deref()))
        .collect();
    let runs: Vec<Compared<'_>> = names(&paths, &run_names)
        .into_iter()
        .zip(&args.reports)
        .zip(&reports)
        .map(|((name, path), report)| Compared {
            name,
            source: path.display().to_string(),
            report,
            series: crate::sheet::series::read_with(report, path, axis, Some(window)),
        })
        .collect();
    let view = crate::sheet::chart::View::new(args.log_y, args.range.as_deref())
        .map_err(CliError::usage)?;
    let mut comparison = compare(&runs, axis).map_err(CliError::invalid)?;
    for chart in &mut comparison.charts {
        view.apply(chart);
    }
    crate::sheet::output::write(&comparison, args.format, args.output.as_deref(), "compare")?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_window_is_chosen_from_the_axis() {
        let mut short = crate::sheet::tests::report();
        short.counters.supervised_tokens = accum_core::Tokens::new(761_000);
        let mut long = short.clone();
        long.counters.supervised_tokens = accum_core::Tokens::new(3_100_000);
        assert_eq!(
            common_window(&[short.clone(), long], LogAxis::Tokens),
            50_000.0
        );
        assert_eq!(common_window(&[short], LogAxis::Tokens), 10_000.0);
        assert_eq!(common_window(&[], LogAxis::Updates), 1.0);
    }

    #[test]
    fn runs_are_named_by_their_run_names_else_their_files() {
        let paths = [Path::new("a/flat.json"), Path::new("b/ramp.json")];
        assert_eq!(names(&paths, &[None, None]), ["flat", "ramp"]);
        let same = [Path::new("a/run.json"), Path::new("b/run.json")];
        assert_eq!(names(&same, &[None, None]), ["a/run.json", "b/run.json"]);
        assert_eq!(
            names(&same, &[Some("m8 A4"), Some("m4 A8")]),
            ["m8 A4", "m4 A8"]
        );
        assert_eq!(
            names(&paths, &[Some("base"), Some("base")]),
            ["flat", "ramp"]
        );
        assert_eq!(
            names(&same, &[Some("base"), Some("base")]),
            ["a/run.json", "b/run.json"]
        );
        assert_eq!(
            names(&[same[0], same[0]], &[Some("base"), Some("base")]),
            ["a/run.json #1", "a/run.json #2"]
        );
    }
}
