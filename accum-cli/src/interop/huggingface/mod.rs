//! Hugging Face `TrainingArguments`, as JSON (`to_json_string()`) or as the
//! YAML recipes of TRL, alignment-handbook and LLaMA-Factory (read by
//! `HfArgumentParser.parse_yaml_file`), with the DeepSpeed file they name
//! (`deepspeed: ds_z3.json`) and the Accelerate config the run is launched
//! with (`--accelerate-config`).
//!
//! The effective batch is `per_device_train_batch_size ×
//! gradient_accumulation_steps × processes`; the Trainer's `max_steps`,
//! `warmup_steps` and `logging_steps` count optimizer updates
//! (`state.global_step` advances once per accumulation group). With
//! DeepSpeed, `"auto"` values are filled from the arguments and numbers must
//! match them (`transformers/integrations/deepspeed.py`,
//! `HfTrainerDeepSpeedConfig.trainer_config_process`, `fill_match`).

mod accelerate;
mod export;

use crate::source::YamlLoader;
use accum_core::Code;
use accum_core::plan::LastGroup;
use accum_core::settings::{OptimizerKind, PrecisionMode, ScheduleKind};
use accum_core::{Span, UnitKind};

pub(crate) use export::export;

use self::accelerate::Launch;
use super::deepspeed::{self, TrainerFill};
use super::dialect::{
    Dialect, FrameworkBatch, LastGroupRule, LossRule, Reading, layout_of, option_degrees,
    per_process_plan, plan_finding_in,
};
use super::reader::{Reader, owned};
use super::{FileReport, Framework, ImportError, ImportOptions, files};
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::named::{self, Lookup, Refusal};
use crate::source::{MAX_FILE_BYTES, NodeKind};

pub(crate) const MICRO: &str = "per_device_train_batch_size";
pub(crate) const GAS: &str = "gradient_accumulation_steps";
pub(crate) const AVG: &str = "average_tokens_across_devices";

/// `TrainingArguments.per_device_train_batch_size`'s default.
const DEFAULT_MICRO: u64 = 8;

/// The Hugging Face Trainer dialect.
pub(crate) struct HuggingFace;

impl Dialect for HuggingFace {
    const FRAMEWORK: Framework = Framework::HuggingFace;

