//! `accum calc` (`accum::plan::global-batch`, `accum::calc::tokens`, `accum::run::memory`, `accum::calc::scaling`).

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
fn two_by_eight_by_two() {
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
            "too large for this option",
        ),
        (&["calc", "-m", "-1", "-a", "1"], "error:"),
        (
            &["calc", "-m", "8", "-d", "64", "-B", "4000"],
            "use global_batch = 3584 (accumulation = 7)",
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
            "is not a whole count",
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

/// A ramp-up in stages: each stage's B, A, tokens per update, where it
/// starts and what it lasts; the last one to the run's end.
#[test]
fn stages_text() {
    insta::assert_snapshot!(stdout_of(&[
        "calc",
        "-m",
        "8",
        "-a",
        "16",
        "-d",
        "4",
        "-L",
        "2048",
        "--stage",
        "128:128k-examples",
        "--stage",
        "256:384k examples",
        "--total",
        "10B-tokens",
    ]));
}

/// Without `--total` the last stage lasts "to the end"; without `-L` there
/// are no token columns.
#[test]
fn stages_without_a_run_length_or_seq_len() {
    let text = stdout_of(&[
        "calc",
        "-m",
        "8",
        "-a",
        "16",
        "-d",
        "4",
        "--stage",
        "128:1000-updates",
    ]);
    assert!(
        text.contains(
            "batch ramp-up: 2 stages; m and D stay, A (so B) changes between updates\n  \
             stage  from update    B   A     updates    examples\n      \
             1            0  128   4       1,000     128,000\n      \
             2        1,000  512  16  to the end  to the end\n  \
             before the full batch: 1,000 updates, 128,000 examples\n"
        ),
        "{text}"
    );
}

/// The linear ramp of Megatron-LM's GPT-3 175B example
/// (`--rampup-batch-size 16 16 5859375`, i.e. over 12B tokens at L = 2,048),
/// here over 4B tokens: 95 increments of 16, each over 4B / 95 tokens.
#[test]
fn a_linear_ramp_in_json() {
    let json: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "calc",
        "-m",
        "1",
        "-a",
        "96",
        "--world-size",
        "2048",
        "--tensor",
        "8",
        "--pipeline",
        "16",
        "-L",
        "2048",
        "--ramp",
        "16:16:4B-tokens",
        "--total",
        "300B-tokens",
        "--format",
        "json",
    ]))
    .expect("json");
    let stages = json["stages"].as_array().expect("stages");
    assert_eq!(stages.len(), 96);
    let first = &stages[0];
    assert_eq!(
        (
            &first["stage"],
            &first["start_update"],
            &first["global_batch"],
            &first["accumulation"],
            &first["tokens_per_update"],
            &first["to_the_end"],
        ),
        (
            &1.into(),
            &0.into(),
            &16.into(),
            &1.into(),
            &32_768.into(),
            &false.into()
        )
    );
    // The batch grows once 4B / 95 = 42,105,263.2 tokens are consumed: after
    // ⌈42,105,263.2 / 32,768⌉ = 1,285 updates of 16 sequences.
    assert_eq!(first["lasts"]["updates"], 1285);
    assert_eq!(first["lasts"]["tokens"], 1285 * 32_768);
    assert_eq!(stages[1]["start_update"], 1285);
    assert_eq!(stages[1]["examples_before"], 1285 * 16);
    let last = &stages[95];
    assert_eq!(
        (&last["global_batch"], &last["to_the_end"]),
        (&1536.into(), &true.into())
    );
    // The ramp ends once more than 4B tokens are consumed.
    let ramp_tokens = json["ramp_up"]["tokens"].as_u64().expect("tokens");
    assert!((4_000_000_001..4_000_000_000 + 3_145_728).contains(&ramp_tokens));
    assert_eq!(json["ramp_up"]["updates"], last["start_update"]);
    // The run of 300B tokens: a partial last update counts.
    let run = &json["run"];
    assert_eq!(run["ends_in_stage"], 96);
    let run_tokens = run["tokens"].as_u64().expect("tokens");
    assert!((300_000_000_000..300_000_000_000 + 3_145_728).contains(&run_tokens));
    assert_eq!(
        last["lasts"]["updates"].as_u64().expect("updates")
            + last["start_update"].as_u64().expect("start"),
        run["updates"].as_u64().expect("updates")
    );
    // Without a ramp-up the keys are there, empty.
    let plain: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "calc", "-m", "2", "-a", "8", "-d", "2", "--format", "json",
    ]))
    .expect("json");
    assert_eq!(
        (&plain["stages"], &plain["ramp_up"], &plain["run"]),
        (
            &serde_json::Value::Null,
            &serde_json::Value::Null,
            &serde_json::Value::Null
        )
    );
}

