//! `cargo run` here trains the line on 4 ranks of threads with the shipped
//! `config.toml` (or the config given as the first argument), logs every
//! `eval_every`, and says what the run did that its lengths do not say.
//!
//! `--checkpoint FILE` saves a checkpoint to `FILE` every `eval_every`
//! updates; `--resume FILE` continues the run from one (under this config,
//! which may change the ranks and the accumulation if the global batch
//! stays).

use std::path::PathBuf;

use accum_threads_example::{BoxError, Checkpoint, Options, data, load, train_with};

fn main() -> Result<(), BoxError> {
    let mut path = None;
    let (mut checkpoint, mut resume) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--checkpoint" => {
                checkpoint = Some(PathBuf::from(
                    args.next().ok_or("--checkpoint needs a file")?,
                ))
            }
            "--resume" => resume = Some(PathBuf::from(args.next().ok_or("--resume needs a file")?)),
            _ if arg.starts_with("--") => {
                return Err(format!(
                    "unknown option {arg:?}: use [CONFIG] [--checkpoint FILE] [--resume FILE]"
                )
                .into());
            }
            _ => path = Some(arg),
        }
    }
    let path =
        path.unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml").to_owned());
    let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
    let (config, plan) = load(&text).map_err(|e| format!("{path}: {e}"))?;
    println!(
        "{plan}: {} ranks on threads, {} examples an update",
        plan.replicas(),
        plan.effective_batch().get()
    );
    let options = Options {
        checkpoint: checkpoint.map(|file| (file, config.eval_every)),
        resume: resume.as_deref().map(Checkpoint::load).transpose()?,
        ..Options::default()
    };
    if let Some(from) = &options.resume {
        println!(
            "resumed after update {}",
            from.state.progress().updates.get()
        );
    }
    let run = train_with(&config, plan, &data(200), &options)?;
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
