//! The bad-input catalogue (`tests/hostile/` and inputs made at test time):
//! every case ends with exit 1 (invalid input) or 2 (usage or I/O), a
//! message naming the file, in bounded time and memory, and leaves no
//! output file behind. The cases and their observed behaviour are listed in
//! `docs/reliability.md`.
//!
//! Tests run as root here, where file permissions do not stop reads or
//! writes. Unreadable inputs are made with what root cannot read through: a
//! path whose parent is a regular file, a symlink loop, a FIFO (which would
//! block a naive reader forever) and a character device. An unwritable
//! output folder is a path under a regular file, and a read-only bind mount
//! in a private mount namespace (`unshare --mount`) when the system allows
//! one.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use assert_cmd::Command;

use crate::{Out, scratch};

/// No case may take longer (unoptimized build, loaded machine).
const TIME_LIMIT: Duration = Duration::from_secs(30);

/// Address space allowed to one `accum` process, in KiB (2 GiB): a case
/// that tries to build an alias bomb or read 100 MB fails the limit.
const MEMORY_LIMIT_KIB: u64 = 2 * 1024 * 1024;

fn hostile() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/hostile")
}

/// GNU time, where installed: it measures a case's peak resident memory.
/// Without it the cases still run and print their wall time only.
const GNU_TIME: &str = "/usr/bin/time";

/// Runs `accum args` in `dir` under the time and memory limits, and prints
/// the case's wall time and, with GNU time, its peak resident memory
/// (`cargo test --release -p accum-cli --test cli hostile untrusted --
/// --nocapture --test-threads=1` lists every case; reported, not asserted).
pub(crate) fn bounded(dir: &Path, args: &[&str]) -> Out {
    bounded_within(dir, args, MEMORY_LIMIT_KIB)
}

