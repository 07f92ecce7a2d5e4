//! Entry points that take untrusted bytes and must never panic: the fuzz
//! targets in `fuzz/` call them, and the corpus replay tests call the same
//! functions on every committed corpus file and crash regression.
//!
//! Each function returns normally for any input; an `Err` from the code under
//! test is an expected outcome, a panic is a bug.
//!
//! Only built with the `harness` feature: it is a test surface, not an API.

use std::path::Path;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use accum_core::config::TrainingConfig;
use accum_core::plan::{Plan, Rounding};
use accum_core::report::{KEPT_UPDATES, RunReport};
use accum_core::settings::LogAxis;
use accum_core::{Span, UnitKind};

use crate::interop::{Framework, ImportOptions};
use crate::load::{Schema, check_document};
use crate::source::{Document, SourceFormat};

/// The syntax of a configuration file fed to [`config`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigFormat {
    /// TOML.
    Toml,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

impl From<ConfigFormat> for SourceFormat {
    fn from(format: ConfigFormat) -> SourceFormat {
        match format {
            ConfigFormat::Toml => SourceFormat::Toml,
            ConfigFormat::Json => SourceFormat::Json,
            ConfigFormat::Yaml => SourceFormat::Yaml,
        }
    }
}

/// The built-in schema, built once: building it per input would dominate
/// the time of a fuzz run.
static BUILTIN: LazyLock<Schema<TrainingConfig>> = LazyLock::new(Schema::builtin);

/// Plans the span harness resolves through, from tiny to the largest factors
/// a plan accepts, so that conversions reach their overflow checks.
fn plans() -> Vec<Plan> {
    let mut plans = Vec::new();
    for (m, a, d, len) in [
        (1, 1, 1, None),
        (2, 8, 2, Some(4096)),
        (3, 7, 5, Some(1)),
        (u64::MAX, 1, 1, Some(1)),
        (1, 1, u64::MAX, None),
    ] {
        if let Ok(plan) = Plan::new(m, a, d) {
            plans.push(match len {
                Some(len) => plan.with_seq_len(len).unwrap_or(plan),
                None => plan,
            });
        }
    }
    plans
}

/// Parses `data` as a span (`"1.5k examples"`); when it parses, its display
/// must parse back to the same span, and it is resolved to every unit through
/// a few plans with every rounding.
pub fn span(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(span) = text.parse::<Span>() else {
        return;
    };
    let shown = span.to_string();
    let again: Span = shown
        .parse()
        .unwrap_or_else(|err| panic!("`{shown}` (from `{text}`) does not parse back: {err}"));
    assert_eq!(again, span, "`{shown}` parses back to a different span");
    for plan in plans() {
        for rounding in [Rounding::Down, Rounding::Up, Rounding::Exact] {
            let _ = plan.span_to_updates(&span, rounding);
            for unit in [
                UnitKind::Update,
                UnitKind::Microbatch,
                UnitKind::Example,
                UnitKind::Token,
            ] {
                let _ = plan.span_to_unit(&span, unit, rounding);
            }
        }
    }
}

/// Parses `data` as a configuration file in `format` and validates it as
/// `accum validate` does with the built-in schema: syntax, schema, spans, the
/// typed config and its plan. Returns whether it is valid: no finding is an
/// error (warnings alone leave a config valid, as `accum validate` exits 0
/// for them).
pub fn config(format: ConfigFormat, data: &[u8]) -> bool {
    let Ok(text) = String::from_utf8(data.to_vec()) else {
        return false;
    };
    let Ok(doc) = Document::parse("input".into(), text, format.into()) else {
        return false;
    };
    let schema = &*BUILTIN;
    match check_document::<TrainingConfig>(
        &doc,
        &schema.value,
        &schema.map,
        Some(TrainingConfig::check),
    ) {
        Ok(outcome) => {
            let findings = outcome.diagnostics;
            // Every finding's range must lie in the text, or rendering it would fail.
            for finding in &findings {
                if let Some(range) = &finding.location.range {
                    assert!(
                        range.start <= range.end && range.end <= doc.text.len(),
                        "finding range {range:?} outside a text of {} bytes",
                        doc.text.len()
                    );
                }
            }
            let _ = crate::diagnostic::render_text(&doc.name, &doc.text, &findings, false);
            let valid = !findings
                .iter()
                .any(|f| f.finding.severity == crate::diagnostic::Severity::Error);
            if let Some(config) = outcome.config.filter(|_| valid) {
                downstream(&doc, schema, &config);
            }
            valid
        }
        Err(_) => false,
    }
}

