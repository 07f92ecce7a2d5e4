//! Paths named inside an input (a Trainer recipe's `deepspeed:`, an
//! Accelerate config's `deepspeed_config_file`) are read only inside the
//! input's repository, or a folder given with `--allow-path`; only regular
//! files, within the size limit; a refusal is a located finding that quotes
//! nothing of the refused file. The catalogue is made at test time: a
//! repository (`repo/`, with `.git`) beside a secret and an outside folder,
//! and recipes that name files inside it, out of it by every way there is,
//! and things that are not files. `lint` and `import` run on them under
//! `strace`, and no `open` may reach outside the repository.

use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::Duration;

use assert_cmd::Command;

use crate::hostile::bounded;
use crate::{scratch, tool};

/// What the secret beside the repository holds: it must never be printed.
const SECRET: &str = "OUTSIDE-SECRET-7f3a";

/// A DeepSpeed file that agrees with the recipes.
const DS: &str = "{\"train_micro_batch_size_per_gpu\": 4, \"gradient_accumulation_steps\": 2, \"zero_optimization\": {\"stage\": 0}}\n";

/// A Trainer recipe naming `deepspeed` (line 4, the value at column 12).
fn recipe(deepspeed: &str) -> String {
    format!(
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\naverage_tokens_across_devices: true\ndeepspeed: {deepspeed}\n"
    )
}

/// The catalogue's folder, and the recipe names with what each must say
/// (`None`: the file is read and nothing is refused).
struct Catalogue {
    dir: PathBuf,
    repo: PathBuf,
    cases: Vec<(&'static str, Option<&'static str>)>,
}

