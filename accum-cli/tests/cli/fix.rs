//! `validate --fix`, `--unsafe-fixes`, `--diff` and `--statistics`: fixes
//! are edits of the file's text at the finding, so comments, key order and
//! layout stay; safe fixes apply alone, a choice never does; a second pass
//! changes nothing.

use std::fs;
use std::path::Path;

use proptest::prelude::*;

use crate::{Out, run_in, scratch};

/// Writes `text` to `name` in `dir`, runs `accum` there, and returns the
/// output with the file's text after.
fn fixed(dir: &Path, name: &str, text: &str, flags: &[&str]) -> (Out, String) {
    fs::write(dir.join(name), text).expect("write");
    let mut args = vec!["validate", name];
    args.extend_from_slice(flags);
    let out = run_in(dir, &args);
    let after = fs::read_to_string(dir.join(name)).expect("read back");
    (out, after)
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
