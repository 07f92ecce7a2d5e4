//! What every importer shares: the [`Dialect`] trait each framework
//! implements, and the tail of every import (the batch and parallel
//! sections from the framework's plan, the loss normalization, the partial
//! last group, the `[run]` section), so that each dialect only reads its own
//! files and reproduces its own arithmetic.

use std::ops::Range;

use accum_core::config::RunSection;
use accum_core::config::partial::{PartialBatch, PartialConfig};
use accum_core::plan::{Edit, LastGroup, Layout, Plan, PlanError, PlanInput, Role};
use accum_core::settings::Normalization;
use accum_core::{Code, Finding};

use super::census;
use super::reader::Reader;
use super::stages::{Form, Staged, StepLength, shift_finding};
use super::{BatchSchedule, FileReport, Framework, ImportError, ImportOptions, Imported};
use crate::diagnostic::{Diagnostic, Location, Severity};
use crate::fix::{Suggestion, set_scalar, setting};
use crate::source::Document;

/// A framework's way of writing a training run.
pub(crate) trait Dialect {
    /// The framework.
    const FRAMEWORK: Framework;

    /// Reads the file (and the files it names) as the framework does: its
    /// batch arithmetic and refusals, and the other keys the file states.
    fn read(name: &str, text: &str, opts: &ImportOptions) -> Result<Reading, ImportError>;
}

/// What a dialect read.
pub(crate) struct Reading {
    /// The files read, the imported one first; findings pushed so far.
    pub(crate) files: Vec<FileReport>,
    /// The batch the framework trains with, or `None` when there is none
    /// (the framework refuses, or a value the batch needs is unknown: the
    /// findings say which).
    pub(crate) batch: Option<FrameworkBatch>,
}

/// The batch a framework trains with, and what else its files state.
pub(crate) struct FrameworkBatch {
    /// The plan: `m`, `A`, `D` (with the layout when there is one), `L`.
    pub(crate) plan: Plan,
    /// `[parallel]` as the files state it, when `D` comes from a layout.
    pub(crate) parallel: Option<accum_core::config::ParallelSection>,
    /// The other sections, only the keys the files set (`batch`,
    /// `parallel`, `run`, `loss.normalization`, `data.examples` and
    /// `data.last_group` are filled here).
    pub(crate) settings: PartialConfig,
    /// A batch that changes during the run, as the framework states it.
    pub(crate) schedule: Option<BatchSchedule>,
    /// The same, resolved into stages when accum can plan it exactly.
    pub(crate) staged: Option<Staged>,
    /// Lengths the file counts in updates, for `schedule-shift`.
    pub(crate) step_lengths: Vec<StepLength>,
    /// How the framework normalizes the loss of a group.
    pub(crate) loss: LossRule,
    /// What the framework does with a partial last group.
    pub(crate) last_group: LastGroupRule,
}

/// How a framework normalizes the loss of a group.
pub(crate) enum LossRule {
    /// By the supervised tokens of the whole group, on all replicas.
    PerToken,
    /// As a mean of microbatch means (each microbatch averaged, then divided
    /// by `A`): the per-example mean of equal microbatches, a mean of means
    /// when lengths vary. The finding says so for `--variable-lengths`.
    MicrobatchMean(Diagnostic),
    /// Per token, but only if a setting whose default changed is on: the
    /// finding (a warning) says so for `--variable-lengths`.
    PerTokenIfDefault(Diagnostic),
}

/// What a framework does with a partial last group.
pub(crate) struct LastGroupRule {
    /// The policy it amounts to.
    pub(crate) policy: LastGroup,
    /// Whether the partial group is an error (the update is scaled wrong) or
    /// a warning (it is dropped or run as is).
    pub(crate) severity: Severity,
    /// What the framework does with it.
    pub(crate) behaviour: String,
    /// The fix.
    pub(crate) help: String,
    /// Where to point in the imported file.
    pub(crate) range: Range<usize>,
}

/// One dialect's reading, and the shared tail.
pub(crate) fn run<D: Dialect>(
    name: &str,
    text: &str,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let reading = D::read(name, text, opts)?;
    finish(D::FRAMEWORK, name, opts, reading)
}

