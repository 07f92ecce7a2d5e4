//! The format of a file accum writes: one rule for every command with `-o`
//! (`import`, `export`, `schema`, `init`, `sheet`, `compare`, `replan`).
//! The extension of the name (in any case) says the format, and a command
//! that cannot write that format refuses the name with the extensions it
//! writes: `import … -o out.yaml` wrote TOML under a YAML name. A `--format`
//! given with a name whose extension says another format is refused too; a
//! name without a known extension is written in `--format`'s format, and
//! refused without one.

use std::path::Path;

use crate::error::CliError;

/// A format accum writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileFormat {
    Toml,
    Yaml,
    Json,
    Markdown,
    Html,
    Csv,
    /// A list of command-line arguments (Megatron-LM's).
    Shell,
}

/// Every format, for the lookup of an extension.
const ALL: [FileFormat; 7] = [
    FileFormat::Toml,
    FileFormat::Yaml,
    FileFormat::Json,
    FileFormat::Markdown,
    FileFormat::Html,
    FileFormat::Csv,
    FileFormat::Shell,
];

impl FileFormat {
    /// The extensions that name the format, the usual one first.
    pub(crate) const fn extensions(self) -> &'static [&'static str] {
        match self {
            FileFormat::Toml => &["toml"],
            FileFormat::Yaml => &["yaml", "yml"],
            FileFormat::Json => &["json"],
            FileFormat::Markdown => &["md", "markdown"],
            FileFormat::Html => &["html", "htm"],
            FileFormat::Csv => &["csv"],
            FileFormat::Shell => &["sh", "txt"],
        }
    }

    /// The format's name in messages.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            FileFormat::Toml => "TOML",
            FileFormat::Yaml => "YAML",
            FileFormat::Json => "JSON",
            FileFormat::Markdown => "Markdown",
            FileFormat::Html => "HTML",
            FileFormat::Csv => "CSV",
            FileFormat::Shell => "an argument list",
        }
    }

    /// The format an extension names, in any case (`.TOML` is TOML).
    pub(crate) fn of_path(path: &Path) -> Option<FileFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        ALL.into_iter()
            .find(|f| f.extensions().contains(&ext.as_str()))
    }
}

/// `.toml, .yaml, .yml or .json`.
fn extension_list(formats: &[FileFormat]) -> String {
    let all: Vec<String> = formats
        .iter()
        .flat_map(|f| f.extensions().iter().map(|e| format!(".{e}")))
        .collect();
    match all.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The format `command` writes `path` in (`writes` holds its formats, the
/// default first): the one its extension names,
/// among the formats the command `writes`, agreeing with `explicit`
/// (`--format`) when both are given; else a usage error that lists the
/// extensions the command writes.
pub(crate) fn output_format(
    path: &Path,
    writes: &[FileFormat],
    explicit: Option<FileFormat>,
    command: &str,
) -> Result<FileFormat, CliError> {
    // An output that is an input is refused as such first: that is the
    // mistake, whatever its name says.
    crate::writes::not_an_input(path)?;
    // So is a folder, or a name that ends in `/`.
    crate::writes::output_path(path)?;
    // A device or a pipe (`/dev/null`, `/dev/stdout`) is written to in the
    // format asked for, else the command's first: its name says none.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Ok(explicit.unwrap_or(writes[0]));
    }
    let shown = accum_core::shown::path(path);
    let list = extension_list(writes);
    match (FileFormat::of_path(path), explicit) {
        (Some(named), Some(given)) if named != given && writes.contains(&named) => {
            Err(CliError::usage(format!(
                "`-o {shown}` names {} by its extension, but --format says {}: name the file {}, or leave out --format",
                named.name(),
                given.name(),
                extension_list(&[given])
            )))
        }
        (Some(named), _) if writes.contains(&named) => Ok(named),
        (Some(named), _) => Err(CliError::usage(format!(
            "`-o {shown}` names {} by its extension, which `{command}` does not write: name the file {list}",
            named.name()
        ))),
        (None, Some(given)) if writes.contains(&given) => Ok(given),
        (None, _) => Err(CliError::usage(format!(
            "`-o {shown}`: the extension says the format, and this one names none that `{command}` writes: name the file {list}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use FileFormat::*;

    const CONFIG: &[FileFormat] = &[Toml, Yaml, Json];

    fn format(path: &str, explicit: Option<FileFormat>) -> Result<FileFormat, String> {
        output_format(Path::new(path), CONFIG, explicit, "import").map_err(|e| e.to_string())
    }

    #[test]
    fn the_extension_says_the_format_in_any_case() {
        assert_eq!(format("out.yaml", None), Ok(Yaml));
        assert_eq!(format("dir.v2/out.YML", None), Ok(Yaml));
        assert_eq!(format("out.TOML", None), Ok(Toml));
        assert_eq!(format("out.Json", None), Ok(Json));
        assert_eq!(format("out.json", Some(Json)), Ok(Json));
    }

    #[test]
    fn other_names_are_refused_with_the_extensions_written() {
        for path in ["out", "out.txt", "out.md", "out.yaml.bak", ".toml"] {
            let err = format(path, None).expect_err(path);
            assert!(err.contains(".toml, .yaml, .yml or .json"), "{path}: {err}");
            assert!(err.contains(&format!("`-o {path}`")), "{err}");
        }
        let err = format("out.yaml", Some(Json)).expect_err("disagrees");
        assert!(
            err.contains("--format says JSON") && err.contains(".json"),
            "{err}"
        );
        // Without an extension that names a format, --format decides.
        assert_eq!(format("out", Some(Toml)), Ok(Toml));
        let err = output_format(Path::new("x.yaml"), &[Json], None, "schema")
            .expect_err("schema writes JSON")
            .to_string();
        assert!(
            err.contains("`schema` does not write: name the file .json"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_in_the_commands_format() {
        assert_eq!(format("/dev/null", None), Ok(Toml));
        assert_eq!(format("/dev/null", Some(Json)), Ok(Json));
    }
}
