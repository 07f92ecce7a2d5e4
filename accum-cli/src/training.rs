//! What `accum` knows about its own canonical `TrainingConfig` beyond the
//! plan: the sheet's precision, normalization, optimizer, data and model
//! tables.

use accum_core::config::TrainingConfig;
use accum_core::estimate::{ByteSize, MemoryInputs, OptimizerState};
use accum_core::plan::{LastGroup, Plan};
use accum_core::settings::{
    DataSection, LossSection, ModelSection, Normalization, OptimizerKind, OptimizerSection,
    PrecisionMode, PrecisionSection, ScheduleSection,
};
use accum_core::{Examples, group_digits};

use crate::sheet::extras::{Extras, LrSchedule};
use crate::sheet::{Row, Table, setting as number};

/// Parameters of the built-in token MLP: `embed` V×H, `w1` H×F, `b1` F,
/// `w2` F×V, `b2` V.
pub(crate) fn model_params(config: &TrainingConfig) -> u64 {
    let (v, h, f) = (config.data.vocab, config.model.hidden, config.model.ffn);
    v.saturating_mul(h)
        .saturating_add(h.saturating_mul(f))
        .saturating_add(f)
        .saturating_add(f.saturating_mul(v))
        .saturating_add(v)
}

/// Expected supervised tokens per example: lengths are uniform in
/// `min_len..=max_len` and every position is supervised.
pub(crate) fn expected_tokens_per_update(config: &TrainingConfig, plan: &Plan) -> u64 {
    let mean_len = (config.data.min_len.saturating_add(config.data.max_len)) / 2;
    plan.effective_batch().get().saturating_mul(mean_len)
}

/// A row whose value is accum's default says so in its note: a config
/// that leaves a setting out runs with the default, which is not a choice
/// anybody made.
fn row(label: &str, value: impl Into<String>, note: impl Into<String>, default: bool) -> Row {
    let note = note.into();
    let note = match (default, note.is_empty()) {
        (false, _) => note,
        (true, true) => "the default".to_owned(),
        (true, false) => format!("the default; {note}"),
    };
    Row::new(label, value, note)
}