/// The finding of an import refused without one of its own: a gap in a
/// reader, which the fuzz harness reports as a failure.
pub(crate) const READER_GAP: &str =
    "accum found no batch in this file and no reason why: a gap in accum's reader";

/// The tail every import shares.
fn finish(
    framework: Framework,
    name: &str,
    opts: &ImportOptions,
    mut reading: Reading,
) -> Result<Imported, ImportError> {
    for file in &mut reading.files {
        for finding in &mut file.findings {
            in_framework_keys(framework, finding);
        }
        crate::diagnostic::fold_consequences(&mut file.findings);
    }
    let Some(batch) = reading.batch else {
        let said = reading
            .files
            .iter()
            .flat_map(|f| &f.findings)
            .any(|f| f.finding.severity == Severity::Error);
        // Every refusal is meant to come with its finding; where a reader
        // misses one, the user still reads what happened rather than "fix
        // the errors above" with none above. The fuzz targets fail on it.
        if !said && let Some(main) = reading.files.first_mut() {
            main.findings.push(
                Diagnostic::error(Code::Missing, vec![], READER_GAP)
                    .help("give the batch with --micro-batch and --world-size, and report the file to accum's issue tracker")
                    .at(0..0, "no batch read"),
            );
        }
        return Err(ImportError::Invalid {
            files: reading.files,
        });
    };
    let plan = batch.plan;
    let mut config = batch.settings;
    config.run = Some(run_section(framework, name));
    config.batch = PartialBatch {
        micro_batch: Some(plan.micro_batch()),
        accumulation: Some(plan.accumulation()),
        replicas: batch.parallel.is_none().then_some(plan.replicas()),
        global_batch: Some(plan.effective_batch().get()),
        seq_len: plan.seq_len(),
        ..PartialBatch::default()
    };
    config.parallel = batch.parallel;
    if let Some(staged) = &batch.staged {
        match &staged.form {
            Form::Ramp(ramp) => config.batch.ramp = Some(*ramp),
            Form::Stages(specs) => config.batch.stages = Some(specs.clone()),
        }
    }

    let main = reading
        .files
        .first_mut()
        .expect("every reading has the imported file");
    // `accum::run::normalization`: the group's loss, as the framework normalizes it.
    config.loss.normalization = Some(match batch.loss {
        LossRule::PerToken => Normalization::PerToken,
        LossRule::MicrobatchMean(finding) => {
            if opts.variable_lengths {
                main.findings.push(finding);
                Normalization::PerToken
            } else {
                Normalization::PerExample
            }
        }
        LossRule::PerTokenIfDefault(finding) => {
            if opts.variable_lengths {
                main.findings.push(finding);
            }
            Normalization::PerToken
        }
    });
    if let Some(finding) = batch
        .staged
        .as_ref()
        .and_then(|staged| shift_finding(staged, &batch.step_lengths))
    {
        main.findings.push(finding);
    }
    // `accum::plan::partial-group`: the last partial group.
    let rule = batch.last_group;
    config.data.last_group = Some(rule.policy);
    if let Some(examples) = opts.examples {
        config.data.examples = Some(examples);
        if let Some(f) = partial_group_finding(
            &plan,
            examples,
            rule.severity,
            &rule.behaviour,
            &rule.help,
            rule.range,
        ) {
            main.findings.push(f);
        }
    }
    // The census: what each file left unread of the batch vocabulary, with
    // what accum assumed instead.
    let ramp = batch.staged.is_some() || batch.schedule.is_some();
    for file in &mut reading.files {
        for unread in std::mem::take(&mut file.unread) {
            file.findings
                .push(census::finding(framework, &unread, &plan, ramp));
        }
    }
    Ok(Imported {
        config,
        batch_schedule: batch.schedule,
        files: reading.files,
    })
}