    fn read(name: &str, text: &str, opts: &ImportOptions) -> Result<Reading, ImportError> {
        // `HfArgumentParser.parse_yaml_file` reads with `yaml.safe_load`
        // (`transformers/hf_argparser.py`).
        let mut r = Reader::parse(name, text, Some(YamlLoader::PyYaml11))?;
        r.strings_are_numbers = true;
        let root = r.range_of(&[]);
        let mut extra: Vec<FileReport> = Vec::new();

        // Files of other tools, read as TrainingArguments, would give a
        // wrong batch: refuse them by name.
        if r.has(&["micro_batch_size"]) && !r.has(&[MICRO]) {
            let range = r.key_range(&["micro_batch_size"]);
            r.push(
                Diagnostic::error(
                    Code::Dialect,
                    owned(&["micro_batch_size"]),
                    "micro_batch_size is not an argument of the Trainer (it is axolotl's and Megatron's name for the micro-batch): the Trainer would take per_device_train_batch_size's default of 8 instead",
                )
                .help("write per_device_train_batch_size; or, if the file is another framework's, import it as that one (`accum import axolotl FILE`, or the file alone: accum names the framework its keys identify)")
                .at(range, "not the Trainer's key"),
            );
            return Ok(refused(r, extra));
        }
        if r.has(&["distributed_type"]) || r.has(&["compute_environment"]) {
            r.push(
                Diagnostic::error(
                    Code::Dialect,
                    vec![],
                    "this is an Accelerate config: it gives the processes, not the Trainer's batch",
                )
                .help(
                    "give the TrainingArguments file as FILE and this one with --accelerate-config",
                )
                .at(root, "Accelerate config"),
            );
            return Ok(refused(r, extra));
        }

        let Some(m) = count(&mut r, MICRO, DEFAULT_MICRO) else {
            return Ok(refused(r, extra));
        };
        let Some(a) = count(&mut r, GAS, 1) else {
            return Ok(refused(r, extra));
        };

        // Processes: the options, or the Accelerate config.
        let mut launch = match &opts.accelerate_config {
            Some(path) => match accelerate::read(path) {
                Ok(launch) => Some(launch),
                Err(report) => {
                    extra.push(*report);
                    return Ok(refused(r, extra));
                }
            },
            None => None,
        };
        let given = super::dialect::world_from_options(opts);
        let world = match (given, launch.as_ref().and_then(|l| l.processes)) {
            (Some(g), Some(l)) if g != l => {
                r.push(
                    Diagnostic::error(
                        Code::InteropWorldSize,
                        vec![],
                        format!("the world size given is {g}, but the Accelerate config launches {l} processes"),
                    )
                    .warning()
                    .help("make them agree; accum uses the Accelerate config")
                    .at(root.clone(), "process count"),
                );
                l
            }
            (_, Some(l)) => l,
            (Some(g), None) => g,
            (None, None) => {
                r.push(
                    Diagnostic::error(
                        Code::Missing,
                        vec![],
                        "the number of processes is not in TrainingArguments: the launcher (Accelerate's num_processes, torchrun) decides it",
                    )
                    .help("give --num-processes N, or the Accelerate config with --accelerate-config FILE")
                    .at(root, "process count needed"),
                );
                if let Some(l) = launch {
                    extra.push(l.report);
                }
                return Ok(refused(r, extra));
            }
        };
        let [tp, pp, cp] = option_degrees(opts);
        let Some((layout, replicas)) = layout_of(&mut r, world, [tp, pp, cp], &root) else {
            return Ok(refused(r, extra));
        };
        let model_parallel = tp * pp * cp > 1;
        if model_parallel {
            r.push(
                Diagnostic::error(
                    Code::ModelParallelReplicas,
                    owned(&[MICRO]),
                    format!(
                        "the Trainer's batch arithmetic {MICRO} {m} × {GAS} {a} × processes {world} = {} counts the tensor {tp} × pipeline {pp} × context {cp} devices of each model copy as replicas; the data-parallel replicas are D = {world} / {} = {replicas}, so B = {}",
                        m.saturating_mul(a).saturating_mul(world),
                        tp * pp * cp,
                        m.saturating_mul(a).saturating_mul(replicas)
                    ),
                )
                .warning()
                .help("check that the sampler shards by data-parallel rank, and use B = m·A·D for the schedule and learning rate")
                .at(r.range_of(&[MICRO]), "per device, not per replica"),
            );
        }
        let plan = match per_process_plan(m, a, layout, opts.seq_len) {
            Ok(plan) => plan,
            Err(err) => {
                let range = r.range_of(&[MICRO]);
                r.push(plan_finding_in(
                    crate::interop::Framework::HuggingFace,
                    &r.doc,
                    &err,
                    owned(&[MICRO]),
                    range,
                ));
                return Ok(refused(r, extra));
            }
        };

        let mut settings = settings(&mut r);
        let total = settings.schedule.total.map(|t| t.value());
        let fill = TrainerFill {
            micro: m,
            gas: a,
            world,
            max_grad_norm: settings.optimizer.clip_norm.unwrap_or(1.0),
            lr: settings.optimizer.lr.unwrap_or(5e-5),
            fp16: settings.precision.mode == Some(PrecisionMode::Fp16),
            bf16: settings.precision.mode == Some(PrecisionMode::Bf16),
            total_steps: total,
            warmup_steps: settings.schedule.warmup.map(|w| w.value()),
            auto_find_batch_size: r.truthy(&["auto_find_batch_size"]),
        };
        if let Some(l) = &launch {
            accelerate::check_gas(&mut r, l, a);
        }
        // The DeepSpeed file: the option, `deepspeed:`, or the Accelerate config's.
        if let Some((ds, named_inside)) = deepspeed_file(&mut r, opts, launch.as_mut()) {
            let mut dr = ds;
            dr.strings_are_numbers = false;
            if let Some(c) = deepspeed::read_config(&mut dr, world, opts, Some(&fill)) {
                // DeepSpeed's scheduler and optimizer run the training when
                // the file has them.
                if c.settings.schedule.kind.is_some() {
                    settings.schedule = c.settings.schedule;
                }
                if c.settings.optimizer.kind.is_some() {
                    settings.optimizer = c.settings.optimizer;
                }
            }
            let mut report = dr.into_report();
            report.named_inside = named_inside;
            extra.push(report);
        }
        if let Some(l) = launch {
            extra.push(l.report);
        }

        // `accum::run::normalization`: per-token normalization across devices.
        let avg = r.bool(&[AVG]);
        let loss = match &avg {
            Some(v) if !v.value => LossRule::MicrobatchMean(
                Diagnostic::error(
                    Code::PerToken,
                    owned(&[AVG]),
                    format!(
                        "{AVG} is false: each of the {replicas} replicas divides its loss by its own token count and the gradients are then averaged, a mean of means when lengths vary"
                    ),
                )
                .help(format!("set {AVG} to true so that the loss is divided by the tokens of the whole group on all devices"))
                .at(v.range.clone(), "local token count"),
            ),
            Some(_) => LossRule::PerToken,
            None => LossRule::PerTokenIfDefault(
                Diagnostic::error(
                    Code::PerToken,
                    owned(&[AVG]),
                    format!("{AVG} is not set and its default differs between transformers versions; with variable lengths the loss must be divided by the tokens of the whole group on all devices"),
                )
                .warning()
                .help(format!("set {AVG} to true"))
                .at(r.range_of(&[]), "not set"),
            ),
        };
        // `accum::plan::partial-group`: the Trainer runs the partial last group as one more update.
        let drop_last = r.truthy(&["dataloader_drop_last"]);
        let range = r.range_of(&[GAS]);
        let last_group = LastGroupRule {
            policy: LastGroup::Process,
            severity: Severity::Warning,
            behaviour: format!(
                "the Trainer runs it as one more update with the microbatches that remain, normalized by the items really in it when the model takes num_items_in_batch{}",
                if drop_last {
                    "; dataloader_drop_last drops the last incomplete microbatch first"
                } else {
                    ""
                }
            ),
            help: "this matches last_group \"process\"".to_owned(),
            range,
        };
        let parallel = model_parallel.then(|| accum_core::config::ParallelSection {
            world_size: world,
            tensor: (tp > 1).then_some(tp),
            pipeline: (pp > 1).then_some(pp),
            context: (cp > 1).then_some(cp),
        });
        let mut files = vec![r.into_report()];
        files.extend(extra);
        Ok(Reading {
            files,
            batch: Some(FrameworkBatch {
                plan,
                parallel,
                settings,
                schedule: None,
                staged: None,
                step_lengths: Vec::new(),
                loss,
                last_group,
            }),
        })
    }
}

