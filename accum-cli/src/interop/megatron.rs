//! Megatron-LM command-line arguments (`--micro-batch-size 4
//! --global-batch-size 512 …`), as written in a launch script: `\` line
//! continuations, `#` comments, quotes and `--key=value` are understood;
//! words that are not options (the launcher, the script) are skipped, and a
//! `torchrun --nproc_per_node N --nnodes K` prefix gives the world size.
//!
//! Megatron computes `D = world / (tp·pp·cp)` and the number of microbatches
//! `A = global / (micro·D)`, asserting both divisions are exact (R3). Its
//! `--train-iters`, `--lr-warmup-iters` and `--log-interval` count
//! iterations, one optimizer update each; `--train-samples` and
//! `--lr-warmup-samples` count examples.

use std::ops::Range;

use accum_core::{LastGroup, Layout, PlanInput, Span, UnitKind};

use super::{
    Canonical, DataSection, Engine, ExportError, ImportError, ImportOptions, Imported, LogSection,
    LossScale, LossSection, Normalization, OptimizerSection, ParallelSection, PrecisionMode,
    PrecisionSection, RunSection, ScheduleSection, batch_of, codes,
};
use crate::diagnostic::{Diagnostic as Finding, Severity};

/// Options that take no value.
const FLAGS: &[&str] = &[
    "--fp16",
    "--bf16",
    "--calculate-per-token-loss",
    "--sequence-parallel",
    "--use-distributed-optimizer",
    "--overlap-grad-reduce",
    "--overlap-param-gather",
    "--use-flash-attn",
    "--use-mcore-models",
    "--no-masked-softmax-fusion",
    "--swiglu",
    "--untie-embeddings-and-output-weights",
    "--disable-bias-linear",
    "--standalone",
];

/// One word of the command line with its byte range.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Word {
    text: String,
    span: Range<usize>,
}

/// Splits a shell command line into words: whitespace separates, `\` escapes
/// (a `\` before a newline joins lines), quotes group, `#` at a word's start
/// comments out the rest of the line.
fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    let mut current: Option<(String, usize, usize)> = None;
    let mut quote: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        let end = i + c.len_utf8();
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if let Some(cur) = current.as_mut() {
                cur.0.push(c);
            }
            if let Some(cur) = current.as_mut() {
                cur.2 = end;
            }
            continue;
        }
        match c {
            '\\' => {
                if let Some(&(j, next)) = chars.peek() {
                    chars.next();
                    if next == '\n' || next == '\r' {
                        if next == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
                            chars.next();
                        }
                        continue;
                    }
                    let cur = current.get_or_insert_with(|| (String::new(), i, i));
                    cur.0.push(next);
                    cur.2 = j + next.len_utf8();
                }
            }
            '\'' | '"' => {
                quote = Some(c);
                let cur = current.get_or_insert_with(|| (String::new(), i, end));
                cur.2 = end;
            }
            '#' if current.is_none() => {
                for (_, n) in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
            }
            c if c.is_whitespace() => {
                if let Some((text, start, stop)) = current.take() {
                    out.push(Word {
                        text,
                        span: start..stop,
                    });
                }
            }
            c => {
                let cur = current.get_or_insert_with(|| (String::new(), i, end));
                cur.0.push(c);
                cur.2 = end;
            }
        }
    }
    if let Some((text, start, stop)) = current {
        out.push(Word {
            text,
            span: start..stop,
        });
    }
    out
}

/// An option and its value, with spans.
#[derive(Clone, Debug)]
struct Arg {
    name: String,
    value: Option<String>,
    span: Range<usize>,
    value_span: Range<usize>,
}