/// The sheet tables of a `TrainingConfig`.
pub(crate) fn sheet_extras(config: &TrainingConfig, plan: &Plan) -> Extras {
    let n = group_digits;
    let loss_default = LossSection::default();
    let precision_default = PrecisionSection::default();
    let o_default = OptimizerSection::default();
    let schedule_default = ScheduleSection::default();
    let data_default = DataSection::default();
    let model_default = ModelSection::default();
    let loss = Table {
        title: "Loss and precision".into(),
        rows: vec![
            row(
                "normalization",
                config.loss.normalization.key(),
                match config.loss.normalization {
                    Normalization::PerToken => {
                        "summed token losses ÷ supervised tokens of the whole group, all microbatches and replicas; fixed before the backward passes"
                    }
                    Normalization::PerExample => {
                        "each example's mean token loss ÷ examples of the group"
                    }
                    Normalization::Sum => "summed token losses, not divided",
                },
                config.loss.normalization == loss_default.normalization,
            ),
            row(
                "ignore_index",
                config.loss.ignore_index.to_string(),
                "labels with this value and padding contribute nothing",
                config.loss.ignore_index == loss_default.ignore_index,
            ),
            row(
                "precision",
                config.precision.mode.key(),
                match config.precision.mode {
                    PrecisionMode::Fp32 => "f32 throughout",
                    PrecisionMode::Bf16 => "computed in f32 here; bf16 needs no loss scaling",
                    PrecisionMode::Fp16 => {
                        "computed in f32 with fp16's range simulated: an element above 65,504 is an overflow"
                    }
                },
                config.precision.mode == precision_default.mode,
            ),
            Row::new(
                "loss scaling",
                if config.precision.mode.uses_loss_scaling() {
                    format!(
                        "dynamic, init {}, ×{} after {} clean updates, ×{} on overflow",
                        number(config.precision.loss_scale.init),
                        number(config.precision.loss_scale.growth_factor),
                        group_digits(config.precision.loss_scale.growth_interval),
                        number(config.precision.loss_scale.backoff_factor)
                    )
                } else {
                    "none".into()
                },
                "constant within a group; unscale and clip after the last contribution; a non-finite gradient skips the update",
            ),
        ],
    };
    let o = &config.optimizer;
    let mut optimizer_rows = vec![
        row("optimizer", o.kind.key(), "", o.kind == o_default.kind),
        row(
            "learning rate",
            number(o.lr),
            format!(
                "{} schedule{}, stepped once per applied update",
                config.schedule.kind,
                if config.schedule.kind == schedule_default.kind {
                    " (the default)"
                } else {
                    ""
                }
            ),
            o.lr == o_default.lr,
        ),
    ];
    match o.kind {
        OptimizerKind::AdamW => {
            optimizer_rows.push(row(
                "betas",
                format!("{}, {}", number(o.betas[0]), number(o.betas[1])),
                "",
                o.betas == o_default.betas,
            ));
            optimizer_rows.push(row("eps", number(o.eps), "", o.eps == o_default.eps));
            optimizer_rows.push(row(
                "weight decay",
                number(o.weight_decay),
                "decoupled",
                o.weight_decay == o_default.weight_decay,
            ));
        }
        OptimizerKind::Sgd => {
            optimizer_rows.push(row(
                "momentum",
                number(o.momentum),
                "",
                o.momentum == o_default.momentum,
            ));
            optimizer_rows.push(row(
                "weight decay",
                number(o.weight_decay),
                "",
                o.weight_decay == o_default.weight_decay,
            ));
        }
    }
    optimizer_rows.push(Row::new(
        "gradient clipping",
        o.clip_norm
            .map_or_else(|| "off".to_owned(), |c| format!("global norm {c}")),
        "after the reduction and unscaling, before the update",
    ));
    let optimizer = Table {
        title: "Optimizer and schedule".into(),
        rows: optimizer_rows,
    };
    let d = &config.data;
    let mut data_rows = vec![
        row(
            "examples per epoch",
            n(d.examples),
            format!("synthetic Markov chain, seed {}", d.seed),
            d.examples == data_default.examples,
        ),
        row(
            "lengths",
            if d.min_len == d.max_len {
                format!("{} tokens", n(d.min_len))
            } else {
                format!("{}–{} tokens", n(d.min_len), n(d.max_len))
            },
            "uniform; padded per microbatch, padding not computed",
            (d.min_len, d.max_len) == (data_default.min_len, data_default.max_len),
        ),
        row("vocabulary", n(d.vocab), "", d.vocab == data_default.vocab),
    ];
    let epoch = plan.epoch(Examples::new(d.examples), d.last_group);
    match epoch {
        Ok(epoch) => {
            data_rows.push(Row::new(
                "updates per epoch",
                n(epoch.updates.get()),
                format!(
                    "{} full groups of {} examples",
                    n(epoch.full_updates.get()),
                    n(plan.effective_batch().get())
                ),
            ));
            let (value, note) = match (epoch.partial, d.last_group) {
                (None, policy) => (
                    format!("{policy}"),
                    "the data fills whole groups: no partial group".to_owned(),
                ),
                (Some(g), LastGroup::Process) => (
                    "process".to_owned(),
                    format!(
                        "the last group has {} examples in {} microbatches, normalized by what it contains",
                        n(g.examples.get()),
                        n(g.microbatches.get())
                    ),
                ),
                (Some(g), LastGroup::Drop) => (
                    "drop".to_owned(),
                    format!(
                        "{} examples per epoch are dropped; their ids are recorded in the run report",
                        n(g.examples.get())
                    ),
                ),
                (Some(_), LastGroup::Error) => (
                    "error".to_owned(),
                    "unreachable: the epoch would have failed".to_owned(),
                ),
            };
            data_rows.push(Row::new("last group", value, note));
        }
        Err(ref err) => data_rows.push(Row::new(
            "last group",
            d.last_group.to_string(),
            err.to_string(),
        )),
    }
    let data = Table {
        title: "Data and last group".into(),
        rows: data_rows,
    };
    // The parameter count belongs to the model that ran: the trial shows
    // it when the engine's model ran (`accum run`), not here.
    let model_is_default = config.model == model_default;
    let model = Table {
        title: "Model".into(),
        rows: vec![
            row(
                "reference model",
                "token MLP",
                "x = embed[tok]; h = tanh(x·w1 + b1); logits = h·w2 + b2; what `accum run` trains",
                model_is_default,
            ),
            row(
                "sizes",
                format!(
                    "V {} · H {} · F {}",
                    d.vocab, config.model.hidden, config.model.ffn
                ),
                "",
                model_is_default && d.vocab == data_default.vocab,
            ),
        ],
    };
    Extras {
        name: config.run.name.clone(),
        notes: config.run.notes.clone(),
        tables: vec![loss, optimizer, data, model],
        expected_tokens_per_update: plan
            .seq_len()
            .is_none()
            .then(|| expected_tokens_per_update(config, plan)),
        schedule: Some(LrSchedule {
            section: config.schedule.clone(),
            peak_lr: config.optimizer.lr,
        }),
        epoch: epoch.ok(),
        clip_norm: config.optimizer.clip_norm,
    }
}