fn refused(r: Reader, extra: Vec<FileReport>) -> Reading {
    let mut files = vec![r.into_report()];
    files.extend(extra);
    Reading { files, batch: None }
}

/// A count ≥ 1 with the Trainer's default when absent; `None` when unreadable.
fn count(r: &mut Reader, key: &str, default: u64) -> Option<u64> {
    if !r.has(&[key]) {
        return Some(default);
    }
    r.uint(&[key], 1).map(|v| v.value)
}

/// The DeepSpeed file the run uses, parsed, and whether a file named it
/// (its findings then quote only their line); a finding when it is named
/// but not read. The Trainer takes `deepspeed` as a path or a dict: an
/// empty string turns DeepSpeed off (`TrainingArguments.__post_init__` in
/// transformers' `src/transformers/training_args.py` tests `if
/// self.deepspeed:`, then hands it to `HfTrainerDeepSpeedConfig`), and a
/// path is opened relative to the working directory (accelerate's
/// `src/accelerate/utils/deepspeed.py`, `HfDeepSpeedConfig.__init__`:
/// `os.path.exists`, then `io.open`).
fn deepspeed_file(
    r: &mut Reader,
    opts: &ImportOptions,
    launch: Option<&mut Launch>,
) -> Option<(Reader, bool)> {
    let recipe = r.str(&["deepspeed"]).filter(|s| !s.value.is_empty());
    let (shown, text, range, named_inside) = if let Some(path) = &opts.deepspeed_config {
        // Named on the command line: read as given.
        let shown = path.display().to_string();
        let range = r.range_of(&[]);
        match files::read(path) {
            Ok(text) => (shown, text, range, false),
            Err(reason) => {
                r.push(
                    Diagnostic::error(
                        Code::File,
                        owned(&["deepspeed"]),
                        format!("the DeepSpeed file {shown} cannot be read: {reason}"),
                    )
                    .warning()
                    .help("give a readable file with --deepspeed-config FILE")
                    .at(range, "file not read"),
                );
                return None;
            }
        }
    } else if let Some(named) = recipe {
        let lookup = Lookup::new(opts.search_dirs.clone(), &opts.allow_paths);
        match lookup.read(&named.value, MAX_FILE_BYTES) {
            Ok(found) => (
                found.shown.display().to_string(),
                found.text,
                named.range,
                true,
            ),
            Err(refusal) => {
                r.push(not_read(
                    &refusal,
                    &named.value,
                    "the recipe",
                    owned(&["deepspeed"]),
                    named.range,
                ));
                return None;
            }
        }
    } else if let Some(launch) = launch
        && let Some((named, range)) = launch.deepspeed_file.clone()
    {
        // Named by the Accelerate config: looked for from there too, and
        // read within its repository.
        let mut dirs = opts.search_dirs.clone();
        let mut allowed = opts.allow_paths.clone();
        if let Some(root) = named::repository_root(&launch.path) {
            dirs.extend(named::search_dirs(&launch.path, &root));
            allowed.push(root);
        }
        match Lookup::new(dirs, &allowed).read(&named, MAX_FILE_BYTES) {
            Ok(found) => (found.shown.display().to_string(), found.text, range, true),
            Err(refusal) => {
                launch.report.findings.push(not_read(
                    &refusal,
                    &named,
                    "the Accelerate config",
                    owned(&["deepspeed_config", "deepspeed_config_file"]),
                    range,
                ));
                return None;
            }
        }
    } else {
        if matches!(
            r.node(&["deepspeed"]).map(|n| &n.kind),
            Some(NodeKind::Table(_))
        ) {
            let range = r.key_range(&["deepspeed"]);
            r.push(
                Diagnostic::error(
                    Code::NotConverted,
                    owned(&["deepspeed"]),
                    "a DeepSpeed config written inline is not checked against the Trainer's arguments",
                )
                .warning()
                .help("save it as a file and name it, or give it with --deepspeed-config")
                .at(range, "inline DeepSpeed config"),
            );
        }
        return None;
    };
    match Reader::parse(&shown, &text, None) {
        Ok(ds) => Some((ds, named_inside)),
        Err(err) => {
            r.push(
                Diagnostic::error(
                    Code::EngineAssert,
                    owned(&["deepspeed"]),
                    format!("DeepSpeed would stop at start-up: it cannot read {err}"),
                )
                .help("fix the DeepSpeed file")
                .at(range, "unreadable DeepSpeed file"),
            );
            None
        }
    }
}