/// What the CLI does with a valid file: type it, build and render its
/// sheet, and re-plan it with small and huge limits.
fn downstream(doc: &Document, schema: &Schema<TrainingConfig>, config: &TrainingConfig) {
    let Ok(plan) = accum_core::AccumConfig::plan(config) else {
        return;
    };
    let extras = crate::training::sheet_extras(config, &plan);
    let sheet = crate::sheet::build::build(config, &plan, &doc.name, extras, None);
    let _ = crate::sheet::html::render(&sheet);
    let _ = crate::sheet::markdown::render(&sheet, &|_| None);
    for max in [1, 3, plan.micro_batch(), u64::MAX] {
        if let Ok(replanned) = crate::replan::replan(doc, &schema.map, &plan, max) {
            // The rewritten file must be valid in its own format.
            let again = Document::parse("replanned".into(), replanned.text, doc.format);
            assert!(
                again.is_ok(),
                "the re-planned file does not parse: {:?}",
                again.err().map(|e| e.message)
            );
        }
    }
}

/// Imports `data` as `framework`'s file with default options and with a
/// launcher's options, renders the findings, and exports a config that
/// imported without errors; the exported file must import again.
pub fn import(framework: Framework, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let launcher = ImportOptions {
        world_size: Some(16),
        tensor: Some(2),
        micro_batch: Some(4),
        examples: Some(1000),
        seq_len: Some(128),
        env: vec![
            ("GPUS_PER_NODE".into(), "8".into()),
            ("1".into(), "4".into()),
        ],
        ..ImportOptions::default()
    };
    for opts in [ImportOptions::default(), launcher] {
        match crate::interop::import(framework, "input", text, &opts) {
            Ok(imported) => {
                let _ = imported.render(false);
                let _ = crate::interop::render_reports(&imported.files, false);
                if !imported.has_errors() {
                    let toml = imported.to_toml();
                    let back: Result<crate::interop::PartialConfig, _> = toml::from_str(&toml);
                    assert!(
                        back.is_ok(),
                        "the imported config does not read back: {toml}"
                    );
                    if let Ok(exported) = crate::interop::export(framework, &imported.config) {
                        let _ =
                            crate::interop::import(framework, "exported", &exported.text, &opts);
                    }
                }
            }
            Err(err) => {
                if let crate::interop::ImportError::Invalid { files } = &err {
                    assert!(
                        files
                            .iter()
                            .flat_map(|f| &f.findings)
                            .all(|f| f.finding.message != crate::interop::READER_GAP),
                        "a refused import says why"
                    );
                }
                let _ = err.to_string();
                let _ = err.render(false);
            }
        }
    }
}

