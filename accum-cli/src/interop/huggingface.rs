//! Hugging Face `TrainingArguments` as JSON (as `to_json_string()` writes
//! them), with Accelerate's `num_processes` from the options.
//!
//! The Trainer's `max_steps`, `warmup_steps` and `logging_steps` count
//! optimizer updates (`state.global_step` advances once per accumulation
//! group); the effective batch is `per_device_train_batch_size ×
//! gradient_accumulation_steps × num_processes`. The Trainer runs the last
//! group of an epoch with the microbatches that remain, and with
//! `average_tokens_across_devices` it divides the loss by the tokens of the
//! whole group on all devices.

use accum_core::{LastGroup, Layout, PlanInput, Span, UnitKind};
use serde_json::{Map, Value, json};

use super::{
    Canonical, DataSection, Engine, ExportError, ImportError, ImportOptions, Imported, LogSection,
    LossScale, LossSection, Normalization, OptimizerSection, ParallelSection, PrecisionMode,
    PrecisionSection, Reader, RunSection, ScheduleSection, batch_of, codes, path_of,
};
use crate::diagnostic::{Diagnostic as Finding, Severity};

const MICRO: &str = "per_device_train_batch_size";
const GAS: &str = "gradient_accumulation_steps";
const AVG: &str = "average_tokens_across_devices";

/// torch's `GradScaler` defaults, which the Trainer uses for fp16.
pub(crate) const TORCH_SCALER: LossScale = LossScale {
    init: 65536.0,
    growth_factor: Some(2.0),
    backoff_factor: Some(0.5),
    growth_interval: Some(2000),
};

