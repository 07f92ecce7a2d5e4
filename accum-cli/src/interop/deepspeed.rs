//! DeepSpeed's JSON configuration: `train_batch_size`,
//! `train_micro_batch_size_per_gpu`, `gradient_accumulation_steps`,
//! `fp16`/`bf16`, `gradient_clipping`, `optimizer.params.lr`,
//! `scheduler.params.{warmup_num_steps,total_num_steps}`, `steps_per_print`.
//!
//! DeepSpeed fills a missing batch value with floor divisions and then
//! asserts `train_batch_size == micro × gas × world_size`;
//! [`fill`] reproduces that arithmetic for every combination of the three
//! keys, and import reports where DeepSpeed would floor or fail, next to
//! what accum computes exactly (R3). DeepSpeed's `world_size` is the
//! data-parallel size when a model-parallel unit is passed to
//! `deepspeed.initialize`, else every rank (divided by
//! `sequence_parallel_size` when the config sets it).

use accum_core::{LastGroup, PlanInput, Span, UnitKind};
use serde_json::{Map, Value, json};

use super::{
    At, Canonical, DataSection, Engine, ExportError, ImportError, ImportOptions, Imported,
    LogSection, LossScale, LossSection, Normalization, OptimizerSection, ParallelSection,
    PrecisionMode, PrecisionSection, Reader, RunSection, ScheduleSection, batch_of, codes, path_of,
};
use crate::diagnostic::{Diagnostic as Finding, Severity};

const TRAIN_BATCH: &str = "train_batch_size";
const MICRO: &str = "train_micro_batch_size_per_gpu";
const GAS: &str = "gradient_accumulation_steps";

/// Why DeepSpeed would refuse the batch values at start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillFailure {
    /// Neither `train_batch_size` nor `train_micro_batch_size_per_gpu` is set.
    NeitherGiven,
    /// A value is 0 after filling (DeepSpeed asserts each is > 0).
    NotPositive {
        /// The key.
        key: &'static str,
    },
    /// `train_batch_size != micro × gas × world_size`.
    Mismatch,
    /// A given zero is a divisor in the fill-in: Python raises
    /// `ZeroDivisionError` before any assertion.
    DivisionByZero {
        /// The key that is zero.
        key: &'static str,
    },
}

/// What DeepSpeed makes of the three batch keys for a world size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fill {
    /// `train_batch_size` after filling.
    pub train_batch_size: Option<u64>,
    /// `train_micro_batch_size_per_gpu` after filling.
    pub micro_batch: Option<u64>,
    /// `gradient_accumulation_steps` after filling.
    pub gradient_accumulation_steps: Option<u64>,
    /// The keys DeepSpeed set, each with its arithmetic (`"30 // 2 // 2 = 7"`).
    pub filled: Vec<(&'static str, String)>,
    /// Whether a floor division dropped a remainder.
    pub floored: bool,
    /// DeepSpeed's assertion that would fail, if any.
    pub failure: Option<FillFailure>,
}

impl Fill {
    /// DeepSpeed's own message for the failure, with its numbers.
    pub fn engine_message(&self, world: u64) -> Option<String> {
        let show = |v: Option<u64>| v.map_or_else(|| "None".to_owned(), |v| v.to_string());
        self.failure.map(|failure| match failure {
            FillFailure::DivisionByZero { key } => {
                format!("ZeroDivisionError: integer division or modulo by zero ({key} is 0)")
            }
            FillFailure::NeitherGiven => {
                "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
                    .to_owned()
            }
            FillFailure::NotPositive { key } => {
                let (label, value) = match key {
                    TRAIN_BATCH => ("Train batch size", self.train_batch_size),
                    MICRO => ("Micro batch size per gpu", self.micro_batch),
                    _ => ("Gradient accumulation steps", self.gradient_accumulation_steps),
                };
                format!("{label}: {} has to be greater than 0", show(value))
            }
            FillFailure::Mismatch => format!(
                "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size {} != {} * {} * {world}",
                show(self.train_batch_size),
                show(self.micro_batch),
                show(self.gradient_accumulation_steps),
            ),
        })
    }
}

