//! Work and memory bounded by the input: inputs of hundreds of thousands of
//! items are checked in linear time and their findings listed up to a cap
//! per code; every reader stays within its budget under a 1 GiB
//! address-space limit and says which limit a worst case reached, at its
//! place; a run report's fields are capped when it is read. Each case
//! prints its time and peak memory (`hostile::bounded_within`); times are
//! reported, not asserted (the release figures are in
//! `docs/reliability.md`).

use std::fs;
use std::path::Path;

use crate::hostile::bounded_within;
use crate::{Out, fixtures, scratch};

/// Address space allowed to one `accum` process here, in KiB (1 GiB).
const ONE_GIB_KIB: u64 = 1024 * 1024;

/// Runs a case under 1 GiB and checks its exit code and message.
fn case(dir: &Path, args: &[&str], code: i32, needle: &str) -> Out {
    let out = bounded_within(dir, args, ONE_GIB_KIB);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(out.code, code, "{args:?}: {}", tail(&all));
    assert!(
        all.contains(needle),
        "{args:?}: expected `{needle}`: {}",
        tail(&all)
    );
    for internal in ["panicked", "memory allocation", "repeats itself"] {
        assert!(!all.contains(internal), "{args:?}: {}", tail(&all));
    }
    out
}

/// The end of a long output, for a failing assertion.
fn tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(2000);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

const BATCH: &str = "[batch]\nmicro_batch = 4\naccumulation = 2\nreplicas = 1\n";