/// The built-in model's memory per device (`accum::run::memory`): f32 weights and gradients,
/// the optimizer's state, and activations of `(2H + 2F + V)` floats per
/// token at the longest sequence — what the engine's accounting counts.
pub(crate) fn memory_inputs(config: &TrainingConfig) -> MemoryInputs {
    let (v, h, f) = (config.data.vocab, config.model.hidden, config.model.ffn);
    let per_token = h
        .saturating_mul(2)
        .saturating_add(f.saturating_mul(2))
        .saturating_add(v)
        .saturating_mul(4);
    MemoryInputs {
        params: model_params(config),
        weight_bytes: 4,
        optimizer: OptimizerState::of(&config.optimizer),
        master_weights: false,
        activation_per_example: ByteSize::new(per_token.saturating_mul(config.data.max_len)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(sheet: &crate::sheet::Sheet, title: &str) -> Vec<(String, String, String)> {
        sheet
            .preparation
            .tables
            .iter()
            .chain(sheet.trial.iter().flat_map(|t| t.tables.iter()))
            .filter(|t| t.title == title)
            .flat_map(|t| t.rows.iter())
            .map(|r| (r.label.clone(), r.value.clone(), r.note.clone()))
            .collect()
    }

    #[test]
    fn defaults_are_marked_and_the_parameter_count_waits_for_the_run() {
        // No optimizer, model or loss section: every value there is accum's
        // default, and says so.
        let sheet = crate::sheet::tests::sheet_of(
            "[batch]\nmicro_batch = 2\naccumulation = 2\nreplicas = 1\n[data]\nexamples = 64\nmin_len = 16\nmax_len = 64\n",
        );
        let optimizer = rows(&sheet, "Optimizer and schedule");
        assert_eq!(
            (optimizer[0].1.as_str(), optimizer[0].2.as_str()),
            ("adamw", "the default")
        );
        assert!(
            optimizer[1].2.starts_with("the default; "),
            "{:?}",
            optimizer[1]
        );
        let model = rows(&sheet, "Model");
        assert!(model[0].2.starts_with("the default; "), "{model:?}");
        assert!(model.iter().all(|r| r.0 != "parameters"), "{model:?}");
        let data = rows(&sheet, "Data and last group");
        let lengths = data.iter().find(|r| r.0 == "lengths").expect("lengths");
        assert_eq!(lengths.1, "16–64 tokens");
        assert!(!lengths.2.starts_with("the default"), "written in the file");
        assert!(rows(&sheet, "Model that ran").is_empty(), "nothing ran");

        // The fp16 fixture sets its optimizer's lr and the model: not
        // marked; its engine run counts the parameters.
        let (sheet, report) = crate::sheet::tests::fp16_sheet();
        let optimizer = rows(&sheet, "Optimizer and schedule");
        assert!(
            !optimizer[1].2.starts_with("the default"),
            "{:?}",
            optimizer[1]
        );
        assert_eq!(optimizer[0].2, "the default", "the kind is left out");
        let ran = rows(&sheet, "Model that ran");
        let params = ran.iter().find(|r| r.0 == "parameters").expect("a count");
        let config: TrainingConfig =
            toml::from_str(crate::sheet::tests::FP16).expect("the fixture parses");
        assert_eq!(params.1, group_digits(model_params(&config)));
        assert_eq!(report.model["kind"], "token_mlp");
    }
}