/// DeepSpeed's fill-in and check of the batch keys, reproduced: given the
/// keys present (`None` = absent) and DeepSpeed's `world_size`, the values
/// DeepSpeed would run with, where it floors, and whether its assertion
/// fails.
///
/// | given | DeepSpeed sets |
/// |---|---|
/// | all three | nothing |
/// | batch, micro | gas = batch // micro // world |
/// | batch, gas | micro = batch // world // gas |
/// | micro, gas | batch = micro × gas × world |
/// | batch | gas = 1, micro = batch // world |
/// | micro | gas = 1, batch = micro × world |
/// | gas, or none | fails: one of batch or micro is needed |
///
/// Then each value must be > 0 and `batch == micro × gas × world`.
pub fn fill(batch: Option<u64>, micro: Option<u64>, gas: Option<u64>, world: u64) -> Fill {
    let mut out = Fill {
        train_batch_size: batch,
        micro_batch: micro,
        gradient_accumulation_steps: gas,
        filled: Vec::new(),
        floored: false,
        failure: None,
    };
    // Python integers do not overflow; saturating keeps the check honest for
    // any value a JSON file can hold below 2^64.
    let floor2 = |a: u64, b: u64, c: u64| -> (u64, bool) {
        if b == 0 || c == 0 {
            return (0, true);
        }
        let first = a / b;
        (first / c, !a.is_multiple_of(b) || !first.is_multiple_of(c))
    };
    // Python evaluates `batch // micro` (and `// gas`) before any check.
    let zero_divisor = match (batch, micro, gas) {
        (Some(_), Some(0), None) => Some(MICRO),
        (Some(_), None, Some(0)) => Some(GAS),
        _ if world == 0 && batch.is_some() && (micro.is_none() || gas.is_none()) => {
            Some("world_size")
        }
        _ => None,
    };
    if let Some(key) = zero_divisor {
        out.failure = Some(FillFailure::DivisionByZero { key });
        return out;
    }
    match (batch, micro, gas) {
        (Some(_), Some(_), Some(_)) => {}
        (Some(b), Some(m), None) => {
            let (g, floored) = floor2(b, m, world);
            out.gradient_accumulation_steps = Some(g);
            out.floored = floored;
            out.filled
                .push((GAS, format!("{b} // {m} // {world} = {g}")));
        }
        (Some(b), None, Some(g)) => {
            let (m, floored) = floor2(b, world, g);
            out.micro_batch = Some(m);
            out.floored = floored;
            out.filled
                .push((MICRO, format!("{b} // {world} // {g} = {m}")));
        }
        (None, Some(m), Some(g)) => {
            let b = m.saturating_mul(g).saturating_mul(world);
            out.train_batch_size = Some(b);
            out.filled
                .push((TRAIN_BATCH, format!("{m} × {g} × {world} = {b}")));
        }
        (Some(b), None, None) => {
            let m = b.checked_div(world).unwrap_or(0);
            out.gradient_accumulation_steps = Some(1);
            out.micro_batch = Some(m);
            out.floored = world == 0 || !b.is_multiple_of(world);
            out.filled.push((GAS, "1".to_owned()));
            out.filled.push((MICRO, format!("{b} // {world} = {m}")));
        }
        (None, Some(m), None) => {
            let b = m.saturating_mul(world);
            out.train_batch_size = Some(b);
            out.gradient_accumulation_steps = Some(1);
            out.filled
                .push((TRAIN_BATCH, format!("{m} × {world} = {b}")));
            out.filled.push((GAS, "1".to_owned()));
        }
        (None, None, _) => {
            out.failure = Some(FillFailure::NeitherGiven);
            return out;
        }
    }
    let (b, m, g) = (
        out.train_batch_size.unwrap_or(0),
        out.micro_batch.unwrap_or(0),
        out.gradient_accumulation_steps.unwrap_or(0),
    );
    out.failure = if b == 0 {
        Some(FillFailure::NotPositive { key: TRAIN_BATCH })
    } else if m == 0 {
        Some(FillFailure::NotPositive { key: MICRO })
    } else if g == 0 {
        Some(FillFailure::NotPositive { key: GAS })
    } else if (u128::from(m) * u128::from(g)).checked_mul(u128::from(world)) != Some(u128::from(b))
    {
        Some(FillFailure::Mismatch)
    } else {
        None
    };
    out
}