#[test]
fn many_keys_items_and_findings_are_checked_in_linear_time() {
    let dir = scratch("limits-linear");
    // Unknown keys, each its own finding: the human output shows the first
    // 50 and counts the others; the formats for tools list 1,000. (Sizes
    // are scaled for the debug build: 300,000 unknown keys are timed in
    // release, `docs/reliability.md`.)
    let n = 20_000;
    let unknown: String = (0..n).map(|i| format!("u{i}=1\n")).collect();
    fs::write(dir.join("unknown.toml"), format!("{BATCH}{unknown}")).expect("toml");
    let out = case(
        &dir,
        &["validate", "unknown.toml"],
        1,
        "… and 19,950 more `accum::schema::unknown-key` findings in unknown.toml, not listed (each code lists its first 50)",
    );
    assert!(out.stdout.contains("unknown.toml: 20000 errors"));
    assert!(out.stdout.len() < 100_000, "{} bytes", out.stdout.len());
    // Distinct misspellings: a did-you-mean for each, against the
    // section's keys made once.
    let misspelt: String = (0..10_000)
        .map(|i| format!("micro_bach{i} = 1\n"))
        .collect();
    fs::write(dir.join("misspelt.toml"), format!("{BATCH}{misspelt}")).expect("toml");
    let out = case(
        &dir,
        &["validate", "misspelt.toml", "--format", "json"],
        1,
        "did you mean `micro_batch`?",
    );
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let file = &json["files"][0];
    assert_eq!(file["errors"], 10_000);
    let findings = file["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1001);
    assert_eq!(
        findings[1000]["message"],
        "… and 9,000 more `accum::schema::unknown-key` findings in misspelt.toml, not listed (each code lists its first 1,000)"
    );
    // 300,000 repeats of one key, and a duplicate after 50,000 keys.
    let repeats = vec!["\"k\": 1"; 300_000].join(", ");
    fs::write(dir.join("repeats.json"), format!("{{{repeats}}}")).expect("json");
    case(
        &dir,
        &["validate", "repeats.json"],
        1,
        "duplicate key `k`; each key may appear once",
    );
    let keys: String = (0..50_000).map(|i| format!("k{i} = 1\n")).collect();
    fs::write(dir.join("late.toml"), format!("{keys}k25000 = 2\n")).expect("toml");
    case(&dir, &["validate", "late.toml"], 1, "duplicate key");
    // 900,000 items in one array (300,000 in the slower TOML and YAML
    // parsers of the debug build): one finding for the key, or YAML's
    // value limit; past a million values, JSON's and TOML's.
    let items = vec!["1"; 900_000].join(",");
    fs::write(dir.join("items.json"), format!("{{\"x\": [{items}]}}")).expect("json");
    let items = vec!["1"; 300_000].join(",");
    fs::write(dir.join("items.toml"), format!("x = [{items}]\n{BATCH}")).expect("toml");
    fs::write(dir.join("items.yaml"), format!("x: [{items}]\n")).expect("yaml");
    case(&dir, &["validate", "items.json"], 1, "unknown key `x`");
    let nested = vec![format!("{}1{}", "[".repeat(60), "]".repeat(60)); 17_000].join(",");
    fs::write(dir.join("nested.json"), format!("{{\"x\": [{nested}]}}")).expect("json");
    let out = case(
        &dir,
        &["validate", "nested.json"],
        1,
        "the document has more than 1000000 values; shorten the file",
    );
    // Refused before the parser builds its tree, at the 1,000,001st table
    // or array: item 16,666, 38 deep.
    assert!(
        out.stdout.contains("nested.json:1:2033298"),
        "{}",
        out.stdout
    );
    case(&dir, &["validate", "items.toml"], 1, "unknown key `x`");
    case(
        &dir,
        &["validate", "items.yaml"],
        1,
        "more than 200000 values",
    );
    // Findings on one long line: each column is counted from a mark near
    // it, not from the line's start.
    let line: Vec<String> = (0..30_000).map(|i| format!("\"é{i}\": 1")).collect();
    fs::write(dir.join("line.json"), format!("{{{}}}", line.join(", "))).expect("json");
    let out = case(
        &dir,
        &["validate", "line.json", "--format", "github"],
        1,
        "… and 29,000 more `accum::schema::unknown-key` findings in line.json",
    );
    let listed = out
        .stdout
        .lines()
        .find(|l| l.contains("unknown key `é999`"))
        .expect("the 1,000th unknown key is listed");
    assert!(
        listed.starts_with("::error file=line.json,line=1,col="),
        "{listed}"
    );
    assert!(!out.stdout.contains("unknown key `é1000`"));
}

#[test]
fn every_reader_reports_its_budget_under_one_gib() {
    let dir = scratch("limits-readers");
    let run = "torchrun pretrain_gpt.py --micro-batch-size 1 --global-batch-size 8\n";
    // Megatron launch scripts: two million words on one line, and 4 MB of
    // arithmetic expansions, each within the token budget.
    let words = format!("echo {}\n{run}", "a ".repeat(2_000_000));
    fs::write(dir.join("words.sh"), words).expect("script");
    let arith = format!("X=1\n{}{run}", "Y=$((X+1))\n".repeat(360_000));
    fs::write(dir.join("arith.sh"), arith).expect("script");
    for script in ["words.sh", "arith.sh"] {
        let out = case(
            &dir,
            &["import", "megatron", script, "--world-size", "8"],
            1,
            "more than 200000 words and separators; the reader stops here",
        );
        assert!(
            out.stdout.contains("accum::interop::limit")
                || out.stderr.contains("accum::interop::limit"),
            "{script}"
        );
    }
    // 4 MB of tiny keys (less in JSON and TOML, which the debug build
    // checks key by key more slowly: their 4 MB are timed in release) and
    // of one-character items, and an alias bomb, in the JSON, TOML and
    // YAML readers and the engines' readers on them.
    let keys: Vec<String> = (0..20_000).map(|i| format!("\"{i:x}\":1")).collect();
    fs::write(dir.join("keys.json"), format!("{{{}}}", keys.join(","))).expect("json");
    let keys: String = (0..100_000).map(|i| format!("k{i:x}=1\n")).collect();
    fs::write(dir.join("keys.toml"), format!("{BATCH}{keys}")).expect("toml");
    let keys: String = (0..420_000).map(|i| format!("k{i:x}: 1\n")).collect();
    fs::write(dir.join("keys.yaml"), keys).expect("yaml");
    let items = vec!["1"; 1_900_000].join(",");
    fs::write(
        dir.join("items.yaml"),
        format!("trainer:\n  devices: [{items}]\n"),
    )
    .expect("yaml");
    let mut aliases = vec!["a0: &a0 [x, x, x, x, x, x, x, x, x, x]".to_owned()];
    for i in 1..12 {
        aliases.push(format!(
            "a{i}: &a{i} [{}]",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    fs::write(dir.join("aliases.yaml"), aliases.join("\n")).expect("yaml");
    case(
        &dir,
        &["validate", "keys.json"],
        1,
        "more `accum::schema::unknown-key` findings",
    );
    case(
        &dir,
        &["validate", "keys.toml"],
        1,
        "more `accum::schema::unknown-key` findings",
    );
    case(
        &dir,
        &["validate", "keys.yaml"],
        1,
        "more than 200000 values",
    );
    case(
        &dir,
        &["import", "deepspeed", "keys.json", "--world-size", "2"],
        1,
        "keys.json",
    );
    case(
        &dir,
        &["import", "hf", "keys.yaml", "--world-size", "2"],
        1,
        "more than 200000 values",
    );
    case(
        &dir,
        &["import", "lightning", "items.yaml"],
        1,
        "more than 200000 values",
    );
    case(
        &dir,
        &["import", "lightning", "aliases.yaml"],
        1,
        "more than 200000 values",
    );
}

#[test]
fn a_report_is_capped_per_field_when_read() {
    let dir = scratch("limits-report");
    fs::copy(fixtures().join("tiny.toml"), dir.join("t.toml")).expect("copy");
    case(
        &dir,
        &["run", "t.toml", "--report", "run.json", "-q"],
        0,
        "",
    );
    let mut report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("json");
    // A 10 MB name in the model's description and in a warning, and a
    // million warnings.
    let name = "n".repeat(10_000_000);
    report["model"]["name"] = name.clone().into();
    let mut warnings = vec![serde_json::Value::from(name)];
    warnings.extend(std::iter::repeat_n("w".into(), 1_000_000));
    report["warnings"] = warnings.into();
    fs::write(dir.join("r.json"), report.to_string()).expect("report");
    case(
        &dir,
        &["sheet", "t.toml", "--report", "r.json", "-o", "s.md"],
        0,
        "",
    );
    let sheet = fs::read_to_string(dir.join("s.md")).expect("sheet");
    assert!(sheet.len() < 200_000, "{} bytes", sheet.len());
    assert!(
        sheet.contains("… (9,995,904 bytes cut)"),
        "{}",
        tail(&sheet)
    );
    assert!(
        sheet
            .contains("the report lists 1,000,001 warnings; the first 256 were read (999,745 cut)"),
        "{}",
        tail(&sheet)
    );
}
