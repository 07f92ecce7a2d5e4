//! Trains the character model with the config in a JSON file (default:
//! `train.json` beside this crate's manifest): m = 2, D = 2 replicas on
//! threads, A solved from the global batch, per-token global denominator,
//! cosine schedule with warmup, dynamic loss scaling. Prints the loss at the
//! config's `log_every`. With a second argument, `run.json`, writes accum's
//! run report there (and `run.stats.jsonl` beside it) for
//! `burn-accum sheet train.json --report run.json`.

use std::path::PathBuf;
use std::process::ExitCode;

use accum_burn_example::{Corpus, TrainConfig, train, train_with_report};

fn main() -> ExitCode {
    let report_path = std::env::args_os().nth(2).map(PathBuf::from);
    let path = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("train.json"));
    let loaded = match TrainConfig::load_checked(&path) {
        Ok(loaded) => loaded,
        Err(err) => {
            // Rendered as `accum validate` renders it: each problem at its
            // line and column, with the fix.
            eprint!("{}", err.render(false));
            return ExitCode::from(1);
        }
    };
    eprint!("{}", loaded.render_warnings(false));
    let plan = *loaded.plan();
    let config = loaded.into_config();
    let corpus = Corpus::shipped();
    println!(
        "{} examples, {} characters; {}",
        corpus.examples.len(),
        corpus.vocab,
        plan.batch_formula()
    );
    let trained = match &report_path {
        Some(report) => train_with_report(&corpus, &config, true, report),
        None => train(&corpus, &config, true),
    };
    match trained {
        Ok(report) => {
            println!(
                "{} applied updates, {} skipped, {} supervised tokens; loss {:.4} → {:.4}",
                report.applied,
                report.skipped,
                report.tokens,
                report.losses.first().copied().unwrap_or(0.0),
                report.losses.last().copied().unwrap_or(0.0)
            );
            if let Some(path) = &report_path {
                println!("wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(1)
        }
    }
}
