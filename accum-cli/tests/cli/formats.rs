//! `accum lint`'s findings in every format, and `--deny-warnings`: the same
//! renderings as `validate`'s, on framework files.

use std::path::{Path, PathBuf};

use crate::run_in;

fn interop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/interop")
}

/// `accum lint ARGS… --format FORMAT` in the interop fixtures.
fn lint(args: &[&str], format: &str) -> crate::Out {
    let mut all = vec!["lint"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", format]);
    run_in(&interop(), &all)
}

/// A file with three errors and a file with one warning, each in the five
/// formats; the line formats go to stdout, like `validate`'s.
#[test]
fn lint_renders_every_format() {
    let cases: [(&str, &[&str], i32); 2] = [
        (
            "deepspeed_floor",
            &["deepspeed", "deepspeed/floor_gas.json", "--world-size", "8"],
            1,
        ),
        (
            "hf_warmup",
            &["hf", "hf/warmup_ratio.yaml", "--num-processes", "4"],
            0,
        ),
    ];
    for (name, args, code) in cases {
        let mut snapshot = String::new();
        for format in ["human", "short", "json", "github", "sarif"] {
            let out = lint(args, format);
            assert_eq!(
                out.code, code,
                "{name} {format}: {}{}",
                out.stdout, out.stderr
            );
            snapshot.push_str(&format!(
                "--- {format} (stdout)\n{}--- {format} (stderr)\n{}",
                out.stdout, out.stderr
            ));
        }
        insta::assert_snapshot!(format!("lint_{name}"), snapshot);
    }
}

#[test]
fn deny_warnings_fails_on_a_warning_only() {
    let warned = ["hf", "hf/warmup_ratio.yaml", "--num-processes", "4"];
    let out = lint(&warned, "short");
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with("hf/warmup_ratio.yaml:9:15: warning[accum::interop::rounds]: "),
        "{}",
        out.stdout
    );
    let mut denied = warned.to_vec();
    denied.push("--deny-warnings");
    assert_eq!(lint(&denied, "short").code, 1);
    assert_eq!(lint(&denied, "github").code, 1);
}