/// Reads `TrainingArguments` JSON.
pub(crate) fn import(
    name: &str,
    text: &str,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let mut r = Reader::parse(name, text, false)?;
    let root = r.span(&[]);
    let invalid = |findings: Vec<Finding>| ImportError::Invalid {
        name: name.to_owned(),
        findings,
    };

    let m = match r.uint(&[MICRO], 1) {
        Some(v) => v.value,
        None if r.node(&[MICRO]).is_some() => return Err(invalid(r.findings)),
        None => {
            r.push(
                Finding::error(
                    codes::MISSING,
                    path_of(&[MICRO]),
                    format!("`{MICRO}` is not set, so the Trainer's default of 8 applies"),
                )
                .warning()
                .help(format!(
                    "write `{MICRO}` so that the file states the micro-batch"
                ))
                .at(root.clone(), "default micro-batch"),
            );
            8
        }
    };
    let a = match r.uint(&[GAS], 1) {
        Some(v) => v.value,
        None if r.node(&[GAS]).is_some() => return Err(invalid(r.findings)),
        None => 1,
    };

    // Processes: Accelerate's num_processes, or the world size.
    let world = match (opts.num_processes, opts.world_size) {
        (Some(n), Some(w)) if n != w => {
            r.push(
                Finding::error(
                    codes::WORLD_SIZE,
                    vec![],
                    format!("Accelerate's num_processes {n} disagrees with the world size {w}"),
                )
                .help("give one of them, or make them agree; accum uses num_processes")
                .at(root.clone(), "process count"),
            );
            n
        }
        (Some(n), _) | (None, Some(n)) => n,
        (None, None) => {
            r.push(
                Finding::error(
                    codes::MISSING,
                    vec![],
                    "the number of processes is not in TrainingArguments: Accelerate's num_processes decides it",
                )
                .help("give Accelerate's num_processes (--num-processes N)")
                .at(root.clone(), "process count needed"),
            );
            return Err(invalid(r.findings));
        }
    };
    let (tp, pp, cp) = opts.degrees();
    let layout = Layout::new(world, tp, pp, cp);
    let replicas = match layout.replicas() {
        Ok(d) => d,
        Err(err) => {
            r.push(super::plan_finding(&err, vec![], root.clone()));
            return Err(invalid(r.findings));
        }
    };
    if opts.model_parallel() {
        r.push(
            Finding::error(
                codes::MODEL_PARALLEL,
                path_of(&[MICRO]),
                format!(
                    "the Trainer's batch arithmetic {MICRO} {m} × {GAS} {a} × num_processes {world} = {} counts the tensor {tp} × pipeline {pp} × context {cp} devices of each model copy as replicas; the data-parallel replicas are D = {world} / {} = {replicas}, so B = {}",
                    m.saturating_mul(a).saturating_mul(world),
                    tp * pp * cp,
                    m.saturating_mul(a).saturating_mul(replicas)
                ),
            )
            .warning()
            .help("check that the sampler shards by data-parallel rank, and use B = m·A·D for the schedule and learning rate (R3)")
            .at(r.span(&[MICRO]), "per device, not per replica"),
        );
    }
    let plan = match (PlanInput {
        micro_batch: Some(m),
        accumulation: Some(a),
        replicas: None,
        layout: Some(layout),
        seq_len: opts.seq_len,
        global_batch: None,
    })
    .resolve()
    {
        Ok(plan) => plan,
        Err(err) => {
            r.push(super::plan_finding(
                &err,
                path_of(&[MICRO]),
                r.span(&[MICRO]),
            ));
            return Err(invalid(r.findings));
        }
    };

    // Schedule: every *_steps of the Trainer counts optimizer updates.
    let max_steps = r.int(&["max_steps"]).filter(|v| v.value > 0);
    let total = max_steps
        .as_ref()
        .and_then(|v| u64::try_from(v.value).ok())
        .map(|v| Span::new(v, UnitKind::Update));
    if total.is_none()
        && let Some(epochs) = r.float(&["num_train_epochs"])
    {
        r.push(
            Finding::error(
                codes::NOT_CONVERTED,
                path_of(&["num_train_epochs"]),
                format!(
                    "the run length is num_train_epochs {} (max_steps is not set), which depends on the dataset size; schedule.total is left out",
                    epochs.value
                ),
            )
            .warning()
            .help("set max_steps (optimizer updates) to state the run length")
            .at(epochs.span, "epochs, not updates"),
        );
    }
    let mut warmup = None;
    let ratio_from_steps = match r.node(&["warmup_steps"]).map(|n| &n.kind) {
        Some(crate::source::NodeKind::Float(f)) if *f > 0.0 && *f < 1.0 => {
            r.float(&["warmup_steps"])
        }
        _ => {
            warmup = r
                .uint(&["warmup_steps"], 0)
                .filter(|v| v.value > 0)
                .map(|v| Span::new(v.value, UnitKind::Update));
            None
        }
    };
    let ratio = ratio_from_steps.or_else(|| r.float(&["warmup_ratio"]).filter(|v| v.value > 0.0));
    if warmup.is_none()
        && let Some(ratio) = ratio
    {
        match total {
            Some(t) => {
                // The Trainer computes math.ceil(max_steps * ratio) in
                // floating point; the exact product comes from the text.
                let engine = (ratio.value * t.value() as f64).ceil();
                let written = r.doc.text.get(ratio.span.clone()).unwrap_or("").trim().to_owned();
                let exact = exact_product(t.value(), &written);
                if (0.0..9.0e15).contains(&engine) {
                    let steps = engine as u64;
                    let exact_whole = exact.as_ref().and_then(|(q, _)| *q);
                    let exact_text = exact.map_or_else(
                        || format!("{}", ratio.value * t.value() as f64),
                        |(_, text)| text,
                    );
                    if exact_whole != Some(steps) {
                        let float = ratio.value * t.value() as f64;
                        r.push(
                            Finding::error(
                                codes::ROUNDS,
                                ratio.path.clone(),
                                format!(
                                    "the Trainer computes the warmup as ceil(max_steps {} × warmup_ratio {written}) in floating point = ceil({float}) = {steps} updates; the exact product is {exact_text}",
                                    t.value(),
                                ),
                            )
                            .warning()
                            .help(format!("write warmup_steps {steps} to state it"))
                            .at(ratio.span.clone(), "rounded up"),
                        );
                    }
                    warmup = Some(Span::new(steps, UnitKind::Update));
                }
            }
            None => r.push(
                Finding::error(
                    codes::NOT_CONVERTED,
                    ratio.path.clone(),
                    "a warmup ratio without max_steps depends on the dataset size; schedule.warmup is left out",
                )
                .warning()
                .help("set max_steps, or warmup_steps in updates")
                .at(ratio.span.clone(), "ratio of an unknown length"),
            ),
        }
    }
    let schedule =
        (warmup.is_some() || total.is_some()).then_some(ScheduleSection { warmup, total });
    let log = match r.node(&["logging_steps"]).map(|n| &n.kind) {
        Some(crate::source::NodeKind::Float(f)) if *f > 0.0 && *f < 1.0 => {
            let span = r.span(&["logging_steps"]);
            r.push(
                Finding::error(
                    codes::NOT_CONVERTED,
                    path_of(&["logging_steps"]),
                    format!(
                        "logging_steps {f} is a ratio of the run length; log.every is left out"
                    ),
                )
                .warning()
                .help("write logging_steps as a whole number of updates")
                .at(span, "ratio"),
            );
            None
        }
        _ => r.uint(&["logging_steps"], 1).map(|v| LogSection {
            every: Span::new(v.value, UnitKind::Update),
        }),
    };

    // Precision (R7): the Trainer's fp16 uses torch's GradScaler defaults.
    let fp16 = r.bool(&["fp16"]).is_some_and(|v| v.value);
    let bf16 = r.bool(&["bf16"]).is_some_and(|v| v.value);
    if fp16 && bf16 {
        let span = r.span(&["bf16"]);
        r.push(
            Finding::error(
                codes::VALUE,
                path_of(&["bf16"]),
                "fp16 and bf16 are both true; the Trainer refuses this",
            )
            .help("set one of them")
            .at(span, "second precision"),
        );
    }
    let precision = if fp16 {
        PrecisionSection {
            mode: PrecisionMode::Fp16,
            loss_scale: Some(TORCH_SCALER),
        }
    } else if bf16 {
        PrecisionSection {
            mode: PrecisionMode::Bf16,
            loss_scale: None,
        }
    } else {
        PrecisionSection {
            mode: PrecisionMode::Fp32,
            loss_scale: None,
        }
    };
    // The Trainer clips at 1.0 unless told otherwise; 0 disables it.
    let clip_norm = match r.float(&["max_grad_norm"]) {
        Some(v) => (v.value > 0.0).then_some(v.value),
        None if r.node(&["max_grad_norm"]).is_some() => None,
        None => Some(1.0),
    };
    let lr = r.float(&["learning_rate"]).map(|v| v.value);

    // R4/R9: per-token normalization across devices.
    let avg = r.bool(&[AVG]);
    let normalization = match &avg {
        Some(v) if !v.value => {
            if opts.variable_lengths {
                r.push(
                    Finding::error(
                        codes::PER_TOKEN,
                        path_of(&[AVG]),
                        format!(
                            "{AVG} is false: each of the {replicas} replicas divides its loss by its own token count and the gradients are then averaged, a mean of means when lengths vary (R4, R9)"
                        ),
                    )
                    .help(format!("set {AVG} to true so that the loss is divided by the tokens of the whole group on all devices"))
                    .at(v.span.clone(), "local token count"),
                );
                Normalization::PerToken
            } else {
                Normalization::PerExample
            }
        }
        Some(_) => Normalization::PerToken,
        None => {
            if opts.variable_lengths {
                r.push(
                    Finding::error(
                        codes::PER_TOKEN,
                        path_of(&[AVG]),
                        format!("{AVG} is not set and its default differs between transformers versions; with variable lengths the loss must be divided by the tokens of the whole group on all devices (R4)"),
                    )
                    .warning()
                    .help(format!("set {AVG} to true"))
                    .at(root.clone(), "not set"),
                );
            }
            Normalization::PerToken
        }
    };

    // R6: the Trainer runs the partial last group as one more update.
    if let Some(examples) = opts.examples {
        let drop_last = r.bool(&["dataloader_drop_last"]).is_some_and(|v| v.value);
        let per_pass = m.saturating_mul(replicas);
        let behaviour = format!(
            "the Trainer runs it as one more update with the microbatches that remain, normalized by the items really in it when the model takes num_items_in_batch{}",
            if drop_last && examples % per_pass != 0 {
                format!(
                    "; dataloader_drop_last drops the last incomplete microbatch ({} examples) first",
                    examples % per_pass
                )
            } else {
                String::new()
            }
        );
        if let Some(f) = super::partial_group_finding(
            &plan,
            examples,
            Severity::Warning,
            &behaviour,
            "this matches last_group \"process\"",
            r.span(&[GAS]),
        ) {
            r.push(f);
        }
    }

    let parallel = opts.model_parallel().then_some(ParallelSection {
        world_size: world,
        tensor: tp,
        pipeline: pp,
        context: cp,
    });
    let canonical = Canonical {
        run: RunSection::imported(Engine::HuggingFace, name),
        batch: batch_of(&plan),
        parallel,
        loss: LossSection { normalization },
        precision,
        optimizer: OptimizerSection { clip_norm, lr },
        schedule,
        data: DataSection {
            last_group: LastGroup::Process,
            examples: opts.examples,
        },
        log,
    };
    Ok(Imported {
        canonical,
        findings: r.findings,
    })
}

