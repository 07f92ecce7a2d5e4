//! `accum init [FILE]`: a starter configuration, like `cargo init`: every
//! section with a working value and a comment saying what it means, a
//! schema directive for editors (`#:schema` in TOML,
//! `yaml-language-server` in YAML, `"$schema"` in JSON) and the schema file
//! beside it. An existing file is never overwritten.
//!
//! The starter itself is [`crate::starter`].

use std::path::PathBuf;

use accum_core::config::TrainingConfig;

use crate::cli::InitArgs;
use crate::error::{CliError, Exit};
use crate::load::Schema;
use crate::output::eprintln_safe;
use crate::starter::{SCHEMA_FILE, starter_text};
use crate::writes::create_new;

/// Writes the starter to `args.file` (`accum.toml` by default) and the
/// schema beside it, never over an existing file.
pub(crate) fn run(args: &InitArgs) -> Result<Exit, CliError> {
    let path = args
        .file
        .clone()
        .unwrap_or_else(|| PathBuf::from("accum.toml"));
    let name = match &args.name {
        Some(name) => name.clone(),
        None => path
            .file_stem()
            .map_or_else(|| "run".to_owned(), |s| s.to_string_lossy().into_owned()),
    };
    let text = starter_text(&path, &name)?;
    let schema_path = path
        .parent()
        .map_or_else(|| PathBuf::from(SCHEMA_FILE), |dir| dir.join(SCHEMA_FILE));
    // The schema's name is one accum made beside the config: anything there
    // but a file (a dangling link, a folder, a FIFO) refuses the command
    // before the config is written, so that it writes both or neither.
    if !args.no_schema && std::fs::symlink_metadata(&schema_path).is_ok() && !schema_path.is_file()
    {
        return Err(CliError::usage(format!(
            "{}: is not a file, where accum writes the schema beside the config: move it away or give --no-schema",
            accum_core::shown::path(&schema_path)
        )));
    }
    let schema_text = if args.no_schema || schema_path.exists() {
        None
    } else {
        let schema = Schema::<TrainingConfig>::builtin();
        let mut text = serde_json::to_string_pretty(&schema.value)
            .map_err(|err| CliError::usage(format!("cannot render the schema: {err}")))?;
        text.push('\n');
        Some(text)
    };
    create_new(&path, text.as_bytes())?;
    if let Some(schema_text) = &schema_text
        && let Err(err) = create_new(&schema_path, schema_text.as_bytes())
    {
        // Both or neither: the config is the file just created.
        let _ = std::fs::remove_file(&path);
        return Err(err);
    }
    eprintln_safe!("created {}", accum_core::shown::path(&path));
    match schema_text {
        Some(_) => eprintln_safe!(
            "created {} (for editors; see docs/editors.md)",
            accum_core::shown::path(&schema_path)
        ),
        None if !args.no_schema => eprintln_safe!(
            "kept {}; `accum schema -o {}` brings it up to date",
            accum_core::shown::path(&schema_path),
            accum_core::shown::path(&schema_path)
        ),
        None => {}
    }
    eprintln_safe!("next: accum validate {}", accum_core::shown::path(&path));
    Ok(Exit::Ok)
}
