//! Files the CLI writes are written atomically: to a temporary file in the
//! target's directory, synced, then renamed over the target. An interrupted
//! or failing command leaves the previous file intact and no partial file.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::CliError;

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let fail = |what: &str, err: io::Error| {
        CliError::usage(format!(
            "{}: cannot {what}: {}",
            path.display(),
            describe(&err)
        ))
    };
    if path.is_dir() {
        return Err(CliError::usage(format!(
            "{}: is a directory; give a file name",
            path.display()
        )));
    }
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let mut attempt = 0u32;
    let (tmp_path, mut file) = loop {
        let candidate = dir.join(format!(".{name}.{}.{attempt}.tmp", std::process::id()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(file) => break (candidate, file),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(err) => return Err(fail("create a temporary file beside it", err)),
        }
    };
    let result = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|err| fail("write", err))
        .and_then(|()| fs::rename(&tmp_path, path).map_err(|err| fail("replace", err)));
    if result.is_err() {
        let _ = fs::remove_file(&tmp_path);
    }
    result
}

/// Copies `path` to `path.bak` (atomically) before an in-place change.
pub fn backup(path: &Path) -> Result<PathBuf, CliError> {
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

    #[test]
    fn replaces_and_leaves_no_temporary_file() {
        let dir = scratch("replace");
        let target = dir.join("out.json");
        fs::write(&target, "old").expect("write");
        write_atomic(&target, b"new").expect("atomic write");
        assert_eq!(fs::read_to_string(&target).expect("read"), "new");
        let names: Vec<_> = fs::read_dir(&dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
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