fn ds_key_path(key: &str) -> Vec<String> {
    vec![key.to_owned()]
}

/// Reads a DeepSpeed JSON configuration.
pub(crate) fn import(
    name: &str,
    text: &str,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let mut r = Reader::parse(name, text, false)?;

    let batch_key = |r: &mut Reader, key: &'static str| -> Option<At<u64>> {
        if r.is_auto(&[key]) {
            let span = r.span(&[key]);
            r.push(
                Finding::error(
                    codes::AUTO,
                    ds_key_path(key),
                    format!("`{key}` is \"auto\": the Hugging Face Trainer fills it from TrainingArguments, so this file alone does not fix the batch"),
                )
                .help("import the TrainingArguments with `hf`, or write the number")
                .at(span, "filled in by another tool"),
            );
            return None;
        }
        r.uint(&[key], 0)
    };
    let tb = batch_key(&mut r, TRAIN_BATCH);
    let mb = batch_key(&mut r, MICRO);
    let gas = batch_key(&mut r, GAS);

    // The world DeepSpeed divides by, and the true replicas D (R3).
    let root = r.span(&[]);
    let Some(world) = opts.world_size else {
        r.push(
            Finding::error(
                codes::MISSING,
                vec![],
                "the world size is not in a DeepSpeed config: DeepSpeed takes it from the launcher",
            )
            .help("give the launcher's world size (--world-size N)")
            .at(root, "world size needed"),
        );
        return Err(ImportError::Invalid {
            name: name.to_owned(),
            findings: r.findings,
        });
    };
    // DeepSpeed's sequence parallelism (Ulysses) splits one model copy's
    // sequence: it is the context degree unless the options say otherwise.
    let sp = r.uint(&["sequence_parallel_size"], 1);
    let (tp, pp, cp) = opts.degrees();
    let cp = opts.context.or(sp.as_ref().map(|s| s.value)).unwrap_or(cp);
    let model_parallel = tp > 1 || pp > 1 || cp > 1;
    let layout = accum_core::Layout::new(world, tp, pp, cp);
    let replicas = match layout.replicas() {
        Ok(d) => d,
        Err(err) => {
            r.push(super::plan_finding(&err, vec![], root));
            return Err(ImportError::Invalid {
                name: name.to_owned(),
                findings: r.findings,
            });
        }
    };
    let ds_world = if opts.deepspeed_mpu {
        replicas
    } else if let Some(sp) = &sp {
        if world % sp.value != 0 {
            r.push(
                Finding::error(
                    codes::LAYOUT,
                    sp.path.clone(),
                    format!(
                        "world_size {world} is not divisible by sequence_parallel_size {}: DeepSpeed's world_size {world} / {} is not a whole number of replicas",
                        sp.value, sp.value
                    ),
                )
                .help("use a sequence_parallel_size that divides the world size")
                .at(sp.span.clone(), "does not divide the world size"),
            );
        }
        world / sp.value
    } else {
        world
    };
    if model_parallel && !opts.deepspeed_mpu && ds_world != replicas {
        r.push(
            Finding::error(
                codes::MODEL_PARALLEL,
                vec![TRAIN_BATCH.to_owned()],
                format!(
                    "without a model-parallel unit DeepSpeed divides by {ds_world} ranks, but only D = {world} / (tensor {tp} × pipeline {pp} × context {cp}) = {replicas} are data-parallel replicas: devices that share one model copy are counted as replicas"
                ),
            )
            .help("pass the model-parallel unit (mpu) to deepspeed.initialize so that DeepSpeed uses the data-parallel size (R3)")
            .at(r.span(&[TRAIN_BATCH]), "checked against all ranks"),
        );
    }

    // A key that is "auto" or unreadable cannot be replaced by DeepSpeed's
    // defaults: stop with the findings so far.
    let unreadable = [TRAIN_BATCH, MICRO, GAS]
        .into_iter()
        .zip([&tb, &mb, &gas])
        .any(|(key, v)| {
            v.is_none()
                && r.node(&[key])
                    .is_some_and(|n| !matches!(n.kind, crate::source::NodeKind::Null))
        });
    if unreadable {
        return Err(ImportError::Invalid {
            name: name.to_owned(),
            findings: r.findings,
        });
    }

    // DeepSpeed's own arithmetic, with its numbers.
    let f = fill(
        tb.as_ref().map(|v| v.value),
        mb.as_ref().map(|v| v.value),
        gas.as_ref().map(|v| v.value),
        ds_world,
    );
    let anchor = tb
        .as_ref()
        .or(mb.as_ref())
        .or(gas.as_ref())
        .map_or_else(|| root.clone(), |v| v.span.clone());
    if f.floored {
        let sets = f
            .filled
            .iter()
            .map(|(k, how)| format!("{k} = {how}"))
            .collect::<Vec<_>>()
            .join(" and ");
        // The exact quotient DeepSpeed floors.
        let b = tb.as_ref().map_or(0, |v| v.value);
        let (other_key, other) = match (&mb, &gas) {
            (Some(m), _) => (MICRO, m.value),
            (None, Some(g)) => (GAS, g.value),
            (None, None) => (GAS, 1),
        };
        let divisor = other.saturating_mul(ds_world).max(1);
        let exact = format!(
            "{b} / ({other_key} {other} × world_size {ds_world}) = {}",
            b as f64 / divisor as f64
        );
        r.push(
            Finding::error(
                codes::ROUNDS,
                ds_key_path(f.filled.first().map_or(TRAIN_BATCH, |(k, _)| k)),
                format!("DeepSpeed would floor: it sets {sets}, where {exact}"),
            )
            .help("give values that divide exactly; accum's exact solution is in the next findings")
            .at(anchor.clone(), "floored by DeepSpeed"),
        );
    }
    if let Some(message) = f.engine_message(ds_world) {
        let help = match f.failure {
            Some(FillFailure::NeitherGiven) => {
                "give train_batch_size or train_micro_batch_size_per_gpu".to_owned()
            }
            _ => format!(
                "DeepSpeed needs train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × {ds_world} (its world_size), each at least 1"
            ),
        };
        r.push(
            Finding::error(
                codes::ENGINE_ASSERT,
                ds_key_path(TRAIN_BATCH),
                format!("DeepSpeed would stop at start-up: \"{message}\""),
            )
            .help(help)
            .at(anchor.clone(), "DeepSpeed's check fails"),
        );
    }

    // accum's exact plan from the same values (DeepSpeed's default gas = 1
    // applies when neither gas nor the micro-batch can be solved otherwise).
    let (m_in, a_in) = match (&tb, &mb, &gas) {
        (Some(_), None, None) | (None, Some(_), None) => (mb.as_ref().map(|v| v.value), Some(1)),
        _ => (mb.as_ref().map(|v| v.value), gas.as_ref().map(|v| v.value)),
    };
    let seq_len = opts.seq_len;
    let input = PlanInput {
        micro_batch: m_in,
        accumulation: a_in,
        replicas: Some(replicas),
        layout: None,
        seq_len,
        global_batch: tb.as_ref().map(|v| v.value),
    };
    let plan = match input.resolve() {
        Ok(plan) => plan,
        Err(err) => {
            r.push(super::plan_finding(&err, ds_key_path(TRAIN_BATCH), anchor));
            return Err(ImportError::Invalid {
                name: name.to_owned(),
                findings: r.findings,
            });
        }
    };

    // Precision and loss scaling (R7).
    let fp16 = r.bool(&["fp16", "enabled"]).is_some_and(|b| b.value);
    let bf16 = r.bool(&["bf16", "enabled"]).is_some_and(|b| b.value)
        || r.bool(&["bfloat16", "enabled"]).is_some_and(|b| b.value);
    if fp16 && bf16 {
        let span = r.span(&["bf16"]);
        r.push(
            Finding::error(
                codes::VALUE,
                path_of(&["bf16", "enabled"]),
                "fp16 and bf16 are both enabled; DeepSpeed refuses this (\"bfloat16 and fp16 modes cannot be simultaneously enabled\")",
            )
            .help("enable one of them")
            .at(span, "second precision"),
        );
    }
    let precision = if fp16 {
        let static_scale = r.float(&["fp16", "loss_scale"]).map_or(0.0, |v| v.value);
        let loss_scale = if static_scale > 0.0 {
            LossScale {
                init: static_scale,
                growth_factor: Some(1.0),
                backoff_factor: Some(1.0),
                growth_interval: None,
            }
        } else {
            let power = r
                .uint(&["fp16", "initial_scale_power"], 0)
                .map_or(16, |v| v.value);
            let window = r
                .uint(&["fp16", "loss_scale_window"], 1)
                .map_or(1000, |v| v.value);
            LossScale {
                init: 2f64.powi(i32::try_from(power.min(1000)).unwrap_or(1000)),
                growth_factor: Some(2.0),
                backoff_factor: Some(0.5),
                growth_interval: Some(window),
            }
        };
        PrecisionSection {
            mode: PrecisionMode::Fp16,
            loss_scale: Some(loss_scale),
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

    let clip_norm = r
        .float(&["gradient_clipping"])
        .map(|v| v.value)
        .filter(|&c| c > 0.0);
    let lr = if r.is_auto(&["optimizer", "params", "lr"]) {
        None
    } else {
        r.float(&["optimizer", "params", "lr"]).map(|v| v.value)
    };

    // DeepSpeed steps its LR scheduler once per update (at the accumulation
    // boundary), so these counts are updates (R8).
    let warmup = r.uint(&["scheduler", "params", "warmup_num_steps"], 0);
    let total = r.uint(&["scheduler", "params", "total_num_steps"], 1);
    let schedule = (warmup.is_some() || total.is_some()).then(|| ScheduleSection {
        warmup: warmup.map(|w| Span::new(w.value, UnitKind::Update)),
        total: total.map(|t| Span::new(t.value, UnitKind::Update)),
    });
    let log = r.uint(&["steps_per_print"], 1).map(|s| LogSection {
        every: Span::new(s.value, UnitKind::Update),
    });

    // R4: DeepSpeed divides each microbatch's loss by gas.
    let normalization = if opts.variable_lengths {
        let span = r.span(&[GAS]);
        r.push(
            Finding::error(
                codes::PER_TOKEN,
                ds_key_path(GAS),
                format!(
                    "DeepSpeed scales each microbatch's loss by 1/gradient_accumulation_steps = 1/{}; with variable lengths a per-token mean per microbatch, averaged this way, is a mean of means, not the group's per-token mean (R4)",
                    plan.accumulation()
                ),
            )
            .help("have the loss sum token losses and divide by the supervised tokens of the whole group (all microbatches and replicas), times gradient_accumulation_steps to undo DeepSpeed's division")
            .at(span, "divides by A, not by tokens"),
        );
        Normalization::PerToken
    } else {
        Normalization::PerExample
    };

    // R6: DeepSpeed's accumulation boundary counts micro-steps across epochs.
    if let Some(examples) = opts.examples {
        let drop_last = r.bool(&["dataloader_drop_last"]).is_some_and(|b| b.value);
        let behaviour = format!(
            "DeepSpeed has no last-group policy: its accumulation boundary is every {} micro-steps regardless of epoch ends, so the leftover microbatches join the next epoch's first group, and after the last epoch they are never applied{}",
            plan.accumulation(),
            if drop_last {
                " (dataloader_drop_last drops only the last incomplete microbatch)"
            } else {
                ""
            }
        );
        if let Some(f) = super::partial_group_finding(
            &plan,
            examples,
            Severity::Warning,
            &behaviour,
            "drop or pad the data yourself",
            r.span(&[GAS]),
        ) {
            r.push(f);
        }
    }

    let parallel = model_parallel.then_some(ParallelSection {
        world_size: world,
        tensor: tp,
        pipeline: pp,
        context: cp,
    });
    let canonical = Canonical {
        run: RunSection::imported(Engine::DeepSpeed, name),
        batch: batch_of(&plan),
        parallel,
        loss: LossSection { normalization },
        precision,
        optimizer: OptimizerSection { clip_norm, lr },
        schedule,
        data: DataSection {
            last_group: LastGroup::Error,
            examples: opts.examples,
        },
        log,
    };
    Ok(Imported {
        canonical,
        findings: r.findings,
    })
}

/// Writes the DeepSpeed JSON for a canonical configuration: all three batch
/// keys (so that DeepSpeed fills nothing), precision, clipping, the
/// scheduler lengths in updates and `steps_per_print`.
pub(crate) fn export(c: &Canonical) -> Result<String, ExportError> {
    let engine = Engine::DeepSpeed;
    let plan = c.plan()?;
    super::check_last_group(
        engine,
        c,
        &plan,
        &[],
        "has no last-group policy (its accumulation boundary ignores epoch ends)",
    )?;
    check_normalization(engine, c)?;
    let mut root = Map::new();
    root.insert(TRAIN_BATCH.into(), json!(plan.effective_batch().get()));
    root.insert(MICRO.into(), json!(plan.micro_batch()));
    root.insert(GAS.into(), json!(plan.accumulation()));
    if let Some(p) = c.parallel
        && p.context > 1
    {
        // Ulysses sequence parallelism: DeepSpeed divides its world by it.
        root.insert("sequence_parallel_size".into(), json!(p.context));
    }
    match c.precision.mode {
        PrecisionMode::Fp32 => {}
        PrecisionMode::Bf16 => {
            root.insert("bf16".into(), json!({ "enabled": true }));
        }
        PrecisionMode::Fp16 => {
            let mut fp16 = Map::new();
            fp16.insert("enabled".into(), json!(true));
            if let Some(s) = c.precision.loss_scale {
                let growth = s.growth_factor.unwrap_or(2.0);
                let backoff = s.backoff_factor.unwrap_or(0.5);
                if growth == 1.0 && backoff == 1.0 {
                    fp16.insert("loss_scale".into(), json!(s.init));
                } else if growth == 2.0 && backoff == 0.5 {
                    let power = s.init.log2();
                    if !(power.is_finite() && power.fract() == 0.0 && power >= 0.0) {
                        return Err(ExportError::Unsupported {
                            engine,
                            key: "precision.loss_scale.init",
                            reason: format!(
                                "DeepSpeed's dynamic scale starts at 2^initial_scale_power, and {} is not a power of two; use {} or {}",
                                s.init,
                                2f64.powf(power.floor().max(0.0)),
                                2f64.powf(power.ceil().max(0.0))
                            ),
                        });
                    }
                    fp16.insert("loss_scale".into(), json!(0));
                    fp16.insert("initial_scale_power".into(), json!(power as u64));
                    if let Some(w) = s.growth_interval {
                        fp16.insert("loss_scale_window".into(), json!(w));
                    }
                } else {
                    return Err(ExportError::Unsupported {
                        engine,
                        key: "precision.loss_scale",
                        reason: format!(
                            "DeepSpeed's dynamic scaler grows by 2 and backs off by 0.5 (static: 1 and 1); growth_factor {growth} and backoff_factor {backoff} cannot be written"
                        ),
                    });
                }
            }
            root.insert("fp16".into(), Value::Object(fp16));
        }
    }
    if let Some(clip) = c.optimizer.clip_norm {
        root.insert("gradient_clipping".into(), json!(clip));
    }
    if let Some(lr) = c.optimizer.lr {
        root.insert(
            "optimizer".into(),
            json!({ "type": "AdamW", "params": { "lr": lr } }),
        );
    }
    if let Some(s) = &c.schedule {
        let mut params = Map::new();
        if let Some(w) = s.warmup {
            let v = super::span_in(
                engine,
                &plan,
                "schedule.warmup",
                "warmup_num_steps",
                w,
                UnitKind::Update,
            )?;
            params.insert("warmup_num_steps".into(), json!(v));
        }
        let kind = if let Some(t) = s.total {
            let v = super::span_in(
                engine,
                &plan,
                "schedule.total",
                "total_num_steps",
                t,
                UnitKind::Update,
            )?;
            params.insert("total_num_steps".into(), json!(v));
            "WarmupDecayLR"
        } else {
            "WarmupLR"
        };
        root.insert(
            "scheduler".into(),
            json!({ "type": kind, "params": Value::Object(params) }),
        );
    }
    if let Some(l) = &c.log {
        let v = super::span_in(
            engine,
            &plan,
            "log.every",
            "steps_per_print",
            l.every,
            UnitKind::Update,
        )?;
        root.insert("steps_per_print".into(), json!(v));
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(root))
        .expect("a JSON value of strings, numbers and objects always serializes");
    text.push('\n');
    Ok(text)
}

/// DeepSpeed and Lightning divide each microbatch's loss by `A`: that is
/// the per-example mean of equal-size microbatches, and the per-token mean
/// only when every example has the same `L` tokens (R4).
pub(crate) fn check_normalization(engine: Engine, c: &Canonical) -> Result<(), ExportError> {
    match c.loss.normalization {
        Normalization::PerExample => Ok(()),
        Normalization::PerToken if c.batch.seq_len.is_some() => Ok(()),
        Normalization::PerToken => Err(ExportError::Unsupported {
            engine,
            key: "loss.normalization",
            reason: format!(
                "{engine} divides each microbatch's loss by the accumulation steps, which is the per-token mean only with a fixed seq_len; set batch.seq_len, or normalize by the group's tokens in the model's loss and export per_example"
            ),
        }),
        Normalization::Sum => Err(ExportError::Unsupported {
            engine,
            key: "loss.normalization",
            reason: format!(
                "{engine} divides each microbatch's loss by the accumulation steps, so a summed loss is not possible; use per_example or per_token"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every combination of the three keys present or absent, against
    /// DeepSpeed's documented fill-in and assertion.
    #[test]
    fn fill_reproduces_every_combination() {
        let w = 4;
        // all three, consistent and not
        let f = fill(Some(64), Some(4), Some(4), w);
        assert_eq!((f.failure, f.floored, f.filled.len()), (None, false, 0));
        let f = fill(Some(60), Some(4), Some(4), w);
        assert_eq!(f.failure, Some(FillFailure::Mismatch));
        assert_eq!(
            f.engine_message(w).unwrap(),
            "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 60 != 4 * 4 * 4"
        );
        // batch + micro → gas = batch // micro // world
        let f = fill(Some(64), Some(4), None, w);
        assert_eq!(
            (f.gradient_accumulation_steps, f.failure, f.floored),
            (Some(4), None, false)
        );
        let f = fill(Some(30), Some(2), None, 2);
        assert_eq!(f.gradient_accumulation_steps, Some(7));
        assert!(f.floored);
        assert_eq!(f.filled, vec![(GAS, "30 // 2 // 2 = 7".to_owned())]);
        assert_eq!(f.failure, Some(FillFailure::Mismatch));
        let f = fill(Some(4), Some(8), None, 1);
        assert_eq!(f.gradient_accumulation_steps, Some(0));
        assert_eq!(f.failure, Some(FillFailure::NotPositive { key: GAS }));
        assert_eq!(
            f.engine_message(1).unwrap(),
            "Gradient accumulation steps: 0 has to be greater than 0"
        );
        // batch + gas → micro = batch // world // gas
        let f = fill(Some(64), None, Some(4), w);
        assert_eq!((f.micro_batch, f.failure), (Some(4), None));
        let f = fill(Some(66), None, Some(4), w);
        assert_eq!((f.micro_batch, f.floored), (Some(4), true));
        assert_eq!(f.filled, vec![(MICRO, "66 // 4 // 4 = 4".to_owned())]);
        assert_eq!(f.failure, Some(FillFailure::Mismatch));
        // micro + gas → batch = micro × gas × world, always consistent
        let f = fill(None, Some(3), Some(5), w);
        assert_eq!(
            (f.train_batch_size, f.failure, f.floored),
            (Some(60), None, false)
        );
        // batch only → gas = 1, micro = batch // world
        let f = fill(Some(64), None, None, w);
        assert_eq!(
            (f.gradient_accumulation_steps, f.micro_batch, f.failure),
            (Some(1), Some(16), None)
        );
        let f = fill(Some(66), None, None, w);
        assert_eq!(
            (f.micro_batch, f.floored, f.failure),
            (Some(16), true, Some(FillFailure::Mismatch))
        );
        let f = fill(Some(2), None, None, w);
        assert_eq!(f.failure, Some(FillFailure::NotPositive { key: MICRO }));
        // micro only → gas = 1, batch = micro × world
        let f = fill(None, Some(8), None, w);
        assert_eq!(
            (f.train_batch_size, f.gradient_accumulation_steps, f.failure),
            (Some(32), Some(1), None)
        );
        // gas only, or nothing → DeepSpeed fails
        for f in [fill(None, None, Some(4), w), fill(None, None, None, w)] {
            assert_eq!(f.failure, Some(FillFailure::NeitherGiven));
            assert_eq!(
                f.engine_message(w).unwrap(),
                "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
            );
        }
        // a given zero fails DeepSpeed's positivity check, or divides by zero
        let f = fill(Some(0), Some(1), Some(1), 1);
        assert_eq!(
            f.failure,
            Some(FillFailure::NotPositive { key: TRAIN_BATCH })
        );
        let f = fill(Some(8), Some(0), None, 1);
        assert_eq!(f.failure, Some(FillFailure::DivisionByZero { key: MICRO }));
        assert_eq!(
            f.engine_message(1).unwrap(),
            "ZeroDivisionError: integer division or modulo by zero (train_micro_batch_size_per_gpu is 0)"
        );
    }

    /// Exhaustively over small values and every presence pattern: DeepSpeed
    /// accepts the values exactly when accum's exact plan exists, and then
    /// both have the same m, A and B (R3). Where DeepSpeed floors, it fails.
    #[test]
    fn deepspeed_accepts_exactly_what_accum_solves() {
        let mut checked = 0;
        for world in 1..=4u64 {
            for b in 0..=40u64 {
                for m in 0..=6u64 {
                    for g in 0..=6u64 {
                        for mask in 0..8u8 {
                            let tb = (mask & 1 != 0).then_some(b);
                            let mb = (mask & 2 != 0).then_some(m);
                            let ga = (mask & 4 != 0).then_some(g);
                            let f = fill(tb, mb, ga, world);
                            let accumulation = match (tb, mb, ga) {
                                (Some(_), None, None) | (None, Some(_), None) => Some(1),
                                _ => ga,
                            };
                            let plan = PlanInput {
                                micro_batch: mb,
                                accumulation,
                                replicas: Some(world),
                                global_batch: tb,
                                ..PlanInput::default()
                            }
                            .resolve();
                            match (&f.failure, &plan) {
                                (None, Ok(p)) => {
                                    assert_eq!(
                                        (
                                            f.train_batch_size,
                                            f.micro_batch,
                                            f.gradient_accumulation_steps
                                        ),
                                        (
                                            Some(p.effective_batch().get()),
                                            Some(p.micro_batch()),
                                            Some(p.accumulation())
                                        ),
                                        "{tb:?} {mb:?} {ga:?} world {world}"
                                    );
                                    assert!(!f.floored);
                                }
                                (Some(_), Err(_)) => {}
                                other => panic!("{tb:?} {mb:?} {ga:?} world {world}: {other:?}"),
                            }
                            if f.floored {
                                assert!(f.failure.is_some(), "{tb:?} {mb:?} {ga:?} world {world}");
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 4 * 41 * 7 * 7 * 8);
    }

    #[test]
    fn fill_never_panics_on_extremes() {
        for v in [None, Some(0), Some(1), Some(u64::MAX)] {
            for m in [None, Some(0), Some(u64::MAX)] {
                for g in [None, Some(0), Some(3)] {
                    for w in [0, 1, u64::MAX] {
                        let _ = fill(v, m, g, w);
                    }
                }
            }
        }
    }
}
