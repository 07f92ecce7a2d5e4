//! accum driving a training loop in candle: a small character model trained
//! on the text in `data/corpus.txt`, with accum's loop driver for the groups,
//! microbatches and global per-token denominator, data-parallel replicas on
//! threads with one gradient all-reduce per update, and accum's schedule and
//! loss scaler. accum knows nothing of candle; candle knows nothing of
//! accumulation.
//!
//! The model: `h = tanh(E[x] · W1 + b1)`, `logits = h · W2 + b2`, the
//! next character's cross-entropy per position. Microbatches are padded to
//! their longest example; padding and the first [`PROMPT`] positions of each
//! example (a "prompt") are not supervised and weigh 0.
//!
//! [`train_with_report`] also writes accum's run report of the run (and its
//! stats stream beside it) through the driver's recorder, so that
//! `candle-accum sheet candle.toml --report run.json` documents it — the
//! example's own binary, `accum_cli::run::<CandleRun>()`, for its own
//! config type ([`config::CandleRun`]).

pub mod config;

use std::error::Error;
use std::path::Path;

use accum::driver::{Driver, Group, Outcome, Recorder, Step};
use accum::engine::{Rng, Tensors};
use accum::plan::{LastGroup, Plan, Rounding};
use accum::replica::{InProcess, Reducer};
use accum::scaler::LossScaler;
use accum::schedule::Schedule;
use accum::settings::{LogAxis, LossScaleSettings, Normalization, PrecisionMode, ScheduleKind};
use accum::{Span, Updates};
use candle_core::backprop::GradStore;
use candle_core::{D, DType, Device, Tensor, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};

/// Errors of the example: candle's, accum's, a thread's.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// Leading positions of each example whose labels are not supervised.
pub const PROMPT: usize = 2;

/// The text the model learns, shipped with the example.
pub const CORPUS: &str = include_str!("../data/corpus.txt");

/// The examples: one per line of the corpus, as character ids.
#[derive(Clone, Debug)]
pub struct Corpus {
    /// Each example's character ids (inputs are `[..n-1]`, labels `[1..]`).
    pub examples: Vec<Vec<u32>>,
    /// Distinct characters.
    pub vocab: usize,
}

impl Corpus {
    /// Reads `text`: one example per non-empty line that does not start
    /// with `#`, at most `max_len + 1` characters.
    pub fn parse(text: &str, max_len: usize) -> Corpus {
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let mut chars: Vec<char> = lines.iter().flat_map(|l| l.chars()).collect();
        chars.sort_unstable();
        chars.dedup();
        let examples = lines
            .iter()
            .map(|l| {
                l.chars()
                    .take(max_len + 1)
                    .map(|c| {
                        chars
                            .binary_search(&c)
                            .expect("every char is in the vocabulary")
                            as u32
                    })
                    .collect()
            })
            .collect();
        Corpus {
            examples,
            vocab: chars.len(),
        }
    }

    /// The shipped corpus, examples of at most 48 positions.
    pub fn shipped() -> Corpus {
        Corpus::parse(CORPUS, 48)
    }

    /// Supervised tokens of example `id`: its positions less the prompt.
    pub fn supervised(&self, id: usize) -> u64 {
        self.examples[id].len().saturating_sub(1 + PROMPT) as u64
    }
}

/// Model sizes and the initialization seed.
#[derive(Clone, Copy, Debug)]
pub struct ModelConfig {
    /// Embedding width.
    pub hidden: usize,
    /// Hidden layer width.
    pub ffn: usize,
    /// Seed of the initial parameters (every replica starts the same).
    pub seed: u64,
}

/// The character model's parameters, as candle variables.
pub struct CharModel {
    vars: Vec<Var>,
}

impl CharModel {
    /// A model over `vocab` characters, initialized from `config.seed`:
    /// embedding `N(0, 1)`, linear layers uniform in `±1/√fan_in`.
    pub fn new(vocab: usize, config: ModelConfig) -> candle_core::Result<CharModel> {
        let mut rng = Rng::new(config.seed, 1);
        let (h, f) = (config.hidden, config.ffn);
        let mut var = |shape: &[usize], scale: Option<f64>| {
            let n: usize = shape.iter().product();
            let values: Vec<f32> = (0..n)
                .map(|_| match scale {
                    None => rng.normal() as f32,
                    Some(bound) => ((rng.next_f64() * 2.0 - 1.0) * bound) as f32,
                })
                .collect();
            Var::from_tensor(&Tensor::from_vec(values, shape, &Device::Cpu)?)
        };
        let in_h = Some(1.0 / (h as f64).sqrt());
        let in_f = Some(1.0 / (f as f64).sqrt());
        Ok(CharModel {
            vars: vec![
                var(&[vocab, h], None)?,
                var(&[h, f], in_h)?,
                var(&[f], in_h)?,
                var(&[f, vocab], in_f)?,
                var(&[vocab], in_f)?,
            ],
        })
    }

