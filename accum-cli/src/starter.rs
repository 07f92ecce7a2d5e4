//! The starter configuration of `accum init`: every section with a working
//! value and a comment saying what it means, written in TOML, YAML or JSON
//! with a schema directive for editors (`#:schema` in TOML,
//! `yaml-language-server` in YAML, `"$schema"` in JSON).

use std::path::Path;

use serde_json::{Value, json};

use crate::error::CliError;

/// The schema file the directive points to, beside the configuration.
pub(crate) const SCHEMA_FILE: &str = "accum.schema.json";

/// One key of the starter, with what it means.
struct Item {
    key: &'static str,
    value: Value,
    comment: &'static str,
}

/// One section of the starter.
struct Section {
    name: &'static str,
    items: Vec<Item>,
}

fn item(key: &'static str, value: Value, comment: &'static str) -> Item {
    Item {
        key,
        value,
        comment,
    }
}

/// The starter configuration, once, for every syntax.
fn starter(name: &str) -> Vec<Section> {
    vec![
        Section {
            name: "run",
            items: vec![item(
                "name",
                json!(name),
                "shown in logs, reports and sheets",
            )],
        },
        Section {
            name: "batch",
            items: vec![
                item(
                    "micro_batch",
                    json!(8),
                    "m: examples per forward/backward pass on one replica",
                ),
                item(
                    "accumulation",
                    json!(4),
                    "A: microbatches per optimizer update, per replica",
                ),
                item(
                    "replicas",
                    json!(2),
                    "D: data-parallel replicas (model copies that see different examples)",
                ),
                item("global_batch", json!(64), "B = m·A·D, checked"),
            ],
        },
        Section {
            name: "loss",
            items: vec![item(
                "normalization",
                json!("per_token"),
                "summed token losses ÷ supervised tokens of the whole group",
            )],
        },
        Section {
            name: "precision",
            items: vec![item(
                "mode",
                json!("fp32"),
                "fp32, bf16, or fp16 with loss scaling",
            )],
        },
        Section {
            name: "optimizer",
            items: vec![
                item("kind", json!("adamw"), "adamw or sgd"),
                item("lr", json!(0.0003), "peak learning rate"),
                item(
                    "clip_norm",
                    json!(1.0),
                    "global gradient-norm clipping, after the last microbatch",
                ),
            ],
        },
        Section {
            name: "schedule",
            items: vec![
                item("kind", json!("cosine"), "constant, linear or cosine"),
                item(
                    "warmup",
                    json!("100 updates"),
                    "every length names its unit: updates, microbatches, examples or tokens",
                ),
                item("total", json!("2000 updates"), ""),
            ],
        },
        Section {
            name: "data",
            items: vec![item(
                "last_group",
                json!("process"),
                "a last partial group: process, drop (ids recorded) or error",
            )],
        },
        Section {
            name: "log",
            items: vec![
                item("every", json!("50 updates"), ""),
                item(
                    "axis",
                    json!("updates"),
                    "loss curves against updates, examples or tokens",
                ),
            ],
        },
    ]
}

/// A device layout instead of `replicas`, shown commented out.
fn layout() -> Section {
    Section {
        name: "parallel",
        items: vec![
            item("world_size", json!(64), ""),
            item("tensor", json!(2), ""),
            item("pipeline", json!(2), ""),
        ],
    }
}

/// Why the layout is commented out, in TOML and YAML.
const LAYOUT_NOTE: [&str; 2] = [
    "With tensor, pipeline or context parallelism, give the device layout",
    "instead of `replicas`: D = world_size / (tensor · pipeline · context).",
];

fn header(comment: &str) -> String {
    format!(
        "{comment} A starter configuration for accum: check it with `accum validate`,\n\
         {comment} and `accum explain CODE` explains any finding.\n"
    )
}

/// A value as TOML or YAML writes it (both take JSON's scalars).
fn scalar(value: &Value) -> String {
    value.to_string()
}

/// How TOML and YAML write the starter: the directive, a section header,
/// the indent of its keys, and `=` or `:`.
struct Syntax {
    directive: &'static str,
    section: fn(&str) -> String,
    indent: &'static str,
    assign: &'static str,
}

const TOML: Syntax = Syntax {
    directive: "#:schema ",
    section: |name| format!("[{name}]"),
    indent: "",
    assign: " = ",
};

