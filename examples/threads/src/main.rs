//! `cargo run` here trains the line on 4 ranks of threads with the shipped
//! `config.toml` (or the config given as the first argument), logs every
//! `eval_every`, and says what the run did that its lengths do not say.

use accum_threads_example::{BoxError, data, load, train};

fn main() -> Result<(), BoxError> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml").to_owned());
    let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
    let (config, plan) = load(&text).map_err(|e| format!("{path}: {e}"))?;
    println!(
        "{plan}: {} ranks on threads, {} examples an update",
        plan.replicas(),
        plan.effective_batch().get()
    );
    let run = train(&config, plan, &data(200))?;
    for line in &run.log {
        println!("{line}");
    }
    println!(
        "warmup of {} ended in update {}; w = {:.4}, b = {:.4}",
        config.optim.warmup,
        run.warmup_end.get(),
        run.params.0,
        run.params.1
    );
    for note in &run.notes {
        println!("note: {note}");
    }
    Ok(())
}
