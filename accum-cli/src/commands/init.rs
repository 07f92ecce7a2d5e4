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
use crate::fsio::create_new;
use crate::load::Schema;
use crate::output::eprintln_safe;
use crate::starter::{SCHEMA_FILE, starter_text};

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
    create_new(&path, text.as_bytes())?;
    eprintln_safe!("created {}", path.display());
    if !args.no_schema {
        let schema_path = path
            .parent()
            .map_or_else(|| PathBuf::from(SCHEMA_FILE), |dir| dir.join(SCHEMA_FILE));
        if schema_path.exists() {
            eprintln_safe!(
                "kept {}; `accum schema -o {}` brings it up to date",
                schema_path.display(),
                schema_path.display()
            );
        } else {
            let schema = Schema::<TrainingConfig>::builtin();
            let mut text = serde_json::to_string_pretty(&schema.value)
                .map_err(|err| CliError::usage(format!("cannot render the schema: {err}")))?;
            text.push('\n');
            create_new(&schema_path, text.as_bytes())?;
            eprintln_safe!(
                "created {} (for editors; see docs/editors.md)",
                schema_path.display()
            );
        }
    }
    eprintln_safe!("next: accum validate {}", path.display());
    Ok(Exit::Ok)
}