#[test]
fn tokens_without_a_seq_len_say_which_conversion_failed_and_the_flag() {
    let base = ["calc", "-m", "8", "-a", "4", "-d", "2"];
    let cases: &[(&[&str], &str)] = &[
        (
            &["--total", "2M-tokens"],
            "error: --total: 2,000,000 tokens cannot be converted to updates: without a fixed seq_len the tokens of an update (T = B·L) are unknown; give -L/--seq-len when every example has the same number of tokens, or write --total in updates or examples\n",
        ),
        (
            &["--stage", "128:1M-tokens"],
            "error: --stage: stage 1: 1,000,000 tokens cannot be converted to updates: without a fixed seq_len the tokens of an update (T = B·L) are unknown; give -L/--seq-len when every example has the same number of tokens, or write --stage in updates or examples\n",
        ),
    ];
    for (extra, expected) in cases {
        let out = accum().args(base).args(*extra).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), *expected, "{extra:?}");
        assert!(out.stdout.is_empty(), "{extra:?}");
    }
    // With -L the same lengths resolve.
    let out = stdout_of(&[
        "calc",
        "-m",
        "8",
        "-a",
        "4",
        "-d",
        "2",
        "-L",
        "1000",
        "--total",
        "2M-tokens",
    ]);
    assert!(out.contains("the run (2M tokens)"), "{out}");
}

#[test]
fn ramp_up_mistakes_exit_2_with_the_fix() {
    let base = ["calc", "-m", "8", "-a", "16", "-d", "4"];
    let cases: &[(&[&str], &str)] = &[
        (
            &["--stage", "100:1k-examples"],
            "error: --stage: stage 1: global_batch 100 is not a multiple of micro_batch 8 × replicas 4 = 32; use 96 (accumulation 3) or 128 (accumulation 4)",
        ),
        (
            &["--stage", "128:1000-examples"],
            "error: --stage: stage 1 ends at 1k examples, which is not a whole number of its updates: it starts at 0 examples and one update is 128 examples; use until = \"896 examples\" or \"1024 examples\"",
        ),
        (
            &[
                "--stage",
                "128:128k-examples",
                "--stage",
                "256:100k-examples",
            ],
            "error: --stage: stage 2 ends at 100k examples, which is not after the previous stage's end at 128,000 examples",
        ),
        (
            &["--ramp", "100:4:300k-examples"],
            "error: --ramp: the ramp's start 100 is not a multiple of micro_batch 8 × replicas 4 = 32",
        ),
        (
            &["--ramp", "512:32:300k-examples"],
            "error: --ramp: the ramp starts at the final global batch 512: there is nothing to ramp",
        ),
        (&["--ramp", "32:32"], "is not START:INCREMENT:OVER"),
        (&["--stage", "128"], "`128` is not B:UNTIL"),
        (
            &["--stage", "128:2k-steps"],
            "\"steps\" can mean updates or microbatches",
        ),
        (
            &[
                "--stage",
                "128:128k-examples",
                "--ramp",
                "32:32:1k-examples",
            ],
            "cannot be used with",
        ),
        (&["--stage", "128:1M-tokens"], "without a fixed seq_len"),
    ];
    for (extra, needle) in cases {
        let out = accum().args(base).args(*extra).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{extra:?}");
    }
}

#[test]
fn help_teaches_the_ramp_up() {
    let help = stdout_of(&["calc", "--help"]);
    for needle in [
        "--stage <B:UNTIL>",
        "--ramp <START:INCREMENT:OVER>",
        "accum calc -m 8 -a 16 -d 4 -L 2048 --stage 128:128k-examples --stage 256:384k-examples",
        "--ramp 16:16:4B-tokens",
    ] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
}

/// Whether `actual` is what a page shows as `expected`: line by line, where
/// a line `…` stands for any number of lines left out.
fn shows(expected: &[&str], actual: &str) -> Result<(), String> {
    let actual: Vec<&str> = actual.lines().collect();
    let mut at = 0;
    let mut gap = false;
    for line in expected {
        if *line == "…" {
            gap = true;
            continue;
        }
        let found = if gap {
            actual[at..].iter().position(|a| a == line).map(|i| at + i)
        } else {
            (actual.get(at) == Some(line)).then_some(at)
        };
        match found {
            Some(i) => at = i + 1,
            None => return Err(format!("`{line}` is not where the page shows it")),
        }
        gap = false;
    }
    if !gap && at != actual.len() {
        return Err(format!("more output after line {at}"));
    }
    Ok(())
}

