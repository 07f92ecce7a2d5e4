//! `accum explain CODE`: every code has an entry in docs/rules.md, every
//! code accum emits is one of them, and every one of them is emitted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use accum_core::Code;

use crate::{Out, fixtures, run_in, scratch};

/// The codes `accum explain` lists.
fn listed() -> Vec<String> {
    let out = run_in(&scratch("explain-list"), &["explain"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout
        .lines()
        .take_while(|line| !line.is_empty())
        .map(|line| line.split_whitespace().next().expect("a code").to_owned())
        .collect()
}

#[test]
fn every_code_explains_itself() {
    let codes = listed();
    assert!(codes.len() >= 40, "{codes:?}");
    let dir = scratch("explain-each");
    for code in &codes {
        let out = run_in(&dir, &["explain", code]);
        assert_eq!(out.code, 0, "{code}: {}", out.stderr);
        assert!(
            out.stdout.starts_with(&format!("{code}\n\n")),
            "{}",
            out.stdout
        );
        for part in ["**Checks:**", "**Prevents:**", "**Fix:**", "Wrong", "Right"] {
            assert!(out.stdout.contains(part), "{code} lacks {part}");
        }
    }
    let all: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(codes, all, "`explain` lists every code, in order");
    // A merged code explains the code that replaced it.
    for &(old, code) in Code::RENAMED {
        let out = run_in(&dir, &["explain", old]);
        assert_eq!(out.code, 0, "{old}: {}", out.stderr);
        assert!(
            out.stdout.starts_with(&format!("{code}\n\n")),
            "{old}: {}",
            out.stdout
        );
    }
    // The prefix may be left out.
    let short = run_in(&dir, &["explain", "plan::global-batch"]);
    assert_eq!(
        short.stdout,
        run_in(&dir, &["explain", "accum::plan::global-batch"]).stdout
    );
}

#[test]
fn an_unknown_code_gets_the_nearest_and_exit_2() {
    let out = run_in(
        &scratch("explain-unknown"),
        &["explain", "accum::plan::globalbatch"],
    );
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert_eq!(
        out.stderr,
        "error: no rule has the code `accum::plan::globalbatch`; did you mean `accum::plan::global-batch`? `accum explain` lists every code\n"
    );
}

#[test]
fn a_code_is_found_by_a_unique_suffix() {
    let dir = scratch("explain-suffix");
    let full = run_in(&dir, &["explain", "accum::plan::global-batch"]);
    for text in ["global-batch", "plan::global-batch", "not-divisible"] {
        let out = run_in(&dir, &["explain", text]);
        assert_eq!(out.code, 0, "{text}: {}", out.stderr);
        assert_eq!(out.stdout, full.stdout, "{text}");
    }
    // Another code by its last segment alone.
    let out = run_in(&dir, &["explain", "partial-group"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("accum::plan::partial-group\n\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_suffix_of_several_codes_lists_them_and_exit_2() {
    let out = run_in(&scratch("explain-ambiguous"), &["explain", "world-size"]);
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr
            .starts_with("error: `world-size` is the end of several codes: `accum::"),
        "{}",
        out.stderr
    );
    let named: Vec<&str> = Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| c.ends_with("::world-size"))
        .collect();
    assert!(named.len() >= 2, "{named:?}");
    for code in named {
        assert!(
            out.stderr.contains(&format!("`{code}`")),
            "{code}: {}",
            out.stderr
        );
    }
}

#[test]
fn a_misspelt_suffix_gets_the_nearest_code() {
    let out = run_in(&scratch("explain-typo"), &["explain", "global-bach"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: no rule has the code `global-bach`; did you mean `accum::plan::global-batch`? `accum explain` lists every code\n"
    );
}

/// A source file without its unit tests (the `#[cfg(test)]` module that
/// ends a file, by the crates' convention).
pub(crate) fn non_test_code(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod ")
        .map_or(text, |at| &text[..at])
}

/// Every `.rs` file under `dir` that is not a test module of its own.
pub(crate) fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs")
            && !path
                .file_stem()
                .is_some_and(|stem| stem == "tests" || stem.to_string_lossy().ends_with("_tests"))
        {
            files.push(path);
        }
    }
    files
}

/// The codes `text` names: every `accum::…` word in it that is not a Rust
/// path (`accum::plan::Role`, `accum::Plan`).
fn codes_in_text(text: &str) -> Vec<String> {
    let mut codes = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("accum::") {
        let code: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == ':' || *c == '-')
            .collect();
        let next = rest[at + code.len()..].chars().next();
        let path = code.ends_with("::") || next.is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !path {
            codes.push(code);
        }
        rest = &rest[at + "accum::".len()..];
    }
    codes
}

/// Every `"code"` string of a JSON value, at any depth.
fn codes_in_json(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                match value {
                    serde_json::Value::String(code) if key == "code" => out.push(code.clone()),
                    _ => codes_in_json(value, out),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                codes_in_json(item, out);
            }
        }
        _ => {}
    }
}

