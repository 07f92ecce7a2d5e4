//! `validate --fix`, `--unsafe-fixes`, `--diff` and `--statistics`, and
//! `lint --fix` on frameworks' files: fixes are edits of the file's text at
//! the finding, so comments, key order and layout stay; safe fixes apply
//! alone, a choice never does; a second pass changes nothing.

use std::fs;
use std::path::Path;

use proptest::prelude::*;

use crate::{Out, run_in, scratch};

/// Writes `text` to `name` in `dir`, runs `accum COMMAND… name FLAGS…`
/// there, and returns the output with the file's text after.
fn edited(dir: &Path, name: &str, text: &str, command: &[&str], flags: &[&str]) -> (Out, String) {
    fs::write(dir.join(name), text).expect("write");
    let args = [command, &[name], flags].concat();
    let out = run_in(dir, &args);
    let after = fs::read_to_string(dir.join(name)).expect("read back");
    (out, after)
}

/// [`edited`] by `accum validate`.
fn fixed(dir: &Path, name: &str, text: &str, flags: &[&str]) -> (Out, String) {
    edited(dir, name, text, &["validate"], flags)
}

#[test]
fn fixes_keep_comments_order_and_layout_in_every_format() {
    let dir = scratch("fix-round-trip");
    let cases = [
        (
            "t.toml",
            "# my run\n[batch]\nmicro_batch = \"8\"   # m, quoted by mistake\nacumulation = 4  # A\nreplicas = 2\n\n[optimizer]\nlr = '3e-4'\n",
            "# my run\n[batch]\nmicro_batch = 8   # m, quoted by mistake\naccumulation = 4  # A\nreplicas = 2\n\n[optimizer]\nlr = 3e-4\n",
        ),
        (
            "t.yaml",
            "# my run\nbatch:\n  micro_batch: \"8\"   # m\n  acumulation: 4\n  replicas: 2\noptimizer:\n  lr: '3e-4'\n",
            "# my run\nbatch:\n  micro_batch: 8   # m\n  accumulation: 4\n  replicas: 2\noptimizer:\n  lr: 3e-4\n",
        ),
        (
            "t.json",
            "{\n  \"batch\": {\"micro_batch\": \"8\",\n            \"acumulation\": 4, \"replicas\": 2},\n  \"optimizer\": {\"lr\": \"3e-4\"}\n}\n",
            "{\n  \"batch\": {\"micro_batch\": 8,\n            \"accumulation\": 4, \"replicas\": 2},\n  \"optimizer\": {\"lr\": 3e-4}\n}\n",
        ),
    ];
    for (name, before, want) in cases {
        let (out, after) = fixed(&dir, name, before, &["--fix"]);
        assert_eq!(after, want, "{name}: {}{}", out.stdout, out.stderr);
        assert_eq!(out.code, 0, "{name}: {}", out.stdout);
        assert!(
            out.stderr.contains(&format!("fixed 3 findings in {name}")),
            "{name}: {}",
            out.stderr
        );
        // Applying the fixes again changes nothing more.
        let (again, twice) = fixed(&dir, name, &after, &["--fix"]);
        assert_eq!(twice, after, "{name}");
        assert!(!again.stderr.contains("fixed"), "{}", again.stderr);
    }
}

