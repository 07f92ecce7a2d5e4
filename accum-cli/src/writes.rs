//! The command-line side of accum's one writer ([`accum_core::fsio`]):
//! every file a command writes goes through here. Core's rules hold for
//! each file (atomic, no link followed at a name accum made, modes from the
//! umask or kept); this adds the command's own: an output path names a
//! file, and no output, companions included, is one of the files the
//! command read ([`crate::source::input_at`], by device and inode). A
//! command that writes several files adds them all to [`Outputs`], which
//! renames them only once each is checked and written.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use accum_core::fsio::{Batch, Derived, Durability, Naming, Replaces, Temporary};

use crate::error::CliError;

/// The backup `replan --in-place` keeps: a name accum made, and never over
/// an existing file, since a backup is a copy of the user's file and accum
/// cannot tell its own from one the user keeps there.
pub(crate) const BACKUP: Naming = Naming::Derived(Derived {
    what: "the backup of the file changed in place",
    replaces: Replaces::Nothing,
});

/// Writes `bytes` to `path`, a name the user gave, atomically and durably.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let mut outputs = Outputs::new();
    outputs.add(path, bytes, Naming::Given)?;
    outputs.commit().map(drop)
}

/// The files of one command, written all or none: each is checked and
/// written to a temporary file as it is added, and [`Outputs::commit`]
/// renames them in the order added (companions before the file that links
/// them). Dropped before its commit, nothing is written.
#[derive(Debug, Default)]
pub(crate) struct Outputs {
    batch: Batch,
    paths: Vec<PathBuf>,
}

impl Outputs {
    pub(crate) fn new() -> Outputs {
        Outputs::default()
    }

    /// Adds `path`, checked by the rules of `naming` and against the
    /// command's inputs.
    pub(crate) fn add(
        &mut self,
        path: &Path,
        bytes: &[u8],
        naming: Naming,
    ) -> Result<(), CliError> {
        if let Naming::Given = naming {
            output_path(path)?;
        }
        not_an_input(path)?;
        self.batch
            .add(path, bytes, naming)
            .map_err(CliError::usage)?;
        self.paths.push(path.to_owned());
        Ok(())
    }

    /// Adds `path` over a file this command read, for the in-place mode
    /// that asks for it (`replan --in-place`).
    pub(crate) fn add_in_place(&mut self, path: &Path, bytes: &[u8]) -> Result<(), CliError> {
        output_path(path)?;
        self.batch
            .add(path, bytes, Naming::Given)
            .map_err(CliError::usage)?;
        self.paths.push(path.to_owned());
        Ok(())
    }

    /// Adds a temporary file written as the command went (a stats stream),
    /// checked against the command's inputs.
    pub(crate) fn push(&mut self, tmp: Temporary) -> Result<(), CliError> {
        not_an_input(tmp.path())?;
        self.paths.push(tmp.path().to_owned());
        self.batch.push(tmp);
        Ok(())
    }

    /// Renames every file over its target; the paths written, in order.
    pub(crate) fn commit(self) -> Result<Vec<PathBuf>, CliError> {
        self.batch
            .commit(Durability::Synced)
            .map_err(CliError::usage)?;
        Ok(self.paths)
    }
}

/// One file the user named, written as the command goes (a CSV of every
/// attempt of a run) to its temporary file, with the checks of
/// [`Outputs::add`], and renamed over its name by [`Streamed::commit`] once
/// whole. Dropped before, nothing is written.
#[derive(Debug)]
pub(crate) struct Streamed {
    path: PathBuf,
    out: io::BufWriter<Temporary>,
}

impl Streamed {
    /// Checks `path` and opens its temporary file.
    pub(crate) fn create(path: &Path) -> Result<Streamed, CliError> {
        output_path(path)?;
        not_an_input(path)?;
        let tmp =
            accum_core::fsio::create_temporary(path, Naming::Given).map_err(CliError::usage)?;
        Ok(Streamed {
            path: path.to_owned(),
            out: io::BufWriter::new(tmp),
        })
    }

    /// Appends `bytes`.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        use io::Write as _;
        self.out.write_all(bytes).map_err(|err| {
            CliError::usage(format!(
                "{}: cannot write: {err}",
                accum_core::shown::path(&self.path)
            ))
        })
    }

    /// Renames the whole file over its name.
    pub(crate) fn commit(self) -> Result<(), CliError> {
        let path = self.path;
        let tmp = self.out.into_inner().map_err(|err| {
            CliError::usage(format!(
                "{}: cannot write: {}",
                accum_core::shown::path(&path),
                err.error()
            ))
        })?;
        let mut outputs = Outputs::new();
        outputs.push(tmp)?;
        outputs.commit().map(drop)
    }
}