/// Writes `TrainingArguments` JSON; launch with Accelerate's
/// `num_processes` = `batch.replicas`.
pub(crate) fn export(c: &Canonical) -> Result<String, ExportError> {
    let engine = Engine::HuggingFace;
    let plan = c.plan()?;
    super::require_data_parallel(
        engine,
        c,
        &plan,
        "the Trainer multiplies the batch by every process",
    )?;
    super::check_last_group(
        engine,
        c,
        &plan,
        &[LastGroup::Process],
        "always runs the partial group as one more update",
    )?;
    let mut root = Map::new();
    root.insert(MICRO.into(), json!(plan.micro_batch()));
    root.insert(GAS.into(), json!(plan.accumulation()));
    root.insert(
        AVG.into(),
        json!(match c.loss.normalization {
            Normalization::PerToken => true,
            Normalization::PerExample => false,
            Normalization::Sum => {
                return Err(ExportError::Unsupported {
                    engine,
                    key: "loss.normalization",
                    reason: "the Trainer averages the loss (per token or per microbatch); a summed loss cannot be written".to_owned(),
                });
            }
        }),
    );
    match c.precision.mode {
        PrecisionMode::Fp32 => {}
        PrecisionMode::Bf16 => {
            root.insert("bf16".into(), json!(true));
        }
        PrecisionMode::Fp16 => {
            if let Some(s) = c.precision.loss_scale
                && s != TORCH_SCALER
            {
                return Err(ExportError::Unsupported {
                    engine,
                    key: "precision.loss_scale",
                    reason: format!(
                        "the Trainer's fp16 uses torch's GradScaler defaults (init {}, growth_factor 2.0, backoff_factor 0.5, growth_interval 2000); other values need a custom scaler",
                        TORCH_SCALER.init
                    ),
                });
            }
            root.insert("fp16".into(), json!(true));
        }
    }
    root.insert(
        "max_grad_norm".into(),
        json!(c.optimizer.clip_norm.unwrap_or(0.0)),
    );
    if let Some(lr) = c.optimizer.lr {
        root.insert("learning_rate".into(), json!(lr));
    }
    if let Some(s) = &c.schedule {
        if let Some(t) = s.total {
            let v = super::span_in(
                engine,
                &plan,
                "schedule.total",
                "max_steps",
                t,
                UnitKind::Update,
            )?;
            root.insert("max_steps".into(), json!(v));
        }
        if let Some(w) = s.warmup {
            let v = super::span_in(
                engine,
                &plan,
                "schedule.warmup",
                "warmup_steps",
                w,
                UnitKind::Update,
            )?;
            root.insert("warmup_steps".into(), json!(v));
        }
    }
    if let Some(l) = &c.log {
        let v = super::span_in(
            engine,
            &plan,
            "log.every",
            "logging_steps",
            l.every,
            UnitKind::Update,
        )?;
        root.insert("logging_steps".into(), json!(v));
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(root))
        .expect("a JSON value of strings, numbers and objects always serializes");
    text.push('\n');
    Ok(text)
}

/// `count × decimal` computed exactly from the decimal's text ("0.03"):
/// the whole result when it is whole, and its decimal rendering. `None`
/// when the text is not a plain decimal (an exponent, a sign).
fn exact_product(count: u64, decimal: &str) -> Option<(Option<u64>, String)> {
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
