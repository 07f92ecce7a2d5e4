//! Lightning `Trainer` arguments as JSON or YAML: either the arguments at
//! the top level, or a LightningCLI file with a `trainer:` section (and the
//! micro-batch in `data.batch_size` or `data.init_args.batch_size`).
//!
//! `accumulate_grad_batches` is an int, or (Lightning 1.x, or the
//! `GradientAccumulationScheduler` callback) a schedule `{epoch: factor}`.
//! `max_steps` and `log_every_n_steps` count optimizer steps (Lightning's
//! logger checks `_batches_that_stepped`, which advances once per update);
//! an integer `val_check_interval` counts training batches, i.e.
//! microbatches. Lightning steps the optimizer on the last batch of an epoch
//! even when fewer than `accumulate_grad_batches` batches were accumulated,
//! and divides every batch's loss by `accumulate_grad_batches`.

use accum_core::{LastGroup, Layout, PlanInput, Span, UnitKind};

use super::deepspeed::check_normalization;
use super::huggingface::TORCH_SCALER;
use super::{
    At, Canonical, DataSection, Engine, ExportError, ImportError, ImportOptions, Imported,
    LogSection, LossSection, Normalization, OptimizerSection, ParallelSection, PrecisionMode,
    PrecisionSection, Reader, RunSection, ScheduleSection, batch_of, codes,
};
use crate::diagnostic::{Diagnostic as Finding, Severity};
use crate::source::NodeKind;

const ACC: &str = "accumulate_grad_batches";