const YAML: Syntax = Syntax {
    directive: "# yaml-language-server: $schema=",
    section: |name| format!("{name}:"),
    indent: "  ",
    assign: ": ",
};

/// The starter in TOML or YAML, with every comment aligned in its section.
fn commented_text(syntax: &Syntax, sections: &[Section], schema: &str) -> String {
    let mut out = format!("{}{schema}\n{}", syntax.directive, header("#"));
    for section in sections {
        out.push('\n');
        for line in section_lines(syntax, section) {
            out.push_str(&line);
        }
        if section.name == "batch" {
            // The layout, commented out: another way to give `D`.
            out.push('\n');
            for line in LAYOUT_NOTE {
                out.push_str(&format!("# {line}\n"));
            }
            for line in section_lines(syntax, &layout()) {
                out.push_str(&format!("# {line}"));
            }
        }
    }
    out
}

/// A section's header and its keys, each line with its newline.
fn section_lines(syntax: &Syntax, section: &Section) -> Vec<String> {
    let lines: Vec<String> = section
        .items
        .iter()
        .map(|i| {
            format!(
                "{}{}{}{}",
                syntax.indent,
                i.key,
                syntax.assign,
                scalar(&i.value)
            )
        })
        .collect();
    let width = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    std::iter::once(format!("{}\n", (syntax.section)(section.name)))
        .chain(
            lines
                .iter()
                .zip(&section.items)
                .map(|(line, item)| commented(line, item.comment, width)),
        )
        .collect()
}

fn json_text(sections: &[Section], schema: &str) -> Result<String, CliError> {
    let mut root = serde_json::Map::new();
    root.insert(crate::validate::SCHEMA_KEY.to_owned(), json!(schema));
    for section in sections {
        let items = section
            .items
            .iter()
            .map(|i| (i.key.to_owned(), i.value.clone()))
            .collect();
        root.insert(section.name.to_owned(), Value::Object(items));
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(root))
        .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?;
    text.push('\n');
    Ok(text)
}

/// `line`, with `comment` aligned after it.
fn commented(line: &str, comment: &str, width: usize) -> String {
    if comment.is_empty() {
        format!("{line}\n")
    } else {
        let pad = width.saturating_sub(line.chars().count()) + 2;
        format!("{line}{:pad$}# {comment}\n", "")
    }
}

/// The starter's text for `path`, by its extension.
pub(crate) fn starter_text(path: &Path, name: &str) -> Result<String, CliError> {
    let schema = format!("./{SCHEMA_FILE}");
    let sections = starter(name);
    use crate::outfile::{FileFormat, output_format};
    // The extension says the format (`.TOML` too); a name without one is TOML.
    let format = if path.extension().is_none() {
        FileFormat::Toml
    } else {
        output_format(
            path,
            &[FileFormat::Toml, FileFormat::Yaml, FileFormat::Json],
            None,
            "init",
        )?
    };
    match format {
        FileFormat::Yaml => Ok(commented_text(&YAML, &sections, &schema)),
        FileFormat::Json => json_text(&sections, &schema),
        _ => Ok(commented_text(&TOML, &sections, &schema)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_says_what_each_value_means_in_toml_and_yaml() {
        let toml = starter_text(Path::new("train.toml"), "train").expect("toml");
        assert!(toml.starts_with("#:schema ./accum.schema.json\n"), "{toml}");
        assert!(
            toml.contains(
                "\nmicro_batch = 8    # m: examples per forward/backward pass on one replica\n"
            ),
            "{toml}"
        );
        assert!(toml.contains("name = \"train\""), "{toml}");
        let yaml = starter_text(Path::new("train.yml"), "train").expect("yaml");
        assert!(
            yaml.starts_with("# yaml-language-server: $schema=./accum.schema.json\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains(
                "\n  micro_batch: 8    # m: examples per forward/backward pass on one replica\n"
            ),
            "{yaml}"
        );
        let json: Value =
            serde_json::from_str(&starter_text(Path::new("t.json"), "t").expect("json"))
                .expect("valid JSON");
        assert_eq!(json["$schema"], "./accum.schema.json");
        assert_eq!(json["batch"]["global_batch"], 64);
        assert!(starter_text(Path::new("t.ini"), "t").is_err());
    }
}
