//! Files the CLI writes are written atomically: to a temporary file in the
//! target's directory, synced, then renamed over the target
//! ([`accum_core::fsio`]). An interrupted or failing command leaves the
//! previous file intact and no partial file.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use accum_core::fsio::Durability;

use crate::error::CliError;

/// Writes `bytes` to `path` atomically and durably
/// ([`accum_core::fsio::write_atomic`]).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    output_path(path)?;
    not_an_input(path)?;
    accum_core::fsio::write_atomic(path, bytes, Durability::Synced).map_err(CliError::usage)
}

/// Output = input is refused: the input would be replaced by what was
/// made from it, with exit 0 and no warning.
pub(crate) fn not_an_input(path: &Path) -> Result<(), CliError> {
    match crate::source::input_at(path) {
        None => Ok(()),
        Some(input) => Err(CliError::usage(format!(
            "{}: is {}, an input of this command; writing it would replace what was read: give another output path{}",
            path.display(),
            if input == path {
                "the file read".to_owned()
            } else {
                format!("the same file as {}", input.display())
            },
            IN_PLACE_HINT
        ))),
    }
}

/// How to ask for an in-place change, where a command has one.
const IN_PLACE_HINT: &str = " (`accum replan --in-place` rewrites a config and keeps a .bak)";

/// [`write_atomic`] over a file this command read, for the in-place mode
/// that asks for it (`replan --in-place`).
pub(crate) fn write_in_place(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    output_path(path)?;
    accum_core::fsio::write_atomic(path, bytes, Durability::Synced).map_err(CliError::usage)
}

/// An output path names a file: not a directory, and not a name that ends
/// in `/` (a folder to be), which the rename would refuse only after other
/// outputs were written beside it.
pub(crate) fn output_path(path: &Path) -> Result<(), CliError> {
    if path.is_dir() {
        return Err(CliError::usage(format!(
            "{}: is a directory; give a file name",
            path.display()
        )));
    }
    let text = path.as_os_str().to_string_lossy();
    if text.ends_with(std::path::MAIN_SEPARATOR) || text.ends_with('/') {
        return Err(CliError::usage(format!(
            "{}: names a folder; give a file name (`{}sheet.html`)",
            path.display(),
            text
        )));
    }
    Ok(())
}

/// Checks that [`write_atomic`] could write `path` now
/// ([`accum_core::fsio::check_writable`]), before a long command's work.
pub(crate) fn check_writable(path: &Path) -> Result<(), CliError> {
    output_path(path)?;
    not_an_input(path)?;
    accum_core::fsio::check_writable(path).map_err(CliError::usage)
}

/// Writes a new file at `path`, atomically, and never over an existing
/// one: the bytes go to a temporary file beside it, which is then linked to
/// `path` (a link fails when `path` exists, even if it appeared meanwhile).
pub(crate) fn create_new(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let exists = || {
        CliError::usage(format!(
            "{}: already exists; not overwritten",
            path.display()
        ))
    };
    if path.exists() {
        return Err(exists());
    }
    // The folder first, so that a failure names the file asked for, not
    // the staged one beside it.
    check_writable(path)?;
    let mut staged = path.as_os_str().to_owned();
    staged.push(format!(".{}.new", std::process::id()));
    let staged = PathBuf::from(staged);
    write_atomic(&staged, bytes)?;
    let linked = fs::hard_link(&staged, path);
    let result = match linked {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Err(exists()),
        // A file system without hard links: check again, then rename.
        Err(_) if !path.exists() => fs::rename(&staged, path).map_err(|err| {
            CliError::usage(format!(
                "{}: cannot write: {}",
                path.display(),
                describe(&err)
            ))
        }),
        Err(_) => Err(exists()),
    };
    let _ = fs::remove_file(&staged);
    result
}

/// Copies `path` to `path.bak` (atomically) before an in-place change.
pub(crate) fn backup(path: &Path) -> Result<PathBuf, CliError> {
    let mut backup = path.as_os_str().to_owned();
    backup.push(".bak");
    let backup = PathBuf::from(backup);
    let bytes = fs::read(path).map_err(|err| {
        CliError::usage(format!(
            "{}: cannot read: {}",
            path.display(),
            describe(&err)
        ))
    })?;
    write_atomic(&backup, &bytes)?;
    Ok(backup)
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
    fn backup_keeps_the_old_bytes() {
        let dir = scratch("backup");
        let target = dir.join("train.toml");
        fs::write(&target, "a = 1\n").expect("write");
        let bak = backup(&target).expect("backup");
        assert_eq!(bak, dir.join("train.toml.bak"));
        assert_eq!(fs::read_to_string(bak).expect("read"), "a = 1\n");
        let _ = fs::remove_dir_all(&dir);
    }
}
