//! `explain CODE`: the rule behind a diagnostic code, from the project's
//! rules (`docs/rules.md`), like `rustc --explain`. Every [`Code`] has its
//! entry; a code merged into another prints the entry of the code that
//! replaced it.

use accum_core::Code;

use crate::cli::ExplainArgs;
use crate::error::{CliError, Exit};
use crate::output::bin_name;
use crate::output::print_text;
use crate::rules;

pub(crate) fn run(args: &ExplainArgs) -> Result<Exit, CliError> {
    let Some(code) = &args.code else {
        let entries: Vec<rules::Entry> = Code::ALL.iter().map(|&c| rules::entry(c)).collect();
        let width = entries.iter().map(|e| e.code.len()).max().unwrap_or(0);
        let mut out = String::new();
        for entry in entries {
            let summary = entry
                .summary
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push_str(&format!("{:width$}  {summary}\n", entry.code));
        }
        out.push_str(&format!(
            "\n`{} explain CODE` prints a code's entry.\n",
            bin_name()
        ));
        print_text(&out)?;
        return Ok(Exit::Ok);
    };
    match rules::find(code) {
        Some(entry) => {
            print_text(&format!("{}\n\n{}\n", entry.code, entry.text))?;
            Ok(Exit::Ok)
        }
        None => {
            let hint = match rules::nearest(code) {
                Some(near) => format!("did you mean `{near}`? "),
                None => String::new(),
            };
            Err(CliError::usage(format!(
                "no rule has the code `{code}`; {hint}`{} explain` lists every code",
                bin_name()
            )))
        }
    }
}