/// Output = input is refused: the input would be replaced by what was
/// made from it, with exit 0 and no warning.
pub(crate) fn not_an_input(path: &Path) -> Result<(), CliError> {
    match crate::source::input_at(path) {
        None => Ok(()),
        Some(input) => Err(CliError::usage(format!(
            "{}: is {}, an input of this command; writing it would replace what was read: give another output path{}",
            accum_core::shown::path(path),
            if input == path {
                "the file read".to_owned()
            } else {
                format!("the same file as {}", accum_core::shown::path(&input))
            },
            IN_PLACE_HINT
        ))),
    }
}

/// How to ask for an in-place change, where a command has one.
const IN_PLACE_HINT: &str = " (`accum replan --in-place` rewrites a config and keeps a .bak)";

/// An output path names a file: not a directory, and not a name that ends
/// in `/` (a folder to be), which the rename would refuse only after other
/// outputs were written beside it.
pub(crate) fn output_path(path: &Path) -> Result<(), CliError> {
    if path.is_dir() {
        return Err(CliError::usage(format!(
            "{}: is a directory; give a file name",
            accum_core::shown::path(path)
        )));
    }
    let text = path.as_os_str().to_string_lossy();
    if text.ends_with(std::path::MAIN_SEPARATOR) || text.ends_with('/') {
        return Err(CliError::usage(format!(
            "{}: names a folder; give a file name (`{}sheet.html`)",
            accum_core::shown::path(path),
            text
        )));
    }
    Ok(())
}

/// Checks that `path` could be written now by the rules of `naming`
/// ([`accum_core::fsio::check_writable`]), before a long command's work.
pub(crate) fn check_writable(path: &Path, naming: Naming) -> Result<(), CliError> {
    if let Naming::Given = naming {
        output_path(path)?;
    }
    not_an_input(path)?;
    accum_core::fsio::check_writable(path, naming).map_err(CliError::usage)
}

/// Writes a new file at `path`, atomically, and never over anything at
/// that name, a link included ([`accum_core::fsio::write_new`]).
pub(crate) fn create_new(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    accum_core::fsio::write_new(path, bytes, Durability::Synced).map_err(CliError::usage)
}

/// `FILE.bak`, where `replan --in-place` keeps the previous `FILE`.
pub(crate) fn backup_path(path: &Path) -> PathBuf {
    let mut backup = path.as_os_str().to_owned();
    backup.push(".bak");
    PathBuf::from(backup)
}

/// Reads the file an in-place change replaces, for its backup.
pub(crate) fn read_for_backup(path: &Path) -> Result<Vec<u8>, CliError> {
    fs::read(path).map_err(|err| {
        CliError::usage(format!(
            "{}: cannot read: {}",
            accum_core::shown::path(path),
            describe(&err)
        ))
    })
}

fn describe(err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => "no such file or directory".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("accum-fsio-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    /// The names of the files in `dir`: what a write left behind.
    fn names(dir: &Path) -> Vec<std::ffi::OsString> {
        fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect()
    }

    #[test]
    fn replaces_and_leaves_no_temporary_file() {
        let dir = scratch("replace");
        let target = dir.join("out.json");
        fs::write(&target, "old").expect("write");
        write_atomic(&target, b"new").expect("atomic write");
        assert_eq!(fs::read_to_string(&target).expect("read"), "new");
        assert_eq!(names(&dir), vec![std::ffi::OsString::from("out.json")]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_directory_target_or_missing_parent_is_an_error() {
        let dir = scratch("errors");
        assert!(write_atomic(&dir, b"x").is_err());
        let err = write_atomic(&dir.join("missing/out.json"), b"x").expect_err("no parent");
        assert!(
            err.to_string().contains("cannot create a temporary file"),
            "{err}"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn create_new_never_overwrites() {
        let dir = scratch("create-new");
        let target = dir.join("accum.toml");
        create_new(&target, b"first").expect("a new file");
        let err = create_new(&target, b"second").expect_err("exists");
        assert!(
            err.to_string().ends_with("already exists; not overwritten"),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&target).expect("read"), "first");
        assert_eq!(names(&dir), vec![std::ffi::OsString::from("accum.toml")]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_backup_never_replaces_a_file() {
        let dir = scratch("backup");
        let target = dir.join("train.toml");
        fs::write(&target, "a = 1\n").expect("write");
        let bak = backup_path(&target);
        assert_eq!(bak, dir.join("train.toml.bak"));
        let mut outputs = Outputs::new();
        outputs.add(&bak, b"a = 1\n", BACKUP).expect("a new backup");
        outputs.add_in_place(&target, b"a = 2\n").expect("in place");
        outputs.commit().expect("written");
        assert_eq!(fs::read_to_string(&bak).expect("read"), "a = 1\n");
        let mut outputs = Outputs::new();
        let err = outputs.add(&bak, b"a = 2\n", BACKUP).expect_err("exists");
        assert!(
            err.to_string().contains("is a file accum did not write"),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&bak).expect("read"), "a = 1\n");
        let _ = fs::remove_dir_all(&dir);
    }
}