/// Detects the framework of `data` as `accum import FILE` and `accum lint
/// FILE` do without one named, under a YAML, a JSON and a script name. The
/// evidence of a claim lies in the text, on character boundaries, in the
/// order of the file; detecting again
/// says the same; and a file confidently claimed for a framework is never
/// refused by that framework's reader as another framework's file.
pub fn detect(data: &[u8]) {
    use crate::interop::detect::{Detection, Found, Kind};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let inside = |found: &[Found]| {
        found.iter().all(|f| {
            f.range.start <= f.range.end
                && f.range.end <= text.len()
                && text.is_char_boundary(f.range.start)
                && text.is_char_boundary(f.range.end)
        })
    };
    for name in ["input.yaml", "input.json", "input.sh"] {
        let detection = crate::interop::detect::detect(name, text);
        assert_eq!(
            detection,
            crate::interop::detect::detect(name, text),
            "detection is deterministic"
        );
        match &detection {
            Detection::Claim {
                kind,
                evidence,
                confident,
            } => {
                assert!(inside(evidence), "evidence inside the text");
                assert!(!evidence.is_empty(), "a claim has evidence");
                assert!(
                    evidence
                        .windows(2)
                        .all(|w| w[0].range.start <= w[1].range.start),
                    "evidence in the order of the file"
                );
                if *confident
                    && let Kind::Framework(framework) = kind
                    && let Err(crate::interop::ImportError::Invalid { files }) =
                        crate::interop::import(*framework, name, text, &ImportOptions::default())
                {
                    assert!(
                        files
                            .iter()
                            .flat_map(|f| &f.findings)
                            .all(|f| !(f.finding.code == accum_core::Code::Dialect
                                && f.finding.message.starts_with("this is a"))),
                        "a file claimed for {framework} is read by {framework}"
                    );
                }
            }
            Detection::Tie(kinds) => {
                assert!(kinds.len() >= 2, "a tie is between two kinds or more");
                let n = kinds[0].1.len();
                assert!(
                    kinds.iter().all(|(_, f)| f.len() == n && inside(f)),
                    "a tie is between equal evidence"
                );
            }
            Detection::Unknown => {}
        }
    }
}

/// The repository's quickstart config and its plan, which [`report`] and
/// [`stats_stream`] draw their sheets against.
static QUICKSTART: LazyLock<(TrainingConfig, Plan)> = LazyLock::new(|| {
    let text = include_str!("../../examples/quickstart.toml");
    let doc = Document::parse(
        "quickstart.toml".into(),
        text.to_owned(),
        SourceFormat::Toml,
    )
    .expect("the quickstart parses");
    let schema = &*BUILTIN;
    let config = check_document::<TrainingConfig>(
        &doc,
        &schema.value,
        &schema.map,
        Some(TrainingConfig::check),
    )
    .ok()
    .and_then(|outcome| outcome.config)
    .expect("the quickstart is valid");
    let plan = accum_core::AccumConfig::plan(&config).expect("the quickstart plans");
    (config, plan)
});

/// A report accum wrote, cut to six updates, whose stream [`stats_stream`]
/// replaces with the input.
const SHORT_REPORT: &str = include_str!("../tests/fixtures/reports/short.json");

/// Draws `report`, read from `source`, as `accum sheet --report` and
/// `accum compare` do: the sheet in HTML and Markdown, the per-update CSV,
/// and a comparison of the run with itself on every axis.
fn draw(report: &RunReport, source: &Path) {
    let (config, plan) = &*QUICKSTART;
    let extras = crate::training::sheet_extras(config, plan);
    let name = source.display().to_string();
    let sheet = crate::sheet::build::build(
        config,
        plan,
        "quickstart.toml",
        extras,
        Some((name.clone(), report)),
    );
    let _ = crate::sheet::html::render(&sheet);
    let _ = crate::sheet::markdown::render(&sheet, &|_| None);
    let _ = crate::sheet::csv::render(&report.updates);
    for axis in [LogAxis::Updates, LogAxis::Examples, LogAxis::Tokens] {
        let runs: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|run| crate::sheet::compare::Compared {
                name: run.to_owned(),
                source: name.clone(),
                report,
                series: crate::sheet::series::read(report, source, axis),
            })
            .collect();
        if let Ok(comparison) = crate::sheet::compare::compare(&runs, axis) {
            let _ = crate::sheet::compare::markdown(&comparison, &|_| None);
            let _ = crate::sheet::compare::html(&comparison);
        }
    }
}