/// [`bounded`] under another address-space limit, in KiB.
pub(crate) fn bounded_within(dir: &Path, args: &[&str], memory_limit_kib: u64) -> Out {
    static CASES: AtomicUsize = AtomicUsize::new(0);
    let measure = Path::new(GNU_TIME).is_file().then(|| {
        let n = CASES.fetch_add(1, Ordering::Relaxed);
        std::env::temp_dir().join(format!("accum-cli-test-{}-peak-{n}", std::process::id()))
    });
    // `sh -c SCRIPT $0 $1…`: with GNU time, `$0` is the file it writes to
    // (outside the case's folder, so the case's stderr stays the
    // program's own) and `$@` the program with its arguments.
    let mut command = Command::new("sh");
    command.current_dir(dir).env("NO_COLOR", "1").arg("-c");
    match &measure {
        Some(file) => command
            .arg(format!(
                "ulimit -v {memory_limit_kib} && exec {GNU_TIME} -f '%M' -o \"$0\" \"$@\""
            ))
            .arg(file)
            .arg(env!("CARGO_BIN_EXE_accum")),
        None => command
            .arg(format!(
                "ulimit -v {memory_limit_kib} && exec \"$0\" \"$@\""
            ))
            .arg(env!("CARGO_BIN_EXE_accum")),
    };
    let started = Instant::now();
    let out = command
        .args(args)
        .timeout(TIME_LIMIT)
        .output()
        .expect("sh runs");
    let elapsed = started.elapsed();
    assert!(
        elapsed < TIME_LIMIT,
        "{args:?}: still running after {TIME_LIMIT:?}"
    );
    let code = out.status.code().unwrap_or(-1);
    let peak = measure.and_then(|file| {
        let kib = fs::read_to_string(&file)
            .ok()?
            .lines()
            .last()?
            .trim()
            .parse::<u64>()
            .ok();
        let _ = fs::remove_file(&file);
        kib
    });
    match peak {
        Some(kib) => eprintln!(
            "{args:?}: exit {code} in {:.3} s, peak {:.1} MiB",
            elapsed.as_secs_f64(),
            kib as f64 / 1024.0
        ),
        None => eprintln!("{args:?}: exit {code} in {:.3} s", elapsed.as_secs_f64()),
    }
    Out {
        code,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The names in a folder, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `validate` and `sheet -o` on `file` (a name inside `dir`) and checks
/// the exit code, that the message names the file and says `needle`, and
/// that the sheet left no file behind.
fn refused(dir: &Path, file: &str, code: i32, needle: &str) {
    let before = names(dir);
    let out = bounded(dir, &["validate", file]);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(out.code, code, "validate {file}: {all}");
    assert!(
        all.contains(file),
        "validate {file}: the file is not named: {all}"
    );
    assert!(
        all.contains(needle),
        "validate {file}: expected `{needle}`: {all}"
    );
    assert!(!all.contains("panicked"), "validate {file}: {all}");

    let out = bounded(dir, &["sheet", file, "-o", "sheet.html"]);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(out.code, code, "sheet {file}: {all}");
    assert!(
        all.contains(file),
        "sheet {file}: the file is not named: {all}"
    );
    assert_eq!(
        names(dir),
        before,
        "sheet {file}: no output or temporary file"
    );
}

#[test]
fn committed_hostile_files_are_refused_with_their_reason() {
    let dir = scratch("hostile-files");
    for entry in fs::read_dir(hostile()).expect("tests/hostile") {
        let path = entry.expect("entry").path();
        fs::copy(&path, dir.join(path.file_name().expect("name"))).expect("copy");
    }
    for (file, code, needle) in [
        ("not_utf8.toml", 2, "not UTF-8 text (invalid byte at offset"),
        ("not_utf8.json", 2, "not UTF-8 text"),
        ("not_utf8.yaml", 2, "not UTF-8 text"),
        ("deep.json", 1, "nesting deeper than 64 levels"),
        ("deep.toml", 1, "max recursion depth"),
        ("deep.yaml", 1, "nesting deeper than 64 levels"),
        ("alias_bomb.yaml", 1, "has more than 200000 values"),
        ("duplicate_keys.toml", 1, "duplicate key"),
        ("duplicate_keys.json", 1, "duplicate key `micro_batch`"),
        ("duplicate_keys.yaml", 1, "duplicate key `micro_batch`"),
        ("nan.toml", 1, "must be a number, found string \"NaN\""),
        (
            "inf.yaml",
            1,
            "non-finite number `.inf`; use a finite value",
        ),
        ("huge_float.json", 1, "`1e999` is not a valid JSON number"),
        ("float_count.toml", 1, "must be an integer"),
        // `micro_batch = 4.0` is read as 4, as JSON Schema reads it
        // (docs/editors.md); editors.rs checks it is accepted.
        (
            "float_integer.yaml",
            1,
            "`batch.accumulation` is 1e30, larger than any count accum can hold",
        ),
        (
            "negative.toml",
            1,
            "`batch.micro_batch` must be at least 1, found -4",
        ),
        (
            "negative.json",
            1,
            "`batch.accumulation` must be at least 1, found -2",
        ),
        (
            "negative.yaml",
            1,
            "`data.examples` must be at least 0, found -100",
        ),
        ("overflow.toml", 1, "does not fit in a 64-bit count"),
        ("two_documents.yaml", 1, "more than one YAML document"),
        (
            "recursive_alias.yaml",
            1,
            "an alias refers to the value that contains it",
        ),
        (
            "beyond_u64.json",
            1,
            "is out of range; counts must fit in 64 bits",
        ),
    ] {
        refused(&dir, file, code, needle);
    }
    // Every committed case is in the table above (besides the valid one);
    // the launch scripts are imported by `untrusted.rs`.
    let listed = names(&hostile())
        .iter()
        .filter(|n| !n.starts_with("megatron_"))
        .count();
    assert_eq!(listed, 23 + 2, "a tests/hostile file is not checked");
}

#[test]
fn a_100_mb_file_is_refused_by_its_size_before_reading() {
    let dir = scratch("hostile-big");
    // Sparse: no disk space and no time to write it.
    let file = fs::File::create(dir.join("big.toml")).expect("create");
    file.set_len(100 * 1024 * 1024).expect("sparse file");
    drop(file);
    fs::copy(hostile().join("html_name.toml"), dir.join("ok.toml")).expect("copy");
    refused(
        &dir,
        "big.toml",
        2,
        "104857600 bytes is larger than the 4194304-byte limit",
    );
    // The same file as a schema or a run report.
    fs::rename(dir.join("big.toml"), dir.join("big.json")).expect("rename");
    let out = bounded(&dir, &["validate", "--schema", "big.json", "ok.toml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("big.json: 104857600 bytes"),
        "{}",
        out.stderr
    );
    // Under the report limit (256 MiB) it is read, and is not a report.
    let out = bounded(&dir, &["sheet", "ok.toml", "--report", "big.json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("big.json: not an accum run report"),
        "{}",
        out.stderr
    );
    // A report over its own limit (256 MiB) is refused the same way.
    fs::OpenOptions::new()
        .write(true)
        .open(dir.join("big.json"))
        .expect("open")
        .set_len(300 * 1024 * 1024)
        .expect("sparse file");
    let out = bounded(
        &dir,
        &["sheet", "ok.toml", "--report", "big.json", "-o", "s.html"],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("cannot read the run report: big.json: 314572800 bytes"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("s.html").exists());
}

#[test]
fn megabyte_deep_nesting_is_refused_without_exhausting_the_stack() {
    let dir = scratch("hostile-deep");
    let depth = 500_000;
    let open = "[".repeat(depth);
    let close = "]".repeat(depth);
    for (file, text, needle) in [
        (
            "deep.json",
            format!("{{\"batch\": {open}{close}}}"),
            "nesting deeper than 64 levels",
        ),
        (
            "deep.toml",
            format!("batch = {open}{close}\n"),
            "max recursion depth",
        ),
        (
            "deep.yaml",
            format!("batch: {open}{close}\n"),
            "nesting deeper than 64 levels",
        ),
        (
            "deep_tables.yaml",
            (0..2_000)
                .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                .collect(),
            "nesting deeper than 64 levels",
        ),
    ] {
        fs::write(dir.join(file), text).expect("write");
        refused(&dir, file, 1, needle);
    }
}

#[test]
fn a_yaml_alias_bomb_made_larger_still_stops_at_the_budget() {
    let dir = scratch("hostile-bomb");
    // Twelve levels of nine: 9^12 ≈ 2.8e11 values if expanded.
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = format!("*a{}", i - 1);
        text.push_str(&format!("a{i}: &a{i} [{}]\n", [p.as_str(); 9].join(", ")));
    }
    fs::write(dir.join("bomb.yaml"), text).expect("write");
    refused(&dir, "bomb.yaml", 1, "has more than 200000 values");
}

#[test]
fn paths_that_cannot_be_read_are_io_errors_naming_the_path() {
    let dir = scratch("hostile-paths");
    fs::copy(hostile().join("html_name.toml"), dir.join("ok.toml")).expect("copy");
    fs::create_dir(dir.join("folder.toml")).expect("dir");
    // A symlink loop: root cannot read through it either.
    std::os::unix::fs::symlink("loop.toml", dir.join("loop.toml")).expect("symlink");
    // A character device that never ends.
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.toml")).expect("symlink");
    for (file, needle) in [
        ("missing.toml", "missing.toml: no such file"),
        ("folder.toml", "folder.toml: is a directory"),
        // The parent is a regular file: ENOTDIR, for root too.
        (
            "ok.toml/inner.toml",
            "ok.toml/inner.toml: a parent in the path is not a directory",
        ),
        ("loop.toml", "loop.toml: "),
        ("zero.toml", "zero.toml: not a regular file"),
    ] {
        refused(&dir, file, 2, needle);
    }
}

#[test]
fn a_fifo_is_refused_instead_of_blocking_forever() {
    let dir = scratch("hostile-fifo");
    let made = StdCommand::new("mkfifo")
        .arg(dir.join("pipe.toml"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mkfifo is needed for this case");
    // Nobody writes to the pipe: opening it for reading would block forever.
    refused(&dir, "pipe.toml", 2, "pipe.toml: not a regular file");
}

#[test]
fn names_with_markup_are_escaped_in_every_sheet() {
    let dir = scratch("hostile-html");
    fs::copy(hostile().join("html_name.toml"), dir.join("c.toml")).expect("copy");
    let out = bounded(&dir, &["sheet", "c.toml", "--format", "html"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for raw in ["<script", "<img", "<iframe", "</td></tr><iframe"] {
        assert!(
            !out.stdout.contains(raw),
            "`{raw}` unescaped:\n{}",
            out.stdout
        );
    }
    assert!(
        out.stdout
            .contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
        "{}",
        out.stdout
    );
    let out = bounded(&dir, &["sheet", "c.toml", "--format", "md"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("<script"), "{}", out.stdout);
    let out = bounded(&dir, &["sheet", "c.toml", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sheet: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert!(sheet.to_string().contains("<script>alert('x')</script>"));
}

#[test]
fn replanning_a_huge_batch_is_an_error_not_a_long_search() {
    let dir = scratch("hostile-replan");
    // m·A = (2^32 − 5)(2^32 − 17): its divisors took seconds to search.
    fs::write(
        dir.join("huge.toml"),
        "[run]\nname = \"huge\"\n\n[batch]\nmicro_batch = 4294967291\naccumulation = 4294967279\nreplicas = 1\n",
    )
    .expect("write");
    let started = Instant::now();
    let out = bounded(
        &dir,
        &[
            "replan",
            "huge.toml",
            "--max-micro-batch",
            "18446744073709551615",
            "-o",
            "new.toml",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("huge.toml"), "{}", out.stderr);
    assert!(
        out.stderr.contains("too large to search for divisors"),
        "{}",
        out.stderr
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(names(&dir), ["huge.toml"]);
}

/// A schema given with `--schema` drives the check only within bounds, and
/// only with the keywords accum checks: alternatives that nest in
/// alternatives at every level of the file (2^40 tries unbounded), a
/// `$ref` that leads back to itself, and a keyword outside the subset are
/// each refused at once, naming what is wrong.
#[test]
fn a_hostile_schema_is_refused_within_bounds() {
    let dir = scratch("hostile-schema");
    let factor = serde_json::json!({ "type": "integer", "minimum": 1 });
    let schema = |extra: serde_json::Value| {
        let mut properties = serde_json::json!({
            "micro_batch": { "type": "integer", "minimum": 1, "x-accum-role": "micro_batch" },
            "accumulation": { "type": "integer", "minimum": 1, "x-accum-role": "accumulation" },
            "other": factor
        });
        properties["tree"] = extra;
        serde_json::json!({
            "type": "object",
            "properties": properties,
            "$defs": {
                "Tree": { "anyOf": [
                    { "type": "object", "properties": { "a": { "$ref": "#/$defs/Tree" } }, "required": ["b"] },
                    { "type": "object", "properties": { "a": { "$ref": "#/$defs/Tree" } }, "required": ["c"] }
                ] },
                "Loop": { "$ref": "#/$defs/Loop" }
            }
        })
    };
    let mut tree = String::from("0");
    for _ in 0..40 {
        tree = format!("{{\"a\": {tree}}}");
    }
    fs::write(
        dir.join("c.json"),
        format!("{{\"micro_batch\": 2, \"accumulation\": 4, \"tree\": {tree}}}"),
    )
    .expect("write");
    for (extra, needle) in [
        (
            serde_json::json!({ "$ref": "#/$defs/Tree" }),
            "c.json: the schema's alternatives (`anyOf`, `oneOf`) nest so deeply that checking the file would take more than",
        ),
        (
            serde_json::json!({ "$ref": "#/$defs/Loop" }),
            "c.json: the schema's `$ref`s and alternatives nest deeper than 32 at `tree` of the file",
        ),
        (
            serde_json::json!({ "if": { "type": "object" } }),
            "s.json: the schema uses `if` (at `/properties/tree/if`), a JSON Schema keyword accum does not check",
        ),
    ] {
        fs::write(dir.join("s.json"), schema(extra).to_string()).expect("write");
        let started = Instant::now();
        let out = bounded(&dir, &["validate", "--schema", "s.json", "c.json"]);
        assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains(needle), "{}", out.stderr);
        assert!(started.elapsed() < TIME_LIMIT);
    }
}
