//! `accum calc`: the effective-batch calculator (`accum::calc::tokens`). The
//! arguments are parsed by clap ([`CalcArgs`]); [`crate::calc`] computes the
//! report and renders it.

use crate::calc;
use crate::cli::{CalcArgs, Format};
use crate::error::{CliError, Exit};
use crate::output::eprintln_safe;
use crate::output::{print_json, print_text};

/// Computes the report of `args` and prints it as JSON or text.
pub(crate) fn run(args: &CalcArgs) -> Result<Exit, CliError> {
    let report = calc::compute(args)?;
    match args.format {
        Format::Json => print_json(&report)?,
        Format::Text => {
            print_text(&calc::render_text(&report))?;
            if args.params.is_some()
                && args.activation_per_example.is_none()
                && args.device_throughput.is_none()
            {
                eprintln_safe!(
                    "note: --params alone gives no estimate: the memory estimate also needs --activation-per-example SIZE (one example's activations, which grow with m while weights, gradients and optimizer state do not); the scaling estimate needs --device-throughput and --bandwidth"
                );
            }
            if let Some(note) = calc::scaling_note(args, report.has_scaling()) {
                eprintln_safe!("note: {note}");
            }
        }
    }
    Ok(Exit::Ok)
}
