//! Files named inside an input: a Trainer recipe's `deepspeed: ds.json`,
//! an Accelerate config's `deepspeed_config_file`. accum runs on
//! repositories somebody else wrote (pre-commit, CI on pull requests), so
//! such a name is untrusted, unlike a path typed on the command line. Every
//! read of one goes through [`Lookup::read`]:
//!
//! - **Where.** Within the input's repository root ([`repository_root`]:
//!   the nearest folder above the input that holds `.git`, else the input's
//!   own folder), and the folders allowed with `--allow-path`. A candidate
//!   is resolved first (`..` and every link, [`fs::canonicalize`]) and only
//!   then compared with the roots (resolved too), so `../../x`,
//!   `sub/../../x`, `/etc/passwd` and a link that leads out are refused
//!   alike, before anything is opened.
//! - **What.** A regular file, never a directory, FIFO, socket or device:
//!   the type is checked before opening (a device is never opened), then
//!   again on the opened handle, which is opened with `O_NONBLOCK` (a FIFO
//!   swapped in cannot block) and `O_NOFOLLOW`. At most `limit` bytes are
//!   read, through a bound that does not trust the reported size (procfs
//!   files report 0).
//! - **Names** holding a control character (a NUL, a newline) are refused
//!   before any look at the file system.
//! - **Refusals** ([`Refusal`]) say why and the fix, never the content.
//! - **Findings** about a file read this way show only the line of their
//!   key ([`one_line`]): the user did not name that file.

use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::{LoadError, read_opened};
use crate::diagnostic::Diagnostic;

/// The repository `input` is in: the nearest folder above it (its own
/// first) that holds `.git` (a folder, or the file of a worktree or a
/// submodule), else its own folder; resolved. `None` when the input cannot
/// be resolved (it does not exist).
pub(crate) fn repository_root(input: &Path) -> Option<PathBuf> {
    let folder = fs::canonicalize(input).ok()?.parent()?.to_owned();
    // `symlink_metadata`: whether `.git` is there, without opening it or
    // following it.
    let root = folder
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .unwrap_or(&folder)
        .to_owned();
    Some(root)
}

/// The folders a name inside `input` is looked for in, in order: the
/// working directory (the framework opens a relative name there), then
/// the input's folder and its ancestors up to `root` (a recipe names files
/// from its repository's root). As written, for messages; the ones outside
/// the roots are skipped by [`Lookup::read`].
pub(crate) fn search_dirs(input: &Path, root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from(".")];
    let mut dir = input.parent();
    while let Some(d) = dir {
        let d = if d.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            d.to_owned()
        };
        let inside = fs::canonicalize(&d).is_ok_and(|real| real.starts_with(root));
        if !inside {
            break;
        }
        if !dirs.contains(&d) {
            dirs.push(d);
        }
        dir = dir.and_then(Path::parent);
    }
    dirs
}

/// Where the files named inside an input are looked for, and where they
/// may be read from.
#[derive(Clone, Debug)]
pub(crate) struct Lookup {
    /// The folders a relative name is joined to, in order.
    dirs: Vec<PathBuf>,
    /// The folders a file may be read from, resolved.
    roots: Vec<PathBuf>,
}

/// A file named inside an input, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The path as found (a search folder joined with the name), for findings.
    pub(crate) shown: PathBuf,
    /// Its text.
    pub(crate) text: String,
}

/// Why a file named inside an input was not read. None of them holds
/// anything read from the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The name holds a control character (its code point).
    ControlCharacter(u32),
    /// It leads outside every allowed folder.
    Outside {
        /// The candidate as written.
        shown: PathBuf,
        /// Where it leads, resolved.
        real: PathBuf,
    },
    /// No candidate exists.
    NotFound {
        /// Every place tried.
        tried: Vec<PathBuf>,
    },
    /// It is found, inside, but is not read: a directory, a pipe, a
    /// device, too large, not UTF-8 (`reason` says which, with the fix).
    Unreadable {
        /// The candidate as written.
        shown: PathBuf,
        /// Why, with the fix.
        reason: String,
    },
}

impl Lookup {
    /// Looks in `dirs` (in order); reads only within `allowed` (the input's
    /// repository root and the `--allow-path` folders). An allowed folder
    /// that does not exist allows nothing.
    pub(crate) fn new(dirs: Vec<PathBuf>, allowed: &[PathBuf]) -> Lookup {
        let roots = allowed
            .iter()
            .filter_map(|dir| fs::canonicalize(dir).ok())
            .collect();
        Lookup { dirs, roots }
    }

    /// Whether a resolved path is inside an allowed folder.
    fn allows(&self, real: &Path) -> bool {
        self.roots.iter().any(|root| real.starts_with(root))
    }

