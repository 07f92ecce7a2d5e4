//! Trains the character model with the config in a JSON file (default:
//! `train.json` beside this crate's manifest): m = 2, D = 2 replicas on
//! threads, A solved from the global batch, per-token global denominator,
//! cosine schedule with warmup, dynamic loss scaling. Prints the loss at the
//! config's `log_every`.

use std::path::PathBuf;
use std::process::ExitCode;

use accum_burn_example::{Corpus, Loaded, TrainConfig, train};

fn main() -> ExitCode {
    let path = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("train.json"));
    let Loaded {
        config,
        plan,
        warnings,
    } = match TrainConfig::load_checked(&path) {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::from(1);
        }
    };
    if !warnings.is_empty() {
        eprintln!("warning: {}: {warnings}", path.display());
    }
    let corpus = Corpus::shipped();
    println!(
        "{} examples, {} characters; {}",
        corpus.examples.len(),
        corpus.vocab,
        plan.batch_formula()
    );
    match train(&corpus, &config, true) {
        Ok(report) => {
            println!(
                "{} applied updates, {} skipped, {} supervised tokens; loss {:.4} → {:.4}",
                report.applied,
                report.skipped,
                report.tokens,
                report.losses.first().copied().unwrap_or(0.0),
                report.losses.last().copied().unwrap_or(0.0)
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(1)
        }
    }
}
