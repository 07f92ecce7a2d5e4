//! The write policy, as an attacker's repository would test it: a shared
//! list of planted things ([`PLANTS`]: links out of the folder, a dangling
//! link, a link to a link, a FIFO, a folder, a hard link to a file outside)
//! sits at every name a command makes itself (plots beside a Markdown
//! sheet or comparison, `replan --in-place`'s backup, `run
//! --stream-stats`'s stream, a dump's lock and files, `init`'s schema), and
//! the file outside the folder must come out untouched, the command
//! refused with a message that names the file and the fix, and nothing
//! written (all or none). Then the modes of new and replaced files under
//! two umasks, and outputs that are one of the command's inputs, the files
//! read through a report included.
//!
//! The charts beside a sheet are listed from a clean run, so a new chart
//! is in the catalogue without a change here.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use crate::{Out, fixtures, names, run_in, scratch};

/// What an attacker plants at a name accum makes.
#[derive(Clone, Copy, Debug)]
enum Plant {
    /// A link to a file outside the folder, by its absolute path.
    AbsoluteLink,
    /// The same by `../`.
    RelativeLink,
    /// A link to a name outside that does not exist yet.
    DanglingLink,
    /// A link to a link outside, to the file.
    LinkToLink,
    /// A FIFO: opening it would block.
    Fifo,
    /// An empty folder.
    Folder,
    /// A hard link to the file outside.
    HardLink,
}

const PLANTS: [Plant; 7] = [
    Plant::AbsoluteLink,
    Plant::RelativeLink,
    Plant::DanglingLink,
    Plant::LinkToLink,
    Plant::Fifo,
    Plant::Folder,
    Plant::HardLink,
];

/// The bytes of the file outside the folder.
const SECRET: &str = "export PATH=/usr/bin # the user's shell startup file\n";

impl Plant {
    /// Plants `self` at `work/name`; the file outside is `root/outside/secret`.
    fn at(self, root: &Path, name: &str) {
        let at = root.join("work").join(name);
        let outside = root.join("outside");
        match self {
            Plant::AbsoluteLink => symlink(outside.join("secret"), &at),
            Plant::RelativeLink => symlink(Path::new("../outside/secret"), &at),
            Plant::DanglingLink => symlink(outside.join("missing"), &at),
            Plant::LinkToLink => symlink(outside.join("link"), &at),
            Plant::Fifo => {
                let status = StdCommand::new("mkfifo")
                    .arg(&at)
                    .status()
                    .expect("mkfifo runs");
                assert!(status.success(), "mkfifo {}", at.display());
                Ok(())
            }
            Plant::Folder => fs::create_dir(&at),
            Plant::HardLink => fs::hard_link(outside.join("secret"), &at),
        }
        .expect("planted");
    }

    /// What the refusal says about it.
    fn refusal(self) -> &'static str {
        match self {
            Plant::AbsoluteLink | Plant::RelativeLink | Plant::DanglingLink | Plant::LinkToLink => {
                "is a symbolic link, and accum follows no link at a name it chose"
            }
            Plant::Fifo => "is a FIFO, where accum writes a file at a name it chose",
            Plant::Folder => "is a directory, where accum writes a file at a name it chose",
            Plant::HardLink => "is a file accum did not write",
        }
    }
}

/// A folder `root` with `work/` (where the command runs) and `outside/`
/// (`secret`, and `link` to it).
fn layout(name: &str) -> PathBuf {
    let root = scratch(name);
    fs::create_dir(root.join("work")).expect("work");
    fs::create_dir(root.join("outside")).expect("outside");
    fs::write(root.join("outside/secret"), SECRET).expect("secret");
    symlink(root.join("outside/secret"), root.join("outside/link")).expect("link");
    root
}

/// The file outside is as it was, and nothing was made beside it.
fn outside_untouched(root: &Path, context: &str) {
    assert_eq!(
        fs::read_to_string(root.join("outside/secret")).expect("secret"),
        SECRET,
        "{context}"
    );
    assert_eq!(
        names(&root.join("outside")),
        ["link", "secret"],
        "{context}"
    );
}