    /// Reads the file `name` names: the first candidate (the name itself
    /// when absolute, else each folder joined with it) that exists inside
    /// the allowed folders. Candidates outside are skipped without being
    /// opened; when one exists and none inside does, the answer is
    /// [`Refusal::Outside`].
    pub(crate) fn read(&self, name: &str, limit: u64) -> Result<Found, Refusal> {
        if let Some(c) = name.chars().find(|c| c.is_control()) {
            return Err(Refusal::ControlCharacter(u32::from(c)));
        }
        let given = Path::new(name);
        let candidates: Vec<PathBuf> = if given.is_absolute() {
            vec![given.to_owned()]
        } else {
            self.dirs.iter().map(|dir| dir.join(given)).collect()
        };
        let mut outside = None;
        for shown in &candidates {
            // A name that does not resolve (missing, a dangling link, a
            // loop) is not there.
            let Ok(real) = fs::canonicalize(shown) else {
                continue;
            };
            if !self.allows(&real) {
                outside.get_or_insert_with(|| Refusal::Outside {
                    shown: shown.clone(),
                    real,
                });
                continue;
            }
            return read_regular(&real, shown, limit).map(|text| Found {
                shown: shown.clone(),
                text,
            });
        }
        Err(outside.unwrap_or(Refusal::NotFound { tried: candidates }))
    }
}

/// Reads the regular file at `real` (resolved), shown as `shown`.
pub(crate) fn read_regular(real: &Path, shown: &Path, limit: u64) -> Result<String, Refusal> {
    let unreadable = |err: LoadError| Refusal::Unreadable {
        shown: shown.to_owned(),
        reason: err.reason(),
    };
    let io = |reason: String| {
        unreadable(LoadError::Io {
            path: shown.to_owned(),
            reason,
        })
    };
    // Checked before opening, so that a device is never opened; the handle
    // is checked again by `read_opened`, so a file swapped in between is
    // refused without blocking.
    let meta = fs::metadata(real).map_err(|err| io(super::describe_io(&err)))?;
    super::regular(&meta).map_err(io)?;
    let file = accum_core::fsio::open_input(real, accum_core::fsio::Links::Refused)
        .map_err(|err| io(super::describe_io(&err)))?;
    read_opened(file, shown, limit).map_err(unreadable)
}

