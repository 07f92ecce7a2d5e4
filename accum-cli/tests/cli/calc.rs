//! `accum calc` (SPEC R3, R15–R17).

use crate::accum;

fn stdout_of(args: &[&str]) -> String {
    let out = accum().args(args).output().expect("runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn seed_example_text() {
    insta::assert_snapshot!(stdout_of(&[
        "calc", "-m", "8", "-d", "64", "-a", "4", "-L", "4096"
    ]));
}

#[test]
fn seed_example_long_flags_json_keys() {
    let text = stdout_of(&[
        "calc",
        "--micro-batch",
        "8",
        "--data-parallel",
        "64",
        "--accum-steps",
        "4",
        "--seq-len",
        "4096",
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(json["micro_batch"], 8);
    assert_eq!(json["accumulation"], 4);
    assert_eq!(json["replicas"], 64);
    assert_eq!(json["effective_batch"], 2048);
    assert_eq!(json["seq_len"], 4096);
    assert_eq!(json["tokens_per_update"], 8_388_608);
    assert_eq!(json["examples_per_replica_per_update"], 32);
}

#[test]
fn r3_two_by_eight_by_two() {
    let json: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "calc", "-m", "2", "-a", "8", "-d", "2", "--format", "json",
    ]))
    .expect("json");
    assert_eq!(json["effective_batch"], 32);
    assert_eq!(json["examples_per_replica_per_update"], 16);
}

#[test]
fn layout_text() {
    insta::assert_snapshot!(stdout_of(&[
        "calc",
        "-m",
        "4",
        "-a",
        "8",
        "--world-size",
        "64",
        "--tensor",
        "2",
        "--pipeline",
        "2",
    ]));
}

#[test]
fn global_batch_solves_accumulation() {
    let json: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "calc",
        "-m",
        "8",
        "-d",
        "64",
        "--global-batch",
        "4096",
        "--format",
        "json",
    ]))
    .expect("json");
    assert_eq!(json["accumulation"], 8);
    assert_eq!(json["solved"], "accumulation");
    assert_eq!(
        json["formula"]["solved"],
        "A = B / (m·D) = 4,096 / (8 × 64) = 8"
    );
}

#[test]
fn memory_and_scaling_text() {
    insta::assert_snapshot!(stdout_of(&[
        "calc",
        "-m",
        "8",
        "-d",
        "8",
        "-a",
        "4",
        "--params",
        "1.3e9",
        "--precision",
        "bf16",
        "--activation-per-example",
        "1.5GiB",
        "--device-throughput",
        "12",
        "--bandwidth",
        "50GB",
    ]));
}

#[test]
fn bad_input_exits_2_with_one_line_reason() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["calc", "-m", "0", "-a", "4"],
            "error: -m/--micro-batch: micro_batch is 0",
        ),
        (
            &["calc", "-m", "8", "-a", "0"],
            "error: -a/--accum-steps: accumulation is 0",
        ),
        (
            &["calc", "-m", "8", "-a", "1", "-d", "0"],
            "error: -d/--data-parallel: replicas is 0",
        ),
        (
            &["calc", "-m", "4294967296", "-a", "4294967296", "-d", "2"],
            "does not fit in a 64-bit count",
        ),
        (
            &["calc", "-m", "18446744073709551616", "-a", "1"],
            "number too large",
        ),
        (&["calc", "-m", "-1", "-a", "1"], "error:"),
        (
            &["calc", "-m", "8", "-d", "64", "-B", "4000"],
            "use global_batch 3,584 (accumulation 7)",
        ),
        (
            &[
                "calc",
                "-m",
                "2",
                "-a",
                "1",
                "--world-size",
                "64",
                "--tensor",
                "3",
                "--pipeline",
                "2",
            ],
            "world_size 64 is not divisible",
        ),
        (
            &["calc", "-m", "2", "-a", "1", "-d", "2", "--world-size", "4"],
            "cannot be used with",
        ),
        (
            &[
                "calc",
                "-m",
                "1",
                "-a",
                "1",
                "-L",
                "18446744073709551615",
                "-d",
                "2",
            ],
            "does not fit in a 64-bit count",
        ),
        (
            &["calc", "-m", "8"],
            "-a/--accum-steps: accumulation is missing",
        ),
        (
            &[
                "calc",
                "-m",
                "1",
                "-a",
                "1",
                "--params",
                "1e400",
                "--activation-per-example",
                "1",
            ],
            "not a whole non-negative count",
        ),
    ];
    for (args, needle) in cases {
        let out = accum().args(*args).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_teaches_with_examples() {
    let help = stdout_of(&["calc", "--help"]);
    assert!(
        help.contains("accum calc -m 8 -d 64 -a 4 -L 4096"),
        "{help}"
    );
    assert!(help.contains("--world-size"), "{help}");
}
