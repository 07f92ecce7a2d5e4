//! Untrusted inputs that drive work, and outputs that keep what the user
//! had: every case exits 1 or 2 with a clear message and leaves no partial
//! file, under the catalogue's time and memory bounds (`hostile::bounded`).
//! Each case prints its time; times are reported, not asserted.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::hostile::bounded;
use crate::{Out, fixtures, scratch};

/// Runs a bounded case (which prints its time and memory) and checks its
/// exit code and message.
fn case(dir: &Path, args: &[&str], code: i32, needle: &str) -> Out {
    let out = bounded(dir, args);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(out.code, code, "{args:?}: {all}");
    assert!(all.contains(needle), "{args:?}: expected `{needle}`: {all}");
    for internal in ["panicked", "{ ", "from_str", "weak recursion"] {
        assert!(!all.contains(internal), "{args:?}: {all}");
    }
    out
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn launch_scripts_that_recurse_nest_or_double_stop_at_a_located_limit() {
    let dir = scratch("untrusted-shell");
    let run = "torchrun pretrain_gpt.py --micro-batch-size 1 --global-batch-size $GBS\n";
    let n = 20_000;
    let cases: Vec<(&str, String, &str)> = vec![
        ("self.sh", format!("X=X\nGBS=$((X))\n{run}"), "`X` → `X`"),
        (
            "pair.sh",
            format!("A=B\nB=A\nGBS=$((A))\n{run}"),
            "`A` → `B` → `A`",
        ),
        (
            "plus.sh",
            format!("GBS=GBS+1\nG=$((GBS))\n{run}"),
            "`GBS` → `GBS`",
        ),
        (
            "parens.sh",
            format!("GBS=$(({}1{}))\n{run}", "(".repeat(n), ")".repeat(n)),
            "nest more than 64 levels",
        ),
        (
            "ifs.sh",
            format!("{}{run}{}", "if [ a ]; then\n".repeat(n), "fi\n".repeat(n)),
            "nest more than 64 levels",
        ),
        (
            "defaults.sh",
            format!("GBS={}1\n{run}", "${X:-".repeat(50_000)),
            "nest more than 64 levels",
        ),
        (
            "double.sh",
            format!("A=x\n{}{run}", "A=$A$A\n".repeat(40)),
            "1048576 bytes",
        ),
        (
            "arrays.sh",
            format!(
                "ARR=(a b)\n{}{run}",
                "ARR=(${ARR[@]} ${ARR[@]})\n".repeat(40)
            ),
            "1048576 bytes",
        ),
        // Not named by the report that found the others: loops, `case`
        // inside `case`, and a cycle of three through `${…}`.
        (
            "loops.sh",
            format!("{}{run}", "while true; do\n".repeat(n)),
            "nest more than 64 levels",
        ),
        (
            "three.sh",
            format!("A=B+1\nB=C*2\nC=A\nGBS=$((A))\n{run}"),
            "`A` → `B` → `C` → `A`",
        ),
    ];
    for (name, text, needle) in cases {
        fs::write(dir.join(name), text).expect("script");
        let out = case(
            &dir,
            &[
                "import",
                "megatron",
                name,
                "--world-size",
                "8",
                "-o",
                "out.toml",
            ],
            1,
            needle,
        );
        assert!(
            out.stdout.contains("accum::interop::limit")
                || out.stderr.contains("accum::interop::limit")
        );
        assert!(!dir.join("out.toml").exists(), "{name}");
    }
}

/// The committed members of the families above (`tests/hostile/`).
#[test]
fn committed_launch_scripts_and_yaml_files_are_refused_with_their_reason() {
    let dir = scratch("untrusted-committed");
    let hostile = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/hostile");
    for (file, args, code, needle) in [
        (
            "megatron_self_reference.sh",
            &["import", "megatron"][..],
            1,
            "`X` → `X`",
        ),
        (
            "megatron_cycle.sh",
            &["import", "megatron"],
            1,
            "`A` → `B` → `A`",
        ),
        (
            "megatron_doubling.sh",
            &["import", "megatron"],
            1,
            "1048576 bytes",
        ),
        (
            "megatron_nested_defaults.sh",
            &["import", "megatron"],
            1,
            "nest more than 64 levels",
        ),
        (
            "megatron_option_without_value.sh",
            &["import", "megatron"],
            1,
            "--step-batch-size-schedule has no value",
        ),
        (
            "two_documents.yaml",
            &["validate"],
            1,
            "more than one YAML document",
        ),
        (
            "recursive_alias.yaml",
            &["validate"],
            1,
            "an alias refers to the value that contains it",
        ),
    ] {
        fs::copy(hostile.join(file), dir.join(file)).expect("copy");
        let mut all: Vec<&str> = args.to_vec();
        all.push(file);
        if args[0] == "import" {
            all.extend(["--world-size", "16", "-o", "out.toml"]);
        }
        case(&dir, &all, code, needle);
        assert!(!dir.join("out.toml").exists(), "{file}");
    }
}

#[test]
fn large_tables_and_many_findings_are_checked_in_linear_time() {
    let dir = scratch("untrusted-linear");
    let keys: Vec<String> = (0..100_000).map(|i| format!("\"k{i}\": {i}")).collect();
    fs::write(
        dir.join("ds.json"),
        format!("{{{}, \"k5\": 1}}", keys.join(", ")),
    )
    .expect("json");
    case(
        &dir,
        &["import", "deepspeed", "ds.json"],
        1,
        "duplicate key `k5`",
    );
    let unknown: String = (0..16_000).map(|i| format!("unknown_{i} = 1\n")).collect();
    fs::write(
        dir.join("unknown.toml"),
        format!("[batch]\nmicro_batch = 4\naccumulation = 2\n{unknown}"),
    )
    .expect("toml");
    case(
        &dir,
        &["validate", "unknown.toml", "--format", "short"],
        1,
        "… and 15,000 more `accum::schema::unknown-key` findings in unknown.toml",
    );
    case(&dir, &["validate", "unknown.toml"], 1, "16001 errors");
    let merges: String = (0..10_001)
        .map(|i| format!("k{i}: {{<<: {{x: 1}}}}\n"))
        .collect();
    fs::write(dir.join("merge.yaml"), merges).expect("yaml");
    case(
        &dir,
        &["validate", "merge.yaml"],
        1,
        "more than 10000 merge keys (`<<`)",
    );
    fs::write(
        dir.join("docs.yaml"),
        "batch: {micro_batch: 1}\n---\nx: 1\n",
    )
    .expect("yaml");
    case(
        &dir,
        &["validate", "docs.yaml"],
        1,
        "more than one YAML document",
    );
    fs::write(dir.join("rec.yaml"), "a: &a [*a]\n").expect("yaml");
    case(
        &dir,
        &["validate", "rec.yaml"],
        1,
        "an alias refers to the value that contains it",
    );
    let devices = vec!["0"; 200_001].join(", ");
    fs::write(
        dir.join("devices.yaml"),
        format!("trainer:\n  devices: [{devices}]\n"),
    )
    .expect("yaml");
    case(
        &dir,
        &["validate", "devices.yaml"],
        1,
        "counting each use of an alias as a copy",
    );
}

#[test]
fn a_plan_whose_buffers_cannot_be_allocated_is_said_by_validate_and_refused_by_run() {
    let dir = scratch("untrusted-buffers");
    let tiny = fs::read_to_string(fixtures().join("tiny.toml")).expect("tiny");
    let big = tiny
        .replace("accumulation = 2", "accumulation = 4294967296")
        .replace("total = \"12 updates\"", "total = \"1 updates\"")
        .replace("last_group = \"drop\"", "last_group = \"process\"");
    fs::write(dir.join("big.toml"), big).expect("config");
    let out = case(&dir, &["validate", "big.toml"], 0, "cannot run this plan");
    assert!(out.stdout.contains("big.toml:8:16"), "{}", out.stdout);
    case(
        &dir,
        &["run", "big.toml"],
        1,
        "over the engine's limit of 4 GiB",
    );
    case(
        &dir,
        &["verify", "big.toml"],
        1,
        "over the engine's limit of 4 GiB",
    );
    let out = case(
        &dir,
        &[
            "run",
            &fixtures().join("tiny.toml").to_string_lossy(),
            "--threads",
            "100000",
            "-q",
        ],
        0,
        "note: --threads 100000 is more than",
    );
    assert!(out.stderr.contains("per replica"), "{}", out.stderr);
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = scratch("untrusted-same");
    let tiny = fs::read_to_string(fixtures().join("tiny.toml")).expect("tiny");
    fs::write(dir.join("c.toml"), &tiny).expect("config");
    std::os::unix::fs::symlink("c.toml", dir.join("link.toml")).expect("link");
    fs::write(
        dir.join("ds.json"),
        "{\"train_micro_batch_size_per_gpu\": 4, \"gradient_accumulation_steps\": 2}",
    )
    .expect("ds");
    let before = fs::read_to_string(dir.join("ds.json")).expect("ds");
    for args in [
        &["sheet", "c.toml", "-o", "c.toml"][..],
        &["sheet", "c.toml", "-o", "link.toml"],
        &["run", "c.toml", "--report", "c.toml", "-q"],
        &["replan", "c.toml", "--max-micro-batch", "2", "-o", "c.toml"],
        &[
            "import",
            "deepspeed",
            "ds.json",
            "--world-size",
            "1",
            "-o",
            "ds.json",
        ],
    ] {
        case(&dir, args, 2, "an input of this command");
    }
    assert_eq!(
        fs::read_to_string(dir.join("c.toml")).expect("config"),
        tiny
    );
    assert_eq!(fs::read_to_string(dir.join("ds.json")).expect("ds"), before);
    assert_eq!(names(&dir), ["c.toml", "ds.json", "link.toml"]);
    // The in-place mode asks for it.
    let out = bounded(
        &dir,
        &["replan", "c.toml", "--max-micro-batch", "2", "--in-place"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_ne!(
        fs::read_to_string(dir.join("c.toml")).expect("config"),
        tiny
    );
}

#[test]
fn links_and_devices_are_written_through_and_failures_leave_nothing() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("untrusted-links");
    fs::create_dir_all(dir.join("real")).expect("folder");
    std::os::unix::fs::symlink("real/schema.json", dir.join("schema.json")).expect("link");
    case(&dir, &["schema", "-o", "schema.json"], 0, "");
    assert!(
        fs::symlink_metadata(dir.join("schema.json"))
            .expect("link")
            .file_type()
            .is_symlink()
    );
    assert!(
        fs::read_to_string(dir.join("real/schema.json"))
            .expect("target")
            .contains("\"$schema\"")
    );
    case(&dir, &["schema", "-o", "/dev/null"], 0, "");
    assert!(
        fs::metadata("/dev/null")
            .expect("null")
            .file_type()
            .is_char_device()
    );
    fs::copy(fixtures().join("tiny.toml"), dir.join("q.toml")).expect("copy");
    fs::create_dir_all(dir.join("out")).expect("out");
    case(
        &dir,
        &["sheet", "q.toml", "-o", "out/new/"],
        2,
        "names a folder",
    );
    case(
        &dir,
        &["sheet", "q.toml", "-o", "out/new/", "--format", "md"],
        2,
        "names a folder",
    );
    assert!(
        names(&dir.join("out")).is_empty(),
        "{:?}",
        names(&dir.join("out"))
    );
    case(
        &dir,
        &["init", "missing/train.toml"],
        2,
        "missing/train.toml:",
    );
    let out = bounded(&dir, &["init", "missing/train.toml"]);
    assert!(!out.stderr.contains(".new"), "{}", out.stderr);
}

#[test]
fn a_report_names_only_a_stream_file_beside_it() {
    let dir = scratch("untrusted-report");
    fs::copy(fixtures().join("tiny.toml"), dir.join("t.toml")).expect("copy");
    let out = bounded(
        &dir,
        &[
            "run",
            "t.toml",
            "--report",
            "run.json",
            "--stream-stats",
            "-q",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = fs::read_to_string(dir.join("run.json")).expect("report");
    let status = Command::new("mkfifo")
        .arg(dir.join("pipe.jsonl"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    fs::write(dir.join("../outside.jsonl"), "{}\n").expect("outside");
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.jsonl")).expect("link");
    for (stream, needle) in [
        ("/dev/zero", "leaves the report"),
        ("../../etc/passwd", "leaves the report"),
        ("pipe.jsonl", "not a regular file"),
        ("zero.jsonl", "not a regular file"),
    ] {
        let hostile = report.replace("\"run.stats.jsonl\"", &format!("\"{stream}\""));
        fs::write(dir.join("r.json"), hostile).expect("report");
        eprintln!("stats_stream {stream}:");
        let out = bounded(
            &dir,
            &["sheet", "t.toml", "--report", "r.json", "-o", "s.html"],
        );
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(
            out.stderr.contains(needle) && out.stderr.contains("stats_stream"),
            "{stream}: the refusal says why the stream is not read: {}",
            out.stderr
        );
        assert!(
            !dir.join("s.html").exists(),
            "{stream}: no sheet is written"
        );
    }
}

#[test]
fn kill_9_during_a_streamed_run_keeps_the_previous_report_and_stream() {
    let dir = scratch("untrusted-kill");
    fs::copy(fixtures().join("tiny.toml"), dir.join("t.toml")).expect("copy");
    fs::copy(fixtures().join("long.toml"), dir.join("run.toml")).expect("copy");
    // The previous run: report and stream.
    let out = bounded(
        &dir,
        &[
            "run",
            "t.toml",
            "--report",
            "run.json",
            "--stream-stats",
            "-q",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = fs::read(dir.join("run.json")).expect("report");
    let stream = fs::read(dir.join("run.stats.jsonl")).expect("stream");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("accum"))
        .current_dir(&dir)
        .args([
            "run",
            "run.toml",
            "--report",
            "run.json",
            "--stream-stats",
            "-q",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().expect("SIGKILL");
    child.wait().expect("ends");
    assert_eq!(fs::read(dir.join("run.json")).expect("report"), report);
    assert_eq!(
        fs::read(dir.join("run.stats.jsonl")).expect("stream"),
        stream
    );
    // The sheet draws the previous run, whole.
    let out = bounded(
        &dir,
        &["sheet", "t.toml", "--report", "run.json", "-o", "s.html"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_dump_is_taken_whole_and_two_runs_cannot_mix_their_files() {
    let dir = scratch("untrusted-dump");
    fs::copy(fixtures().join("tiny.toml"), dir.join("t.toml")).expect("copy");
    fs::copy(fixtures().join("long.toml"), dir.join("long.toml")).expect("copy");
    // A previous, longer dump's folders are removed.
    fs::create_dir_all(dir.join("dump/update-999999")).expect("stale");
    let out = bounded(&dir, &["run", "t.toml", "--dump", "dump", "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let updates = names(&dir.join("dump"))
        .iter()
        .filter(|n| n.starts_with("update-"))
        .count();
    assert_eq!(updates, 12, "{:?}", names(&dir.join("dump")));
    // A second run while the first writes is refused and writes nothing.
    let mut first = Command::new(assert_cmd::cargo::cargo_bin("accum"))
        .current_dir(&dir)
        .args(["run", "long.toml", "--dump", "dump", "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    std::thread::sleep(Duration::from_millis(1500));
    let second = bounded(&dir, &["run", "t.toml", "--dump", "dump", "-q"]);
    first.kill().expect("stop the first");
    first.wait().expect("ends");
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("another accum run is writing a dump here"),
        "{}",
        second.stderr
    );
    let manifest: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(dir.join("dump/manifest.json")).expect("manifest"),
    )
    .expect("json");
    assert_eq!(
        manifest["plan"]["accumulation"], 2,
        "the first run's manifest"
    );
    // A folder with the user's own files is not taken.
    fs::create_dir_all(dir.join("mine")).expect("folder");
    fs::write(dir.join("mine/notes.txt"), "keep").expect("notes");
    case(
        &dir,
        &["run", "t.toml", "--dump", "mine", "-q"],
        2,
        "holds `notes.txt`",
    );
    assert_eq!(names(&dir.join("mine")), ["notes.txt"]);
}

#[test]
fn lint_refuses_an_output_it_would_not_write_and_names_a_file_once() {
    let dir = scratch("untrusted-lint");
    fs::write(
        dir.join("ds.json"),
        r#"{"train_micro_batch_size_per_gpu": 4}"#,
    )
    .expect("write");
    let out = case(
        &dir,
        &[
            "lint",
            "deepspeed",
            "ds.json",
            "--world-size",
            "2",
            "-o",
            "out.toml",
        ],
        2,
        "`accum lint` writes no file",
    );
    assert!(!dir.join("out.toml").exists(), "{}", out.stderr);
    // A file that is not a regular file is named once, before its reason.
    fs::create_dir(dir.join("cfg.json")).expect("mkdir");
    for command in ["lint", "import"] {
        let out = case(&dir, &[command, "deepspeed", "cfg.json"], 2, "cfg.json");
        assert_eq!(out.stderr.matches("cfg.json").count(), 1, "{}", out.stderr);
    }
}

/// Runs `accum args` in `dir` on a pseudo-terminal (util-linux `script`),
/// so that stdout and stderr are a terminal, and returns what it showed.
fn on_a_terminal(dir: &Path, args: &[&str]) -> String {
    let quote = |arg: &str| format!("'{}'", arg.replace('\'', r"'\''"));
    let command = std::iter::once(env!("CARGO_BIN_EXE_accum"))
        .chain(args.iter().copied())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("SHELL", "/bin/sh")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("util-linux `script` runs (.ci/run installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn control_characters_from_the_input_never_reach_a_terminal() {
    let dir = scratch("untrusted-terminal");
    // Decoded from JSON escapes: ESC c resets a terminal, BEL rings it, and
    // ESC ] 0 ; … BEL sets its title.
    fs::write(
        dir.join("c.json"),
        r#"{"run": {"name": "a\u001bcb", "notes": "\u0007\u001b]0;owned\u0007"},
            "batch": {"micro_batch": 4, "accumulation": 2, "replicas": 2}}"#,
    )
    .expect("config");
    fs::write(
        dir.join("hf.json"),
        r#"{"per_device_train_batch_size": 4, "gradient_accumulation_steps": 2,
            "deepspeed": "\u001bc.json"}"#,
    )
    .expect("arguments");
    let escape = "\u{1b}";
    for (args, shown) in [
        // A sheet on stdout quotes the run's name and notes.
        (vec!["sheet", "c.json", "--format", "md"], r"a\u{1b}cb"),
        // A message on stderr quotes a file name given on the command line…
        (
            vec!["validate", "a\u{1b}c.toml"],
            r"a\u{1b}c.toml: no such file",
        ),
        // …and a located finding refuses a name with one, without
        // quoting it.
        (
            vec!["import", "hf", "hf.json", "--world-size", "2"],
            "holds a control character (U+001B) in its name",
        ),
    ] {
        let screen = on_a_terminal(&dir, &args);
        assert!(screen.contains(shown), "{args:?}: {screen}");
        assert!(
            !screen.contains(escape) && !screen.contains('\u{7}'),
            "{args:?}: a control character reached the terminal: {screen:?}"
        );
    }
}

#[test]
fn a_value_the_engine_cannot_use_is_refused_by_validate_in_the_config_words() {
    let dir = scratch("untrusted-words");
    let tiny = fs::read_to_string(fixtures().join("fp16.toml")).expect("fp16");
    let tiny = tiny.replace("init = 16777216", "init = 1e-45");
    assert!(
        tiny.contains("init = 1e-45"),
        "the fixture sets a loss scale"
    );
    fs::write(dir.join("c.toml"), tiny).expect("config");
    for command in ["validate", "run"] {
        let out = case(
            &dir,
            &[command, "c.toml"],
            1,
            "`precision.loss_scale.init` 1e-45 must be a positive f32 value",
        );
        let all = format!("{}{}", out.stdout, out.stderr);
        for internal in ["LossSums", "GradScale", "token_weight"] {
            assert!(!all.contains(internal), "{command}: {all}");
        }
    }
    // A device named as a file in the input is said to be one, not missing
    // (its folder allowed: else it is outside the input's repository).
    fs::write(
        dir.join("hf.json"),
        r#"{"per_device_train_batch_size": 4, "gradient_accumulation_steps": 2,
            "deepspeed": "/dev/zero"}"#,
    )
    .expect("arguments");
    let out = case(
        &dir,
        &[
            "import",
            "hf",
            "hf.json",
            "--world-size",
            "2",
            "--allow-path",
            "/dev",
        ],
        0,
        "the DeepSpeed file /dev/zero cannot be read: not a regular file",
    );
    assert!(!out.stderr.contains("not found"), "{}", out.stderr);
}

#[test]
fn long_schedules_cost_what_their_largest_stage_costs_and_stay_a_few_lines() {
    let dir = scratch("untrusted-schedules");
    // A linear ramp of 19,999 stages, B = 1 … 20,000: verify checks an
    // even spread within twice the largest stage's examples.
    let ramp = "[batch]\nmicro_batch = 1\naccumulation = 20000\nreplicas = 1\n\n\
        [batch.ramp]\nstart = 1\nincrement = 1\nover = \"400000000 examples\"\n\n\
        [schedule]\nkind = \"constant\"\nwarmup = \"0 updates\"\ntotal = \"400000000 examples\"\n\n\
        [data]\nexamples = 40000\nmin_len = 2\nmax_len = 3\nvocab = 16\nlast_group = \"drop\"\n\n\
        [model]\nhidden = 16\nffn = 32\n";
    fs::write(dir.join("ramp.toml"), ramp).expect("config");
    let out = case(&dir, &["verify", "ramp.toml"], 0, "of its 20,000 stages");
    let checked = out.stdout.matches(" vs one batch of ").count();
    assert!(
        (3..=16).contains(&checked),
        "an even spread of the stages is checked: {}",
        out.stdout
    );
    // A Lightning 1.x epoch schedule of 50,000 entries (640 KB): refused in
    // one short message, with and without the examples per epoch.
    let mut map = String::from("trainer:\n  devices: 2\n  accumulate_grad_batches:\n");
    for epoch in 0..50_000 {
        map.push_str(&format!("    {epoch}: {}\n", epoch % 7 + 1));
    }
    map.push_str("data:\n  batch_size: 4\n");
    fs::write(dir.join("agb.yaml"), map).expect("yaml");
    for extra in [&[][..], &["--examples", "1200"][..]] {
        let args: Vec<&str> = ["import", "lightning", "agb.yaml", "-o", "agb.toml"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        let out = case(&dir, &args, 1, " in all)");
        assert!(
            out.stderr.len() < 8 * 1024,
            "{args:?}: {} bytes of messages",
            out.stderr.len()
        );
        assert!(!dir.join("agb.toml").exists(), "{args:?}: nothing written");
    }
}

#[test]
fn a_number_on_the_command_line_is_refused_in_accum_words() {
    let dir = scratch("untrusted-numbers");
    for (args, said) in [
        (vec!["calc", "-m", "abc", "-a", "8"], "not a whole number"),
        (vec!["calc", "-m", "1e3", "-a", "8"], "not a whole number"),
        (
            vec!["calc", "-m", "", "-a", "8"],
            "empty: give a whole number",
        ),
        (
            vec!["calc", "-m", "4", "-L", "99999999999999999999"],
            "too large for this option",
        ),
        (
            vec!["run", "t.toml", "--threads", "-"],
            "not a whole number",
        ),
    ] {
        let out = case(&dir, &args, 2, said);
        for library in ["invalid digit", "target type", "empty string"] {
            assert!(!out.stderr.contains(library), "{args:?}: {}", out.stderr);
        }
    }
}

#[test]
fn an_output_the_system_refuses_is_named_as_given_never_its_temporary_file() {
    let dir = scratch("untrusted-long-name");
    let long = format!("{}.toml", "a".repeat(300));
    // A schema is JSON, which its name says.
    let long_json = format!("{}.json", "a".repeat(300));
    for args in [
        vec!["init", long.as_str()],
        vec!["schema", "-o", long_json.as_str()],
    ] {
        let out = case(&dir, &args, 2, "File name too long");
        assert!(
            !out.stderr.contains(".tmp") && !out.stderr.contains("at path"),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert_eq!(names(&dir), Vec::<String>::new(), "nothing is left");
}