/// Each name in `dir` with its bytes when it is a regular file (never a
/// FIFO's, which would block), to compare before and after a command.
fn snapshot(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    names(dir)
        .into_iter()
        .map(|n| {
            let path = dir.join(&n);
            let bytes = fs::symlink_metadata(&path)
                .is_ok_and(|m| m.is_file())
                .then(|| fs::read(&path).expect("a file"));
            (n, bytes)
        })
        .collect()
}

/// `tiny.toml` as `work/c.toml`, with whole groups only, so that every
/// framework exports it.
fn config(root: &Path) {
    let text = fs::read_to_string(fixtures().join("tiny.toml"))
        .expect("tiny.toml")
        .replace("examples = 60", "examples = 64");
    assert!(text.contains("examples = 64"));
    fs::write(root.join("work/c.toml"), text).expect("config");
}

/// Runs `args` in `work/` of a fresh layout with `prepare` done and each
/// plant at each of `derived`: refused with the plant's message naming the
/// file, the file outside untouched, and the folder as it was (all or
/// none).
fn refused_at_every_name(test: &str, prepare: &dyn Fn(&Path), args: &[&str], derived: &[String]) {
    assert!(!derived.is_empty(), "{test}: no derived names");
    for (i, name) in derived.iter().enumerate() {
        for plant in PLANTS {
            let root = layout(&format!("{test}-{i}-{plant:?}"));
            prepare(&root);
            plant.at(&root, name);
            let work = root.join("work");
            let before = snapshot(&work);
            let out = run_in(&work, args);
            let context = format!("{args:?} with {plant:?} at {name}: {}", out.stderr);
            assert_eq!(out.code, 2, "{context}");
            assert!(
                out.stderr.contains(&format!("{name}: {}", plant.refusal())),
                "{context}"
            );
            assert!(out.stderr.contains("then run again"), "the fix: {context}");
            outside_untouched(&root, &context);
            assert_eq!(before, snapshot(&work), "nothing written: {context}");
            let _ = fs::remove_dir_all(&root);
        }
    }
}

/// The `.svg` files a command writes beside `out` in a clean folder.
fn plots_of(test: &str, prepare: &dyn Fn(&Path), args: &[&str]) -> Vec<String> {
    let root = layout(&format!("{test}-clean"));
    prepare(&root);
    let out = run_in(&root.join("work"), args);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    let plots: Vec<String> = names(&root.join("work"))
        .into_iter()
        .filter(|n| n.ends_with(".svg"))
        .collect();
    let _ = fs::remove_dir_all(&root);
    plots
}

