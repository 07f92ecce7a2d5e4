//! `accum run --checkpoint DIR --checkpoint-every SPAN` and `--resume DIR`:
//! a run killed with SIGKILL (inside a group, during a checkpoint's write,
//! or at whatever moment the test's kill lands) and resumed ends with the
//! uninterrupted run's weights and optimizer state (the last checkpoint's
//! `tensors.bin`, byte for byte) and report (every attempt, the counters,
//! the summary, the curve), in fp16 with skipped attempts, under a
//! ramp-up and for D ∈ {1, 2, 4}; an elastic resume (D 2 → 1, m 8 → 4)
//! gives the same examples per update and the losses within 1e-6; another
//! global batch, normalization, seq_len, data or format is refused with a
//! located message.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::{accum, names, run_in, scratch};

/// A tiny run: 24 examples × 8 of 60, `total` updates, with `extra`
/// sections or keys appended.
fn config(m: u64, a: u64, d: u64, total: u64, extra: &str) -> String {
    format!(
        "[batch]\nmicro_batch = {m}\naccumulation = {a}\nreplicas = {d}\n{extra}\n\
         [optimizer]\nlr = 1e-2\nclip_norm = 1.0\n\n\
         [schedule]\nkind = \"cosine\"\nwarmup = \"3 updates\"\ntotal = \"{total} updates\"\n\n\
         [data]\nexamples = 80\nmin_len = 4\nmax_len = 12\nvocab = 16\nseed = 3\nlast_group = \"drop\"\n\n\
         [model]\nhidden = 16\nffn = 32\n\n\
         [log]\nevery = \"2 updates\"\naxis = \"examples\"\n"
    )
}

/// fp16 with a loss scale far above what the gradients allow: the first
/// attempts are skipped, and a short growth interval overflows again.
const FP16: &str = "\n[precision]\nmode = \"fp16\"\n\n[precision.loss_scale]\ninit = 16777216\ngrowth_interval = 3\n";

/// B 8 → 16 → 32 with m = 4 and D = 2.
const RAMP: &str = "global_batch = 32\n\n[[batch.stages]]\nglobal_batch = 8\nuntil = \"24 examples\"\n\n\
                    [[batch.stages]]\naccumulation = 2\nuntil = \"88 examples\"\n";

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write config");
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read json")).expect("json")
}

/// The checkpoint folders in `dir`, and the temporary ones.
fn checkpoints(dir: &Path) -> Vec<String> {
    if !dir.exists() {
        return Vec::new();
    }
    names(dir)
}

/// The weights and optimizer state at the end: the last checkpoint's
/// tensors.
fn final_tensors(dir: &Path, updates: u64) -> Vec<u8> {
    std::fs::read(dir.join(format!("ckpt-{updates}/tensors.bin"))).expect("final checkpoint")
}

/// What must equal: every attempt, the counters, the summary, the curve,
/// the stages and the replicas' counters.
fn same_report(a: &serde_json::Value, b: &serde_json::Value) {
    for key in [
        "updates",
        "counters",
        "summary",
        "loss_curve",
        "stages",
        "replicas",
        "dropped",
    ] {
        assert_eq!(a[key], b[key], "report field `{key}`");
    }
}