/// What the runs of the table emitted: each code with the first input that
/// emitted it, and the strings that look like codes but are none.
#[derive(Default)]
struct Emitted {
    codes: BTreeMap<Code, String>,
    unknown: BTreeSet<(String, String)>,
}

impl Emitted {
    fn add(&mut self, code: &str, from: &str) {
        match code.parse::<Code>() {
            // A merged code still parses, but is no longer emitted.
            Ok(parsed) if parsed.as_str() == code => {
                self.codes.entry(parsed).or_insert_with(|| from.to_owned());
            }
            _ => {
                self.unknown.insert((code.to_owned(), from.to_owned()));
            }
        }
    }

    /// The codes of a command's JSON output.
    fn json(&mut self, out: &Out, from: &str) {
        let json: serde_json::Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|err| panic!("{from}: {err}\n{}{}", out.stdout, out.stderr));
        let mut codes = Vec::new();
        codes_in_json(&json, &mut codes);
        for code in codes {
            self.add(&code, from);
        }
    }

    /// The codes a command's text output names.
    fn text(&mut self, text: &str, from: &str) {
        for code in codes_in_text(text) {
            self.add(&code, from);
        }
    }
}

/// Text replacements: each `(from, to)`, once.
type Edits = &'static [(&'static str, &'static str)];

/// Configs that each make `accum validate` emit the code beside it, which
/// the mistakes folder does not: the tiny fixture (`m = 4`, `A = 2`, `D = 2`, `B = 16`, 12
/// updates, 60 examples, no fixed `seq_len`) with some text replaced.
const VALIDATE: &[(&str, Code, Edits)] = &[
    (
        "warmup_longer_than_the_run",
        Code::Warmup,
        &[("warmup = \"0 updates\"", "warmup = \"20 updates\"")],
    ),
    (
        "log_interval_longer_than_the_run",
        Code::Every,
        &[("every = \"64 examples\"", "every = \"1000 updates\"")],
    ),
    (
        "total_not_whole_updates",
        Code::Rounding,
        &[("total = \"12 updates\"", "total = \"100 examples\"")],
    ),
    (
        "stage_batch_not_a_multiple",
        Code::StageBatch,
        &[(
            "[optimizer]",
            "[[batch.stages]]\nglobal_batch = 12\nuntil = \"96 examples\"\n\n[optimizer]",
        )],
    ),
    (
        "stages_out_of_order",
        Code::StageOrder,
        &[(
            "[optimizer]",
            "[[batch.stages]]\nglobal_batch = 8\nuntil = \"96 examples\"\n\n\
             [[batch.stages]]\nglobal_batch = 16\nuntil = \"32 examples\"\n\n[optimizer]",
        )],
    ),
    (
        "stage_ends_inside_an_update",
        Code::StageBoundary,
        &[(
            "[optimizer]",
            "[[batch.stages]]\nglobal_batch = 8\nuntil = \"20 examples\"\n\n[optimizer]",
        )],
    ),
    (
        "ramp_not_in_whole_increments",
        Code::Ramp,
        &[(
            "[optimizer]",
            "[batch.ramp]\nstart = 12\nincrement = 4\nover = \"96 examples\"\n\n[optimizer]",
        )],
    ),
    (
        "group_too_large_for_the_engine",
        Code::Memory,
        &[
            ("accumulation = 2", "accumulation = 4294967296"),
            ("total = \"12 updates\"", "total = \"1 updates\""),
            ("last_group = \"drop\"", "last_group = \"process\""),
        ],
    ),
];