    /// The parameters, in order: embedding, w1, b1, w2, b2.
    pub fn vars(&self) -> &[Var] {
        &self.vars
    }

    /// The summed, weighted cross-entropy of a padded microbatch:
    /// `Σ weight · (−log p(label))` over its positions.
    pub fn weighted_loss(&self, batch: &PaddedBatch) -> candle_core::Result<Tensor> {
        let [embed, w1, b1, w2, b2] = &self.vars[..] else {
            return Err(candle_core::Error::Msg(
                "the model has five parameters".into(),
            ));
        };
        let x = embed.as_tensor().embedding(&batch.tokens)?;
        let h = x
            .matmul(w1.as_tensor())?
            .broadcast_add(b1.as_tensor())?
            .tanh()?;
        let logits = h.matmul(w2.as_tensor())?.broadcast_add(b2.as_tensor())?;
        let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
        let picked = logp.gather(&batch.labels.unsqueeze(1)?, 1)?.squeeze(1)?;
        (picked * &batch.weights)?.sum_all()?.neg()
    }
}

/// One microbatch as candle tensors, padded to its longest example and
/// flattened to positions.
pub struct PaddedBatch {
    /// Input ids, `[m·L]`.
    pub tokens: Tensor,
    /// Next-character ids, `[m·L]` (0 where padded).
    pub labels: Tensor,
    /// Each position's loss weight, `[m·L]`: the group's per-token weight
    /// times the loss scale where supervised, 0 on padding and prompts.
    pub weights: Tensor,
}

impl PaddedBatch {
    /// The examples `ids` of `corpus`, each supervised token weighted `weight`.
    pub fn new(corpus: &Corpus, ids: &[usize], weight: f32) -> candle_core::Result<PaddedBatch> {
        let len = ids
            .iter()
            .map(|&id| corpus.examples[id].len().saturating_sub(1))
            .max()
            .unwrap_or(0);
        let n = ids.len() * len;
        let (mut tokens, mut labels, mut weights) = (vec![0u32; n], vec![0u32; n], vec![0f32; n]);
        for (row, &id) in ids.iter().enumerate() {
            let chars = &corpus.examples[id];
            for t in 0..chars.len().saturating_sub(1) {
                let at = row * len + t;
                tokens[at] = chars[t];
                labels[at] = chars[t + 1];
                if t >= PROMPT {
                    weights[at] = weight;
                }
            }
        }
        let cpu = &Device::Cpu;
        Ok(PaddedBatch {
            tokens: Tensor::from_vec(tokens, n, cpu)?,
            labels: Tensor::from_vec(labels, n, cpu)?,
            weights: Tensor::from_vec(weights, n, cpu)?,
        })
    }
}

/// A run: the plan, its length and optimizer settings.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// `m·A·D`.
    pub plan: Plan,
    /// Applied updates to run.
    pub updates: Updates,
    /// Warmup, in any unit.
    pub warmup: Span,
    /// Peak learning rate.
    pub lr: f64,
    /// Seed of the epoch order.
    pub seed: u64,
    /// The model.
    pub model: ModelConfig,
    /// Dynamic loss scaling.
    pub loss_scale: LossScaleSettings,
    /// Rank 0 prints a line at this interval (`None`: silent).
    pub log_every: Option<Span>,
}

/// What a run observed, from rank 0.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// The group's per-token loss of every attempt.
    pub losses: Vec<f64>,
    /// The first group's full gradient: reduced over the replicas and
    /// unscaled, parameters flattened in order.
    pub first_gradient: Vec<f32>,
    /// Applied updates and skipped attempts.
    pub applied: u64,
    /// Attempts skipped for non-finite gradients.
    pub skipped: u64,
    /// The loss scale at the end.
    pub loss_scale: f64,
    /// Supervised tokens trained on.
    pub tokens: u64,
}