/// Options in order (`--key value`, `--key=value`, flags); underscores in
/// names are read as dashes, as torchrun accepts both.
fn args(text: &str) -> Vec<Arg> {
    let ws = words(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let w = &ws[i];
        i += 1;
        if !w.text.starts_with("--") || w.text.len() <= 2 {
            continue;
        }
        if let Some((name, value)) = w.text.split_once('=') {
            let offset = w.span.start + name.len() + 1;
            out.push(Arg {
                name: name.replace('_', "-"),
                value: Some(value.to_owned()),
                span: w.span.clone(),
                value_span: offset.min(w.span.end)..w.span.end,
            });
            continue;
        }
        let name = w.text.replace('_', "-");
        let takes_value = !FLAGS.contains(&name.as_str());
        // `--rampup-batch-size start increment samples` takes three words.
        let nargs = match name.as_str() {
            _ if !takes_value => 0,
            "--rampup-batch-size" => 3,
            _ => 1,
        };
        let mut value: Option<Word> = None;
        for _ in 0..nargs {
            match ws.get(i).filter(|n| !n.text.starts_with("--")) {
                Some(next) => {
                    value = Some(match value {
                        Some(v) => Word {
                            text: format!("{} {}", v.text, next.text),
                            span: v.span.start..next.span.end,
                        },
                        None => next.clone(),
                    });
                    i += 1;
                }
                None => break,
            }
        }
        out.push(Arg {
            name,
            value_span: value.as_ref().map_or(w.span.clone(), |v| v.span.clone()),
            span: w.span.start..value.as_ref().map_or(w.span.end, |v| v.span.end),
            value: value.map(|v| v.text),
        });
    }
    out
}

struct Args {
    list: Vec<Arg>,
    findings: Vec<Finding>,
}

impl Args {
    fn get(&self, name: &str) -> Option<&Arg> {
        self.list.iter().rev().find(|a| a.name == name)
    }

    fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    fn path(name: &str) -> Vec<String> {
        vec![name.to_owned()]
    }

    fn bad(&mut self, arg: &Arg, what: &str) {
        let shown = arg.value.as_deref().unwrap_or("nothing");
        self.findings.push(
            Finding::error(
                codes::VALUE,
                Args::path(&arg.name),
                format!("`{}` is given `{shown}`, not {what}", arg.name),
            )
            .help(format!("write {} with {what}", arg.name))
            .at(arg.value_span.clone(), format!("expected {what}")),
        );
    }

    fn uint(&mut self, name: &str, min: u64) -> Option<(u64, Range<usize>)> {
        let arg = self.get(name)?.clone();
        match arg.value.as_deref().map(str::parse::<u64>) {
            Some(Ok(v)) if v >= min => Some((v, arg.value_span)),
            _ => {
                self.bad(&arg, &format!("a whole number ≥ {min}"));
                None
            }
        }
    }

    fn float(&mut self, name: &str) -> Option<(f64, Range<usize>)> {
        let arg = self.get(name)?.clone();
        match arg.value.as_deref().map(str::parse::<f64>) {
            Some(Ok(v)) if v.is_finite() && v >= 0.0 => Some((v, arg.value_span)),
            _ => {
                self.bad(&arg, "a finite number ≥ 0");
                None
            }
        }
    }
}