/// Reads Lightning `Trainer` arguments.
pub(crate) fn import(
    name: &str,
    text: &str,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let mut r = Reader::parse(name, text, true)?;
    let root = r.span(&[]);
    let invalid = |findings: Vec<Finding>| ImportError::Invalid {
        name: name.to_owned(),
        findings,
    };
    // LightningCLI nests the Trainer's arguments under `trainer:`.
    let nested = matches!(
        r.node(&["trainer"]).map(|n| &n.kind),
        Some(NodeKind::Table(_))
    );
    let t = |key: &'static str| -> Vec<&'static str> {
        if nested {
            vec!["trainer", key]
        } else {
            vec![key]
        }
    };

    // The micro-batch lives in the DataLoader, not in the Trainer.
    let mut micro: Option<At<u64>> = None;
    for path in [
        &["data", "batch_size"][..],
        &["data", "init_args", "batch_size"],
        &["batch_size"],
        &["model", "batch_size"],
        &["model", "init_args", "batch_size"],
    ] {
        if r.node(path).is_some() {
            micro = r.uint(path, 1);
            break;
        }
    }
    let m = match (micro.as_ref().map(|v| v.value), opts.micro_batch) {
        (Some(f), Some(o)) if f != o => {
            let span = micro.as_ref().map_or(root.clone(), |v| v.span.clone());
            r.push(
                Finding::error(
                    codes::VALUE,
                    micro.as_ref().map_or_else(Vec::new, |v| v.path.clone()),
                    format!("the file's batch_size {f} disagrees with the micro-batch {o} given"),
                )
                .help("make them agree; accum uses the file's value")
                .at(span, "micro-batch"),
            );
            f
        }
        (Some(v), _) | (None, Some(v)) => v,
        (None, None) => {
            r.push(
                Finding::error(
                    codes::MISSING,
                    vec!["data".into(), "batch_size".into()],
                    "the micro-batch is not in Trainer arguments: it is the DataLoader's batch_size",
                )
                .help("give it (--micro-batch N), or add data.batch_size to the file")
                .at(root.clone(), "micro-batch needed"),
            );
            return Err(invalid(r.findings));
        }
    };

    // accumulate_grad_batches: an int, or a schedule by epoch.
    let acc_path = t(ACC);
    let acc_node = r.node(&acc_path).cloned();
    let a = match acc_node.as_ref().map(|n| &n.kind) {
        None | Some(NodeKind::Null) => 1,
        Some(NodeKind::Table(entries)) => {
            let mut schedule: Vec<(u64, u64)> = Vec::new();
            for e in entries {
                let epoch = e.key.trim().parse::<u64>().ok();
                let factor = match &e.value.kind {
                    NodeKind::Integer(i) => u64::try_from(*i).ok().filter(|&f| f >= 1),
                    _ => None,
                };
                match (epoch, factor) {
                    (Some(ep), Some(f)) => schedule.push((ep, f)),
                    _ => r.push(
                        Finding::error(
                            codes::VALUE,
                            acc_path.iter().map(|s| (*s).to_owned()).chain([e.key.clone()]).collect(),
                            format!("`{}: …` in {ACC} is not `epoch: factor` with whole numbers (factor ≥ 1)", e.key),
                        )
                        .help("write the schedule as {0: 8, 4: 4}")
                        .at(e.key_span.start..e.value.span.end, "not epoch: factor"),
                    ),
                }
            }
            schedule.sort_unstable();
            // Before the first listed epoch the factor is 1.
            let first = match schedule.first() {
                Some(&(0, f)) => f,
                _ => 1,
            };
            let span = acc_node.as_ref().map_or(root.clone(), |n| n.span.clone());
            let shown = schedule
                .iter()
                .map(|(e, f)| format!("epoch {e}: {f}"))
                .collect::<Vec<_>>()
                .join(", ");
            r.push(
                Finding::error(
                    codes::SCHEDULE_SHIFT,
                    acc_path.iter().map(|s| (*s).to_owned()).collect(),
                    format!(
                        "{ACC} changes during the run ({shown}): B = m·A·D changes with it, so max_steps, warmup and log_every_n_steps (optimizer steps) cover a different number of examples in each phase, and the learning rate meets a different batch (R8, R10)"
                    ),
                )
                .help(format!(
                    "use one accumulation for the run (accum's plan uses the first phase, A = {first}), or count the schedule in examples; Lightning 2.x takes only an int here, a schedule goes in the GradientAccumulationScheduler callback"
                ))
                .at(span, "accumulation schedule"),
            );
            first
        }
        Some(_) => match r.uint(&acc_path, 1) {
            Some(v) => v.value,
            None => return Err(invalid(r.findings)),
        },
    };

    // Devices × nodes.
    let dev_path = t("devices");
    let devices: Option<u64> = match r.node(&dev_path).map(|n| n.kind.clone()) {
        None | Some(NodeKind::Null) => None,
        Some(NodeKind::Integer(i)) if i >= 1 => u64::try_from(i).ok(),
        Some(NodeKind::Integer(_)) => None, // -1: all visible devices
        Some(NodeKind::Array(items)) => Some(items.len() as u64),
        Some(NodeKind::String(s)) => {
            let s = s.trim();
            if s == "auto" || s == "-1" {
                None
            } else if let Ok(n) = s.parse::<u64>() {
                Some(n)
            } else {
                // "0,1,3": a list of device ids.
                Some(s.split(',').filter(|p| !p.trim().is_empty()).count() as u64)
            }
        }
        Some(_) => {
            r.uint(&dev_path, 1);
            None
        }
    };
    let nodes = r
        .uint(&t("num_nodes"), 1)
        .map(|v| v.value)
        .or(opts.num_nodes)
        .unwrap_or(1);
    let world = match (devices.map(|d| d.saturating_mul(nodes)), opts.world_size) {
        (Some(f), Some(w)) if f != w => {
            let span = r.span(&dev_path);
            r.push(
                Finding::error(
                    codes::WORLD_SIZE,
                    dev_path.iter().map(|s| (*s).to_owned()).collect(),
                    format!("devices × num_nodes = {f}, but the world size given is {w}"),
                )
                .help("make them agree; accum uses devices × num_nodes")
                .at(span, "device count"),
            );
            f
        }
        (Some(v), _) | (None, Some(v)) => v,
        (None, None) => {
            let span = r.span(&dev_path);
            r.push(
                Finding::error(
                    codes::MISSING,
                    dev_path.iter().map(|s| (*s).to_owned()).collect(),
                    "the number of devices is \"auto\", -1 or not set, so it depends on the machine",
                )
                .help("write devices as a number, or give the world size (--world-size N)")
                .at(span, "device count needed"),
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
        let span = r.span(&dev_path);
        r.push(
            Finding::error(
                codes::MODEL_PARALLEL,
                dev_path.iter().map(|s| (*s).to_owned()).collect(),
                format!(
                    "devices × num_nodes = {world} counts the tensor {tp} × pipeline {pp} × context {cp} devices of each model copy as replicas; the data-parallel replicas are D = {world} / {} = {replicas}, so B = {m} × {a} × {replicas} = {}",
                    tp * pp * cp,
                    m.saturating_mul(a).saturating_mul(replicas)
                ),
            )
            .warning()
            .help("check that the sampler shards by data-parallel rank, and use B = m·A·D for the schedule and learning rate (R3)")
            .at(span, "devices, not replicas"),
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
                vec![ACC.to_owned()],
                root.clone(),
            ));
            return Err(invalid(r.findings));
        }
    };

    // Steps: max_steps and log_every_n_steps are optimizer steps.
    let total = r
        .int(&t("max_steps"))
        .filter(|v| v.value > 0)
        .and_then(|v| u64::try_from(v.value).ok())
        .map(|v| Span::new(v, UnitKind::Update));
    let schedule = total.map(|total| ScheduleSection {
        warmup: None,
        total: Some(total),
    });
    let log = r.uint(&t("log_every_n_steps"), 1).map(|v| LogSection {
        every: Span::new(v.value, UnitKind::Update),
    });
    if let Some(NodeKind::Integer(n)) = r.node(&t("val_check_interval")).map(|n| n.kind.clone())
        && n > 0
    {
        let span = r.span(&t("val_check_interval"));
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        let rest = n % a;
        r.push(
            Finding::error(
                codes::STEP_UNIT,
                t("val_check_interval").iter().map(|s| (*s).to_owned()).collect(),
                format!(
                    "an integer val_check_interval counts training batches (microbatches), not optimizer steps: {n} batches = {} updates at {ACC} {a}{}; it moves whenever the accumulation changes (R1)",
                    if rest == 0 { (n / a).to_string() } else { format!("{n}/{a}") },
                    if rest == 0 { String::new() } else { ", so validation runs in the middle of a group".to_owned() }
                ),
            )
            .warning()
            .help(format!("use a multiple of {a}, e.g. {}, and think of it as {} updates", (n / a).max(1) * a, (n / a).max(1)))
            .at(span, "microbatches"),
        );
    }

    // Precision (R7).
    let prec_path = t("precision");
    let precision_text = match r.node(&prec_path).map(|n| n.kind.clone()) {
        None | Some(NodeKind::Null) => None,
        Some(NodeKind::Integer(i)) => Some(i.to_string()),
        Some(NodeKind::String(s)) => Some(s),
        Some(_) => Some(String::new()),
    };
    let precision = match precision_text.as_deref() {
        None | Some("32" | "32-true") => PrecisionSection {
            mode: PrecisionMode::Fp32,
            loss_scale: None,
        },
        Some("16" | "16-mixed") => PrecisionSection {
            mode: PrecisionMode::Fp16,
            loss_scale: Some(TORCH_SCALER),
        },
        Some("bf16" | "bf16-mixed" | "bf16-true") => PrecisionSection {
            mode: PrecisionMode::Bf16,
            loss_scale: None,
        },
        Some("16-true") => {
            let span = r.span(&prec_path);
            r.push(
                Finding::error(
                    codes::VALUE,
                    prec_path.iter().map(|s| (*s).to_owned()).collect(),
                    "precision \"16-true\" trains in float16 without a loss scaler: small gradients underflow to zero (R7)",
                )
                .warning()
                .help("use \"16-mixed\" (with loss scaling) or \"bf16-mixed\"")
                .at(span, "no loss scaling"),
            );
            PrecisionSection {
                mode: PrecisionMode::Fp16,
                loss_scale: None,
            }
        }
        Some(other) => {
            let span = r.span(&prec_path);
            r.push(
                Finding::error(
                    codes::VALUE,
                    prec_path.iter().map(|s| (*s).to_owned()).collect(),
                    format!("precision `{other}` has no canonical mode; fp32 is assumed"),
                )
                .warning()
                .help("use \"32-true\", \"16-mixed\" or \"bf16-mixed\"")
                .at(span, "unknown precision"),
            );
            PrecisionSection {
                mode: PrecisionMode::Fp32,
                loss_scale: None,
            }
        }
    };

    // Clipping: only by norm has a canonical key.
    let clip_val = r
        .float(&t("gradient_clip_val"))
        .map(|v| v.value)
        .filter(|&c| c > 0.0);
    let algorithm = match r
        .node(&t("gradient_clip_algorithm"))
        .map(|n| n.kind.clone())
    {
        Some(NodeKind::String(s)) => s,
        _ => "norm".to_owned(),
    };
    let clip_norm = match (clip_val, algorithm.as_str()) {
        (Some(c), "norm") => Some(c),
        (Some(c), other) => {
            let span = r.span(&t("gradient_clip_algorithm"));
            r.push(
                Finding::error(
                    codes::NOT_CONVERTED,
                    t("gradient_clip_algorithm").iter().map(|s| (*s).to_owned()).collect(),
                    format!("gradient_clip_algorithm `{other}` clips each value at {c}, not the global norm; optimizer.clip_norm is left out"),
                )
                .warning()
                .help("use gradient_clip_algorithm \"norm\" to clip the group's full gradient (R5)")
                .at(span, "not a norm"),
            );
            None
        }
        (None, _) => None,
    };

    // R4: Lightning divides each batch's loss by accumulate_grad_batches.
    let normalization = if opts.variable_lengths {
        let span = acc_node.as_ref().map_or(root.clone(), |n| n.span.clone());
        r.push(
            Finding::error(
                codes::PER_TOKEN,
                acc_path.iter().map(|s| (*s).to_owned()).collect(),
                format!(
                    "Lightning divides each microbatch's loss by {ACC} = {a}; with variable lengths a per-token mean per microbatch, averaged this way, is a mean of means, not the group's per-token mean (R4)"
                ),
            )
            .help("return the summed token loss divided by the supervised tokens of the whole group, times accumulate_grad_batches to undo Lightning's division, or use manual optimization")
            .at(span, "divides by A, not by tokens"),
        );
        Normalization::PerToken
    } else {
        Normalization::PerExample
    };

    // R6: the last batch of an epoch steps the optimizer with fewer batches,
    // still divided by A.
    if let Some(examples) = opts.examples
        && let Some(f) = super::partial_group_finding(
            &plan,
            examples,
            Severity::Error,
            &format!(
                "Lightning steps the optimizer on the last batch of the epoch with only those microbatches, but still divides each loss by {ACC} = {a}, so that update is scaled down instead of normalized by what it contains (R4)"
            ),
            "drop the partial group (drop_last in the sampler), or rescale its loss by A / microbatches in it",
            acc_node.as_ref().map_or(root.clone(), |n| n.span.clone()),
        )
    {
        r.push(f);
    }

    let parallel = opts.model_parallel().then_some(ParallelSection {
        world_size: world,
        tensor: tp,
        pipeline: pp,
        context: cp,
    });
    let canonical = Canonical {
        run: RunSection::imported(Engine::Lightning, name),
        batch: batch_of(&plan),
        parallel,
        loss: LossSection { normalization },
        precision,
        optimizer: OptimizerSection {
            clip_norm,
            lr: None,
        },
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

/// Writes a LightningCLI YAML file: `trainer:` arguments and
/// `data.batch_size`. What the Trainer has no argument for (warmup, learning
/// rate) is written as comments for `configure_optimizers`.
pub(crate) fn export(c: &Canonical) -> Result<String, ExportError> {
    let engine = Engine::Lightning;
    let plan = c.plan()?;
    super::require_data_parallel(engine, c, &plan, "devices × num_nodes counts every device")?;
    super::check_last_group(
        engine,
        c,
        &plan,
        &[],
        "steps on the partial group but divides its loss by the full accumulation",
    )?;
    check_normalization(engine, c)?;
    let precision = match (c.precision.mode, c.precision.loss_scale) {
        (PrecisionMode::Fp32, _) => "32-true",
        (PrecisionMode::Bf16, _) => "bf16-mixed",
        (PrecisionMode::Fp16, None) => "16-true",
        (PrecisionMode::Fp16, Some(s)) if s == TORCH_SCALER => "16-mixed",
        (PrecisionMode::Fp16, Some(_)) => {
            return Err(ExportError::Unsupported {
                engine,
                key: "precision.loss_scale",
                reason: format!(
                    "\"16-mixed\" uses torch's GradScaler defaults (init {}, growth_factor 2.0, backoff_factor 0.5, growth_interval 2000); other values need a custom precision plugin",
                    TORCH_SCALER.init
                ),
            });
        }
    };
    let mut out = String::new();
    out.push_str(&format!(
        "# accum: B = m·A·D = {} × {} × {} = {}\n",
        plan.micro_batch(),
        plan.accumulation(),
        plan.replicas(),
        plan.effective_batch().get()
    ));
    out.push_str("trainer:\n");
    out.push_str(&format!(
        "  devices: {}  # devices × num_nodes = {} data-parallel replicas\n",
        plan.replicas(),
        plan.replicas()
    ));
    out.push_str("  num_nodes: 1\n");
    out.push_str(&format!("  {ACC}: {}\n", plan.accumulation()));
    out.push_str(&format!("  precision: {precision}\n"));
    if let Some(clip) = c.optimizer.clip_norm {
        out.push_str(&format!(
            "  gradient_clip_val: {}\n",
            super::json_float(clip)
        ));
        out.push_str("  gradient_clip_algorithm: norm\n");
    }
    if let Some(t) = c.schedule.and_then(|s| s.total) {
        let v = super::span_in(
            engine,
            &plan,
            "schedule.total",
            "max_steps",
            t,
            UnitKind::Update,
        )?;
        out.push_str(&format!("  max_steps: {v}\n"));
    }
    if let Some(l) = &c.log {
        let v = super::span_in(
            engine,
            &plan,
            "log.every",
            "log_every_n_steps",
            l.every,
            UnitKind::Update,
        )?;
        out.push_str(&format!("  log_every_n_steps: {v}\n"));
    }
    out.push_str("data:\n");
    out.push_str(&format!("  batch_size: {}\n", plan.micro_batch()));
    if let Some(w) = c.schedule.and_then(|s| s.warmup) {
        let v = super::span_in(
            engine,
            &plan,
            "schedule.warmup",
            "warmup",
            w,
            UnitKind::Update,
        )?;
        out.push_str(&format!(
            "# schedule.warmup = {w}: warm up for {v} optimizer steps in configure_optimizers (scheduler interval \"step\")\n"
        ));
    }
    if let Some(lr) = c.optimizer.lr {
        out.push_str(&format!(
            "# optimizer.lr = {}: set in configure_optimizers\n",
            super::json_float(lr)
        ));
    }
    Ok(out)
}