/// A run report `work/NAME.json` with its stats stream.
fn report(root: &Path, name: &str) {
    let report = format!("{name}.json");
    let out = run_in(
        &root.join("work"),
        &["run", "c.toml", "-q", "--report", &report, "--stream-stats"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_markdown_sheet_follows_no_link_at_its_plots() {
    let prepare = |root: &Path| {
        config(root);
        report(root, "r");
    };
    let args = ["sheet", "c.toml", "--report", "r.json", "-o", "s.md"];
    let plots = plots_of("writes-sheet", &prepare, &args);
    assert!(plots.len() >= 2, "{plots:?}");
    refused_at_every_name("writes-sheet", &prepare, &args, &plots);
}

#[test]
fn a_markdown_comparison_follows_no_link_at_its_plots() {
    let prepare = |root: &Path| {
        config(root);
        report(root, "a");
        fs::copy(root.join("work/a.json"), root.join("work/b.json")).expect("copy");
    };
    let args = ["compare", "a.json", "b.json", "-o", "cmp.md"];
    let plots = plots_of("writes-compare", &prepare, &args);
    refused_at_every_name("writes-compare", &prepare, &args, &plots);
}

#[test]
fn an_in_place_replan_follows_no_link_at_its_backup() {
    let prepare = |root: &Path| config(root);
    refused_at_every_name(
        "writes-replan",
        &prepare,
        &["replan", "c.toml", "--max-micro-batch", "2", "--in-place"],
        &["c.toml.bak".to_owned()],
    );
}

#[test]
fn a_stats_stream_follows_no_link_at_its_name() {
    let prepare = |root: &Path| config(root);
    refused_at_every_name(
        "writes-stream",
        &prepare,
        &[
            "run",
            "c.toml",
            "-q",
            "--report",
            "r.json",
            "--stream-stats",
        ],
        &["r.stats.jsonl".to_owned()],
    );
}

#[test]
fn a_sheet_replaces_its_own_plots_and_stream_but_no_other_file() {
    let root = layout("writes-own");
    config(&root);
    let work = root.join("work");
    // Written twice: the second time replaces what the first wrote.
    for _ in 0..2 {
        let out = run_in(&work, &["sheet", "c.toml", "-o", "s.md"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        report(&root, "r");
    }
    let plot = names(&work)
        .into_iter()
        .find(|n| n.ends_with(".svg"))
        .expect("a plot");
    let svg = fs::read_to_string(work.join(&plot)).expect("plot");
    assert!(svg.starts_with("<svg "), "{svg}");
    // A plot of the user's own, without accum's mark: kept, and the sheet
    // refused whole.
    fs::write(
        work.join(&plot),
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
    )
    .expect("own");
    fs::remove_file(work.join("s.md")).expect("remove");
    let out = run_in(&work, &["sheet", "c.toml", "-o", "s.md"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "{plot}: is a file accum did not write, and accum replaces none at a name it chose (a plot beside the Markdown sheet): move it away, then run again"
        )),
        "{}",
        out.stderr
    );
    assert!(!work.join("s.md").exists());
    outside_untouched(&root, "own files");
}

#[test]
fn a_dump_takes_its_folder_whole_and_follows_no_link_there() {
    for plant in PLANTS {
        // At a file name of the dump: the run removes what is there (the
        // link itself, never its target) and writes its own.
        let root = layout(&format!("writes-dump-{plant:?}"));
        config(&root);
        fs::create_dir(root.join("work/d")).expect("dump folder");
        plant.at(&root, "d/manifest.json");
        let out = run_in(&root.join("work"), &["run", "c.toml", "-q", "--dump", "d"]);
        let context = format!("{plant:?} at d/manifest.json: {}", out.stderr);
        assert_eq!(out.code, 0, "{context}");
        assert!(
            fs::symlink_metadata(root.join("work/d/manifest.json"))
                .expect("manifest")
                .is_file(),
            "{context}"
        );
        outside_untouched(&root, &context);
        let _ = fs::remove_dir_all(&root);
        // At the lock's name: anything but a regular file is refused; a
        // hard link is locked, never written.
        let root = layout(&format!("writes-dump-lock-{plant:?}"));
        config(&root);
        fs::create_dir(root.join("work/d")).expect("dump folder");
        plant.at(&root, "d/.accum-dump.lock");
        let out = run_in(&root.join("work"), &["run", "c.toml", "-q", "--dump", "d"]);
        let context = format!("{plant:?} at the lock: {}", out.stderr);
        match plant {
            Plant::HardLink => assert_eq!(out.code, 0, "{context}"),
            _ => {
                assert_eq!(out.code, 2, "{context}");
                assert!(
                    out.stderr
                        .contains("holds `.accum-dump.lock`, which is not a lock file accum made"),
                    "{context}"
                );
                assert_eq!(names(&root.join("work/d")), [".accum-dump.lock"]);
            }
        }
        outside_untouched(&root, &context);
        let _ = fs::remove_dir_all(&root);
    }
}

#[test]
fn init_writes_its_config_and_schema_only_where_nothing_is() {
    for plant in PLANTS {
        // At the config's name (the default one, which the user did not
        // type): never written over.
        let root = layout(&format!("writes-init-{plant:?}"));
        plant.at(&root, "accum.toml");
        let out = run_in(&root.join("work"), &["init"]);
        let context = format!("{plant:?} at accum.toml: {}", out.stderr);
        assert_eq!(out.code, 2, "{context}");
        // A folder is refused as an output name before `init` looks for
        // an existing file there.
        let refusal = match plant {
            Plant::Folder => "accum.toml: is a directory; give a file name",
            _ => "accum.toml: already exists; not overwritten",
        };
        assert!(out.stderr.contains(refusal), "{context}");
        assert_eq!(names(&root.join("work")), ["accum.toml"], "{context}");
        outside_untouched(&root, &context);
        let _ = fs::remove_dir_all(&root);
        // At the schema's name: a file there (through a link too) is kept
        // and not written; anything else refuses init before the config.
        let root = layout(&format!("writes-init-schema-{plant:?}"));
        plant.at(&root, "accum.schema.json");
        let out = run_in(&root.join("work"), &["init"]);
        let context = format!("{plant:?} at accum.schema.json: {}", out.stderr);
        match plant {
            Plant::AbsoluteLink | Plant::RelativeLink | Plant::LinkToLink | Plant::HardLink => {
                assert_eq!(out.code, 0, "{context}");
                assert!(out.stderr.contains("kept accum.schema.json"), "{context}");
                assert_eq!(
                    names(&root.join("work")),
                    ["accum.schema.json", "accum.toml"]
                );
            }
            Plant::DanglingLink | Plant::Fifo | Plant::Folder => {
                assert_eq!(out.code, 2, "{context}");
                assert!(
                    out.stderr.contains(
                        "accum.schema.json: is not a file, where accum writes the schema beside the config: move it away or give --no-schema"
                    ),
                    "{context}"
                );
                assert_eq!(names(&root.join("work")), ["accum.schema.json"]);
            }
        }
        outside_untouched(&root, &context);
        let _ = fs::remove_dir_all(&root);
    }
}

#[test]
fn a_named_output_through_a_link_writes_the_target_and_keeps_the_link() {
    let root = layout("writes-named");
    config(&root);
    let work = root.join("work");
    fs::create_dir(work.join("real")).expect("real");
    fs::write(work.join("real/s.html"), "old").expect("old");
    symlink("real/s.html", work.join("s.html")).expect("link");
    let out = run_in(&work, &["sheet", "c.toml", "-o", "s.html"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        fs::symlink_metadata(work.join("s.html"))
            .expect("link")
            .file_type()
            .is_symlink()
    );
    assert!(
        fs::read_to_string(work.join("real/s.html"))
            .expect("target")
            .contains("<html")
    );
}

/// Runs `args` in `dir` under `umask`, through `sh`.
fn under_umask(dir: &Path, umask: &str, args: &[&str]) -> Out {
    let out = StdCommand::new("sh")
        .arg("-c")
        .arg(format!("umask {umask}; exec \"$ACCUM\" \"$@\""))
        .arg("sh")
        .args(args)
        .current_dir(dir)
        .env("ACCUM", env!("CARGO_BIN_EXE_accum"))
        .env("NO_COLOR", "1")
        .output()
        .expect("sh runs");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).expect("exists").permissions().mode() & 0o7777
}

/// Every file under `dir`, folders walked.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).expect("list") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn new_files_take_the_umask_and_replaced_files_keep_their_mode() {
    for (umask, expected) in [("022", 0o644), ("077", 0o600)] {
        let root = layout(&format!("writes-umask-{umask}"));
        config(&root);
        let work = root.join("work");
        for args in [
            &["init", "i.toml"][..],
            &["schema", "-o", "schema.json"],
            &["sheet", "c.toml", "-o", "s.md"],
            &["sheet", "c.toml", "-o", "s.html"],
            &[
                "run",
                "c.toml",
                "-q",
                "--report",
                "r.json",
                "--stream-stats",
                "--dump",
                "d",
            ],
            &[
                "sheet", "c.toml", "--report", "r.json", "--format", "csv", "-o", "r.csv",
            ],
            &["run", "c.toml", "-q", "--report", "q.json"],
            &["compare", "r.json", "q.json", "-o", "cmp.md"],
            &["export", "deepspeed", "c.toml", "-o", "ds.json"],
            &[
                "import",
                "deepspeed",
                "ds.json",
                "--world-size",
                "2",
                "-o",
                "back.toml",
            ],
            &[
                "replan",
                "c.toml",
                "--max-micro-batch",
                "2",
                "-o",
                "new.toml",
            ],
            &["replan", "c.toml", "--max-micro-batch", "2", "--in-place"],
        ] {
            let out = under_umask(&work, umask, args);
            assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        }
        // Every file but the config the test copied, which accum replaced
        // in place (its mode is the next part's).
        let files: Vec<PathBuf> = files_under(&work)
            .into_iter()
            .filter(|f| f.file_name().is_some_and(|n| n != "c.toml"))
            .collect();
        assert!(files.len() >= 15, "{files:?}");
        for file in &files {
            assert_eq!(
                mode(file),
                expected,
                "umask {umask}: {} has {:o}",
                file.display(),
                mode(file)
            );
        }
        outside_untouched(&root, umask);
    }
    // A replaced file keeps its mode: a script its exec bit, a shared sheet
    // its group's read, a private report its privacy, whatever the umask.
    let root = layout("writes-kept");
    config(&root);
    let work = root.join("work");
    fs::set_permissions(work.join("c.toml"), fs::Permissions::from_mode(0o755)).expect("chmod");
    for (name, kept) in [("s.html", 0o664), ("r.json", 0o600), ("ds.sh", 0o750)] {
        fs::write(work.join(name), "old").expect("old");
        fs::set_permissions(work.join(name), fs::Permissions::from_mode(kept)).expect("chmod");
    }
    for args in [
        &["sheet", "c.toml", "-o", "s.html"][..],
        &["run", "c.toml", "-q", "--report", "r.json"],
        &["export", "megatron", "c.toml", "-o", "ds.sh"],
        &["replan", "c.toml", "--max-micro-batch", "2", "--in-place"],
    ] {
        let out = under_umask(&work, "077", args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
    assert_eq!(mode(&work.join("s.html")), 0o664);
    assert_eq!(mode(&work.join("r.json")), 0o600);
    assert_eq!(mode(&work.join("ds.sh")), 0o750);
    assert_eq!(mode(&work.join("c.toml")), 0o755);
    assert_eq!(mode(&work.join("c.toml.bak")), 0o600, "a new file");
    assert_ne!(
        fs::read_to_string(work.join("ds.sh")).expect("script"),
        "old"
    );
}

#[test]
fn an_output_is_none_of_the_inputs_read_through_a_report() {
    let root = layout("writes-inputs");
    config(&root);
    report(&root, "r");
    report(&root, "q");
    let work = root.join("work");
    fs::write(
        work.join("ds.json"),
        "{\"train_micro_batch_size_per_gpu\": 4, \"gradient_accumulation_steps\": 2, \"zero_optimization\": {\"stage\": 2}}\n",
    )
    .expect("ds");
    fs::write(
        work.join("train.yaml"),
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\ndeepspeed: ds.json\n",
    )
    .expect("recipe");
    // Other names of the same files (compared by device and inode): the
    // config at a stream's name and at an export's, the streams the
    // reports name at a CSV's, a sheet's and a JSON comparison's; and a
    // report at a plot's name.
    for (file, link) in [
        ("c.toml", "h.stats.jsonl"),
        ("c.toml", "x.json"),
        ("r.stats.jsonl", "r2.csv"),
        ("r.stats.jsonl", "r3.md"),
        ("q.stats.jsonl", "q2.json"),
    ] {
        fs::hard_link(work.join(file), work.join(link)).expect("hard link");
    }
    fs::copy(work.join("r.json"), work.join("p.loss.svg")).expect("copy");
    let before = snapshot(&work);
    for (args, input) in [
        (
            &[
                "sheet", "c.toml", "--report", "r.json", "--format", "csv", "-o", "r2.csv",
            ][..],
            "r2.csv: is the same file as ",
        ),
        (
            &["sheet", "c.toml", "--report", "r.json", "-o", "r3.md"],
            "r3.md: is the same file as ",
        ),
        (
            &["compare", "r.json", "q.json", "-o", "q2.json"],
            "q2.json: is the same file as ",
        ),
        (
            &[
                "compare", "r.json", "q.json", "--format", "json", "-o", "q.json",
            ],
            "q.json: is the file read",
        ),
        (
            &["sheet", "c.toml", "--report", "p.loss.svg", "-o", "p.md"],
            "p.loss.svg: is the file read",
        ),
        (
            &[
                "run",
                "c.toml",
                "-q",
                "--report",
                "h.json",
                "--stream-stats",
            ],
            "h.stats.jsonl: is the same file as c.toml",
        ),
        (
            &["export", "deepspeed", "c.toml", "-o", "x.json"],
            "x.json: is the same file as c.toml",
        ),
        (
            &[
                "import",
                "hf",
                "train.yaml",
                "--num-processes",
                "1",
                "-o",
                "ds.json",
            ],
            "ds.json: is ",
        ),
    ] {
        let out = run_in(&work, args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(input), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains(
                ", an input of this command; writing it would replace what was read: give another output path"
            ),
            "{args:?}: {}",
            out.stderr
        );
        assert_eq!(snapshot(&work), before, "{args:?}: nothing written");
    }
    outside_untouched(&root, "inputs");
}