/// The key (or flag) under which `framework`'s files write the value of
/// `role`, as its reader reads it; `None` when the framework has none
/// (the value is derived from others, or given to the launcher).
pub(crate) const fn key_of(framework: Framework, role: Role) -> Option<&'static str> {
    match (framework, role) {
        (Framework::DeepSpeed, Role::GlobalBatch) => Some(super::deepspeed::TRAIN_BATCH),
        (Framework::DeepSpeed, Role::MicroBatch) => Some(super::deepspeed::MICRO),
        (Framework::DeepSpeed | Framework::HuggingFace, Role::Accumulation) => {
            Some(super::huggingface::GAS)
        }
        (Framework::Megatron, Role::GlobalBatch) => Some("--global-batch-size"),
        (Framework::Megatron, Role::MicroBatch) => Some("--micro-batch-size"),
        (Framework::Megatron, Role::TensorParallel) => Some("--tensor-model-parallel-size"),
        (Framework::Megatron, Role::PipelineParallel) => Some("--pipeline-model-parallel-size"),
        (Framework::Megatron, Role::ContextParallel) => Some("--context-parallel-size"),
        (Framework::HuggingFace, Role::MicroBatch) => Some(super::huggingface::MICRO),
        (Framework::Lightning, Role::Accumulation) => Some(super::lightning::ACC),
        (Framework::Lightning, Role::MicroBatch) => Some("batch_size"),
        (Framework::NeMo | Framework::Axolotl, Role::MicroBatch) => Some("micro_batch_size"),
        (Framework::NeMo, Role::GlobalBatch) => Some("global_batch_size"),
        (Framework::Axolotl, Role::Accumulation) => Some("gradient_accumulation_steps"),
        (Framework::Axolotl, Role::GlobalBatch) => Some("batch_size"),
        (Framework::LitGpt, Role::MicroBatch) => Some("train.micro_batch_size"),
        (Framework::LitGpt, Role::GlobalBatch) => Some("train.global_batch_size"),
        _ => None,
    }
}

/// The message and help of a plan finding (`accum::plan::…`) in
/// `framework`'s own words: each of accum's role keys that the framework writes under a key
/// of its own is named by that key (`global_batch = 32` is
/// `train_batch_size = 32` in a DeepSpeed file), and a flag takes its value
/// as a command line does (`--global-batch-size 32`). Roles the framework
/// has no key for keep accum's name.
pub(crate) fn in_framework_keys(framework: Framework, finding: &mut Diagnostic) {
    if finding.finding.code.family() != accum_core::Family::Plan {
        return;
    }
    let name = |role| key_of(framework, role);
    finding.finding.message = rename_keys(&finding.finding.message, name);
    if let Some(fix) = &mut finding.finding.fix {
        fix.text = rename_keys(&fix.text, name);
    }
}