fn catalogue(name: &str) -> Catalogue {
    let dir = scratch(name);
    let repo = dir.join("repo");
    for folder in [
        "repo/.git",
        "repo/configs/folder.json",
        "repo/recipes",
        "outside",
    ] {
        fs::create_dir_all(dir.join(folder)).expect("folder");
    }
    fs::write(
        dir.join("secret.json"),
        format!("{{\"train_batch_size\": \"{SECRET}\"}}\n"),
    )
    .expect("secret");
    fs::write(dir.join("outside/ds.json"), DS).expect("outside");
    fs::write(repo.join("configs/ds.json"), DS).expect("inside");
    std::os::unix::fs::symlink(dir.join("secret.json"), repo.join("configs/link_out.json"))
        .expect("link");
    std::os::unix::fs::symlink("../..", repo.join("configs/up")).expect("folder link");
    fs::File::create(repo.join("configs/big.json"))
        .and_then(|f| f.set_len(100 << 20))
        .expect("a sparse 100 MiB file");
    let fifo = StdCommand::new("mkfifo")
        .arg(repo.join("configs/pipe.json"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(fifo, "mkfifo is needed for this test");
    let secret = dir.join("secret.json").display().to_string();
    let cases: Vec<(&'static str, String, Option<&'static str>)> = vec![
        ("inside", "configs/ds.json".into(), None),
        ("inside_dots", "recipes/../configs/ds.json".into(), None),
        (
            "parent",
            "../secret.json".into(),
            Some("is outside the repository"),
        ),
        (
            "grandparent",
            "../../secret.json".into(),
            Some("is outside the repository"),
        ),
        (
            "sub_dots",
            "configs/../../secret.json".into(),
            Some("is outside the repository"),
        ),
        ("absolute", secret, Some("is outside the repository")),
        (
            "passwd",
            "/etc/passwd".into(),
            Some("is outside the repository"),
        ),
        (
            "kmsg",
            "/proc/kmsg".into(),
            Some("is outside the repository"),
        ),
        (
            "link_out",
            "configs/link_out.json".into(),
            Some("is outside the repository"),
        ),
        (
            "folder_link",
            "configs/up/secret.json".into(),
            Some("is outside the repository"),
        ),
        (
            "outside_folder",
            "../outside/ds.json".into(),
            Some("is outside the repository"),
        ),
        (
            "fifo",
            "configs/pipe.json".into(),
            Some("not a regular file"),
        ),
        (
            "directory",
            "configs/folder.json".into(),
            Some("is a directory"),
        ),
        (
            "huge",
            "configs/big.json".into(),
            Some("larger than the 4194304-byte limit"),
        ),
        (
            "newline",
            "\"configs/ds\\n.json\"".into(),
            Some("control character (U+000A)"),
        ),
        (
            "nul",
            "\"configs/ds\\0.json\"".into(),
            Some("control character (U+0000)"),
        ),
        ("missing", "configs/none.json".into(), Some("is not found")),
    ];
    for (name, deepspeed, _) in &cases {
        fs::write(repo.join(format!("recipes/{name}.yaml")), recipe(deepspeed)).expect("recipe");
    }
    // An Accelerate config that names the secret, and a recipe without
    // `deepspeed:` launched with it.
    fs::write(
        repo.join("accelerate.yaml"),
        "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  deepspeed_config_file: ../secret.json\n",
    )
    .expect("accelerate");
    fs::write(
        repo.join("recipes/launched.yaml"),
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\naverage_tokens_across_devices: true\n",
    )
    .expect("recipe");
    Catalogue {
        dir,
        repo,
        cases: cases.into_iter().map(|(n, _, e)| (n, e)).collect(),
    }
}

/// What no output may hold: the secret, a line of /etc/passwd.
fn quotes_nothing(what: &str, all: &str) {
    assert!(
        !all.contains(SECRET),
        "{what}: the secret is quoted:\n{all}"
    );
    assert!(
        !all.contains("root:x:"),
        "{what}: /etc/passwd is quoted:\n{all}"
    );
    assert!(!all.contains("panicked"), "{what}: {all}");
}

#[test]
fn files_named_inside_a_recipe_are_read_only_inside_its_repository() {
    let c = catalogue("named-catalogue");
    for (name, expected) in &c.cases {
        let file = format!("recipes/{name}.yaml");
        let short = bounded(
            &c.repo,
            &[
                "lint",
                "hf",
                &file,
                "--num-processes",
                "2",
                "--format",
                "short",
            ],
        );
        let human = bounded(&c.repo, &["lint", "hf", &file, "--num-processes", "2"]);
        let json = bounded(
            &c.repo,
            &[
                "lint",
                "hf",
                &file,
                "--num-processes",
                "2",
                "--format",
                "json",
            ],
        );
        let all = format!(
            "{}{}{}{}{}{}",
            short.stdout, short.stderr, human.stdout, human.stderr, json.stdout, json.stderr
        );
        // A file not read is a warning: the batch is the recipe's.
        assert_eq!(short.code, 0, "{name}: {all}");
        assert_eq!(human.code, 0, "{name}: {all}");
        quotes_nothing(name, &all);
        match expected {
            None => assert!(!all.contains("accum::interop::file"), "{name}: {all}"),
            Some(needle) => {
                let located = format!("{file}:4:12: warning[accum::interop::file]: ");
                assert!(
                    short.stdout.contains(&located),
                    "{name}: not located: {all}"
                );
                assert!(
                    short.stdout.contains(needle),
                    "{name}: expected `{needle}`: {all}"
                );
                let findings: serde_json::Value =
                    serde_json::from_str(&json.stdout).expect("lint's JSON");
                let file_finding = findings["findings"]
                    .as_array()
                    .and_then(|all| all.iter().find(|f| f["code"] == "accum::interop::file"))
                    .unwrap_or_else(|| panic!("{name}: no finding in JSON: {all}"));
                assert_eq!(file_finding["line"], 4, "{name}: {file_finding}");
                assert_eq!(
                    file_finding["file"],
                    file.as_str(),
                    "{name}: {file_finding}"
                );
                if needle.contains("outside") {
                    assert!(human.stderr.contains("--allow-path DIR"), "{name}: {all}");
                }
            }
        }
    }
}

#[test]
fn a_file_an_accelerate_config_names_is_refused_at_its_key() {
    let c = catalogue("named-accelerate");
    let out = bounded(
        &c.repo,
        &[
            "lint",
            "hf",
            "recipes/launched.yaml",
            "--accelerate-config",
            "accelerate.yaml",
            "--format",
            "short",
        ],
    );
    let all = format!("{}{}", out.stdout, out.stderr);
    quotes_nothing("accelerate", &all);
    assert!(
        out.stdout.contains(
            "accelerate.yaml:4:26: warning[accum::interop::file]: the DeepSpeed file `../secret.json` is outside the repository of the Accelerate config"
        ),
        "{all}"
    );
}

#[test]
fn allow_path_widens_where_named_files_are_read() {
    let c = catalogue("named-allow");
    // A DeepSpeed file outside the repository that disagrees with the
    // recipe: read, it is an error.
    fs::write(
        c.dir.join("outside/mismatch.json"),
        "{\"gradient_accumulation_steps\": 3, \"zero_optimization\": {\"stage\": 0}}\n",
    )
    .expect("outside");
    fs::write(
        c.repo.join("recipes/allowed.yaml"),
        recipe("../outside/mismatch.json"),
    )
    .expect("recipe");
    let file = "recipes/allowed.yaml";
    let refused = bounded(&c.repo, &["import", "hf", file, "--num-processes", "2"]);
    assert_eq!(refused.code, 0, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("is outside the repository"),
        "{}",
        refused.stderr
    );
    let allowed = bounded(
        &c.repo,
        &[
            "import",
            "hf",
            file,
            "--num-processes",
            "2",
            "--allow-path",
            "../outside",
        ],
    );
    assert_eq!(allowed.code, 1, "{}", allowed.stderr);
    assert!(
        !allowed.stderr.contains("accum::interop::file"),
        "{}",
        allowed.stderr
    );
    assert!(
        allowed
            .stderr
            .contains("ds gradient_accumulation_steps=3 vs hf gradient_accumulation_steps=2"),
        "{}",
        allowed.stderr
    );
    for command in ["lint", "import"] {
        let help = bounded(&c.repo, &[command, "--help"]);
        assert!(
            help.stdout.contains("--allow-path <DIR>"),
            "{}",
            help.stdout
        );
        assert!(help.stdout.contains("/etc/passwd"), "{}", help.stdout);
    }
}

/// Findings on a file the user did not name show only the line of their
/// key: two mismatches three lines apart used to show both lines (and, with
/// fewer lines between, those too).
#[test]
fn findings_on_a_named_file_quote_one_line_each() {
    let c = catalogue("named-one-line");
    fs::write(
        c.repo.join("configs/ds.json"),
        "{\n  \"train_batch_size\": 999,\n  \"note\": \"MARKER\",\n  \"gradient_accumulation_steps\": 3,\n  \"zero_optimization\": {\"stage\": 0}\n}\n",
    )
    .expect("ds");
    let out = bounded(
        &c.repo,
        &["lint", "hf", "recipes/inside.yaml", "--num-processes", "2"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("ds train_batch_size=999"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("\"train_batch_size\": 999"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("MARKER"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("\"gradient_accumulation_steps\": 3"),
        "{}",
        out.stderr
    );
}

/// A path as `strace` shows it, made absolute from `cwd` and with `.` and
/// `..` taken out by their names (as the kernel would, links aside: a link
/// the test planted is checked by its own name).
fn absolute(cwd: &Path, shown: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for part in cwd.join(shown).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The paths a `strace -e trace=open,openat,openat2` log shows opened or
/// tried (the first quoted argument of each call).
fn opened(log: &str) -> Vec<String> {
    log.lines()
        .filter(|line| line.contains("open"))
        .filter_map(|line| {
            let start = line.find('"')? + 1;
            let end = start + line[start..].find('"')?;
            Some(line[start..end].to_owned())
        })
        .collect()
}

#[test]
fn lint_and_import_open_nothing_outside_the_repository() {
    let Some(strace) = tool("strace") else {
        return;
    };
    let c = catalogue("named-strace");
    let real_dir = fs::canonicalize(&c.dir).expect("real");
    let real_repo = real_dir.join("repo");
    // What the test planted outside, and the files that are not to be
    // opened at all. Everything else a process opens (its libraries,
    // /proc/self, locale files, the inputs) is its own business.
    let forbidden = |path: &Path| {
        let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        (real.starts_with(&real_dir) && !real.starts_with(&real_repo))
            || (path.starts_with(&c.dir) && !path.starts_with(&c.repo))
            || real == Path::new("/etc/passwd")
            || real == Path::new("/proc/kmsg")
            || path.ends_with("configs/pipe.json")
            || path.ends_with("configs/link_out.json")
            || path.ends_with("configs/up/secret.json")
    };
    let recipes: Vec<String> = c
        .cases
        .iter()
        .map(|(name, _)| format!("recipes/{name}.yaml"))
        .collect();
    let mut runs: Vec<Vec<String>> = Vec::new();
    let mut lint = vec!["lint".to_owned(), "hf".to_owned()];
    lint.extend(recipes.iter().cloned());
    lint.extend(["--num-processes".to_owned(), "2".to_owned()]);
    runs.push(lint);
    for file in &recipes {
        runs.push(
            ["import", "hf", file, "--num-processes", "2"]
                .map(str::to_owned)
                .to_vec(),
        );
    }
    runs.push(
        [
            "import",
            "hf",
            "recipes/launched.yaml",
            "--accelerate-config",
            "accelerate.yaml",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    let log = c.dir.join("strace.log");
    let mut checked = 0;
    for args in &runs {
        let out = Command::new(&strace)
            .current_dir(&c.repo)
            .env("NO_COLOR", "1")
            .args(["-f", "-e", "trace=open,openat,openat2", "-o"])
            .arg(&log)
            .arg(env!("CARGO_BIN_EXE_accum"))
            .args(args)
            .timeout(Duration::from_secs(60))
            .output()
            .expect("strace runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        assert!(
            matches!(code, Some(0..=2)),
            "{args:?} under strace: {code:?} {stderr}"
        );
        assert!(
            !stderr.contains("strace:"),
            "strace cannot trace here: {stderr}"
        );
        quotes_nothing(
            &args.join(" "),
            &format!("{}{stderr}", String::from_utf8_lossy(&out.stdout)),
        );
        let text = fs::read_to_string(&log).expect("strace's log");
        let paths = opened(&text);
        assert!(
            paths.iter().any(|p| p.ends_with(".yaml")),
            "{args:?}: the log shows no input opened:\n{text}"
        );
        for shown in &paths {
            let path = absolute(&c.repo, shown);
            assert!(
                !forbidden(&path),
                "{args:?} opened {shown}, outside the repository:\n{text}"
            );
            checked += 1;
        }
    }
    eprintln!("{checked} opens checked in {} runs", runs.len());
}
