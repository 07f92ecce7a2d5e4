//! Trains the character model on the shipped text with the run in
//! `candle.toml`: m = 2, A = 4, D = 2 replicas on threads, per-token global
//! denominator, cosine schedule with warmup, dynamic loss scaling. Prints
//! the loss every 20 updates. With `--report RUN.json`, writes accum's run
//! report of the run (and its stats stream beside it), for
//! `candle-accum sheet candle.toml --report RUN.json`.

use accum_candle_example::config::CandleRun;
use accum_candle_example::{BoxError, Corpus, train, train_with_report};

/// The run, shipped beside the example.
const CONFIG: &str = include_str!("../candle.toml");

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let report_path = match args.as_slice() {
        [] => None,
        [flag, path] if flag == "--report" => Some(std::path::PathBuf::from(path)),
        _ => return Err("usage: accum-candle-example [--report RUN.json]".into()),
    };
    let run: CandleRun = toml::from_str(CONFIG)?;
    let config = run.run_config()?;
    let corpus = Corpus::shipped();
    println!(
        "{} examples, {} characters; {}",
        corpus.examples.len(),
        corpus.vocab,
        config.plan.batch_formula()
    );
    let report = match &report_path {
        Some(path) => train_with_report(&corpus, &config, path)?,
        None => train(&corpus, &config)?,
    };
    println!(
        "{} applied updates, {} skipped, {} supervised tokens; loss {:.4} → {:.4} (first → last attempt)",
        report.applied,
        report.skipped,
        report.tokens,
        report.losses.first().copied().unwrap_or(0.0),
        report.losses.last().copied().unwrap_or(0.0)
    );
    if let Some(path) = report_path {
        println!("report: {}", path.display());
    }
    Ok(())
}
