//! The repository's pre-commit hooks (`.pre-commit-hooks.yaml`), run by
//! pre-commit itself on a sample repository: `pre-commit try-repo` on this
//! checkout, so nothing is fetched from the network.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{fixtures, scratch, tool};

/// The workspace root, where `.pre-commit-hooks.yaml` is.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace holds accum-cli")
        .to_path_buf()
}

/// `PATH` with the `accum` under test first: the hooks run `accum` from it.
fn path_with_accum() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_accum"))
        .parent()
        .expect("the binary is in a directory")
        .to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest)))
        .expect("joinable PATH")
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `pre-commit try-repo ROOT HOOK --all-files` in `dir`: exit code and
/// everything it printed.
fn try_hook(pre_commit: &Path, dir: &Path, home: &Path, hook: &str) -> (i32, String) {
    let root = root();
    hook_command(
        pre_commit,
        dir,
        home,
        &["try-repo", root.to_str().expect("utf-8 path"), hook],
    )
}

/// pre-commit with `args`, on every file of the repository in `dir`.
fn hook_command(pre_commit: &Path, dir: &Path, home: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(pre_commit)
        .current_dir(dir)
        .args(args)
        .args(["--all-files", "--color", "never"])
        .env("PATH", path_with_accum())
        .env("PRE_COMMIT_HOME", home)
        .env("NO_COLOR", "1")
        .output()
        .expect("pre-commit runs");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// `pre-commit run HOOK --all-files` in `dir`, with the repository's own
/// `.pre-commit-config.yaml`.
fn run_hook(pre_commit: &Path, dir: &Path, home: &Path, hook: &str) -> (i32, String) {
    hook_command(pre_commit, dir, home, &["run", hook])
}

/// A sample repository with a good accum config, a broken one, a warned
/// one and a DeepSpeed file: each hook fails on what it should, names the
/// file and line, and passes once the files are mended.
#[test]
fn the_hooks_run_through_pre_commit() {
    let Some(pre_commit) = tool("pre-commit") else {
        return;
    };
    let dir = scratch("pre-commit");
    let home = dir.join(".cache");
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("configs")).expect("mkdir");
    git(&repo, &["init", "-q"]);
    git(&repo, &["config", "user.email", "ci@example.com"]);
    git(&repo, &["config", "user.name", "ci"]);
    let good = std::fs::read_to_string(fixtures().join("mistakes/good.toml")).expect("read");
    let broken = std::fs::read_to_string(fixtures().join("mistakes/global_batch_mismatch.toml"))
        .expect("read");
    std::fs::write(repo.join("accum.toml"), &good).expect("write");
    std::fs::write(repo.join("configs/accum-7b.toml"), &broken).expect("write");
    // Not an accum config by name: the hook leaves it alone.
    std::fs::write(repo.join("notes.toml"), "anything = [\n").expect("write");
    let ds = fixtures().join("../../../tests/fixtures/interop/deepspeed/floor_gas.json");
    std::fs::copy(&ds, repo.join("ds_config.json")).expect("copy");
    git(&repo, &["add", "."]);

    let (code, out) = try_hook(&pre_commit, &repo, &home, "accum-validate");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("accum validate"), "{out}");
    assert!(
        out.contains("error[accum::plan::global-batch]") && out.contains("configs/accum-7b.toml:"),
        "{out}"
    );
    assert!(out.contains("accum.toml: ok"), "{out}");
    assert!(!out.contains("notes.toml"), "{out}");

    // A warning fails the hook too (it runs with --deny-warnings).
    let warned = std::fs::read_to_string(fixtures().join("rampup/shift.toml")).expect("read");
    std::fs::write(repo.join("configs/accum-7b.toml"), warned).expect("write");
    git(&repo, &["add", "."]);
    let (code, out) = try_hook(&pre_commit, &repo, &home, "accum-validate");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("warning[accum::stages::shift]"), "{out}");

    std::fs::write(repo.join("configs/accum-7b.toml"), &good).expect("write");
    git(&repo, &["add", "."]);
    let (code, out) = try_hook(&pre_commit, &repo, &home, "accum-validate");
    assert_eq!(code, 0, "{out}");

    // The lint hook needs the launcher's world size, which a DeepSpeed file
    // does not hold: a repository gives it in `args`, here through a local
    // hook with the shipped hook's entry, language and files.
    let hooks: Vec<serde_json::Value> = serde_saphyr::from_str(
        &std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).expect("read"),
    )
    .expect("the hooks file is YAML");
    let lint = hooks
        .iter()
        .find(|h| h["id"] == "accum-lint")
        .expect("an accum-lint hook");
    assert_eq!(lint["args"], serde_json::json!(["deepspeed"]));
    let config = format!(
        "repos:\n- repo: local\n  hooks:\n  - id: accum-lint\n    name: accum lint\n    \
         entry: {}\n    language: {}\n    files: '{}'\n    args: [deepspeed, --world-size, \"8\"]\n",
        lint["entry"].as_str().expect("entry"),
        lint["language"].as_str().expect("language"),
        lint["files"].as_str().expect("files"),
    );
    std::fs::write(repo.join(".pre-commit-config.yaml"), config).expect("write");
    git(&repo, &["add", "."]);
    let (code, out) = run_hook(&pre_commit, &repo, &home, "accum-lint");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("ds_config.json:7:23") && out.contains("DeepSpeed would floor"),
        "{out}"
    );
    let fixed = std::fs::read_to_string(&ds)
        .expect("read")
        .replace("30", "32");
    std::fs::write(repo.join("ds_config.json"), fixed).expect("write");
    git(&repo, &["add", "."]);
    let (code, out) = run_hook(&pre_commit, &repo, &home, "accum-lint");
    assert_eq!(code, 0, "{out}");
}
