//! The commands every configuration type gets — schema, validate, replan,
//! calc, completions — generic over the config type, so that a user's own
//! binary (`accum_cli::run::<MyConfig>()`) behaves like `accum`.

use std::io::IsTerminal;
use std::marker::PhantomData;
use std::path::Path;

use accum_core::{AccumConfig, Plan};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::cli::{
    CommonCommand, CompletionsArgs, Format, ReplanArgs, SchemaArgs, SheetArgs, SheetFormat,
    ValidateArgs,
};
use crate::diagnostic::{self, Finding};
use crate::error::{CliError, Exit};
use crate::fsio::{backup, write_atomic};
use crate::output::{print_json, print_text};
use crate::sheet::build::Extras;
use crate::source::{Document, LoadError};
use crate::validate::{SchemaMap, validate};
use accum_core::estimate::{ByteSize, MemoryInputs};

/// A configuration type the CLI can work with: it has a plan (derived
/// `AccumConfig`), a JSON Schema and serde support.
pub trait CliConfig:
    AccumConfig + DeserializeOwned + schemars::JsonSchema + Sized + 'static
{
}

impl<T> CliConfig for T where
    T: AccumConfig + DeserializeOwned + schemars::JsonSchema + Sized + 'static
{
}

/// The schema of one configuration type, with its roles located.
pub struct Schema<T> {
    /// The JSON Schema.
    pub value: Value,
    /// Where the plan roles and spans are.
    pub map: SchemaMap,
    typed: PhantomData<fn() -> T>,
}

impl<T: CliConfig> Schema<T> {
    /// The built-in schema of `T`.
    pub fn builtin() -> Schema<T> {
        let value = accum_core::schema_for::<T>().to_value();
        let map = SchemaMap::from_schema(&value);
        Schema {
            value,
            map,
            typed: PhantomData,
        }
    }
}

/// The semantic check of a typed config: the derive's `validate` for any
/// type, `TrainingConfig::check` (plan and engine sections) for `accum`.
pub(crate) type Checker<T> = fn(&T) -> Result<(), accum_core::Findings>;

/// What a config type adds to the generic commands.
pub(crate) struct Hooks<T> {
    /// The semantic check.
    pub(crate) check: Checker<T>,
    /// The sheet tables beyond the plan.
    pub(crate) sheet: fn(&T, &Plan) -> Extras,
    /// The per-device memory model, when the type knows its model (R16).
    pub(crate) memory: fn(&T) -> Option<MemoryInputs>,
}

impl<T: CliConfig> Hooks<T> {
    /// The hooks of any derived config: its plan validation, no extra tables.
    pub(crate) fn derived() -> Hooks<T> {
        Hooks {
            check: |config: &T| config.validate(),
            sheet: |_, _| Extras::default(),
            memory: |_| None,
        }
    }
}

/// A document that passed validation, with its typed value and plan.
pub(crate) struct Checked<T> {
    /// The parsed file.
    pub(crate) doc: Document,
    /// The typed configuration.
    #[allow(dead_code, reason = "read by the run and sheet commands")]
    pub(crate) config: T,
    /// Its plan.
    pub(crate) plan: Plan,
}

/// Runs one of the common commands for config type `T`.
pub(crate) fn run_common<T: CliConfig>(
    command: &CommonCommand,
    cli: &dyn Fn() -> clap::Command,
    hooks: &Hooks<T>,
) -> Result<Exit, CliError> {
    match command {
        CommonCommand::Calc(args) => crate::calc::run(args),
        CommonCommand::Schema(args) => schema::<T>(args),
        CommonCommand::Validate(args) => validate_files::<T>(args, hooks.check),
        CommonCommand::Replan(args) => replan::<T>(args, hooks),
        CommonCommand::Sheet(args) => sheet::<T>(args, hooks),
        CommonCommand::Completions(args) => completions(args, cli()),
    }
}

fn schema<T: CliConfig>(args: &SchemaArgs) -> Result<Exit, CliError> {
    let schema = Schema::<T>::builtin();
    let text = serde_json::to_string_pretty(&schema.value)
        .map_err(|err| CliError::usage(format!("cannot render the schema: {err}")))?;
    match &args.output {
        Some(path) => write_atomic(path, format!("{text}\n").as_bytes())?,
        None => print_text(&format!("{text}\n"))?,
    }
    Ok(Exit::Ok)
}