/// Reads `data` as a run report, capped per field as every command reads
/// one, and draws it. The list a report keeps of every update is thinned
/// while it is read, so it never holds more than [`KEPT_UPDATES`]. A stream
/// the report names is not read here (it would be a file of the working
/// folder): [`stats_stream`] feeds streams.
pub fn report(data: &[u8]) {
    let Ok(mut report) = serde_json::from_slice::<RunReport>(data) else {
        return;
    };
    assert!(
        report.updates.len() <= KEPT_UPDATES,
        "{} updates kept from a report, above the {KEPT_UPDATES} a read keeps",
        report.updates.len()
    );
    report.stats_stream = None;
    draw(&report, Path::new("report.json"));
}

/// Folders of [`stats_stream`] calls, one per call.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// Writes `data` as the stats stream of a report accum wrote, and reads it
/// as every command does: its update lines one at a time, the CSV of every
/// attempt, and the series a sheet and `compare` draw on every axis (the
/// drawing itself is [`report`]'s).
pub fn stats_stream(data: &[u8]) {
    let mut report: RunReport = serde_json::from_str(SHORT_REPORT).expect("the short report reads");
    let folder = std::env::temp_dir().join(format!(
        "accum-harness-{}-{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&folder).expect("a temporary folder");
    let stream = folder.join("run.stats.jsonl");
    std::fs::write(&stream, data).expect("the stream is written");
    report.stats_stream = Some("run.stats.jsonl".to_owned());
    let source = folder.join("run.json");
    if let Ok(updates) = accum_core::report::streamed_updates(&stream) {
        for update in updates {
            if let Err(err) = update {
                // The reading ends at the first line that is not a stats
                // line, and says where it is.
                assert!(err.line.is_some(), "a bad line is located: {err}");
                break;
            }
        }
    }
    let mut problems = Vec::new();
    let attempts = crate::sheet::series::Attempts::of(&report, &source, &mut problems);
    let _ = crate::sheet::csv::write(&attempts, &mut |_| Ok(()));
    for axis in [LogAxis::Updates, LogAxis::Examples, LogAxis::Tokens] {
        let _ = crate::sheet::series::read(&report, &source, axis);
    }
    let _ = std::fs::remove_dir_all(&folder);
}

/// Whether `instance` keeps to `schema` by accum's own schema check, the
/// one `validate` and `load_config` run (tests/cli/editors.rs compares it
/// with a third-party validator). `Err` says why the schema cannot be
/// checked (a keyword outside the subset accum reads) or why a check
/// stopped (its bounds).
pub fn schema_check(
    schema: &serde_json::Value,
    instance: &serde_json::Value,
) -> Result<bool, String> {
    crate::validate::schema_verdict(schema, instance)
}

/// Reads `data` as every length and count of a command line is read:
/// `--span`, `--total`, a `--stage`'s end and a `--ramp`'s length, every
/// count option (`--params 7B`) and byte size. What reads is above 0, and
/// its display reads back to the same value.
pub fn cli_values(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(span) = crate::cli::parse_span(text) {
        assert!(span.value() > 0, "`{text}` read as a length of 0");
        let shown = span.to_string();
        assert_eq!(
            crate::cli::parse_span(&shown).as_ref(),
            Ok(&span),
            "`{shown}` (from `{text}`) does not read back"
        );
    }
    if let Ok(count) = crate::quantity::parse_count(text) {
        assert!(count > 0, "`{text}` read as a count of 0");
        assert_eq!(
            crate::quantity::parse_count(&count.to_string()),
            Ok(count),
            "{count} (from `{text}`) does not read back"
        );
    }
    let _ = crate::cli::parse_stage(text);
    let _ = crate::cli::parse_ramp(text);
    let _ = text.parse::<accum_core::estimate::ByteSize>();
}