/// `docs/rampup.md`: every `$ accum …` example prints what the page shows
/// (run beside the ramp-up fixtures the page names), and every complete
/// config on the page validates.
#[test]
fn the_rampup_guide_runs() {
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rampup.md"),
    )
    .expect("docs/rampup.md");
    let dir = crate::fixtures().join("rampup");
    let scratch = crate::scratch("rampup-guide");
    let (mut commands, mut configs) = (0, 0);
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            continue;
        };
        let block: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        match lang {
            "console" => {
                let command = block[0].strip_prefix("$ accum ").expect("a command");
                let args: Vec<&str> = command.split_whitespace().collect();
                let out = crate::run_in(&dir, &args);
                if let Err(why) = shows(&block[1..], &format!("{}{}", out.stdout, out.stderr)) {
                    panic!("{command}: {why}\n{}{}", out.stdout, out.stderr);
                }
                commands += 1;
            }
            "toml" if block.contains(&"[batch]") => {
                let file = scratch.join(format!("config{configs}.toml"));
                std::fs::write(&file, block.join("\n")).expect("write");
                let out = crate::run_in(&scratch, &["validate", &file.display().to_string()]);
                assert_eq!(out.code, 0, "{}\n{}", block.join("\n"), out.stdout);
                configs += 1;
            }
            _ => {}
        }
    }
    assert!(
        commands >= 4 && configs >= 3,
        "{commands} commands, {configs} configs"
    );
}

/// `--span` says one length in every unit, through the stages of a ramp-up:
/// a warmup of 2,000 updates in microbatches, examples and tokens.
#[test]
fn a_span_in_every_unit_through_the_stages() {
    let out = stdout_of(&[
        "calc",
        "-m",
        "8",
        "-a",
        "16",
        "-d",
        "4",
        "-L",
        "2048",
        "--stage",
        "128:128k-examples",
        "--stage",
        "256:384k-examples",
        "--span",
        "2000-updates",
        "--span",
        "300000 examples",
    ]);
    assert!(
        out.contains(
            "2k updates through the stages   2,000 updates, 12,000 microbatches per replica, 384,000 examples, 786,432,000 tokens\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "300k examples through the stages   1,672 updates, 9,376 microbatches per replica, 300,032 examples, 614,465,536 tokens\n  ends inside update 1,672: the units above count that update whole\n"
        ),
        "{out}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "calc",
        "-m",
        "8",
        "-a",
        "4",
        "-d",
        "2",
        "--span",
        "100-updates",
        "--format",
        "json",
    ]))
    .expect("json");
    assert_eq!(
        json["spans"][0],
        serde_json::json!({
            "length": "100 updates", "updates": 100, "microbatches": 400,
            "examples": 6400, "tokens": null, "rounded": false
        })
    );
}

/// Parameters are read the same way by every option that takes them.
#[test]
fn params_take_every_form_of_a_count() {
    let forms = ["7000000000", "7B", "7e9"];
    let outs: Vec<String> = forms
        .iter()
        .map(|p| {
            stdout_of(&[
                "calc",
                "-m",
                "8",
                "-a",
                "4",
                "-d",
                "2",
                "--params",
                p,
                "--activation-per-example",
                "1GiB",
            ])
        })
        .collect();
    assert!(outs.iter().all(|o| o == &outs[0]), "{outs:?}");
    assert!(
        outs[0].contains("weights           26.08 GiB"),
        "{}",
        outs[0]
    );
    // Without the activations the estimate says what it needs.
    let out = accum()
        .args(["calc", "-m", "8", "-a", "4", "-d", "2", "--params", "1.3B"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(
        note.contains("also needs --activation-per-example SIZE"),
        "{note}"
    );
}

/// A misspelt unit on the command line gets the unit it most likely is.
#[test]
fn a_misspelt_unit_in_a_flag_gets_a_did_you_mean() {
    let out = accum()
        .args([
            "calc", "-m", "8", "-a", "4", "-d", "2", "--span", "2M-tokns",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("`tokns` in `2M tokns` is not a unit; did you mean \"2M tokens\"?"),
        "{said}"
    );
}