fn completions(args: &CompletionsArgs, mut command: clap::Command) -> Result<Exit, CliError> {
    let bin = command.get_name().to_owned();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, bin, &mut out);
    print_text(&String::from_utf8_lossy(&out))?;
    Ok(Exit::Ok)
}

/// Whether findings on stdout may be coloured.
fn color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

/// A file that could not be parsed, with the finding that says why.
pub(crate) struct Rejected {
    /// The file name.
    pub(crate) name: String,
    /// Its text.
    pub(crate) text: String,
    /// The syntax finding.
    pub(crate) finding: Finding,
}

/// Loads a file; a syntax error becomes a located finding (exit 1), other
/// load errors are usage or I/O errors (exit 2).
pub(crate) fn load(path: &Path) -> Result<Result<Document, Rejected>, CliError> {
    match Document::load(path) {
        Ok(doc) => Ok(Ok(doc)),
        Err(LoadError::Syntax(err)) => {
            let span = err.span.clone().unwrap_or(0..0);
            let finding = Finding::error(
                "accum::syntax",
                Vec::new(),
                format!("invalid {}: {}", err.format.name(), err.message),
            )
            .at(span, "here");
            Ok(Err(Rejected {
                name: err.name,
                text: err.text,
                finding,
            }))
        }
        Err(err) => Err(CliError::usage(err)),
    }
}

/// Every finding for one document: structure, spans, then the typed config's
/// own validation (all plan findings with their field paths).
pub(crate) fn check_document<T: CliConfig>(
    doc: &Document,
    schema: &Value,
    map: &SchemaMap,
    typed: Option<Checker<T>>,
) -> Result<Vec<Finding>, CliError> {
    let mut findings = validate(doc, schema, map, typed.is_none()).map_err(CliError::usage)?;
    if let Some(check) = typed
        && findings.is_empty()
    {
        match serde_json::from_value::<T>(doc.to_json()) {
            Err(err) => findings.push(
                Finding::error(
                    "accum::schema",
                    Vec::new(),
                    format!("the configuration does not match its type: {err}"),
                )
                .at(doc.span_for(&[]), "here"),
            ),
            Ok(config) => {
                if let Err(problems) = check(&config) {
                    for problem in &problems {
                        let path = problem.path.segments().to_vec();
                        let span = doc.span_for(&path);
                        let mut finding =
                            Finding::error(problem.code.as_str(), path, problem.message.clone())
                                .at(span, problem.label.clone());
                        if let Some(fix) = &problem.fix {
                            finding = finding.help(fix.text.clone());
                        }
                        for related in &problem.related {
                            finding = finding
                                .also(doc.span_for(related.path.segments()), related.label.clone());
                        }
                        findings.push(finding);
                    }
                }
            }
        }
    }
    Ok(findings)
}

/// Loads, validates and types one configuration file for commands that need
/// a valid config (sheet, replan, run). Findings are printed; invalid input
/// ends the command with exit 1.
pub(crate) fn load_checked<T: CliConfig>(
    path: &Path,
    check: Checker<T>,
) -> Result<Checked<T>, CliError> {
    let schema = Schema::<T>::builtin();
    let doc = match load(path)? {
        Ok(doc) => doc,
        Err(bad) => {
            eprint!(
                "{}",
                diagnostic::render_text(
                    &bad.name,
                    &bad.text,
                    std::slice::from_ref(&bad.finding),
                    color()
                )
            );
            return Err(CliError::invalid(format!(
                "{}: not a valid configuration",
                path.display()
            )));
        }
    };
    let findings = check_document::<T>(&doc, &schema.value, &schema.map, Some(check))?;
    let errors = findings
        .iter()
        .filter(|f| f.severity == diagnostic::Severity::Error)
        .count();
    if !findings.is_empty() {
        eprint!(
            "{}",
            diagnostic::render_text(&doc.name, &doc.text, &findings, color())
        );
    }
    if errors > 0 {
        return Err(CliError::invalid(format!(
            "{}: {errors} error{} (run `accum validate {}` for details)",
            doc.name,
            if errors == 1 { "" } else { "s" },
            path.display()
        )));
    }
    let config: T = serde_json::from_value(doc.to_json())
        .map_err(|err| CliError::invalid(format!("{}: {err}", doc.name)))?;
    let plan = config
        .plan()
        .map_err(|err| CliError::invalid(format!("{}: {err}", doc.name)))?;
    Ok(Checked { doc, config, plan })
}

#[derive(Serialize)]
struct FileReport {
    file: String,
    valid: bool,
    errors: usize,
    warnings: usize,
    findings: Vec<diagnostic::FindingJson>,
}

