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

/// The runs' names: each report's file stem, or its path where two stems
/// are the same.
fn names(paths: &[&Path]) -> Vec<String> {
    let stem = |p: &Path| {
        p.file_stem().map_or_else(
            || p.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        )
    };
    let stems: Vec<String> = paths.iter().map(|p| stem(p)).collect();
    paths
        .iter()
        .zip(&stems)
        .map(|(path, s)| {
            if stems.iter().filter(|t| *t == s).count() > 1 {
                path.display().to_string()
            } else {
                s.clone()
            }
        })
        .collect()
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
    let paths: Vec<&Path> = args.reports.iter().map(|p| p.as_path()).collect();
    let runs: Vec<Compared<'_>> = names(&paths)
        .into_iter()
        .zip(&args.reports)
        .zip(&reports)
        .map(|((name, path), report)| Compared {
            name,
            source: path.display().to_string(),
            report,
            series: crate::sheet::series::read(report, path, axis),
        })
        .collect();
    let comparison = compare(&runs, axis).map_err(CliError::invalid)?;
    crate::sheet::output::write(&comparison, args.format, args.output.as_deref(), "compare")?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_named_by_their_files() {
        let paths = [Path::new("a/flat.json"), Path::new("b/ramp.json")];
        assert_eq!(names(&paths), ["flat", "ramp"]);
        let same = [Path::new("a/run.json"), Path::new("b/run.json")];
        assert_eq!(names(&same), ["a/run.json", "b/run.json"]);
    }
}