/// The finding for a DeepSpeed file named inside `input` (`the recipe`)
/// that is not read: why and the fix, and nothing read from the file.
fn not_read(
    refusal: &Refusal,
    named: &str,
    input: &str,
    path: Vec<String>,
    range: std::ops::Range<usize>,
) -> Diagnostic {
    const UNCHECKED: &str = "so its values are not checked against the Trainer's";
    let (message, help, label) = match refusal {
        Refusal::ControlCharacter(c) => (
            format!(
                "the DeepSpeed file named in {input} holds a control character (U+{c:04X}) in its name; it is not read, {UNCHECKED}"
            ),
            "write the file's name without control characters, or give the file with --deepspeed-config FILE".to_owned(),
            "control character in the name",
        ),
        Refusal::Outside { .. } => (
            format!(
                "the DeepSpeed file `{named}` is outside the repository of {input} and is not read, {UNCHECKED}"
            ),
            "a file named inside an input is read only within the input's repository (the nearest folder above it with .git, else its folder), so that a file from elsewhere cannot make accum read /etc/passwd or a secret beside the checkout: allow the folder with --allow-path DIR, or give the file with --deepspeed-config FILE".to_owned(),
            "outside the repository",
        ),
        Refusal::NotFound { tried } => (
            format!(
                "the DeepSpeed file `{named}` is not found (looked in {}), {UNCHECKED}",
                tried
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "give it with --deepspeed-config FILE".to_owned(),
            "file not found",
        ),
        Refusal::Unreadable { shown, reason } => (
            format!(
                "the DeepSpeed file {} cannot be read: {reason}",
                shown.display()
            ),
            "give a readable file with --deepspeed-config FILE".to_owned(),
            "file not read",
        ),
    };
    Diagnostic::error(Code::File, path, message)
        .warning()
        .help(help)
        .at(range, label)
}

/// Lengths, logging, precision, clipping and the optimizer, as the Trainer
/// reads them; only the keys the file sets.
fn settings(r: &mut Reader) -> accum_core::config::partial::PartialConfig {
    let mut c = accum_core::config::partial::PartialConfig::default();
    let max_steps = r
        .int(&["max_steps"])
        .filter(|v| v.value > 0)
        .and_then(|v| u64::try_from(v.value).ok());
    c.schedule.total = max_steps.map(|v| Span::new(v, UnitKind::Update));
    // warmup_steps: updates; a float below 1 is a ratio (transformers v5).
    let ratio_steps = match r.node(&["warmup_steps"]).map(|n| &n.kind) {
        Some(NodeKind::Float(f)) if *f > 0.0 && *f < 1.0 => r.float(&["warmup_steps"]),
        _ => {
            c.schedule.warmup = r
                .uint(&["warmup_steps"], 0)
                .filter(|v| v.value > 0)
                .map(|v| Span::new(v.value, UnitKind::Update));
            None
        }
    };
    let ratio = ratio_steps.or_else(|| r.float(&["warmup_ratio"]).filter(|v| v.value > 0.0));
    if c.schedule.warmup.is_none()
        && let (Some(ratio), Some(total)) = (ratio, max_steps)
    {
        // TrainingArguments.get_warmup_steps: math.ceil(num_training_steps * warmup_ratio),
        // in floating point; the exact product comes from the text.
        let engine = (ratio.value * total as f64).ceil();
        if (0.0..9.0e15).contains(&engine) {
            let steps = engine as u64;
            let written = r
                .doc
                .text
                .get(ratio.range.clone())
                .unwrap_or("")
                .trim()
                .trim_matches('"')
                .to_owned();
            if let Some((whole, exact)) = exact_product(total, &written)
                && whole != Some(steps)
            {
                r.push(
                    Diagnostic::error(
                        Code::Rounds,
                        ratio.path.clone(),
                        format!(
                            "the Trainer computes the warmup as ceil(max_steps {total} × warmup_ratio {written}) in floating point = ceil({}) = {steps} updates; the exact product is {exact}",
                            ratio.value * total as f64
                        ),
                    )
                    .warning()
                    .help(format!("write warmup_steps {steps} to state it"))
                    .at(ratio.range.clone(), "rounded up"),
                );
            }
            c.schedule.warmup = Some(Span::new(steps, UnitKind::Update));
        }
    }
    c.schedule.kind = r
        .str(&["lr_scheduler_type"])
        .and_then(|s| scheduler_kind(&s.value));
    if matches!(
        r.node(&["logging_steps"]).map(|n| &n.kind),
        Some(NodeKind::Integer(_))
    ) {
        c.log.every = r
            .uint(&["logging_steps"], 1)
            .map(|v| Span::new(v.value, UnitKind::Update));
    }
    // Precision (`accum::run::loss-scale`): the Trainer refuses both.
    let fp16 = r.truthy(&["fp16"]);
    let bf16 = r.truthy(&["bf16"]);
    if fp16 && bf16 {
        let range = r.range_of(&["bf16"]);
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                owned(&["bf16"]),
                "the Trainer would stop at start-up: fp16 and bf16 are both true (TrainingArguments allows at most one)",
            )
            .help("set one of them")
            .at(range, "second precision"),
        );
    }
    c.precision.mode = if fp16 {
        Some(PrecisionMode::Fp16)
    } else if bf16 {
        Some(PrecisionMode::Bf16)
    } else {
        None
    };
    // max_grad_norm 0 disables clipping: kept as 0.
    c.optimizer.clip_norm = r.float(&["max_grad_norm"]).map(|v| v.value);
    c.optimizer.lr = r.float(&["learning_rate"]).map(|v| v.value);
    c.optimizer.weight_decay = r.float(&["weight_decay"]).map(|v| v.value);
    c.optimizer.eps = r.float(&["adam_epsilon"]).map(|v| v.value);
    if let (Some(b1), Some(b2)) = (r.float(&["adam_beta1"]), r.float(&["adam_beta2"])) {
        c.optimizer.betas = Some([b1.value, b2.value]);
    }
    c.optimizer.kind = r.str(&["optim"]).and_then(|o| {
        let o = o.value.to_ascii_lowercase();
        if o.starts_with("adamw") || o.starts_with("paged_adamw") {
            Some(OptimizerKind::AdamW)
        } else if o == "sgd" {
            Some(OptimizerKind::Sgd)
        } else {
            None
        }
    });
    c
}

