//! The threaded loop killed and resumed from its checkpoint file: on the
//! same plan bit for bit, on half the ranks with the same global batch,
//! from a stream, and refused under another global batch.

use std::path::PathBuf;

use accum::Updates;
use accum::plan::Plan;

use accum_threads_example::{Checkpoint, Config, Options, Run, Stream, data, load, train_with};

fn config(edit: Option<(&str, &str)>) -> (Config, Plan) {
    let text = include_str!("../config.toml");
    let text = match edit {
        Some((from, to)) => {
            assert!(text.contains(from), "the shipped config has {from}");
            text.replace(from, to)
        }
        None => text.to_owned(),
    };
    load(&text).expect("the config is valid")
}

/// A checkpoint file of its own for each test and case.
fn file(name: &str) -> PathBuf {
    // Removed once read back (`killed`): nothing is left behind.
    let pid = std::process::id();
    std::env::temp_dir().join(format!("accum-threads-resume-{pid}-{name}.json"))
}

/// Runs until killed inside the group of attempt `kill`, checkpointing
/// every `every` updates, and returns the checkpoint as a new process
/// would find it: read back from its file, nothing else kept.
fn killed(config: &Config, plan: Plan, every: u64, kill: u64, name: &str) -> Checkpoint {
    let path = file(name);
    let options = Options {
        checkpoint: Some((path.clone(), Updates::new(every))),
        kill_inside: Some(kill),
        ..Options::default()
    };
    let run = train_with(config, plan, &data(200), &options).unwrap();
    assert!(run.killed, "the run was stopped in attempt {kill}");
    assert_eq!(run.progress.updates.get(), kill - 1);
    let checkpoint = Checkpoint::load(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    checkpoint
}

fn resumed(config: &Config, plan: Plan, from: Checkpoint) -> Run {
    let options = Options {
        resume: Some(from),
        ..Options::default()
    };
    train_with(config, plan, &data(200), &options).unwrap()
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn a_killed_run_resumes_bit_for_bit_from_its_last_checkpoint() {
    let (config, plan) = config(None);
    let whole = train_with(&config, plan, &data(200), &Options::default()).unwrap();
    assert_eq!(whole.resumed_after, 0);
    // Update 5 is inside the warmup (it ends in update 11 or so); 38 and
    // 121 resume from the checkpoints after updates 30 and 120.
    assert!(whole.warmup_end.get() > 6, "{:?}", whole.warmup_end);
    for (every, kill, saved) in [(1, 6, 5), (10, 38, 30), (10, 121, 120)] {
        let checkpoint = killed(&config, plan, every, kill, &format!("kill-{kill}"));
        assert_eq!(checkpoint.state.progress().updates.get(), saved);
        let run = resumed(&config, plan, checkpoint);
        let k = saved as usize;
        assert_eq!(run.resumed_after, saved);
        assert_eq!(
            bits(&run.losses),
            bits(&whole.losses[k..]),
            "killed in {kill}"
        );
        let rates: Vec<f64> = run.rates.iter().map(|r| r.1).collect();
        let want: Vec<f64> = whole.rates[k..].iter().map(|r| r.1).collect();
        assert_eq!(bits(&rates), bits(&want), "killed in {kill}");
        assert_eq!(run.ids, whole.ids[k..], "killed in {kill}");
        assert_eq!(
            (run.params.0.to_bits(), run.params.1.to_bits()),
            (whole.params.0.to_bits(), whole.params.1.to_bits()),
            "killed in {kill}"
        );
        assert_eq!(run.progress, whole.progress);
        assert_eq!(run.warmup_end, whole.warmup_end);
    }
}

#[test]
fn a_resume_on_two_ranks_with_twice_the_accumulation_trains_the_same_updates() {
    let (config, plan) = config(None);
    let whole = train_with(&config, plan, &data(200), &Options::default()).unwrap();
    let checkpoint = killed(&config, plan, 10, 38, "elastic");
    // 4 devices with tensor parallel 2: D = 2, and A = 24 / (2 × 2) = 6.
    let (half, replan) = self::config(Some(("world_size = 8", "world_size = 4")));
    assert_eq!(
        (
            replan.micro_batch(),
            replan.accumulation(),
            replan.replicas()
        ),
        (2, 6, 2)
    );
    let run = resumed(&half, replan, checkpoint);
    assert_eq!(run.resumed_after, 30);
    assert_eq!(run.ids, whole.ids[30..]);
    assert_eq!(run.losses.len(), whole.losses.len() - 30);
    for (update, (got, want)) in run.losses.iter().zip(&whole.losses[30..]).enumerate() {
        assert!(
            ((got - want) / want).abs() < 1e-6,
            "update {}: {got} vs {want}",
            update + 31
        );
    }
    assert_eq!(
        (run.progress.examples, run.progress.tokens),
        (whole.progress.examples, whole.progress.tokens)
    );
}

#[test]
fn a_streaming_source_resumes_without_reading_the_lengths_first() {
    let (config, plan) = config(None);
    let whole = train_with(&config, plan, &data(200), &Options::default()).unwrap();
    let checkpoint = killed(&config, plan, 10, 38, "stream");
    // Killed again in the first group after the resume: the resumed run
    // has read that group's examples only (each rank its 6 for the
    // denominator, then its first microbatch's 2 again), not the 200
    // examples' lengths, nor replayed the 30 updates' 720 examples.
    let stream = Stream::new(200);
    let options = Options {
        resume: Some(checkpoint.clone()),
        kill_inside: Some(31),
        ..Options::default()
    };
    let run = train_with(&config, plan, &stream, &options).unwrap();
    assert!(run.killed && run.losses.is_empty());
    assert_eq!(run.progress.updates.get(), 30);
    assert_eq!(stream.reads(), 24 + 4 * 2);
    // And to the end, from the stream, the same run bit for bit.
    let stream = Stream::new(200);
    let options = Options {
        resume: Some(checkpoint),
        ..Options::default()
    };
    let run = train_with(&config, plan, &stream, &options).unwrap();
    assert_eq!(bits(&run.losses), bits(&whole.losses[30..]));
    assert_eq!(run.params, whole.params);
}

#[test]
fn a_resume_under_another_global_batch_is_refused_without_consent() {
    let (config, plan) = config(None);
    let checkpoint = killed(&config, plan, 10, 38, "refused");
    // B 16 = m 2 × A 2 × D 4.
    let (other, replan) = self::config(Some(("global_batch = 24", "global_batch = 16")));
    let err = train_with(
        &other,
        replan,
        &data(200),
        &Options {
            resume: Some(checkpoint.clone()),
            ..Options::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "the state was taken after update 30 under B 24, and this driver's plan has B 16"
        ),
        "{err}"
    );
    assert!(err.contains("allow_global_batch_change"), "{err}");
    // With consent it continues, each later update over 16 examples.
    let run = train_with(
        &other,
        replan,
        &data(200),
        &Options {
            resume: Some(checkpoint),
            allow_global_batch_change: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(run.resumed_after, 30);
    assert!(run.ids.iter().filter(|ids| ids.len() == 16).count() > 1);
    assert!(run.progress.examples.get() >= 3600);
}
