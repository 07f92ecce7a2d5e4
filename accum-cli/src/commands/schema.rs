//! `accum schema`: the configuration's JSON Schema, with plan roles and
//! units marked for editors and other tools.

use crate::cli::SchemaArgs;
use crate::error::{CliError, Exit};
use crate::load::{CliConfig, Schema};
use crate::outfile::{FileFormat, output_format};
use crate::output::print_text;
use crate::writes::write_atomic;

pub(crate) fn run<T: CliConfig>(args: &SchemaArgs) -> Result<Exit, CliError> {
    let schema = Schema::<T>::builtin();
    let text = serde_json::to_string_pretty(&schema.value)
        .map_err(|err| CliError::usage(format!("cannot render the schema: {err}")))?;
    match &args.output {
        Some(path) => {
            output_format(path, &[FileFormat::Json], None, "schema")?;
            write_atomic(path, format!("{text}\n").as_bytes())?;
        }
        None => print_text(&format!("{text}\n"))?,
    }
    Ok(Exit::Ok)
}