/// `count × decimal` computed exactly from the decimal's text ("0.03"):
/// the whole result when it is whole, and its decimal rendering. `None`
/// when the text is not a plain decimal (an exponent, a sign).
pub(crate) fn exact_product(count: u64, decimal: &str) -> Option<(Option<u64>, String)> {
    let (int, frac) = decimal.split_once('.').unwrap_or((decimal, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 18
    {
        return None;
    }
    let digits: u128 = format!("{int}{frac}").parse().ok()?;
    let scale = 10u128.checked_pow(u32::try_from(frac.len()).ok()?)?;
    let product = digits.checked_mul(u128::from(count))?;
    let (whole, rest) = (product / scale, product % scale);
    let text = if rest == 0 {
        whole.to_string()
    } else {
        let frac_text = format!("{rest:0width$}", width = frac.len());
        format!("{whole}.{}", frac_text.trim_end_matches('0'))
    };
    Some((
        (rest == 0).then(|| u64::try_from(whole).ok()).flatten(),
        text,
    ))
}

/// The Trainer's `lr_scheduler_type` name of a schedule kind
/// (`transformers/trainer_utils.py`, `SchedulerType`); axolotl hands its
/// `lr_scheduler` on as the same name.
pub(crate) fn scheduler_name(kind: ScheduleKind) -> &'static str {
    match kind {
        ScheduleKind::Constant => "constant_with_warmup",
        ScheduleKind::Linear => "linear",
        ScheduleKind::Cosine => "cosine",
    }
}

/// The schedule kind of a Trainer scheduler name, when accum has it.
pub(crate) fn scheduler_kind(name: &str) -> Option<ScheduleKind> {
    [
        ScheduleKind::Constant,
        ScheduleKind::Linear,
        ScheduleKind::Cosine,
    ]
    .into_iter()
    .find(|&kind| scheduler_name(kind) == name)
}

#[cfg(test)]
mod tests {
    use super::exact_product;

    #[test]
    fn exact_products_from_decimal_text() {
        assert_eq!(
            exact_product(1234, "0.03"),
            Some((None, "37.02".to_owned()))
        );
        assert_eq!(exact_product(100, "0.07"), Some((Some(7), "7".to_owned())));
        assert_eq!(exact_product(3, "1e-2"), None);
        // Python: math.ceil(100 * 0.07) == 8, one more than the exact 7.
        assert_eq!((0.07f64 * 100.0).ceil(), 8.0);
    }
}