fn validate_files<T: CliConfig>(args: &ValidateArgs, check: Checker<T>) -> Result<Exit, CliError> {
    let (schema, map, typed) = match &args.schema {
        None => {
            let s = Schema::<T>::builtin();
            (s.value, s.map, Some(check))
        }
        Some(path) => {
            let text = crate::source::read_text(path, crate::source::MAX_FILE_BYTES)
                .map_err(|err| CliError::usage(format!("cannot read the schema: {err}")))?;
            let value: Value = serde_json::from_str(&text).map_err(|err| {
                CliError::usage(format!("{}: the schema is not JSON: {err}", path.display()))
            })?;
            let map = SchemaMap::from_schema(&value);
            (value, map, None)
        }
    };
    let mut reports = Vec::new();
    let mut text = String::new();
    let mut any_error = false;
    for path in &args.files {
        let (name, source, findings) = match load(path)? {
            Ok(doc) => {
                let findings = check_document::<T>(&doc, &schema, &map, typed)?;
                (doc.name, doc.text, findings)
            }
            Err(bad) => (bad.name, bad.text, vec![bad.finding]),
        };
        let errors = findings
            .iter()
            .filter(|f| f.severity == diagnostic::Severity::Error)
            .count();
        let warnings = findings.len() - errors;
        any_error |= errors > 0;
        match args.format {
            Format::Text => {
                text.push_str(&diagnostic::render_text(&name, &source, &findings, color()));
                if errors == 0 && warnings == 0 {
                    text.push_str(&format!("{name}: ok\n"));
                } else {
                    text.push_str(&format!(
                        "{}: {errors} error{}, {warnings} warning{}\n",
                        name,
                        if errors == 1 { "" } else { "s" },
                        if warnings == 1 { "" } else { "s" }
                    ));
                }
            }
            Format::Json => reports.push(FileReport {
                file: name.clone(),
                valid: errors == 0,
                errors,
                warnings,
                findings: diagnostic::to_json(&name, &source, &findings),
            }),
        }
    }
    match args.format {
        Format::Text => print_text(&text)?,
        Format::Json => print_json(&serde_json::json!({ "files": reports }))?,
    }
    Ok(if any_error { Exit::Invalid } else { Exit::Ok })
}

fn replan<T: CliConfig>(args: &ReplanArgs, hooks: &Hooks<T>) -> Result<Exit, CliError> {
    let checked = load_checked::<T>(&args.file, hooks.check)?;
    let schema = Schema::<T>::builtin();
    let max = match (args.max_micro_batch, args.memory_budget) {
        (Some(max), _) => max,
        (None, Some(budget)) => {
            let inputs = match (
                args.params,
                args.activation_per_example,
                (hooks.memory)(&checked.config),
            ) {
                (Some(params), Some(activation), _) => MemoryInputs {
                    params,
                    weight_bytes: 4,
                    optimizer: accum_core::estimate::OptimizerKind::AdamW,
                    master_weights: false,
                    activation_per_example: activation,
                },
                (params, activation, Some(model)) => MemoryInputs {
                    params: params.unwrap_or(model.params),
                    activation_per_example: activation.unwrap_or(model.activation_per_example),
                    ..model
                },
                _ => {
                    return Err(CliError::usage(
                        "--memory-budget needs the memory model of this config: give --params and --activation-per-example",
                    ));
                }
            };
            memory_limit(&inputs, budget, &checked.plan)?
        }
        (None, None) => return Err(CliError::usage("give --max-micro-batch or --memory-budget")),
    };
    let result = crate::replan::replan(&checked.doc, &schema.map, &checked.plan, max)
        .map_err(|err| CliError::invalid(format!("{}: {err}", checked.doc.name)))?;
    match (&args.output, args.in_place) {
        (Some(out), _) => write_atomic(out, result.text.as_bytes())?,
        (None, true) => {
            let bak = backup(&args.file)?;
            write_atomic(&args.file, result.text.as_bytes())?;
            eprintln!("kept the previous file as {}", bak.display());
        }
        (None, false) => print_text(&result.text)?,
    }
    match args.format {
        Format::Json => {
            let summary = serde_json::to_string_pretty(&result)
                .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?;
            eprintln!("{summary}");
        }
        Format::Text => eprint!("{}", replan_summary(&result)),
    }
    Ok(Exit::Ok)
}