/// The findings about a file the user did not name, cut to the line of
/// their key: the primary range ends with its line, and other labelled
/// places on other lines are left out, so that the rendering quotes that
/// one line and nothing else of the file.
pub(crate) fn one_line(text: &str, diagnostics: &[Diagnostic]) -> Vec<Diagnostic> {
    let bytes = text.as_bytes();
    diagnostics
        .iter()
        .map(|d| {
            let mut d = d.clone();
            if let Some(range) = d.location.range.clone() {
                let start = range.start.min(bytes.len());
                let line: Range<usize> = bytes[..start]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1)
                    ..bytes[start..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(bytes.len(), |i| start + i);
                d.location.range = Some(range.start..range.end.clamp(start, line.end));
                d.retain_related(|r| r.start >= line.start && r.end <= line.end);
            }
            d
        })
        .collect()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use accum_core::Code;

    /// A scratch folder: `repo/` (with `.git`) holding `recipes/`, and a
    /// secret beside the repository.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("accum-named-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("repo/.git")).expect("repo");
        fs::create_dir_all(dir.join("repo/recipes/sub")).expect("recipes");
        fs::write(dir.join("repo/ds.json"), "{}").expect("ds");
        fs::write(dir.join("secret.json"), "{\"token\": \"s3cr3t\"}").expect("secret");
        dir
    }

    fn lookup(dir: &Path, allowed: &[PathBuf]) -> Lookup {
        let recipe = dir.join("repo/recipes/a.yaml");
        fs::write(&recipe, "deepspeed: x\n").expect("recipe");
        let root = repository_root(&recipe).expect("a root");
        let mut all = vec![root.clone()];
        all.extend_from_slice(allowed);
        Lookup::new(search_dirs(&recipe, &root), &all)
    }

    #[test]
    fn the_root_is_the_nearest_folder_with_git_else_the_inputs_folder() {
        let dir = scratch("root");
        let real = fs::canonicalize(&dir).expect("real");
        let recipe = dir.join("repo/recipes/sub/a.yaml");
        fs::write(&recipe, "").expect("recipe");
        assert_eq!(repository_root(&recipe), Some(real.join("repo")));
        // A `.git` file (a worktree, a submodule) counts too.
        fs::write(dir.join("repo/recipes/.git"), "gitdir: ../.git\n").expect("git file");
        assert_eq!(repository_root(&recipe), Some(real.join("repo/recipes")));
        let alone = dir.join("alone.yaml");
        fs::write(&alone, "").expect("alone");
        // No `.git` above the scratch folder in a temporary folder: the
        // input's own folder.
        if real.ancestors().all(|a| !a.join(".git").exists()) {
            assert_eq!(repository_root(&alone), Some(real.clone()));
        }
        assert_eq!(repository_root(&dir.join("missing.yaml")), None);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn search_folders_stop_at_the_root() {
        let dir = scratch("search");
        let recipe = dir.join("repo/recipes/sub/a.yaml");
        fs::write(&recipe, "").expect("recipe");
        let root = repository_root(&recipe).expect("root");
        let dirs = search_dirs(&recipe, &root);
        assert_eq!(
            dirs,
            vec![
                PathBuf::from("."),
                dir.join("repo/recipes/sub"),
                dir.join("repo/recipes"),
                dir.join("repo"),
            ]
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_inside_the_repository_is_read_from_the_recipes_ancestors() {
        let dir = scratch("inside");
        let found = lookup(&dir, &[]).read("ds.json", 1024).expect("read");
        assert_eq!(found.text, "{}");
        assert_eq!(found.shown, dir.join("repo/ds.json"));
        // `..` that stays inside is fine.
        let found = lookup(&dir, &[])
            .read("recipes/../ds.json", 1024)
            .expect("read");
        assert_eq!(found.text, "{}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_way_out_of_the_repository_is_refused_without_opening() {
        let dir = scratch("out");
        let real_secret = fs::canonicalize(dir.join("secret.json")).expect("real");
        std::os::unix::fs::symlink(dir.join("secret.json"), dir.join("repo/link.json"))
            .expect("link");
        std::os::unix::fs::symlink(&dir, dir.join("repo/recipes/up")).expect("folder link");
        let absolute = real_secret.display().to_string();
        for name in [
            "../../secret.json",
            "../secret.json",
            "sub/../../../secret.json",
            absolute.as_str(),
            "link.json",
            "up/secret.json",
            "/etc/passwd",
            "/proc/kmsg",
        ] {
            match lookup(&dir, &[]).read(name, 1024) {
                Err(Refusal::Outside { real, .. }) => {
                    assert!(!real.starts_with(dir.join("repo")), "{name}: {real:?}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        // `--allow-path` widens the roots.
        let found = lookup(&dir, std::slice::from_ref(&dir))
            .read("link.json", 1024)
            .expect("allowed");
        assert!(found.text.contains("s3cr3t"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_with_control_characters_are_refused_before_any_look() {
        let dir = scratch("control");
        for (name, code) in [
            ("ds.json\0", 0),
            ("ds\n.json", 10),
            ("\u{1b}[2Jds.json", 27),
        ] {
            assert_eq!(
                lookup(&dir, &[]).read(name, 1024),
                Err(Refusal::ControlCharacter(code)),
                "{name:?}"
            );
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let dir = scratch("kinds");
        fs::create_dir(dir.join("repo/folder.json")).expect("folder");
        fs::write(dir.join("repo/big.json"), "x".repeat(2000)).expect("big");
        fs::write(dir.join("repo/bad.json"), b"\xff\xfe").expect("bad");
        let status = std::process::Command::new("mkfifo")
            .arg(dir.join("repo/pipe.json"))
            .status();
        let fifo = status.is_ok_and(|s| s.success());
        let reason = |name: &str| match lookup(&dir, &[]).read(name, 1024) {
            Err(Refusal::Unreadable { reason, .. }) => reason,
            other => panic!("{name}: {other:?}"),
        };
        assert!(reason("folder.json").contains("is a directory"));
        assert!(reason("big.json").contains("larger than the 1024-byte limit"));
        assert!(reason("bad.json").contains("not UTF-8"));
        if fifo {
            assert!(reason("pipe.json").contains("not a regular file"));
        }
        assert!(matches!(
            lookup(&dir, &[]).read("missing.json", 1024),
            Err(Refusal::NotFound { tried }) if tried.len() == 3
        ));
        let _ = fs::remove_dir_all(&dir);
    }

    /// A file of procfs reports a size of 0 and is read through the bound.
    #[test]
    fn files_that_report_no_size_are_read_within_the_limit() {
        let proc = PathBuf::from("/proc/self");
        if !proc.join("environ").exists() {
            return;
        }
        let lookup = Lookup::new(vec![proc.clone()], &[PathBuf::from("/proc")]);
        match lookup.read("maps", 16) {
            Err(Refusal::Unreadable { reason, .. }) => {
                assert!(reason.contains("larger than the 16-byte limit"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn findings_on_a_named_file_quote_only_their_line() {
        let text = "{\n  \"a\": 1,\n  \"b\": \"x\",\n  \"c\": 3\n}\n";
        let finding = Diagnostic::error(Code::InteropValue, vec!["b".into()], "bad")
            .at(14..text.len(), "here")
            .also(vec!["a".into()], 2..5, "elsewhere")
            .also(vec!["b".into()], 18..21, "same line");
        let cut = one_line(text, &[finding]);
        let range = cut[0].location.range.clone().expect("a range");
        assert_eq!(&text[range], "\"b\": \"x\",");
        assert_eq!(cut[0].location.related, vec![18..21]);
        let related: Vec<&str> = cut[0]
            .finding
            .related
            .iter()
            .map(|r| r.label.as_str())
            .collect();
        assert_eq!(related, ["same line"]);
        let shown = crate::diagnostic::render_text("ds.json", text, &cut, false);
        assert!(shown.contains("\"b\": \"x\""), "{shown}");
        assert!(
            !shown.contains("\"a\"") && !shown.contains("\"c\""),
            "{shown}"
        );
    }
}
