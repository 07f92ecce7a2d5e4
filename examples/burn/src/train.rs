//! The burn loop driven by accum: the driver gives the groups and the
//! global per-token denominator, burn does the math and accumulates the
//! microbatches' gradients in its `GradientsAccumulator`, accum's reducer
//! all-reduces them once per update across replicas on threads, accum's
//! loss scaler and cosine schedule feed burn's AdamW. With
//! [`train_with_report`], rank 0 writes accum's run report (`accum-run/1`,
//! its stats stream beside it) through the driver's [`Recorder`], which
//! `burn-accum sheet train.json --report run.json` renders.

use std::path::Path;

use accum::driver::{Driver, Group, Outcome, Recorder, Step};
use accum::plan::{LastGroup, Plan, Rounding};
use accum::replica::{InProcess, Member, Reducer};
use accum::scaler::LossScaler;
use accum::schedule::Schedule;
use accum::settings::{LogAxis, Normalization, PrecisionMode, ScheduleKind};
use burn::optim::{AdamWConfig, GradientsAccumulator, GradientsParams};
use burn::tensor::Device;

use crate::BoxError;
use crate::config::{BatchConfig, TrainConfig};
use crate::corpus::Corpus;
use crate::model::{CharModel, ModelConfig, PaddedBatch};

/// The device every replica trains on: burn's NdArray backend (pure Rust,
/// CPU) under its Autodiff decorator.
pub fn device() -> Device {
    // burn 0.22 marks NdArray deprecated in favour of Flex
    // (burn-tensor 0.22.1, `device.rs`, `Device::ndarray`); it is still the
    // release's dependency-light CPU backend, and `Device::flex()` (feature
    // `flex`) is a one-line swap.
    #[allow(deprecated)]
    Device::ndarray().autodiff()
}

/// What a run observed, from rank 0, for the tests and `main`'s summary:
/// the run's report, `accum-run/1`, is accum's own, written by the driver's
/// [`Recorder`] ([`train_with_report`]); this keeps what it does not hold,
/// such as the first group's full gradient, and every attempt's loss and
/// learning rate undecimated.
#[derive(Clone, Debug)]
pub struct Trained {
    /// The plan the run trained with.
    pub plan: Plan,
    /// The group's per-token loss of every attempt.
    pub losses: Vec<f64>,
    /// The learning rate each applied update was given.
    pub lrs: Vec<f64>,
    /// The first group's full gradient: reduced over the replicas and
    /// unscaled, parameters flattened in order.
    pub first_gradient: Vec<f32>,
    /// Applied updates.
    pub applied: u64,
    /// Attempts skipped for non-finite gradients.
    pub skipped: u64,
    /// The loss scale at the end.
    pub loss_scale: f64,
    /// Supervised tokens trained on.
    pub tokens: u64,
}

/// Trains `config` on `corpus` with `D` replicas, one thread each, after
/// accum's `validate()` and plan, and returns rank 0's summary. `log`
/// prints rank 0's line at `config.log_every`.
pub fn train(corpus: &Corpus, config: &TrainConfig, log: bool) -> Result<Trained, BoxError> {
    run(corpus, config, log, None)
}

/// [`train`], with rank 0 writing accum's run report to `report` and its
/// stats stream beside it (`run.json` → `run.stats.jsonl`).
pub fn train_with_report(
    corpus: &Corpus,
    config: &TrainConfig,
    log: bool,
    report: &Path,
) -> Result<Trained, BoxError> {
    run(corpus, config, log, Some(report))
}

