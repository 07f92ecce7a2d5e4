//! Trains the character model on the shipped text: m = 2, A = 4, D = 2
//! replicas on threads, per-token global denominator, cosine schedule with
//! warmup, dynamic loss scaling. Prints the loss every 20 updates.

use accum::settings::LossScaleSettings;
use accum::{Plan, Updates};
use accum_candle_example::{BoxError, Corpus, ModelConfig, RunConfig, train};

fn main() -> Result<(), BoxError> {
    let corpus = Corpus::shipped();
    let plan = Plan::new(2, 4, 2)?;
    println!(
        "{} examples, {} characters; {}",
        corpus.examples.len(),
        corpus.vocab,
        plan.batch_formula()
    );
    let config = RunConfig {
        plan,
        updates: Updates::new(200),
        warmup: "160 examples".parse()?,
        lr: 3e-2,
        seed: 1,
        model: ModelConfig {
            hidden: 24,
            ffn: 64,
            seed: 7,
        },
        loss_scale: LossScaleSettings {
            init: 65536.0,
            growth_interval: 50,
            ..LossScaleSettings::default()
        },
        log_every: Some("20 updates".parse()?),
    };
    let report = train(&corpus, &config)?;
    println!(
        "{} applied updates, {} skipped, {} supervised tokens; loss {:.4} → {:.4}",
        report.applied,
        report.skipped,
        report.tokens,
        report.losses.first().copied().unwrap_or(0.0),
        report.losses.last().copied().unwrap_or(0.0)
    );
    Ok(())
}