#[test]
fn choices_are_offered_never_applied_and_one_review_fix_needs_asking() {
    let dir = scratch("fix-choices");
    let text = "[batch]\nmicro_batch = 2\naccumulation = 0\nreplicas = 2\n\n[schedule]\nkind = \"linear\"\nwarmup = \"100 steps\"\ntotal = 1000\n";
    // Safe fixes only: nothing here is safe.
    let (out, after) = fixed(&dir, "c.toml", text, &["--fix"]);
    assert_eq!(after, text);
    assert_eq!(out.code, 1);
    // The zero accumulation has one way out, applied when asked for; the
    // spans' units stay choices, listed in the JSON output.
    let (out, after) = fixed(&dir, "c.toml", text, &["--fix", "--unsafe-fixes"]);
    assert!(after.contains("accumulation = 1\n"), "{after}");
    assert!(after.contains("warmup = \"100 steps\""), "{after}");
    assert!(
        out.stderr.contains("fixed 1 finding in c.toml"),
        "{}",
        out.stderr
    );
    let json = run_in(&dir, &["validate", "c.toml", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    let findings = report["files"][0]["findings"].as_array().expect("findings");
    let fixes_of = |path: &str| -> Vec<String> {
        findings
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path}: {findings:#?}"))["fixes"]
            .as_array()
            .expect("fixes")
            .iter()
            .map(|f| {
                assert_eq!(f["applicability"], "review");
                f["edits"][0]["replacement"]
                    .as_str()
                    .expect("text")
                    .to_owned()
            })
            .collect()
    };
    assert_eq!(
        fixes_of("schedule.warmup"),
        ["\"100 updates\"", "\"100 microbatches\""]
    );
    assert_eq!(
        fixes_of("schedule.total"),
        [
            "\"1000 updates\"",
            "\"1000 microbatches\"",
            "\"1000 examples\"",
            "\"1000 tokens\""
        ]
    );
}

#[test]
fn diff_shows_the_fixes_and_writes_nothing() {
    let dir = scratch("fix-diff");
    let text = "[batch]\nmicro_bach = 8\naccumulation = 4\nreplicas = 2\n";
    let (out, after) = fixed(&dir, "d.toml", text, &["--diff"]);
    assert_eq!(after, text, "--diff writes nothing");
    assert_eq!(out.code, 1, "a file that would change fails the check");
    assert_eq!(
        out.stdout,
        "--- a/d.toml\n+++ b/d.toml\n@@ -1,4 +1,4 @@\n [batch]\n-micro_bach = 8\n+micro_batch = 8\n accumulation = 4\n replicas = 2\n"
    );
    let (out, _) = fixed(
        &dir,
        "ok.toml",
        "[batch]\nmicro_batch = 8\naccumulation = 4\nreplicas = 2\n",
        &["--diff"],
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    // --unsafe-fixes alone asks for nothing to apply.
    let out = run_in(&dir, &["validate", "d.toml", "--unsafe-fixes"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn a_key_near_two_keys_or_already_there_is_not_renamed() {
    let dir = scratch("fix-ambiguous");
    // `accumulation` is given: renaming `acumulation` to it would make a
    // duplicate key.
    let text = "[batch]\nmicro_batch = 8\naccumulation = 4\nacumulation = 4\nreplicas = 2\n";
    let (_, after) = fixed(&dir, "a.toml", text, &["--fix"]);
    assert_eq!(after, text);
}

#[test]
fn a_key_in_another_table_is_pointed_to_it() {
    let dir = scratch("fix-wrong-table");
    fs::write(
        dir.join("w.toml"),
        "[batch]\nmicro_batch = 8\naccumulation = 4\nworld_size = 2\n\n[parallel]\ntensor = 1\n",
    )
    .expect("write");
    let out = run_in(&dir, &["validate", "w.toml"]);
    assert!(
        out.stdout
            .contains("help: `world_size` belongs in [parallel]: move it there"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("`world_size` goes in this table"),
        "{}",
        out.stdout
    );
}

#[test]
fn knock_on_findings_come_after_their_cause() {
    let dir = scratch("fix-knock-on");
    fs::write(
        dir.join("k.toml"),
        "[batch]\nmicro_batch = 8\naccumulation = 4\nglobal_batch = 64\n\n[parallel]\nworld_size = 16\ntensor_paralel = 8\n",
    )
    .expect("write");
    let out = run_in(&dir, &["validate", "k.toml", "--format", "short"]);
    let codes: Vec<&str> = out
        .stdout
        .lines()
        .map(|l| l.split(": ").nth(1).unwrap_or(""))
        .collect();
    assert!(
        codes.first().is_some_and(|c| c.contains("unknown-key")),
        "{}",
        out.stdout
    );
}

#[test]
fn statistics_count_each_code_and_what_fix_would_fix() {
    let dir = scratch("fix-statistics");
    fs::write(
        dir.join("s.toml"),
        "[batch]\nmicro_batch = \"8\"\nacumulation = 4\nreplicas = 2\nbogus = 1\nzzz = 2\n",
    )
    .expect("write");
    let out = run_in(&dir, &["validate", "s.toml", "--statistics"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        "3  accum::schema::unknown-key  (fixable: 1 with --fix)\n1  accum::schema::type  (fixable: 1 with --fix)\n"
    );
}

/// The keys of a valid config, each with its value as the file writes it.
const BASE: &[(&str, &str, &str)] = &[
    ("batch", "micro_batch", "8"),
    ("batch", "accumulation", "4"),
    ("batch", "replicas", "2"),
    ("batch", "global_batch", "64"),
    ("optimizer", "kind", "\"adamw\""),
    ("optimizer", "lr", "3e-3"),
    ("optimizer", "clip_norm", "1.0"),
    ("schedule", "kind", "\"cosine\""),
    ("schedule", "warmup", "\"20 updates\""),
    ("schedule", "total", "\"300 updates\""),
    ("data", "examples", "4000"),
    ("data", "seed", "7"),
];

/// One mistake a person makes: a letter dropped from a key, two letters
/// of a key swapped, or a number put in quotes.
#[derive(Clone, Debug)]
enum Mistake {
    Drop(usize),
    Swap(usize),
    Quote,
}

fn mistake() -> impl Strategy<Value = Mistake> {
    prop_oneof![
        (1usize..6).prop_map(Mistake::Drop),
        (1usize..6).prop_map(Mistake::Swap),
        Just(Mistake::Quote),
    ]
}

/// The config with `mistakes` made to the keys they fall on (by index).
fn config(mistakes: &[(usize, Mistake)]) -> String {
    let mut text = String::new();
    let mut section = "";
    for (i, (table, key, value)) in BASE.iter().enumerate() {
        if *table != section {
            text.push_str(&format!("\n[{table}]  # {table}\n"));
            section = table;
        }
        let mut key = (*key).to_owned();
        let mut value = (*value).to_owned();
        for (_, m) in mistakes.iter().filter(|(at, _)| at % BASE.len() == i) {
            match m {
                Mistake::Drop(n) => {
                    let n = n % key.len();
                    key.remove(n);
                }
                Mistake::Swap(n) => {
                    let n = n % (key.len() - 1);
                    let mut chars: Vec<char> = key.chars().collect();
                    chars.swap(n, n + 1);
                    key = chars.into_iter().collect();
                }
                Mistake::Quote if !value.starts_with('"') => value = format!("\"{value}\""),
                Mistake::Quote => {}
            }
        }
        text.push_str(&format!("{key} = {value}  # {i}\n"));
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Applying the safe fixes yields a config that validates, or whose
    /// findings have no safe fix left; a second pass changes nothing; and
    /// every comment is still there.
    #[test]
    fn safe_fixes_leave_nothing_safe_to_fix_and_are_idempotent(
        mistakes in proptest::collection::vec((0usize..BASE.len(), mistake()), 1..4)
    ) {
        let dir = scratch("fix-property");
        let text = config(&mistakes);
        let (_, after) = fixed(&dir, "p.toml", &text, &["--fix"]);
        let json = run_in(&dir, &["validate", "p.toml", "--format", "json"]);
        let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
        for finding in report["files"][0]["findings"].as_array().expect("findings") {
            let fixes = finding["fixes"].as_array().expect("fixes");
            prop_assert!(
                !(fixes.len() == 1 && fixes[0]["applicability"] == "safe"),
                "{text}\n→\n{after}\n{finding:#}"
            );
        }
        let (_, twice) = fixed(&dir, "p.toml", &after, &["--fix"]);
        prop_assert_eq!(&twice, &after);
        for i in 0..BASE.len() {
            let comment = format!("# {i}\n");
            prop_assert!(after.contains(&comment), "{}", after);
        }
    }
}

/// [`edited`] by `accum lint FRAMEWORK`.
fn linted(dir: &Path, name: &str, text: &str, framework: &str, flags: &[&str]) -> (Out, String) {
    edited(dir, name, text, &["lint", framework], flags)
}

/// `lint --fix` edits a framework's file as `validate --fix` edits accum's:
/// a number DeepSpeed would read as a string is unquoted, the layout and
/// the other values stay, and a second pass changes nothing.
#[test]
fn lint_fix_unquotes_what_the_framework_reads_as_a_string() {
    let dir = scratch("lint-fix-quoted");
    let before = "{\n    \"train_micro_batch_size_per_gpu\" : 4,\n    \"gradient_accumulation_steps\": \"2\",   \"train_batch_size\": \"64\",\n    \"fp16\": {\"enabled\": true}\n}\n";
    let want = "{\n    \"train_micro_batch_size_per_gpu\" : 4,\n    \"gradient_accumulation_steps\": 2,   \"train_batch_size\": 64,\n    \"fp16\": {\"enabled\": true}\n}\n";
    let world = ["--world-size", "8"];
    let (out, after) = linted(&dir, "ds.json", before, "deepspeed", &world);
    assert_eq!(after, before, "lint alone writes nothing");
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("2 errors, 0 warnings (2 fixable with --fix)"),
        "{}",
        out.stdout
    );
    let (out, after) = linted(
        &dir,
        "ds.json",
        before,
        "deepspeed",
        &[&world[..], &["--fix"]].concat(),
    );
    assert_eq!(after, want, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("fixed 2 findings in ds.json"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("ok (DeepSpeed): m 4 × A 2 × D 8 = 64"),
        "{}",
        out.stdout
    );
    let (again, twice) = linted(
        &dir,
        "ds.json",
        &after,
        "deepspeed",
        &[&world[..], &["--fix"]].concat(),
    );
    assert_eq!(twice, after);
    assert!(!again.stderr.contains("fixed"), "{}", again.stderr);
    // A quoted number that is wrong unquoted too gets no fix.
    let zero = "{\"train_batch_size\": \"-64\", \"train_micro_batch_size_per_gpu\": 4}\n";
    let (out, after) = linted(
        &dir,
        "zero.json",
        zero,
        "deepspeed",
        &[&world[..], &["--fix"]].concat(),
    );
    assert_eq!(after, zero, "{}", out.stderr);
}

/// The plan's ways out are review fixes in the framework's keys: one is
/// applied under `--unsafe-fixes`, several are left to a person, and a key
/// the framework fills in is not written.
#[test]
fn lint_plan_fixes_are_chosen_by_a_person() {
    let dir = scratch("lint-fix-plan");
    let world = ["--world-size", "8"];
    // 4 examples over m 4 × D 8: the only way out is train_batch_size = 32,
    // and DeepSpeed fills in gradient_accumulation_steps = 1 itself.
    let small = "{\n  \"train_batch_size\": 4,\n  \"train_micro_batch_size_per_gpu\": 4\n}\n";
    let (out, after) = linted(
        &dir,
        "small.json",
        small,
        "deepspeed",
        &[&world[..], &["--fix"]].concat(),
    );
    assert_eq!(
        after, small,
        "a review fix needs --unsafe-fixes: {}",
        out.stderr
    );
    assert!(
        out.stdout.contains("(1 fixable with --fix --unsafe-fixes)"),
        "{}",
        out.stdout
    );
    let (out, after) = linted(
        &dir,
        "small.json",
        small,
        "deepspeed",
        &[&world[..], &["--fix", "--unsafe-fixes"]].concat(),
    );
    assert_eq!(
        after, "{\n  \"train_batch_size\": 32,\n  \"train_micro_batch_size_per_gpu\": 4\n}\n",
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("ok (DeepSpeed): m 4 × A 1 × D 8 = 32"),
        "{}",
        out.stdout
    );
    // Two ways out (B = 16 or 32): each is offered, none applied.
    let two = "{\n  \"train_batch_size\": 30,\n  \"train_micro_batch_size_per_gpu\": 2\n}\n";
    let (out, after) = linted(
        &dir,
        "two.json",
        two,
        "deepspeed",
        &[&world[..], &["--fix", "--unsafe-fixes"]].concat(),
    );
    assert_eq!(after, two, "{}", out.stderr);
    let json = run_in(
        &dir,
        &[
            "lint",
            "deepspeed",
            "two.json",
            "--world-size",
            "8",
            "--format",
            "json",
        ],
    );
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let finding = &value["findings"][0];
    let offered: Vec<&str> = finding["fixes"]
        .as_array()
        .expect("fixes")
        .iter()
        .map(|f| f["message"].as_str().expect("a message"))
        .collect();
    assert_eq!(
        offered,
        ["set train_batch_size = 16", "set train_batch_size = 32"]
    );
    assert!(
        finding["fixes"]
            .as_array()
            .expect("fixes")
            .iter()
            .all(|f| f["applicability"] == "review")
    );
    // The floor and DeepSpeed's check are the same mistake: folded in.
    let folded: Vec<&str> = finding["consequences"]
        .as_array()
        .expect("consequences")
        .iter()
        .map(|c| c["code"].as_str().expect("a code"))
        .collect();
    assert_eq!(
        folded,
        ["accum::interop::rounds", "accum::interop::engine-assert"]
    );
    // --statistics counts the findings of every file by code.
    fs::write(dir.join("small.json"), small).expect("write");
    let stats = run_in(
        &dir,
        &[
            "lint",
            "deepspeed",
            "two.json",
            "small.json",
            "--world-size",
            "8",
            "--statistics",
        ],
    );
    assert_eq!(stats.code, 1);
    assert_eq!(
        stats.stdout,
        "2  accum::plan::global-batch  (fixable: 1 with --fix --unsafe-fixes)\n"
    );
    // (m, A) pairs that keep the global batch, in the file's own keys.
    let keep = "{\"train_batch_size\": 60, \"train_micro_batch_size_per_gpu\": 8,\n \"gradient_accumulation_steps\": 4}\n";
    fs::write(dir.join("keep.json"), keep).expect("write");
    let json = run_in(
        &dir,
        &[
            "lint",
            "deepspeed",
            "keep.json",
            "--world-size",
            "2",
            "--format",
            "json",
        ],
    );
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let first = &value["findings"][0]["fixes"][0];
    assert_eq!(
        first["message"],
        "set train_micro_batch_size_per_gpu = 6, gradient_accumulation_steps = 5"
    );
}

/// A zero accumulation in a YAML recipe: its one way out is a review fix,
/// made at the value, so the comments beside it stay; `--diff` shows it
/// and writes nothing.
#[test]
fn lint_fix_keeps_a_recipes_comments() {
    let dir = scratch("lint-fix-yaml");
    let recipe = "# fine-tune\nper_device_train_batch_size: 4  # m\ngradient_accumulation_steps: 0  # A, by mistake\nlearning_rate: 1.0e-4\n";
    let procs = ["--num-processes", "2"];
    let (out, after) = linted(
        &dir,
        "r.yaml",
        recipe,
        "hf",
        &[&procs[..], &["--diff", "--unsafe-fixes"]].concat(),
    );
    assert_eq!(after, recipe, "--diff writes nothing");
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("-gradient_accumulation_steps: 0  # A, by mistake\n+gradient_accumulation_steps: 1  # A, by mistake\n"),
        "{}",
        out.stdout
    );
    let (out, after) = linted(
        &dir,
        "r.yaml",
        recipe,
        "hf",
        &[&procs[..], &["--fix", "--unsafe-fixes"]].concat(),
    );
    assert_eq!(
        after,
        recipe.replace("steps: 0  #", "steps: 1  #"),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// In a config tree composed by Hydra's `defaults:`, a finding in a file
/// the named one composes carries its fix in that file's own text; `--fix`
/// edits only the file named, and says nothing is fixable there.
#[test]
fn lint_fixes_of_a_composed_file_stay_in_that_file() {
    let dir = scratch("lint-fix-tree");
    fs::create_dir_all(dir.join(".git")).expect("a repository root");
    fs::create_dir_all(dir.join("configs/trainer")).expect("dirs");
    let main = "defaults:\n  - trainer: default\n  - _self_\n\nseed: 1\n";
    let trainer =
        "# the trainer\nmax_steps: 100\naccumulate_grad_batches: 0  # by mistake\ndevices: 2\n";
    fs::write(dir.join("configs/train.yaml"), main).expect("write");
    fs::write(dir.join("configs/trainer/default.yaml"), trainer).expect("write");
    let lint = |flags: &[&str]| {
        let mut args = vec![
            "lint",
            "lightning",
            "configs/train.yaml",
            "--micro-batch",
            "4",
        ];
        args.extend_from_slice(flags);
        run_in(&dir, &args)
    };
    let json = lint(&["--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let finding = &value["findings"][0];
    assert_eq!(finding["file"], "configs/trainer/default.yaml");
    let edit = &finding["fixes"][0]["edits"][0];
    let start = edit["start"].as_u64().expect("a start") as usize;
    assert_eq!(&trainer[start..start + 1], "0", "{edit}");
    assert_eq!(
        (edit["line"].as_u64(), edit["column"].as_u64()),
        (Some(3), Some(26))
    );
    let out = lint(&["--fix", "--unsafe-fixes"]);
    assert_eq!(out.code, 1);
    assert!(!out.stdout.contains("fixable"), "{}", out.stdout);
    assert_eq!(
        fs::read_to_string(dir.join("configs/train.yaml")).expect("read"),
        main
    );
    assert_eq!(
        fs::read_to_string(dir.join("configs/trainer/default.yaml")).expect("read"),
        trainer
    );
}