/// The uninterrupted run: its report and final tensors.
fn reference(dir: &Path, file: &str, total: u64) -> (serde_json::Value, Vec<u8>) {
    let out = run_in(
        dir,
        &[
            "run",
            file,
            "--checkpoint",
            "whole",
            "--report",
            "whole.json",
            "--quiet",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    (
        json(&dir.join("whole.json")),
        final_tensors(&dir.join("whole"), total),
    )
}

/// Runs with checkpoints every 3 updates, killed by `kill` (a `--kill-at`
/// point), and returns whether SIGKILL ended it.
fn killed_at(dir: &Path, file: &str, kill: &str, resume: bool) -> bool {
    let mut args = vec!["run", file, "--checkpoint-every", "3-updates", "--quiet"];
    if resume {
        args.extend(["--resume", "ck"]);
    } else {
        args.extend(["--checkpoint", "ck"]);
    }
    args.extend(["--kill-at", kill]);
    let out = accum()
        .current_dir(dir)
        .args(&args)
        .output()
        .expect("accum runs");
    out.status.signal() == Some(9)
}

fn resume_to_end(dir: &Path, file: &str) -> serde_json::Value {
    let out = run_in(
        dir,
        &[
            "run",
            file,
            "--resume",
            "ck",
            "--checkpoint-every",
            "3-updates",
            "--report",
            "resumed.json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("resuming after update "),
        "{}",
        out.stderr
    );
    json(&dir.join("resumed.json"))
}

/// Kills at each point in turn (each resume killed at the next), then
/// resumes to the end and compares with the uninterrupted run.
fn check_kills(name: &str, text: &str, total: u64, kills: &[&str]) {
    let dir = scratch(name);
    write(&dir, "run.toml", text);
    let (whole, tensors) = reference(&dir, "run.toml", total);
    for (i, kill) in kills.iter().enumerate() {
        assert!(
            killed_at(&dir, "run.toml", kill, i > 0),
            "{name}: killed at {kill}"
        );
        if let Some(updates) = kill.strip_prefix("checkpoint:") {
            // Killed between the files and the rename: a temporary folder,
            // and the previous checkpoints complete.
            let left = checkpoints(&dir.join("ck"));
            assert!(
                left.iter().any(|n| n.starts_with(".ckpt-tmp-")),
                "{name}: {left:?}"
            );
            assert!(
                !left.contains(&format!("ckpt-{updates}")),
                "{name}: {left:?}"
            );
        }
    }
    let resumed = resume_to_end(&dir, "run.toml");
    same_report(&whole, &resumed);
    assert_eq!(
        final_tensors(&dir.join("ck"), total),
        tensors,
        "{name}: the same weights and optimizer state, bit for bit"
    );
    let left = checkpoints(&dir.join("ck"));
    assert!(
        !left.iter().any(|n| n.starts_with('.')),
        "{name}: temporary folders removed: {left:?}"
    );
    let segments = resumed["segments"].as_array().expect("segments");
    // A resume killed before its first checkpoint left no segment: the
    // next one resumed from the same checkpoint.
    assert!(segments.len() >= 2, "{name}: {segments:?}");
    assert!(segments[1..].iter().all(|s| s["resumed"] == true));
    let starts: Vec<u64> = segments
        .iter()
        .map(|s| s["updates"].as_u64().expect("updates"))
        .collect();
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{name}: {starts:?}");
}

#[test]
fn killed_inside_a_group_or_a_write_resumes_to_the_same_run_for_every_d() {
    for d in [1, 2, 4] {
        check_kills(
            &format!("kill-d{d}"),
            &config(2, 2, d, 14, ""),
            14,
            &["group:5", "checkpoint:9", "group:11"],
        );
    }
}

#[test]
fn fp16_with_skipped_attempts_resumes_to_the_same_run() {
    let text = config(4, 2, 2, 12, FP16);
    check_kills(
        "kill-fp16",
        &text,
        12,
        // Attempts 1-6 are skipped while the scale backs off, 12 and 16
        // after it grew: killed inside a skipped attempt, then during the
        // write after update 9, then inside another skipped attempt.
        &["group:12", "checkpoint:9", "group:16"],
    );
    let whole = json(&scratch_path("kill-fp16").join("whole.json"));
    assert!(
        whole["counters"]["skipped_updates"].as_u64() > Some(0),
        "the run skips attempts"
    );
}

#[test]
fn a_ramp_up_resumes_in_its_stage() {
    let text = config(4, 4, 2, 12, RAMP);
    check_kills(
        "kill-ramp",
        &text,
        12,
        &["group:5", "checkpoint:6", "group:10"],
    );
    let whole = json(&scratch_path("kill-ramp").join("whole.json"));
    assert_eq!(whole["stages"].as_array().map(Vec::len), Some(3));
}

/// The scratch folder of a test that made it.
fn scratch_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("accum-cli-test-{}-{name}", std::process::id()))
}

#[test]
fn killed_at_any_moment_resumes_to_the_same_run() {
    let dir = scratch("kill-any");
    write(&dir, "run.toml", &config(2, 2, 2, 40, ""));
    let (whole, tensors) = reference(&dir, "run.toml", 40);
    // Kill times from a fixed list: wherever each lands (before the first
    // checkpoint, inside a group, during a write, after the end), the
    // resumed run is the same.
    for (i, millis) in [15u64, 40, 5, 70].iter().enumerate() {
        let mut args = vec![
            "run",
            "run.toml",
            "--checkpoint-every",
            "2-updates",
            "--quiet",
        ];
        let has_checkpoint = checkpoints(&dir.join("ck"))
            .iter()
            .any(|n| n.starts_with("ckpt-"));
        args.extend(if has_checkpoint {
            ["--resume", "ck"]
        } else {
            ["--checkpoint", "ck"]
        });
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_accum"))
            .current_dir(&dir)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("accum starts");
        std::thread::sleep(Duration::from_millis(*millis));
        let _ = child.kill();
        let status = child.wait().expect("accum ends");
        assert!(
            status.signal() == Some(9) || status.success(),
            "kill {i}: {status:?}"
        );
    }
    let args: Vec<&str> = if checkpoints(&dir.join("ck"))
        .iter()
        .any(|n| n.starts_with("ckpt-"))
    {
        vec![
            "run",
            "run.toml",
            "--resume",
            "ck",
            "--report",
            "resumed.json",
        ]
    } else {
        vec![
            "run",
            "run.toml",
            "--checkpoint",
            "ck",
            "--report",
            "resumed.json",
        ]
    };
    let out = run_in(&dir, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    same_report(&whole, &json(&dir.join("resumed.json")));
    assert_eq!(final_tensors(&dir.join("ck"), 40), tensors);
}

/// The example ids of every update in a dump, sorted, by update folder.
fn dump_ids(dir: &Path) -> Vec<(String, Vec<i64>)> {
    let mut out = Vec::new();
    for name in names(dir) {
        if !name.starts_with("update-") {
            continue;
        }
        let mut ids = Vec::new();
        for file in names(&dir.join(&name)) {
            if !file.ends_with("-ids.npy") {
                continue;
            }
            let bytes = std::fs::read(dir.join(&name).join(&file)).expect("npy");
            // .npy version 1: magic (6), version (2), header length (2).
            let header = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
            ids.extend(
                bytes[10 + header..]
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes"))),
            );
        }
        ids.sort_unstable();
        out.push((name, ids));
    }
    out
}

#[test]
fn elastic_resumes_keep_every_update_s_examples_and_losses() {
    // D 2 → 1 with A doubled, and m 8 → 4 with A doubled: B = 16 stays.
    for (name, before, after) in [
        (
            "elastic-d",
            config(4, 2, 2, 10, ""),
            config(4, 4, 1, 10, ""),
        ),
        (
            "elastic-m",
            config(8, 2, 1, 10, ""),
            config(4, 4, 1, 10, ""),
        ),
    ] {
        let dir = scratch(name);
        write(&dir, "before.toml", &before);
        write(&dir, "after.toml", &after);
        let out = run_in(
            &dir,
            &[
                "run",
                "before.toml",
                "--report",
                "whole.json",
                "--dump",
                "d1",
                "--quiet",
            ],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(killed_at(&dir, "before.toml", "group:6", false));
        let out = run_in(
            &dir,
            &[
                "run",
                "after.toml",
                "--resume",
                "ck",
                "--report",
                "resumed.json",
                "--dump",
                "d2",
            ],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stderr.contains("note: elastic resume: "),
            "{}",
            out.stderr
        );
        let whole = json(&dir.join("whole.json"));
        let resumed = json(&dir.join("resumed.json"));
        let (a, b) = (
            whole["updates"].as_array().expect("updates"),
            resumed["updates"].as_array().expect("updates"),
        );
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            let (lx, ly) = (
                x["loss"].as_f64().expect("loss"),
                y["loss"].as_f64().expect("loss"),
            );
            assert!(
                (lx - ly).abs() <= 1e-6 * lx.abs(),
                "{name}: {x} against {y}"
            );
            assert_eq!(x["tokens"], y["tokens"]);
        }
        // The updates after the resume drew the same examples.
        let (d1, d2) = (dump_ids(&dir.join("d1")), dump_ids(&dir.join("d2")));
        assert_eq!(d2.len(), 7, "updates 4 to 10: {d2:?}");
        for (update, ids) in &d2 {
            let same = d1.iter().find(|(u, _)| u == update).expect("in the first");
            assert_eq!(&same.1, ids, "{name}: {update}");
        }
        let segment = &resumed["segments"][1];
        assert_eq!(
            segment["changed_from"]["replicas"],
            before_replicas(&before)
        );
    }
}

fn before_replicas(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix("replicas = "))
        .and_then(|v| v.parse().ok())
        .expect("replicas")
}

/// Stopped after 4 updates (written at the end of a 4-update run), then
/// resumed under `text`: the refusal.
fn refused(name: &str, text: &str) -> String {
    let dir = scratch(name);
    write(&dir, "first.toml", &config(2, 2, 2, 8, ""));
    assert!(killed_at(&dir, "first.toml", "group:5", false));
    write(&dir, "second.toml", text);
    let out = run_in(&dir, &["run", "second.toml", "--resume", "ck"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        checkpoints(&dir.join("ck")).contains(&"ckpt-3".to_owned()),
        "nothing written"
    );
    out.stderr
}

#[test]
fn another_batch_normalization_seq_len_or_data_is_refused_with_what_differs() {
    let err = refused("refuse-b", &config(2, 4, 2, 8, ""));
    assert!(
        err.contains("second.toml:1: this config cannot continue the checkpoint ck/ckpt-3/state.json: the checkpoint was taken after update 3 under B 8, and this plan has B 16"),
        "{err}"
    );
    let err = refused(
        "refuse-norm",
        &format!(
            "{}\n[loss]\nnormalization = \"per_example\"\n",
            config(2, 2, 2, 8, "")
        ),
    );
    assert!(
        err.contains("second.toml:32: this config cannot continue the checkpoint ck/ckpt-3/state.json: the checkpoint was taken under other settings: `loss.normalization` is \"per_token\" there and \"per_example\" here"),
        "{err}"
    );
    let err = refused(
        "refuse-seq",
        &config(2, 2, 2, 8, "seq_len = 12").replace("min_len = 4", "min_len = 12"),
    );
    assert!(
        err.contains("`data.min_len` is 4 there and 12 here"),
        "{err}"
    );
    let err = refused(
        "refuse-data",
        &config(2, 2, 2, 8, "").replace("seed = 3", "seed = 4"),
    );
    assert!(
        err.contains("second.toml:20: this config cannot continue the checkpoint ck/ckpt-3/state.json: the checkpoint was taken under other settings: `data.seed` is 3 there and 4 here"),
        "{err}"
    );
}

#[test]
fn a_seq_len_change_alone_is_refused() {
    // The data fits both: only the plan's seq_len differs.
    let dir = scratch("refuse-seq-only");
    let first =
        config(2, 2, 2, 8, "").replace("min_len = 4\nmax_len = 12", "min_len = 12\nmax_len = 12");
    write(&dir, "first.toml", &first);
    assert!(killed_at(&dir, "first.toml", "group:5", false));
    write(
        &dir,
        "second.toml",
        &first.replace("replicas = 2\n", "replicas = 2\nseq_len = 12\n"),
    );
    let out = run_in(&dir, &["run", "second.toml", "--resume", "ck"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the checkpoint was taken under seq_len none, and this plan has 12"),
        "{}",
        out.stderr
    );
}

#[test]
fn another_format_version_is_refused_and_not_read() {
    let dir = scratch("refuse-format");
    write(&dir, "run.toml", &config(2, 2, 1, 8, ""));
    assert!(killed_at(&dir, "run.toml", "group:5", false));
    let state = dir.join("ck/ckpt-3/state.json");
    let text = std::fs::read_to_string(&state).expect("state");
    std::fs::write(
        &state,
        text.replace("accum-checkpoint/1", "accum-checkpoint/0"),
    )
    .expect("write");
    let out = run_in(&dir, &["run", "run.toml", "--resume", "ck"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("ck/ckpt-3/state.json: the checkpoint is of format `accum-checkpoint/0`, and this accum reads `accum-checkpoint/1`: resume it with the accum that wrote it, or start a new run"),
        "{}",
        out.stderr
    );
    let out = run_in(&dir, &["run", "run.toml", "--resume", "nothing-here"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("nothing-here: cannot list the checkpoint"),
        "{}",
        out.stderr
    );
}

/// The update lines of a stats stream, parsed.
fn stream_updates(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("stream")
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a stats line"))
        .filter_map(|l| l.get("update").cloned())
        .collect()
}

#[test]
fn a_killed_run_s_stats_stream_is_continued_whole_by_its_resume() {
    let dir = scratch("resume-stream");
    write(&dir, "run.toml", &config(4, 2, 2, 10, ""));
    let out = run_in(
        &dir,
        &[
            "run",
            "run.toml",
            "--report",
            "whole.json",
            "--stream-stats",
            "--quiet",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Killed inside the group of attempt 8, after the checkpoint of 6, and
    // again while writing the checkpoint of 9 (its part written, the
    // checkpoint not): the part of attempts 7 to 9 is the stopped run's.
    let stream = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "run.toml",
            "--checkpoint-every",
            "3-updates",
            "--report",
            "resumed.json",
            "--stream-stats",
            "--quiet",
        ];
        args.extend(extra);
        accum()
            .current_dir(&dir)
            .args(&args)
            .output()
            .expect("accum runs")
    };
    let out = stream(&["--checkpoint", "ck", "--kill-at", "group:8"]);
    assert_eq!(out.status.signal(), Some(9));
    let out = stream(&["--resume", "ck", "--kill-at", "checkpoint:9"]);
    assert_eq!(out.status.signal(), Some(9));
    assert!(
        dir.join("ck/stats/7-9.jsonl").exists(),
        "{:?}",
        names(&dir.join("ck/stats"))
    );
    let out = stream(&["--resume", "ck"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(dir.join("whole.stats.jsonl")).expect("whole"),
        std::fs::read(dir.join("resumed.stats.jsonl")).expect("resumed"),
        "the resumed run's stream is the uninterrupted one's, byte for byte"
    );

    // A stream asked for only at the resume says what it lacks.
    let plain = scratch("resume-stream-late");
    write(&plain, "run.toml", &config(4, 2, 2, 10, ""));
    assert!(killed_at(&plain, "run.toml", "group:8", false));
    let out = run_in(
        &plain,
        &[
            "run",
            "run.toml",
            "--resume",
            "ck",
            "--report",
            "r.json",
            "--stream-stats",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "note: the stats stream covers the update attempts after 6 only: ck keeps no stream of attempts 1 to 6"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(stream_updates(&plain.join("r.stats.jsonl")).len(), 4);
}

#[test]
fn a_resumed_and_re_planned_run_shows_both_segments_in_its_sheets_and_comparison() {
    let dir = scratch("resume-sheet");
    write(&dir, "two.toml", &config(4, 2, 2, 10, ""));
    let out = run_in(
        &dir,
        &["run", "two.toml", "--report", "whole.json", "--quiet"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(killed_at(&dir, "two.toml", "group:6", false));
    // Moved to one replica: B kept with A doubled.
    let out = run_in(
        &dir,
        &["replan", "two.toml", "--replicas", "1", "-o", "one.toml"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run_in(
        &dir,
        &[
            "run",
            "one.toml",
            "--resume",
            "ck",
            "--report",
            "resumed.json",
            "--stream-stats",
            "--quiet",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&dir.join("resumed.json"));
    assert_eq!(report["counters"]["applied_updates"], 10, "the whole run");

    for format in ["json", "md", "html"] {
        let file = format!("sheet.{format}");
        let out = run_in(
            &dir,
            &["sheet", "one.toml", "--report", "resumed.json", "-o", &file],
        );
        assert_eq!(out.code, 0, "{format}: {}", out.stderr);
        let text = std::fs::read_to_string(dir.join(&file)).expect("sheet");
        for shown in [
            "Segments",
            "segment 1: from the start",
            "m 4 × A 2 × D 2 = B 16",
            "segment 2: after update 3",
            "m 4 × A 4 × D 1 = B 16",
            "resumed under another plan; saved under m 4 × A 2 × D 2 = B 16",
            "A dashed line marks where the run resumed",
        ] {
            assert!(text.contains(shown), "{format}: `{shown}` missing");
        }
    }
    // The mark on the trial's loss plot, at the resume on its axis
    // (examples: 3 updates of 16).
    let sheet = json(&dir.join("sheet.json"));
    let loss = sheet["trial"]["charts"]
        .as_array()
        .expect("charts")
        .iter()
        .find(|c| c["id"] == "loss")
        .expect("loss chart");
    assert_eq!(loss["marks"]["name"], "resume");
    assert_eq!(loss["marks"]["at"][0]["x"], 48.0);
    assert_eq!(
        loss["marks"]["at"][0]["label"],
        "resumed: m 4 × A 4 × D 1 = B 16"
    );
    // The summary counts the whole run: every attempt, before and after.
    assert!(
        sheet["trial"].to_string().contains("\"10\""),
        "{}",
        sheet["trial"]
    );

    let out = run_in(
        &dir,
        &[
            "compare",
            "whole.json",
            "resumed.json",
            "--format",
            "json",
            "-o",
            "cmp.json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let cmp = json(&dir.join("cmp.json"));
    let segments = cmp["table"]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["label"] == "segments")
        .expect("a segments row");
    assert_eq!(segments["values"][0], "1 (never resumed)");
    assert_eq!(
        segments["values"][1],
        "2: m 4 × A 2 × D 2 = B 16 from the start, m 4 × A 4 × D 1 = B 16 after update 3 (re-planned)"
    );
    let marks = &cmp["charts"][0]["marks"];
    assert!(
        marks["at"]
            .as_array()
            .expect("marks")
            .iter()
            // The run is labelled by its name, its configuration's.
            .any(|m| m["label"] == "one resumed: m 4 × A 4 × D 1 = B 16"),
        "{marks}"
    );
}