/// Codes no small input of accum's own config emits, checked in the
/// sources instead (see their use below).
const SOURCE_ONLY: &[Code] = &[Code::Schema, Code::SchemaValue];

/// The interop fixtures, each with its framework (the folder's name) and
/// the options its `options:` line gives.
fn interop_fixtures() -> Vec<(String, std::path::PathBuf, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/interop");
    let mut out = Vec::new();
    for folder in std::fs::read_dir(&root).expect("the interop fixtures") {
        let folder = folder.expect("an entry").path();
        let framework = folder
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        for file in std::fs::read_dir(&folder).expect("a framework's fixtures") {
            let path = file.expect("an entry").path();
            if !path.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a fixture");
            let Some(options) = text.lines().find_map(|l| {
                l.trim_start_matches(['#', '/', ' '])
                    .strip_prefix("options:")
                    .map(|o| o.split_whitespace().map(str::to_owned).collect())
            }) else {
                continue;
            };
            out.push((framework.clone(), path, options));
        }
    }
    out.sort();
    out
}

/// The acceptance of docs/rules.md against what accum really emits: a table
/// of small inputs (the mistakes folder, configs made from the tiny fixture,
/// every interop fixture, a pre-flight check, the library's errors and the
/// derive's compile errors) is run, and the codes seen must cover
/// [`Code::ALL`]; a code that no input emits fails with its name, and a
/// string that looks like a code but is none of them fails too. With
/// `the_rules_document_every_code_and_no_other` (docs/rules.md lists
/// exactly `Code::ALL`), every emitted code is documented and every
/// documented code is emitted.
#[test]
fn every_code_is_emitted_by_some_input_and_documented() {
    let mut seen = Emitted::default();
    // `accum validate` on each mistake.
    let dir = fixtures().join("mistakes");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    for file in &files {
        let out = run_in(&dir, &["validate", "--format", "json", file]);
        seen.json(&out, &format!("validate mistakes/{file}"));
    }
    // `accum validate` on the tiny fixture, changed.
    let tiny = std::fs::read_to_string(fixtures().join("tiny.toml")).expect("tiny");
    let scratch_dir = scratch("explain-emitted");
    for (name, code, edits) in VALIDATE {
        let mut text = tiny.clone();
        for (from, to) in *edits {
            assert!(
                text.contains(from),
                "{name}: the tiny fixture has no `{from}`"
            );
            text = text.replacen(from, to, 1);
        }
        let file = format!("{name}.toml");
        std::fs::write(scratch_dir.join(&file), text).expect("a config");
        let out = run_in(&scratch_dir, &["validate", "--format", "json", &file]);
        let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
        let mut codes = Vec::new();
        codes_in_json(&json, &mut codes);
        assert!(
            codes.iter().any(|c| c == code.as_str()),
            "{name}: {code} not in {codes:?}"
        );
        seen.json(&out, &format!("validate {name}"));
    }
    // A ramp-up with its warmup in updates.
    let out = run_in(
        &fixtures(),
        &["validate", "--format", "json", "rampup.toml"],
    );
    seen.json(&out, "validate rampup.toml");
    // `accum lint` on every interop fixture, with its options.
    for (framework, path, options) in interop_fixtures() {
        let folder = path.parent().expect("a folder");
        let name = path.file_name().expect("a name").to_string_lossy();
        let mut args = vec!["lint", framework.as_str(), &name];
        args.extend(options.iter().map(String::as_str));
        args.extend(["--format", "json"]);
        let out = run_in(folder, &args);
        seen.json(&out, &format!("lint {framework} {name}"));
    }
    // Variable lengths without the framework's per-token loss, and a launch
    // script whose arithmetic refers to itself.
    let megatron = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/interop/megatron");
    let out = run_in(
        &megatron,
        &[
            "lint",
            "megatron",
            "arrays.sh",
            "--variable-lengths",
            "--format",
            "json",
        ],
    );
    seen.json(&out, "lint megatron arrays.sh --variable-lengths");
    std::fs::write(
        scratch_dir.join("self.sh"),
        "X=X\nGBS=$((X))\ntorchrun pretrain_gpt.py --micro-batch-size 1 --global-batch-size $GBS\n",
    )
    .expect("a script");
    let out = run_in(
        &scratch_dir,
        &["lint", "megatron", "self.sh", "--format", "json"],
    );
    seen.json(&out, "lint megatron self.sh");
    // `accum verify`: each check names its rule; a failing one, the
    // pre-flight rule.
    let out = run_in(&fixtures(), &["verify", "tiny.toml", "--format", "json"]);
    seen.json(&out, "verify tiny.toml");
    let out = run_in(
        &fixtures(),
        &["verify", "tiny.toml", "--rtol=0", "--atol=0"],
    );
    seen.text(&out.stdout, "verify tiny.toml --rtol=0 --atol=0");
    // `accum sheet --format csv` of a run whose stats stream is gone warns
    // that its statistics are the report's own.
    std::fs::write(scratch_dir.join("tiny.toml"), &tiny).expect("a config");
    let out = run_in(
        &scratch_dir,
        &["run", "tiny.toml", "--report", "run.json", "--stream-stats"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::remove_file(scratch_dir.join("run.stats.jsonl")).expect("the stream");
    let out = run_in(
        &scratch_dir,
        &[
            "sheet",
            "tiny.toml",
            "--report",
            "run.json",
            "--format",
            "csv",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    seen.text(&out.stderr, "sheet --format csv without the stats stream");
    // `accum calc` asked for a scaling estimate it cannot make.
    let out = run_in(
        &scratch_dir,
        &[
            "calc",
            "-m",
            "8",
            "-a",
            "4",
            "-d",
            "8",
            "--device-throughput",
            "12",
            "--bandwidth",
            "50GB",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    seen.text(
        &out.stderr,
        "calc --device-throughput --bandwidth without --params",
    );
    // The library's errors, for the rules of the loop it checks.
    library(&mut seen);
    // The derive's compile errors, as trybuild records them.
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui");
    for entry in std::fs::read_dir(&ui).expect("tests/ui") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "stderr") {
            let text = std::fs::read_to_string(&path).expect("a .stderr file");
            let from = format!(
                "derive {}",
                path.file_name().expect("a name").to_string_lossy()
            );
            seen.text(&text, &from);
        }
    }
    // The schema codes that only a user's own config reaches: a pattern or
    // a format of its schema (`accum::schema`), a value its own type
    // refuses (`accum::schema::value`); accum's config has neither, so the
    // check is that the validator constructs them.
    for code in SOURCE_ONLY {
        let name = format!("Code::{code:?}");
        let constructed = [
            "accum-cli/src/validate/structure.rs",
            "accum-cli/src/typed.rs",
        ]
        .iter()
        .any(|file| {
            let text = std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file),
            )
            .expect("a source file");
            non_test_code(&text).contains(&name)
        });
        if constructed {
            seen.codes
                .entry(*code)
                .or_insert_with(|| format!("source: {name}"));
        }
    }
    let never: Vec<&str> = Code::ALL
        .iter()
        .filter(|code| !seen.codes.contains_key(code))
        .map(|code| code.as_str())
        .collect();
    assert!(
        never.is_empty(),
        "documented codes that no input of the table emits: {never:?}"
    );
    assert!(
        seen.unknown.is_empty(),
        "emitted strings that are not a code of docs/rules.md: {:?}",
        seen.unknown
    );
}

/// The codes of the library's own checks: the roles of a config, a plan's
/// conversions and re-planning, a driver's group protocol and a group's
/// tokens.
fn library(seen: &mut Emitted) {
    use accum_core::driver::{Driver, Outcome};
    use accum_core::plan::Role;

    // A role in two places: the derive refuses it at compile time, and the
    // run-time check it shares with `validate` reports it.
    let root = accum_core::FieldPath::root();
    let values = [
        accum_core::RoleValue::field(Role::MicroBatch, &root, "m", Some(2)),
        accum_core::RoleValue::field(Role::Accumulation, &root, "a", Some(8)),
        accum_core::RoleValue::field(Role::Replicas, &root, "d", Some(2)),
        accum_core::RoleValue::field(Role::Replicas, &root.child("cluster"), "d", Some(4)),
    ];
    for finding in &accum_core::check_roles(&values) {
        seen.add(finding.code.as_str(), &format!("check_roles: {finding}"));
    }
    let values = [
        accum_core::RoleValue::field(Role::MicroBatch, &root, "m", Some(2)),
        accum_core::RoleValue::field(Role::Accumulation, &root, "a", Some(8)),
        accum_core::RoleValue::field(Role::Replicas, &root, "d", Some(2)),
        accum_core::RoleValue::field(Role::TensorParallel, &root, "tp", Some(2)),
    ];
    for finding in &accum_core::check_roles(&values) {
        seen.add(finding.code.as_str(), &format!("check_roles: {finding}"));
    }
    let plan = accum_core::plan::Plan::new(1, 2, 1).expect("a plan");
    let mut driver = Driver::builder(plan, 6).build().expect("a driver");
    let group = driver.next_group().expect("a group").expect("one more");
    let err = driver
        .finish(group, Outcome::Applied)
        .expect_err("not counted");
    let code = err.code().expect("a rule");
    seen.add(code.as_str(), &format!("driver: {err}"));
    let err = plan.replan(0).expect_err("a limit of 0");
    seen.add(err.code().as_str(), &format!("plan: {err}"));
    let three: accum_core::Span = "3 examples".parse().expect("a span");
    let err = plan
        .span_to_updates(&three, accum_core::plan::Rounding::Exact)
        .expect_err("3 examples are not whole updates of 2");
    seen.add(err.code().as_str(), &format!("plan: {err}"));
    let tokens: accum_core::Span = "2k tokens".parse().expect("a span");
    let err = plan
        .span_to_updates(&tokens, accum_core::plan::Rounding::Up)
        .expect_err("tokens without a seq_len");
    seen.add(err.code().as_str(), &format!("plan: {err}"));
    let plan = accum_core::plan::Plan::new(4, 2, 1)
        .and_then(|p| p.with_seq_len(16))
        .expect("a plan");
    let mut driver = Driver::builder(plan, 100).build().expect("a driver");
    let mut group = driver.next_group().expect("a group").expect("one more");
    group.count_all(|_| 17);
    let err = driver
        .finish(group, Outcome::Applied)
        .expect_err("17 tokens > seq_len 16");
    let code = err.code().expect("a rule");
    seen.add(code.as_str(), &format!("driver: {err}"));
}

#[test]
fn no_code_is_written_as_a_string_outside_the_code_enum() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut literals = Vec::new();
    for dir in ["accum-cli/src", "accum-core/src"] {
        for file in rust_files(&root.join(dir)) {
            if file.ends_with("accum-core/src/code.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("readable source");
            for (i, line) in non_test_code(&text).lines().enumerate() {
                let code_part = line.split("//").next().unwrap_or(line);
                if code_part
                    .split("\"accum::")
                    .skip(1)
                    .any(|rest| rest.starts_with(|c: char| c.is_ascii_lowercase()))
                {
                    literals.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        literals.is_empty(),
        "codes written as strings instead of `Code`:\n{}",
        literals.join("\n")
    );
}

/// The codes of `accum validate` or `accum lint` on `file`, in `dir`.
fn codes_of(dir: &Path, args: &[&str]) -> BTreeSet<String> {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = run_in(dir, &all);
    let json: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|err| panic!("{args:?}: {err}\n{}{}", out.stdout, out.stderr));
    let mut codes = Vec::new();
    codes_in_json(&json, &mut codes);
    codes.into_iter().collect()
}

/// A mistake that accum's own config can make gets the code `accum validate`
/// gives it from every importer too: a factor of 0, a global batch that is
/// not `m·A·D`, a world size the model-parallel degrees do not divide.
#[test]
fn the_same_mistake_has_the_same_code_from_every_entry_point() {
    let dir = scratch("explain-same-mistake");
    let mistakes = fixtures().join("mistakes");
    let files: [(&str, &str); 8] = [
        (
            "ds_zero.json",
            r#"{ "train_batch_size": 32, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 0 }"#,
        ),
        (
            "hf_zero.yaml",
            "per_device_train_batch_size: 0\ngradient_accumulation_steps: 4\n",
        ),
        (
            "lightning_zero.yaml",
            "trainer:\n  accumulate_grad_batches: 0\n  devices: 2\ndata:\n  batch_size: 4\n",
        ),
        (
            "mg_zero.sh",
            "torchrun pretrain_gpt.py --micro-batch-size 0 --global-batch-size 16\n",
        ),
        (
            "ds_global.json",
            r#"{ "train_batch_size": 30, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 8 }"#,
        ),
        (
            "mg_global.sh",
            "torchrun pretrain_gpt.py --micro-batch-size 2 --global-batch-size 30\n",
        ),
        (
            "mg_layout.sh",
            "torchrun pretrain_gpt.py --micro-batch-size 2 --global-batch-size 32 --tensor-model-parallel-size 3\n",
        ),
        (
            "ds_layout.json",
            r#"{ "train_batch_size": 32, "train_micro_batch_size_per_gpu": 2, "sequence_parallel_size": 3 }"#,
        ),
    ];
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).expect("a file");
    }
    let zero = codes_of(&mistakes, &["validate", "zero.toml"]);
    assert!(zero.contains("accum::plan::zero"), "{zero:?}");
    for (framework, file, options) in [
        ("deepspeed", "ds_zero.json", &["--world-size", "2"][..]),
        ("hf", "hf_zero.yaml", &["--num-processes", "2"][..]),
        ("lightning", "lightning_zero.yaml", &[][..]),
        ("megatron", "mg_zero.sh", &["--world-size", "2"][..]),
    ] {
        let mut args = vec!["lint", framework, file];
        args.extend(options);
        let codes = codes_of(&dir, &args);
        assert!(
            codes.contains("accum::plan::zero"),
            "{framework} {file}: {codes:?}"
        );
        assert!(
            !codes.contains("accum::interop::value"),
            "{framework} {file}: {codes:?}"
        );
    }
    let global = codes_of(&mistakes, &["validate", "global_batch_mismatch.toml"]);
    assert!(global.contains("accum::plan::global-batch"), "{global:?}");
    for (framework, file) in [
        ("deepspeed", "ds_global.json"),
        ("megatron", "mg_global.sh"),
    ] {
        let codes = codes_of(&dir, &["lint", framework, file, "--world-size", "2"]);
        assert!(
            codes.contains("accum::plan::global-batch"),
            "{framework} {file}: {codes:?}"
        );
    }
    let layout = codes_of(&mistakes, &["validate", "world_not_divisible.toml"]);
    assert!(layout.contains("accum::plan::layout"), "{layout:?}");
    for (framework, file) in [
        ("megatron", "mg_layout.sh"),
        ("deepspeed", "ds_layout.json"),
    ] {
        let codes = codes_of(&dir, &["lint", framework, file, "--world-size", "8"]);
        assert!(
            codes.contains("accum::plan::layout"),
            "{framework} {file}: {codes:?}"
        );
    }
}