fn replan_summary(r: &crate::replan::Replanned) -> String {
    let mut out = format!(
        "replanned: m {} × A {} × D {} = B {}  →  m {} × A {} × D {} = B {} (R11)\n",
        r.before.micro_batch(),
        r.before.accumulation(),
        r.before.replicas(),
        r.before.effective_batch().get(),
        r.after.micro_batch(),
        r.after.accumulation(),
        r.after.replicas(),
        r.after.effective_batch().get()
    );
    for change in &r.changes {
        out.push_str(&format!(
            "  {}: {} → {} ({})\n",
            change.path, change.before, change.after, change.reason
        ));
    }
    if !r.alternatives.is_empty() {
        let alts: Vec<String> = r
            .alternatives
            .iter()
            .map(|(m, a)| format!("m {m} × A {a}"))
            .collect();
        out.push_str(&format!(
            "  alternatives with the same B: {}\n",
            alts.join(", ")
        ));
    }
    out.push_str("  note: a smaller micro-batch guarantees neither a proportional memory drop nor a faster run\n");
    out
}

fn sheet<T: CliConfig>(args: &SheetArgs, hooks: &Hooks<T>) -> Result<Exit, CliError> {
    let checked = load_checked::<T>(&args.file, hooks.check)?;
    let schema = Schema::<T>::builtin();
    let report = match &args.report {
        Some(path) => {
            let text = crate::source::read_text(path, crate::source::MAX_REPORT_BYTES)
                .map_err(|err| CliError::usage(format!("cannot read the run report: {err}")))?;
            let report: accum_core::RunReport = serde_json::from_str(&text).map_err(|err| {
                CliError::invalid(format!(
                    "{}: not an accum run report: {err}",
                    path.display()
                ))
            })?;
            Some((path.display().to_string(), report))
        }
        None => None,
    };
    let extras = (hooks.sheet)(&checked.config, &checked.plan);
    let model = crate::sheet::build::build(
        &checked.doc,
        &schema.map,
        &checked.plan,
        extras,
        report
            .as_ref()
            .map(|(source, report)| (source.clone(), report)),
    );
    let format = args.format.unwrap_or_else(|| {
        match args
            .output
            .as_ref()
            .and_then(|p| p.extension())
            .and_then(|e| e.to_str())
        {
            Some("html" | "htm") => SheetFormat::Html,
            Some("json") => SheetFormat::Json,
            _ => SheetFormat::Md,
        }
    });
    let text = match format {
        SheetFormat::Json => {
            let mut text = serde_json::to_string_pretty(&model)
                .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?;
            text.push('\n');
            text
        }
        SheetFormat::Html => crate::sheet::html::render(&model),
        SheetFormat::Md => {
            // The curve goes beside the Markdown file, linked by a relative path.
            let curve = match (&args.output, &model.trial) {
                (Some(out), Some(trial)) => {
                    let svg_path = out.with_extension("svg");
                    write_atomic(
                        &svg_path,
                        crate::sheet::svg::render(&trial.curve).as_bytes(),
                    )?;
                    svg_path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                }
                _ => None,
            };
            crate::sheet::markdown::render(&model, curve.as_deref())
        }
    };
    match &args.output {
        Some(out) => write_atomic(out, text.as_bytes())?,
        None => print_text(&text)?,
    }
    Ok(Exit::Ok)
}

/// The largest micro-batch whose estimated per-device memory fits the
/// budget (R16), or the reason none does (R11).
fn memory_limit(inputs: &MemoryInputs, budget: ByteSize, plan: &Plan) -> Result<u64, CliError> {
    let now = inputs
        .estimate(plan.micro_batch())
        .map_err(|err| CliError::usage(err.to_string()))?;
    let fixed = inputs
        .estimate(0)
        .map_err(|err| CliError::usage(err.to_string()))?;
    match inputs
        .max_micro_batch(budget)
        .map_err(|err| CliError::usage(err.to_string()))?
    {
        None => Err(CliError::invalid(format!(
            "weights {} + gradients {} + optimizer state {} = {} already exceed the budget {}; \
             accumulation changes the batch, not this memory, so no micro-batch fits (R11): shard the \
             optimizer state or the model, or lower the precision",
            fixed.weights, fixed.gradients, fixed.optimizer_state, fixed.total, budget
        ))),
        Some(max) => {
            eprintln!(
                "memory estimate (R16): {} at m {} ({} fixed + {} activations per example); budget {} allows m ≤ {}",
                now.total,
                plan.micro_batch(),
                fixed.total,
                inputs.activation_per_example,
                budget,
                max
            );
            Ok(max)
        }
    }
}