/// Trains with `config.plan.replicas()` replicas, one thread each, and
/// returns rank 0's report.
pub fn train(corpus: &Corpus, config: &RunConfig) -> Result<RunReport, BoxError> {
    train_replicas(corpus, config, None)
}

/// [`train`], with rank 0 writing accum's run report of the run to
/// `report` (and every attempt to the stats stream beside it: `run.json` →
/// `run.stats.jsonl`).
pub fn train_with_report(
    corpus: &Corpus,
    config: &RunConfig,
    report: &Path,
) -> Result<RunReport, BoxError> {
    train_replicas(corpus, config, Some(report))
}

fn train_replicas(
    corpus: &Corpus,
    config: &RunConfig,
    report: Option<&Path>,
) -> Result<RunReport, BoxError> {
    let d = config.plan.replicas() as usize;
    let reducer = InProcess::new(d);
    let reports: Vec<Result<RunReport, BoxError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..d)
            .map(|rank| {
                let reducer = &reducer;
                s.spawn(move || {
                    let report = report.filter(|_| rank == 0);
                    let result = replica(corpus, config, rank, reducer, report);
                    if let Err(e) = &result {
                        // The others would wait for this replica forever.
                        reducer.abort(&format!("replica {rank} failed: {e}"));
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

/// One replica's loop: the driver gives the groups, candle does the math.
fn replica(
    corpus: &Corpus,
    config: &RunConfig,
    rank: usize,
    reducer: &InProcess,
    report_path: Option<&Path>,
) -> Result<RunReport, BoxError> {
    let plan = config.plan;
    let schedule = Schedule::from_spans(
        ScheduleKind::Cosine,
        config.lr,
        config.warmup,
        config.updates,
        &plan,
        Rounding::Up,
    )?;
    let mut driver = Driver::builder(plan, corpus.examples.len())
        .seed(config.seed)
        .last_group(LastGroup::Process)
        .rank(rank)
        .schedule(schedule)
        .build()?;
    let model = CharModel::new(corpus.vocab, config.model)?;
    let mut optimizer = AdamW::new(
        model.vars().to_vec(),
        ParamsAdamW {
            lr: config.lr,
            weight_decay: 0.0,
            ..ParamsAdamW::default()
        },
    )?;
    let mut scaler = LossScaler::dynamic(&config.loss_scale);
    // A gradient store with an entry per parameter, refilled with each
    // group's reduced gradients for the optimizer.
    let mut store = zero_gradients(&model)?;
    let mut report = RunReport::default();
    // accum's run report, on the rank that writes it: the loss, gradient
    // norm and loss scale are candle's; the learning rate, counts and
    // stages the driver's.
    let mut recorder = match report_path {
        Some(path) => Some(
            Recorder::new(&driver, Normalization::PerToken)
                .precision(PrecisionMode::Fp16, true)
                .model(serde_json::json!({
                    "kind": "char_mlp",
                    "vocab": corpus.vocab,
                    "hidden": config.model.hidden,
                    "ffn": config.model.ffn,
                }))
                .data_tokens(
                    (0..corpus.examples.len())
                        .map(|id| corpus.supervised(id))
                        .sum(),
                )
                .log(
                    LogAxis::Tokens,
                    config.log_every.unwrap_or(Span::of(Updates::ONE)),
                )
                .stream_beside(path)?,
        ),
        None => None,
    };

    while let Some(mut group) = driver.next_group()? {
        // `accum::run::group`: the group's global per-token denominator, before any backward.
        let denominator =
            group.denominator(Normalization::PerToken, |id| corpus.supervised(id), reducer)?;
        // `accum::run::loss-scale`: one loss scale for the whole group.
        let scale = scaler.scale();
        let weight = (scale / denominator.value) as f32;
        let (mut grads, loss) = accumulate(&model, corpus, &group, weight)?;
        // `accum::run::data-parallel`: one all-reduce per group, after this rank's last microbatch
        // (every rank takes part, even one without microbatches). The loss
        // rides along for the log.
        grads.push(vec![loss / scale as f32]);
        let mut reduced = to_tensors(&grads);
        reducer.all_reduce_grads(rank, &mut reduced)?;
        let mut flat: Vec<Vec<f32>> = reduced.slices().map(<[f32]>::to_vec).collect();
        let group_loss = f64::from(flat.pop().and_then(|l| l.first().copied()).unwrap_or(0.0));
        let finite = flat.iter_mut().fold(true, |ok, g| scaler.unscale(g) & ok);
        if report.first_gradient.is_empty() {
            report.first_gradient = flat.concat();
        }
        if finite {
            for (var, g) in model.vars().iter().zip(&flat) {
                store.insert(
                    var.as_tensor(),
                    Tensor::from_slice(g, var.dims(), &Device::Cpu)?,
                );
            }
            // `accum::run::scheduler`: the learning rate of this applied update.
            optimizer.set_learning_rate(driver.lr().unwrap_or(config.lr));
            optimizer.step(&store)?;
        }
        // `accum::run::loss-scale`: the scaler updates after the attempt.
        scaler.update(finite);
        report.losses.push(group_loss);
        let outcome = Outcome::from_finite(finite);
        let progress = match &mut recorder {
            Some(recorder) => {
                let norm = flat
                    .iter()
                    .flatten()
                    .map(|g| f64::from(*g).powi(2))
                    .sum::<f64>()
                    .sqrt();
                let step = Step::loss(group_loss).grad_norm(norm).loss_scale(scale);
                recorder.finish(&mut driver, group, outcome, step)?
            }
            None => *driver.finish(group, outcome)?,
        };
        if let Some(every) = config.log_every
            && rank == 0
            && driver.every(every)
        {
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
/// gradients added into one buffer per parameter (zeroed once per group,
/// `accum::run::zeroing`). Returns the buffers and the summed weighted loss.
fn accumulate(
    model: &CharModel,
    corpus: &Corpus,
    group: &Group,
    weight: f32,
) -> candle_core::Result<(Vec<Vec<f32>>, f32)> {
    let mut grads: Vec<Vec<f32>> = model
        .vars()
        .iter()
        .map(|v| vec![0.0; v.elem_count()])
        .collect();
    let mut loss = 0.0f32;
    for mb in group.microbatches() {
        let batch = PaddedBatch::new(corpus, mb.ids, weight)?;
        let mb_loss = model.weighted_loss(&batch)?;
        loss += mb_loss.to_scalar::<f32>()?;
        let store = mb_loss.backward()?;
        for (acc, var) in grads.iter_mut().zip(model.vars()) {
            if let Some(g) = store.get(var.as_tensor()) {
                for (a, x) in acc.iter_mut().zip(g.flatten_all()?.to_vec1::<f32>()?) {
                    *a += x;
                }
            }
        }
        // The graph and its activations are dropped here, before the next
        // microbatch (`accum::run::group`: no list of graph-attached losses).
    }
    Ok((grads, loss))
}

/// Flat buffers as accum tensors, for the reducer.
fn to_tensors(buffers: &[Vec<f32>]) -> Tensors {
    Tensors::new(
        buffers
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let array = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[b.len()]), b.clone())
                    .expect("a flat buffer has its own length");
                (format!("p{i}"), array)
            })
            .collect(),
    )
}

/// A gradient store holding zeros for every parameter: candle builds stores
/// only through `backward`, so this differentiates `0 · Σ params`.
fn zero_gradients(model: &CharModel) -> candle_core::Result<GradStore> {
    let mut total = Tensor::zeros((), DType::F32, &Device::Cpu)?;
    for var in model.vars() {
        total = (total + var.as_tensor().sum_all()?.affine(0.0, 0.0)?)?;
    }
    total.backward()
}

/// The first group's full gradient for `plan` (reduced over the replicas,
/// unscaled), flattened: what the equivalence test compares.
pub fn first_group_gradient(corpus: &Corpus, plan: Plan, seed: u64) -> Result<Vec<f32>, BoxError> {
    let config = RunConfig {
        plan,
        updates: Updates::ONE,
        warmup: Span::of(Updates::ZERO),
        lr: 1e-2,
        seed,
        model: ModelConfig {
            hidden: 16,
            ffn: 32,
            seed: 3,
        },
        loss_scale: LossScaleSettings {
            init: 1024.0,
            ..LossScaleSettings::default()
        },
        log_every: None,
    };
    Ok(train(corpus, &config)?.first_gradient)
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

/// `docs/loop.md`, compiled and run here, where both accum and candle are
/// dependencies, so that its loops stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/loop.md")]
pub struct LoopGuide;