/// `text` with every role key that `name` names replaced, at word
/// boundaries; `key = value` becomes `--flag value` for a flag.
fn rename_keys(text: &str, name: impl Fn(Role) -> Option<&'static str>) -> String {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let at_word = out.chars().next_back().is_none_or(|p| !word(p));
        let found = at_word
            .then(|| {
                Role::ALL.into_iter().find_map(|role| {
                    let after = rest.strip_prefix(role.key())?;
                    if after.chars().next().is_some_and(word) {
                        return None;
                    }
                    Some((name(role)?, after))
                })
            })
            .flatten();
        match found {
            Some((key, after)) => {
                out.push_str(key);
                rest = match after.strip_prefix(" = ") {
                    Some(value) if key.starts_with("--") => {
                        out.push(' ');
                        value
                    }
                    _ => after,
                };
            }
            None => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

/// The `[run]` of an imported file: named after the file (without
/// directories and extension), with a note saying where it came from.
pub(crate) fn run_section(framework: Framework, name: &str) -> RunSection {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let stem = base.split('.').next().unwrap_or(base);
    RunSection {
        name: Some(if stem.is_empty() { "imported" } else { stem }.to_owned()),
        notes: Some(format!("imported from {framework} file {name} by accum")),
    }
}

/// A plan error as a finding at `range`: its code, role, message, label
/// and fix, as `accum validate` reports the same mistake in accum's own
/// config.
pub(crate) fn plan_finding(err: &PlanError, path: Vec<String>, range: Range<usize>) -> Diagnostic {
    Diagnostic::new(Finding::from_error(err, path.into()), Location::at(range))
}

/// As [`plan_finding`], in a file of `framework` read as `doc`: the fix's
/// plan values also as edits of the file, one suggestion per alternative,
/// each for a person to choose (another plan value changes the training).
/// An alternative is offered when each value it sets is written in the
/// file under the framework's key, or is the one the framework fills in
/// from the others ([`fills_in`]).
pub(crate) fn plan_finding_in(
    framework: Framework,
    doc: &Document,
    err: &PlanError,
    path: Vec<String>,
    range: Range<usize>,
) -> Diagnostic {
    let mut diagnostic = plan_finding(err, path, range);
    let finding = &diagnostic.finding;
    let options = finding.fix.as_ref().map_or(&[][..], |fix| &fix.options[..]);
    let fixes = options
        .iter()
        .filter_map(|option| plan_option(framework, doc, option, finding.path.segments()))
        .collect();
    diagnostic.fixes = fixes;
    diagnostic
}

/// One alternative of a plan fix as edits of a framework's file.
fn plan_option(
    framework: Framework,
    doc: &Document,
    option: &[Edit],
    at: &[String],
) -> Option<Suggestion> {
    let mut settings = Vec::new();
    let mut filled = false;
    for edit in option {
        let key = key_of(framework, edit.role);
        let place = key.and_then(|key| place_of(doc, key, at));
        match place.and_then(|path| set_scalar(doc, &path, &edit.value.to_string())) {
            Some(text) => {
                settings.push((
                    format!("{} = {}", key.unwrap_or_default(), edit.value),
                    text,
                ));
            }
            None if fills_in(framework, edit.role) && !filled => filled = true,
            None => return None,
        }
    }
    setting(settings)
}

/// Where `key` (dotted for a nested one) is written in `doc`: at the root,
/// or beside the value at `at` (a NeMo file's `model.micro_batch_size`
/// beside its `model.global_batch_size`).
fn place_of(doc: &Document, key: &str, at: &[String]) -> Option<Vec<String>> {
    let segments: Vec<String> = key.split('.').map(str::to_owned).collect();
    let beside = at
        .split_last()
        .map(|(_, parent)| [parent, &segments[..]].concat());
    std::iter::once(segments)
        .chain(beside)
        .find(|path| doc.node(path).is_some())
}

/// Whether `framework` computes the value of `role` itself when its file
/// leaves it out, so that a fix need not write it:
/// - DeepSpeed fills in the missing one of `train_batch_size`,
///   `train_micro_batch_size_per_gpu` and `gradient_accumulation_steps`
///   from the other two (`deepspeed/runtime/config.py`,
///   `DeepSpeedConfig._set_batch_related_parameters`, as `deepspeed/fill.rs`
///   reproduces it);
/// - Megatron-LM and NeMo take the accumulation as `global / (micro × D)`
///   (`megatron/core/num_microbatches_calculator.py`,
///   `ConstantNumMicroBatchesCalculator`; see `megatron/mod.rs` and
///   `lightning/nemo.rs`), and LitGPT as `global // D // micro`
///   (`litgpt/args.py`, `TrainArgs.gradient_accumulation_iters`).
///
/// Every alternative of a plan fix divides exactly, so the value computed is
/// the alternative's.
const fn fills_in(framework: Framework, role: Role) -> bool {
    matches!(
        (framework, role),
        (
            Framework::DeepSpeed,
            Role::GlobalBatch | Role::MicroBatch | Role::Accumulation
        ) | (
            Framework::Megatron | Framework::NeMo | Framework::LitGpt,
            Role::Accumulation
        )
    )
}

/// The partial last group, with what the framework does with it. Returns the
/// finding when the data does not fill whole groups.
pub(crate) fn partial_group_finding(
    plan: &Plan,
    examples: u64,
    severity: Severity,
    behaviour: &str,
    help: &str,
    range: Range<usize>,
) -> Option<Diagnostic> {
    let b = plan.effective_batch().get();
    let rest = examples % b;
    if rest == 0 {
        return None;
    }
    let full = examples / b;
    let mut f = Diagnostic::error(
        Code::PartialGroup,
        vec!["data".into(), "examples".into()],
        format!(
            "{examples} examples = {full} updates of B = {b} examples + a partial group of {rest} examples \
             ({} of {} microbatches per replica); {behaviour}",
            rest.div_ceil(plan.micro_batch().saturating_mul(plan.replicas()).max(1)),
            plan.accumulation()
        ),
    )
    .help(format!(
        "{help}; or use {} or {} examples so that every group is whole",
        full * b,
        (full + 1).saturating_mul(b)
    ))
    .at(range, format!("groups of {} microbatches", plan.accumulation()));
    if severity == Severity::Warning {
        f = f.warning();
    }
    Some(f)
}

/// The world size the options give (`--world-size` or `--num-processes`).
pub(crate) fn world_from_options(opts: &ImportOptions) -> Option<u64> {
    opts.world_size.or(opts.num_processes)
}

/// One YAML or JSON file of training arguments, YAML read as `loader`
/// reads it, then read by `read`: strings
/// that hold numbers are numbers there (`"1e-4"`, as LightningCLI's and
/// axolotl's parsers take them).
pub(crate) fn read_arguments(
    name: &str,
    text: &str,
    loader: crate::source::YamlLoader,
    read: impl FnOnce(&mut Reader) -> Option<FrameworkBatch>,
) -> Result<Reading, ImportError> {
    let mut r = Reader::parse(name, text, Some(loader))?;
    r.strings_are_numbers = true;
    let batch = read(&mut r);
    Ok(Reading {
        files: vec![r.into_report()],
        batch,
    })
}

/// As [`read_arguments`], for a dialect that loads with OmegaConf under
/// Hydra: the file composed with the files of its config tree that its
/// `defaults:` list names (`compose.rs`), when it was read from disk; each
/// finding is given back to the file it points into.
pub(crate) fn read_composed(
    name: &str,
    text: &str,
    opts: &ImportOptions,
    loader: crate::source::YamlLoader,
    read: impl FnOnce(&mut Reader) -> Option<FrameworkBatch>,
) -> Result<Reading, ImportError> {
    let mut r = Reader::parse(name, text, Some(loader))?;
    r.strings_are_numbers = true;
    let composed = opts
        .origin
        .as_deref()
        .filter(|_| matches!(r.doc.format, crate::source::SourceFormat::Yaml))
        .and_then(|path| super::compose::compose(&r.doc, path));
    if let Some(c) = &composed {
        r.doc = c.doc.clone();
        r.findings.extend(c.findings.iter().cloned());
    }
    let batch = read(&mut r);
    let report = r.into_report();
    let files = match composed {
        Some(c) => c.split(report),
        None => vec![report],
    };
    Ok(Reading { files, batch })
}

/// The plan of a framework that states the microbatch and the accumulation
/// of each process and counts the replicas from its layout.
pub(crate) fn per_process_plan(
    micro_batch: u64,
    accumulation: u64,
    layout: Layout,
    seq_len: Option<u64>,
) -> Result<Plan, PlanError> {
    PlanInput {
        micro_batch: Some(micro_batch),
        accumulation: Some(accumulation),
        replicas: None,
        layout: Some(layout),
        seq_len,
        global_batch: None,
    }
    .resolve()
}

/// The layout of `world` processes with the model-parallel degrees
/// `[tensor, pipeline, context]`, and its data-parallel replicas; `None`
/// when the degrees do not divide the world (the finding is pushed).
pub(crate) fn layout_of(
    r: &mut Reader,
    world: u64,
    [tp, pp, cp]: [u64; 3],
    root: &Range<usize>,
) -> Option<(Layout, u64)> {
    let layout = Layout::new(world, tp, pp, cp);
    match layout.replicas() {
        Ok(d) => Some((layout, d)),
        Err(err) => {
            r.push(plan_finding(&err, vec![], root.clone()));
            None
        }
    }
}

/// The model-parallel degrees the options give (1 when not given).
pub(crate) fn option_degrees(opts: &ImportOptions) -> [u64; 3] {
    [
        opts.tensor.unwrap_or(1),
        opts.pipeline.unwrap_or(1),
        opts.context.unwrap_or(1),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_without_a_finding_still_says_what_happened() {
        let reading = Reading {
            files: vec![FileReport {
                name: "ds.json".into(),
                text: "{}".into(),
                findings: Vec::new(),
                unread: Vec::new(),
                named_inside: false,
            }],
            batch: None,
        };
        let Err(ImportError::Invalid { files }) = finish(
            Framework::DeepSpeed,
            "ds.json",
            &ImportOptions::default(),
            reading,
        ) else {
            panic!("a reading without a batch is refused");
        };
        let errors: Vec<&str> = files[0]
            .findings
            .iter()
            .filter(|f| f.finding.severity == Severity::Error)
            .map(|f| f.finding.message.as_str())
            .collect();
        assert_eq!(errors, [READER_GAP]);
    }

    /// A plan fix's alternatives as edits under the framework's keys: a
    /// key beside the finding's (NeMo's `model.global_batch_size`), a
    /// value the framework computes left out, and an alternative that sets
    /// a value the file has no key for not offered.
    #[test]
    fn plan_fixes_are_written_under_the_frameworks_keys() {
        use crate::fix::Applicability;
        use crate::source::{Document, SourceFormat};
        let err = PlanInput {
            micro_batch: Some(4),
            accumulation: None,
            replicas: Some(8),
            layout: None,
            seq_len: None,
            global_batch: Some(100),
        }
        .resolve()
        .expect_err("100 is not a multiple of 32");
        let yaml = "model:\n  micro_batch_size: 4   # m\n  global_batch_size: 100\n";
        let doc =
            Document::parse("nemo.yaml".into(), yaml.into(), SourceFormat::Yaml).expect("parses");
        let path = vec!["model".to_owned(), "global_batch_size".to_owned()];
        let finding = plan_finding_in(Framework::NeMo, &doc, &err, path, 0..0);
        let fixed: Vec<String> = finding
            .fixes
            .iter()
            .map(|s| {
                assert_eq!(s.applicability, Applicability::Review);
                crate::fix::apply(yaml, &[s]).expect("applies")
            })
            .collect();
        assert_eq!(
            fixed,
            [yaml.replace("100", "96"), yaml.replace("100", "128")]
        );
        // The Trainer has no key for the global batch: a file of its keys
        // gets no alternative that changes it.
        let hf = "per_device_train_batch_size: 4\n";
        let doc = Document::parse("hf.yaml".into(), hf.into(), SourceFormat::Yaml).expect("parses");
        let finding = plan_finding_in(Framework::HuggingFace, &doc, &err, vec![], 0..0);
        assert!(finding.fixes.is_empty(), "{:?}", finding.fixes);
    }

    /// The help of a plan finding about the same numbers, in each
    /// framework's keys: every role the framework writes is named by its
    /// key, the others keep accum's name.
    #[test]
    fn plan_help_names_each_frameworks_own_keys() {
        use accum_core::plan::Violation;
        let err = PlanError::from(Violation::GlobalBatchMismatch {
            global_batch: 60,
            micro_batch: 8,
            accumulation: 4,
            replicas: 2,
        });
        let help = |framework| {
            let mut finding = plan_finding(&err, vec![], 0..0);
            in_framework_keys(framework, &mut finding);
            finding.help_text().expect("a help").to_owned()
        };
        assert_eq!(
            help(Framework::DeepSpeed),
            "keep train_batch_size = 60 with train_micro_batch_size_per_gpu = 6 and gradient_accumulation_steps = 5, \
             or train_micro_batch_size_per_gpu × gradient_accumulation_steps = 5 × 6, 3 × 10 or 2 × 15; \
             or use train_batch_size = 48 (gradient_accumulation_steps = 3) or 64 (gradient_accumulation_steps = 4)"
        );
        assert!(
            help(Framework::Megatron).starts_with(
                "keep --global-batch-size 60 with --micro-batch-size 6 and accumulation = 5, "
            ),
            "{}",
            help(Framework::Megatron)
        );
        for framework in Framework::ALL {
            let text = help(framework);
            for role in [Role::MicroBatch, Role::Accumulation, Role::GlobalBatch] {
                match key_of(framework, role) {
                    Some(key) => {
                        assert!(text.contains(key), "{framework:?}: {text}");
                        assert!(
                            !text.contains(&format!("{role} ="))
                                && !text.contains(&format!("{role} ×")),
                            "{framework:?} names {role}: {text}"
                        );
                    }
                    None => assert!(text.contains(role.key()), "{framework:?}: {text}"),
                }
            }
        }
        // A word that only contains a key, and findings of other families,
        // are left as they are.
        assert_eq!(
            rename_keys("set micro_batch_size or a global_batch", |_| Some("x")),
            "set micro_batch_size or a x"
        );
        let mut other = Diagnostic::error(Code::Unread, vec![], "m").help("micro_batch = 2");
        in_framework_keys(Framework::DeepSpeed, &mut other);
        assert_eq!(other.help_text(), Some("micro_batch = 2"));
    }
}