/// Reads Megatron-LM arguments.
pub(crate) fn import(
    name: &str,
    text: &str,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let mut a = Args {
        list: args(text),
        findings: Vec::new(),
    };
    let invalid = |findings: Vec<Finding>| ImportError::Invalid {
        name: name.to_owned(),
        findings,
    };
    let top = 0..text.find(|c: char| !c.is_whitespace()).unwrap_or(0);

    // Duplicates: argparse keeps the last one.
    let mut seen: Vec<&str> = Vec::new();
    let mut dups = Vec::new();
    for arg in &a.list {
        if seen.contains(&arg.name.as_str()) {
            dups.push(arg.clone());
        } else {
            seen.push(&arg.name);
        }
    }
    for d in dups {
        a.findings.push(
            Finding::error(
                codes::VALUE,
                Args::path(&d.name),
                format!(
                    "`{}` is given more than once; argparse keeps the last one",
                    d.name
                ),
            )
            .warning()
            .help("remove the earlier occurrences")
            .at(d.span.clone(), "repeated"),
        );
    }

    // World size: the launcher (option), or torchrun's own arguments.
    let nproc = a.uint("--nproc-per-node", 1);
    let nnodes = a.uint("--nnodes", 1);
    let launched = nproc
        .as_ref()
        .map(|(n, _)| n.saturating_mul(nnodes.as_ref().map_or(1, |(k, _)| *k)));
    let world = match (opts.world_size, launched) {
        (Some(w), Some(l)) if w != l => {
            let span = nproc.as_ref().map_or(top.clone(), |(_, s)| s.clone());
            a.findings.push(
                Finding::error(
                    codes::WORLD_SIZE,
                    Args::path("--nproc-per-node"),
                    format!("the world size given is {w}, but torchrun here starts --nproc_per_node × --nnodes = {l} processes"),
                )
                .help("make the launcher and --world-size agree; accum uses the launcher's count")
                .at(span, "launcher's count"),
            );
            l
        }
        (_, Some(l)) => l,
        (Some(w), None) => w,
        (None, None) => {
            a.findings.push(
                Finding::error(
                    codes::MISSING,
                    vec![],
                    "the world size is not in Megatron's arguments: it comes from the launcher",
                )
                .help(
                    "give the launcher's world size (--world-size N), or include the torchrun line",
                )
                .at(top.clone(), "world size needed"),
            );
            return Err(invalid(a.findings));
        }
    };

    let micro = a.uint("--micro-batch-size", 1);
    let global = a.uint("--global-batch-size", 1);
    let tp = a.uint("--tensor-model-parallel-size", 1).map_or(1, |v| v.0);
    let pp = a
        .uint("--pipeline-model-parallel-size", 1)
        .map_or(1, |v| v.0);
    let cp = a.uint("--context-parallel-size", 1).map_or(1, |v| v.0);
    let Some((m, m_span)) = micro else {
        if !a.has("--micro-batch-size") {
            a.findings.push(
                Finding::error(
                    codes::MISSING,
                    Args::path("--micro-batch-size"),
                    "--micro-batch-size is missing; Megatron requires it",
                )
                .help("add --micro-batch-size N (examples per forward pass per replica)")
                .at(top.clone(), "no micro-batch size"),
            );
        }
        return Err(invalid(a.findings));
    };
    let layout = Layout::new(world, tp, pp, cp);
    let replicas = match layout.replicas() {
        Ok(d) => d,
        Err(err) => {
            let span = a
                .get("--tensor-model-parallel-size")
                .map_or(top.clone(), |x| x.span.clone());
            a.findings.push(super::plan_finding(
                &err,
                Args::path("--tensor-model-parallel-size"),
                span,
            ));
            return Err(invalid(a.findings));
        }
    };
    let b_span = global.as_ref().map_or(m_span.clone(), |g| g.1.clone());
    if let Some((g, _)) = &global {
        let step = m.saturating_mul(replicas);
        if g % step != 0 {
            a.findings.push(
                Finding::error(
                    codes::ENGINE_ASSERT,
                    Args::path("--global-batch-size"),
                    format!(
                        "Megatron would stop at start-up: global batch size {g} is not divisible by micro batch size {m} × data parallel size {replicas} = {step} (D = {world} / (tp {tp} × pp {pp} × cp {cp}))"
                    ),
                )
                .help("see accum's nearest valid values below")
                .at(b_span.clone(), "not a multiple of micro × D"),
            );
        } else if *g == m.saturating_mul(world) && tp * pp * cp > 1 {
            a.findings.push(
                Finding::error(
                    codes::MODEL_PARALLEL,
                    Args::path("--global-batch-size"),
                    format!(
                        "--global-batch-size {g} = micro {m} × all {world} devices, as if every device were a replica; Megatron uses D = {world} / (tp {tp} × pp {pp} × cp {cp}) = {replicas} and so runs A = {g} / ({m} × {replicas}) = {} microbatches per update",
                        g / step
                    ),
                )
                .warning()
                .help(format!("if one microbatch per update was meant, use --global-batch-size {step} (R3)"))
                .at(b_span.clone(), "counts model-parallel devices"),
            );
        }
    }
    let seq_len = a.uint("--seq-length", 1).map(|v| v.0).or(opts.seq_len);
    let plan = match (PlanInput {
        micro_batch: Some(m),
        // Megatron's default global batch is micro × D: one microbatch per update.
        accumulation: if global.is_none() { Some(1) } else { None },
        replicas: None,
        layout: Some(layout),
        seq_len,
        global_batch: global.as_ref().map(|g| g.0),
    })
    .resolve()
    {
        Ok(plan) => plan,
        Err(err) => {
            a.findings.push(super::plan_finding(
                &err,
                Args::path("--global-batch-size"),
                b_span,
            ));
            return Err(invalid(a.findings));
        }
    };
    let b = plan.effective_batch().get();

    if let Some(ramp) = a.get("--rampup-batch-size").cloned() {
        a.findings.push(
            Finding::error(
                codes::SCHEDULE_SHIFT,
                Args::path("--rampup-batch-size"),
                format!(
                    "--rampup-batch-size {} ramps the global batch up to {b}, so the accumulation changes during the run: iterations early on hold fewer examples, and spans counted in iterations (warmup, log interval) cover a different number of examples than at B = {b} (R8, R10)",
                    ramp.value.as_deref().unwrap_or("")
                ),
            )
            .help("count the schedule in samples (--lr-warmup-samples, --train-samples), or drop the ramp-up; accum's plan uses the final global batch")
            .at(ramp.span.clone(), "batch size changes"),
        );
    }

    // Schedule: iterations are updates, samples are examples.
    let mut total = a
        .uint("--train-iters", 1)
        .map(|v| Span::new(v.0, UnitKind::Update));
    if let Some((samples, span)) = a.uint("--train-samples", 1) {
        if samples % b != 0 {
            a.findings.push(
                Finding::error(
                    codes::ROUNDS,
                    Args::path("--train-samples"),
                    format!(
                        "Megatron sets train_iters = train_samples // global_batch_size = {samples} // {b} = {}, silently dropping {} samples (recent versions refuse instead: train_samples must be divisible by global_batch_size)",
                        samples / b,
                        samples % b
                    ),
                )
                .help(format!("use --train-samples {} or {}", samples / b * b, (samples / b + 1).saturating_mul(b)))
                .at(span, "not a multiple of the global batch"),
            );
        }
        total = total.or(Some(Span::new(samples, UnitKind::Example)));
    }
    let mut warmup = a
        .uint("--lr-warmup-iters", 0)
        .map(|v| Span::new(v.0, UnitKind::Update));
    if let Some((samples, _)) = a.uint("--lr-warmup-samples", 0) {
        warmup = warmup.or(Some(Span::new(samples, UnitKind::Example)));
    }
    if let Some(frac) = a.get("--lr-warmup-fraction").cloned() {
        a.findings.push(
            Finding::error(
                codes::NOT_CONVERTED,
                Args::path("--lr-warmup-fraction"),
                "--lr-warmup-fraction is a fraction of the decay length and is not carried into schedule.warmup",
            )
            .warning()
            .help("give --lr-warmup-iters (updates) or --lr-warmup-samples (examples) instead")
            .at(frac.span.clone(), "not converted"),
        );
    }
    let schedule =
        (warmup.is_some() || total.is_some()).then_some(ScheduleSection { warmup, total });
    let log = a.uint("--log-interval", 1).map(|v| LogSection {
        every: Span::new(v.0, UnitKind::Update),
    });

    // Precision (R7).
    let precision = if a.has("--fp16") {
        let loss_scale = if let Some((s, _)) = a.float("--loss-scale").filter(|(s, _)| *s > 0.0) {
            LossScale {
                init: s,
                growth_factor: Some(1.0),
                backoff_factor: Some(1.0),
                growth_interval: None,
            }
        } else {
            LossScale {
                init: a
                    .float("--initial-loss-scale")
                    .map_or(4_294_967_296.0, |v| v.0),
                growth_factor: Some(2.0),
                backoff_factor: Some(0.5),
                growth_interval: Some(a.uint("--loss-scale-window", 1).map_or(1000, |v| v.0)),
            }
        };
        PrecisionSection {
            mode: PrecisionMode::Fp16,
            loss_scale: Some(loss_scale),
        }
    } else if a.has("--bf16") {
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
    // Megatron clips at 1.0 unless told otherwise; 0 disables clipping.
    let clip_norm = match a.float("--clip-grad") {
        Some((c, _)) => (c > 0.0).then_some(c),
        None if a.has("--clip-grad") => None,
        None => Some(1.0),
    };
    let lr = a.float("--lr").map(|v| v.0);

    // R4: without --calculate-per-token-loss, each microbatch is averaged
    // over its own tokens and the microbatches are then averaged.
    let normalization = if a.has("--calculate-per-token-loss") {
        Normalization::PerToken
    } else if opts.variable_lengths {
        a.findings.push(
            Finding::error(
                codes::PER_TOKEN,
                Args::path("--calculate-per-token-loss"),
                format!(
                    "without --calculate-per-token-loss Megatron averages each microbatch over its own tokens and then averages the {} microbatches and {replicas} replicas: with variable lengths that is a mean of means, not the per-token mean of the group (R4)",
                    plan.accumulation()
                ),
            )
            .help("add --calculate-per-token-loss so that the loss is divided by the tokens of the whole global batch")
            .at(top.clone(), "per-token loss off"),
        );
        Normalization::PerToken
    } else {
        Normalization::PerExample
    };

    if let Some(examples) = opts.examples
        && let Some(f) = super::partial_group_finding(
            &plan,
            examples,
            Severity::Warning,
            "Megatron only runs whole global batches over a sample index that runs on across epochs, so no partial group is run: the leftover examples of the last pass are not used",
            "accept the drop, or size --train-samples to whole global batches",
            b_span.clone(),
        )
    {
        a.findings.push(f);
    }

    let canonical = Canonical {
        run: RunSection::imported(Engine::Megatron, name),
        batch: batch_of(&plan),
        parallel: Some(ParallelSection {
            world_size: world,
            tensor: tp,
            pipeline: pp,
            context: cp,
        }),
        loss: LossSection { normalization },
        precision,
        optimizer: OptimizerSection { clip_norm, lr },
        schedule,
        data: DataSection {
            last_group: LastGroup::Drop,
            examples: opts.examples,
        },
        log,
    };
    Ok(Imported {
        canonical,
        findings: a.findings,
    })
}

/// Writes Megatron-LM arguments, one per line with `\` continuations, after
/// a comment that states the world size the launcher must start.
pub(crate) fn export(c: &Canonical) -> Result<String, ExportError> {
    let engine = Engine::Megatron;
    let plan = c.plan()?;
    super::check_last_group(
        engine,
        c,
        &plan,
        &[LastGroup::Drop],
        "runs whole global batches only (the leftover examples are not used)",
    )?;
    let p = c.parallel.unwrap_or(ParallelSection {
        world_size: plan.replicas(),
        tensor: 1,
        pipeline: 1,
        context: 1,
    });
    let mut lines: Vec<String> = Vec::new();
    lines.push(format!("--micro-batch-size {}", plan.micro_batch()));
    lines.push(format!(
        "--global-batch-size {}",
        plan.effective_batch().get()
    ));
    lines.push(format!("--tensor-model-parallel-size {}", p.tensor));
    lines.push(format!("--pipeline-model-parallel-size {}", p.pipeline));
    lines.push(format!("--context-parallel-size {}", p.context));
    if let Some(l) = plan.seq_len() {
        lines.push(format!("--seq-length {l}"));
    }
    if let Some(s) = &c.schedule {
        if let Some(t) = s.total {
            lines.push(iters_or_samples(
                engine,
                &plan,
                "schedule.total",
                t,
                "--train-iters",
                "--train-samples",
            )?);
        }
        if let Some(w) = s.warmup {
            lines.push(iters_or_samples(
                engine,
                &plan,
                "schedule.warmup",
                w,
                "--lr-warmup-iters",
                "--lr-warmup-samples",
            )?);
        }
    }
    if let Some(l) = &c.log {
        let v = super::span_in(
            engine,
            &plan,
            "log.every",
            "--log-interval",
            l.every,
            UnitKind::Update,
        )?;
        lines.push(format!("--log-interval {v}"));
    }
    if let Some(lr) = c.optimizer.lr {
        lines.push(format!("--lr {}", super::json_float(lr)));
    }
    lines.push(format!(
        "--clip-grad {}",
        super::json_float(c.optimizer.clip_norm.unwrap_or(0.0))
    ));
    match c.precision.mode {
        PrecisionMode::Fp32 => {}
        PrecisionMode::Bf16 => lines.push("--bf16".to_owned()),
        PrecisionMode::Fp16 => {
            lines.push("--fp16".to_owned());
            if let Some(s) = c.precision.loss_scale {
                match (
                    s.growth_factor.unwrap_or(2.0),
                    s.backoff_factor.unwrap_or(0.5),
                ) {
                    (g, b) if g == 1.0 && b == 1.0 => {
                        lines.push(format!("--loss-scale {}", super::json_float(s.init)));
                    }
                    (g, b) if g == 2.0 && b == 0.5 => {
                        lines.push(format!(
                            "--initial-loss-scale {}",
                            super::json_float(s.init)
                        ));
                        if let Some(w) = s.growth_interval {
                            lines.push(format!("--loss-scale-window {w}"));
                        }
                    }
                    (g, b) => {
                        return Err(ExportError::Unsupported {
                            engine,
                            key: "precision.loss_scale",
                            reason: format!(
                                "Megatron's dynamic scaler grows by 2 and backs off by 0.5 (static: --loss-scale); growth_factor {g} and backoff_factor {b} cannot be written"
                            ),
                        });
                    }
                }
            }
        }
    }
    match c.loss.normalization {
        Normalization::PerToken => lines.push("--calculate-per-token-loss".to_owned()),
        Normalization::PerExample => {}
        Normalization::Sum => {
            return Err(ExportError::Unsupported {
                engine,
                key: "loss.normalization",
                reason: "Megatron averages the loss (per microbatch, or per token with --calculate-per-token-loss); a summed loss cannot be written".to_owned(),
            });
        }
    }
    let mut out = format!(
        "# launch {} processes: world_size {} = tensor {} × pipeline {} × context {} × {} data-parallel replicas\n",
        p.world_size,
        p.world_size,
        p.tensor,
        p.pipeline,
        p.context,
        plan.replicas()
    );
    let n = lines.len();
    for (i, line) in lines.into_iter().enumerate() {
        out.push_str(&line);
        out.push_str(if i + 1 < n { " \\\n" } else { "\n" });
    }
    Ok(out)
}

/// `--train-iters N` for a span in updates, `--train-samples N` for one in
/// examples (a whole number of global batches, as Megatron floors).
fn iters_or_samples(
    engine: Engine,
    plan: &accum_core::Plan,
    key: &'static str,
    span: Span,
    iters: &'static str,
    samples: &'static str,
) -> Result<String, ExportError> {
    if span.unit() == UnitKind::Example {
        // Whole global batches, or Megatron would floor.
        super::span_in(engine, plan, key, samples, span, UnitKind::Update)?;
        Ok(format!("{samples} {}", span.value()))
    } else {
        let v = super::span_in(engine, plan, key, iters, span, UnitKind::Update)?;
        Ok(format!("{iters} {v}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_follow_shell_rules() {
        let text = "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n  --micro-batch-size=4 # comment --fp16\n  --lr '3e-4' --bf16";
        let names: Vec<(String, Option<String>)> =
            args(text).into_iter().map(|a| (a.name, a.value)).collect();
        assert_eq!(
            names,
            vec![
                ("--nproc-per-node".to_owned(), Some("8".to_owned())),
                ("--micro-batch-size".to_owned(), Some("4".to_owned())),
                ("--lr".to_owned(), Some("3e-4".to_owned())),
                ("--bf16".to_owned(), None),
            ]
        );
        let a = args(text);
        assert_eq!(&text[a[1].value_span.clone()], "4");
    }

    #[test]
    fn words_never_panic_on_odd_text() {
        for text in [
            "\\",
            "'",
            "\"abc",
            "--",
            "--=",
            "# only",
            "--a=\\\n",
            "é --x é",
        ] {
            let _ = args(text);
        }
    }
}