fn run(
    corpus: &Corpus,
    config: &TrainConfig,
    log: bool,
    report: Option<&Path>,
) -> Result<Trained, BoxError> {
    use accum::AccumConfig;
    config.validate()?;
    let plan = config.plan()?;
    let d = usize::try_from(plan.replicas())?;
    let reducer = InProcess::new(d);
    // One member per rank, moved into its thread: a rank that fails or
    // panics drops it, and the others' collectives end with an error
    // instead of waiting for it.
    let members = (0..d)
        .map(|rank| reducer.member(rank))
        .collect::<Result<Vec<Member>, _>>()?;
    let reports: Vec<Result<Trained, BoxError>> = std::thread::scope(|s| {
        let handles: Vec<_> = members
            .into_iter()
            .map(|member| {
                let report = report.filter(|_| member.rank() == 0);
                s.spawn(move || {
                    let rank = member.rank();
                    let result = replica(corpus, config, plan, &member, log, report);
                    if let Err(e) = &result {
                        // Before the member's drop, so that the others see
                        // this rank's own reason.
                        member.abort(&format!("replica {rank} failed: {e}"));
                    }
                    result
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a replica panicked".into()))
            })
            .collect()
    });
    let mut reports = reports.into_iter();
    let first = reports.next().ok_or("no replica ran")?;
    for other in reports {
        other?;
    }
    first
}

/// One replica's loop: the driver gives the groups, burn does the math.
fn replica(
    corpus: &Corpus,
    config: &TrainConfig,
    plan: Plan,
    member: &Member,
    log: bool,
    report_path: Option<&Path>,
) -> Result<Trained, BoxError> {
    let rank = member.rank();
    let schedule = Schedule::from_spans(
        ScheduleKind::Cosine,
        config.lr,
        config.warmup,
        config.total,
        &plan,
        Rounding::Up,
    )?;
    let mut driver = Driver::builder(plan, corpus.examples.len())
        .seed(config.seed)
        .last_group(LastGroup::Process)
        .rank(rank)
        .schedule(schedule)
        .build()?;
    let device = device();
    let grad_device = device.clone().without_autodiff();
    let mut model = CharModel::new(corpus.vocab, &config.model, &device);
    let mut optimizer = config.optimizer.init();
    let mut scaler = LossScaler::dynamic(&config.loss_scale);
    let mut report = Trained {
        plan,
        losses: Vec::new(),
        lrs: Vec::new(),
        first_gradient: Vec::new(),
        applied: 0,
        skipped: 0,
        loss_scale: scaler.scale(),
        tokens: 0,
    };
    // accum's run report, on the rank that writes it: the loss, gradient
    // norm and loss scale are burn's; the learning rate, counts and stages
    // the driver's.
    let mut recorder = match report_path {
        Some(path) => {
            let mut model_json = serde_json::to_value(&config.model)?;
            if let Some(fields) = model_json.as_object_mut() {
                fields.insert("kind".to_owned(), "burn_char_model".into());
                fields.insert("vocab".to_owned(), corpus.vocab.into());
            }
            Some(
                Recorder::new(&driver, Normalization::PerToken)
                    // f32 on NdArray, with accum's dynamic loss scaler.
                    .precision(PrecisionMode::Fp32, true)
                    .model(model_json)
                    .data_tokens(
                        (0..corpus.examples.len())
                            .map(|id| corpus.supervised(id))
                            .sum(),
                    )
                    .log(LogAxis::Tokens, config.log_every)
                    .stream_beside(path)?,
            )
        }
        None => None,
    };

    while let Some(mut group) = driver.next_group()? {
        // accum::run::normalization: the group's global per-token
        // denominator, summed over the replicas before any backward pass.
        let denominator =
            group.denominator(Normalization::PerToken, |id| corpus.supervised(id), member)?;
        // accum::run::loss-scale: one scale for the whole group.
        let scale = scaler.scale();
        let weight = (scale / denominator.value) as f32;
        let (grads, loss) = accumulate(&model, corpus, &group, weight, &device);
        // accum::run::data-parallel: one all-reduce per group, after this
        // rank's last microbatch, of every parameter's gradient in one flat
        // buffer; every rank takes part, even one without a microbatch in a
        // partial group. The loss rides along at the end, for the log.
        let mut flat = model.flatten(&grads);
        let lengths: Vec<usize> = flat.iter().map(Vec::len).collect();
        let mut buffer = flat.concat();
        buffer.push(loss / scale as f32);
        member.all_reduce_f32(rank, &mut buffer)?;
        let group_loss = f64::from(buffer.pop().unwrap_or(0.0));
        let mut rest = buffer.as_slice();
        for (param, len) in flat.iter_mut().zip(lengths) {
            let (mine, tail) = rest.split_at(len);
            param.copy_from_slice(mine);
            rest = tail;
        }
        let finite = flat.iter_mut().fold(true, |ok, g| scaler.unscale(g) & ok);
        let grad_norm = flat
            .iter()
            .flatten()
            .map(|g| f64::from(*g).powi(2))
            .sum::<f64>()
            .sqrt();
        if report.first_gradient.is_empty() {
            report.first_gradient = flat.concat();
        }
        if finite {
            // accum::run::scheduler: the learning rate of this applied
            // update, from accum's schedule, given to burn's optimizer.
            let lr = driver.lr().expect("the driver was given a schedule");
            let grads = model.gradients(&flat, &grad_device);
            model = optimizer.step(lr, model, grads);
            report.lrs.push(lr);
        }
        // accum::run::loss-scale: the scaler updates after the attempt.
        scaler.update(finite);
        report.losses.push(group_loss);
        let outcome = Outcome::from_finite(finite);
        let progress = match &mut recorder {
            Some(recorder) => {
                let step = Step::loss(group_loss)
                    .grad_norm(grad_norm)
                    .loss_scale(scale);
                recorder.finish(&mut driver, group, outcome, step)?
            }
            None => *driver.finish(group, outcome)?,
        };
        if log && rank == 0 && driver.every(config.log_every) {
            println!(
                "{:>5} updates  {:>7} tokens  loss {group_loss:.4}  lr {:.2e}  scale {}",
                progress.updates.get(),
                progress.tokens.get(),
                driver.lr().unwrap_or(0.0),
                scaler.scale()
            );
        }
    }
    if let (Some(recorder), Some(path)) = (recorder, report_path) {
        recorder.write(&driver, path)?;
    }
    let progress = driver.progress();
    report.applied = progress.updates.get();
    report.skipped = progress.skipped;
    report.tokens = progress.tokens.get();
    report.loss_scale = scaler.scale();
    Ok(report)
}

/// This rank's microbatches of `group`: forward, weighted loss, backward,
/// each microbatch's gradients added into burn's `GradientsAccumulator`
/// (a fresh one per group: accum::run::zeroing, once per update).
/// Returns the accumulated gradients and the summed weighted loss.
fn accumulate(
    model: &CharModel,
    corpus: &Corpus,
    group: &Group,
    weight: f32,
    device: &Device,
) -> (GradientsParams, f32) {
    let mut accumulator = GradientsAccumulator::<CharModel>::new();
    let mut loss = 0.0f32;
    for mb in group.microbatches() {
        let batch = PaddedBatch::new(corpus, mb.ids, weight, device);
        let mb_loss = model.weighted_loss(&batch);
        let grads = GradientsParams::from_grads(mb_loss.backward(), model);
        loss += mb_loss.into_scalar::<f32>();
        accumulator.accumulate(model, grads);
        // The graph and its activations are dropped here, before the next
        // microbatch (accum::run::group: no list of graph-attached losses).
    }
    (accumulator.grads(), loss)
}

/// `‖a − b‖ / ‖b‖`.
pub fn relative_difference(a: &[f32], b: &[f32]) -> f64 {
    let diff: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2))
        .sum();
    let norm: f64 = b.iter().map(|y| f64::from(*y).powi(2)).sum();
    (diff / norm).sqrt()
}

/// The first group's full gradient under `m·A·D` (reduced over the
/// replicas, unscaled), flattened: what the equivalence test compares. The
/// config is built with the constructor burn's `Config` derive generates:
/// required fields in `new`, optional ones through `with_*`.
pub fn first_group_gradient(
    corpus: &Corpus,
    (m, a, d): (u32, u32, u32),
    seed: u64,
) -> Result<Vec<f32>, BoxError> {
    let config = TrainConfig::new(
        BatchConfig::new(m).with_accumulation(Some(a)),
        d,
        "1 update".parse()?,
        "0 updates".parse()?,
        "1 update".parse()?,
        1e-2,
        seed,
        AdamWConfig::new().with_weight_decay(0.0),
        ModelConfig::new(),
        accum::settings::LossScaleSettings {
            init: 1024.0,
            ..accum::settings::LossScaleSettings::default()
        },
    );
    Ok(train(corpus, &config, false)?.first_gradient)
}
