//! Atomic file writes, shared by the dump writer and the command-line tool:
//! the bytes go to a new temporary file in the target's folder, then a
//! rename replaces the target. A reader never sees half a file, and an
//! interrupted or failing write leaves the previous file intact; a failed
//! write removes its temporary file.
//!
//! The temporary file is `tempfile`'s [`NamedTempFile`]: created
//! exclusively under a random name, removed when dropped (an error, a
//! panic), renamed by `persist`. What stays ours is what a command-line tool
//! needs around it: writing through symbolic links, writing devices in place,
//! the folder's `fsync` after the rename for [`Durability::Synced`], errors
//! that name the target and the step, and a list of the temporary files
//! alive, so that a process ending at once ([`abandon_temporaries`], a
//! second Ctrl-C) removes them, which `std::process::exit` would not.

use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tempfile::NamedTempFile;

/// The temporary files of this process not yet renamed over their target
/// or removed. Creating, renaming and removing one each hold the lock, so
/// [`abandon_temporaries`] sees each file either alive or done.
static ALIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn alive() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the lock was held left the list as it was between
    // steps; it is still right.
    ALIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn forget(alive: &mut Vec<PathBuf>, path: &Path) {
    if let Some(at) = alive.iter().position(|p| p == path) {
        alive.swap_remove(at);
    }
}

/// A temporary file beside a target, from [`create_temporary`]: written
/// like a file, renamed over the target by [`persist`], removed when
/// dropped.
#[derive(Debug)]
pub struct Temporary {
    /// `None` once renamed.
    file: Option<NamedTempFile>,
}

impl Temporary {
    fn file(&mut self) -> &mut NamedTempFile {
        self.file
            .as_mut()
            .expect("a temporary file is written until it is renamed")
    }
}

impl Write for Temporary {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            let mut alive = alive();
            forget(&mut alive, file.path());
            drop(file);
        }
    }
}

/// Removes every temporary file of this process that is neither renamed
/// nor removed yet, and holds back every creation, rename and removal of
/// one while the returned guard lives: for a process about to end at once
/// (`std::process::exit` runs no destructor, so each would stay beside its
/// target). Each target keeps its previous bytes, or its new ones whole if
/// its rename came first.
#[must_use = "the guard holds back new temporary files until the process ends"]
pub fn abandon_temporaries() -> impl Sized {
    let mut alive = alive();
    for path in alive.drain(..) {
        let _ = fs::remove_file(path);
    }
    alive
}

/// Whether an atomic write waits for the data to reach the disk before the
/// rename.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `fsync` the temporary file before the rename, and the folder after
    /// it: after a crash of the machine the target holds the old or the new
    /// bytes, and the rename itself is on the disk. For reports, sheets and
    /// configurations.
    Synced,
    /// Rename without waiting for the disk: still never half a file for
    /// readers and other processes, and much faster for the hundreds of
    /// small files of a dump.
    Buffered,
}

/// The step of an atomic write that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteStep {
    /// Creating the temporary file beside the target (the folder is
    /// missing, not a folder, read-only or full).
    CreateTemporary,
    /// Writing or syncing the bytes.
    Write,
    /// Renaming the temporary file over the target.
    Replace,
}

/// An atomic write failed; the target is unchanged.
#[derive(Debug)]
pub struct WriteError {
    /// The target.
    pub path: PathBuf,
    /// The step that failed.
    pub step: WriteStep,
    /// The I/O error.
    pub source: io::Error,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.step {
            WriteStep::CreateTemporary => "create a temporary file beside it",
            WriteStep::Write => "write",
            WriteStep::Replace => "replace",
        };
        let reason = match self.source.kind() {
            io::ErrorKind::NotFound => "no such file or directory".to_owned(),
            io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            // tempfile's errors end in `at path "<the temporary name>"`
            // (its `PathError`, which gives no access to the error inside):
            // the user named the target, not the temporary file.
            _ => {
                let text = self.source.to_string();
                match text.rfind(" at path \"") {
                    Some(end) => text[..end].to_owned(),
                    None => text,
                }
            }
        };
        write!(f, "{}: cannot {what}: {reason}", self.path.display())
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Writes `bytes` to `path` atomically: a new temporary file (`.<name>.<random>.tmp`,
/// created exclusively, so concurrent writers never share one) in the same
/// folder, then a rename over `path`.
///
/// Through a symbolic link the link's target is written and the link kept;
/// a target that is a device, a FIFO or a socket (`/dev/null`,
/// `/dev/stdout`) is written to as it is, since a rename would replace the
/// device node with a regular file.
pub fn write_atomic(path: &Path, bytes: &[u8], durability: Durability) -> Result<(), WriteError> {
    let fail = |step, source| WriteError {
        path: path.to_owned(),
        step,
        source,
    };
    let resolved = resolve_links(path).map_err(|err| fail(WriteStep::CreateTemporary, err))?;
    if let Ok(meta) = fs::metadata(&resolved)
        && !meta.is_file()
        && !meta.is_dir()
    {
        return fs::OpenOptions::new()
            .write(true)
            .open(&resolved)
            .and_then(|mut f| f.write_all(bytes).and_then(|()| f.flush()))
            .map_err(|err| fail(WriteStep::Write, err));
    }
    // Errors name the path as the user gave it.
    let mut tmp = create_temporary(&resolved).map_err(|e| fail(e.step, e.source))?;
    tmp.write_all(bytes)
        .map_err(|err| fail(WriteStep::Write, err))?;
    persist(tmp, &resolved, durability).map_err(|e| fail(e.step, e.source))
}

/// A new temporary file beside `path` (`.<name>.<random>.tmp`, created
/// exclusively, so concurrent writers never share one), to be renamed over
/// `path` by [`persist`]; dropped, it is removed.
pub fn create_temporary(path: &Path) -> Result<Temporary, WriteError> {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let mut alive = alive();
    let file = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(folder_of(path))
        .map_err(|source| WriteError {
            path: path.to_owned(),
            step: WriteStep::CreateTemporary,
            source,
        })?;
    alive.push(file.path().to_owned());
    Ok(Temporary { file: Some(file) })
}

/// Renames a complete temporary file from [`create_temporary`] over `path`,
/// after an `fsync` of its bytes and followed by one of the folder for
/// [`Durability::Synced`]. On failure the temporary file is removed and the
/// target is unchanged.
pub fn persist(mut tmp: Temporary, path: &Path, durability: Durability) -> Result<(), WriteError> {
    let fail = |step, source| WriteError {
        path: path.to_owned(),
        step,
        source,
    };
    match durability {
        Durability::Synced => tmp.file().as_file().sync_all(),
        Durability::Buffered => Ok(()),
    }
    .map_err(|err| fail(WriteStep::Write, err))?;
    {
        let mut alive = alive();
        let file = tmp.file.take().expect("a temporary file is renamed once");
        let at = file.path().to_owned();
        let renamed = file.persist(path);
        // Renamed, or removed with the error's file when it drops.
        forget(&mut alive, &at);
        renamed.map_err(|err| fail(WriteStep::Replace, err.error))?;
    }
    if durability == Durability::Synced {
        sync_folder(&folder_of(path)).map_err(|err| fail(WriteStep::Replace, err))?;
    }
    Ok(())
}

/// The folder a file at `path` goes to (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// `fsync` of a folder, so that a rename in it reaches the disk.
#[cfg(unix)]
fn sync_folder(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Folders cannot be opened for an `fsync` here; the rename is what the
/// platform offers.
#[cfg(not(unix))]
fn sync_folder(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Links followed at most, as the kernel does (`ELOOP` past it).
const MAX_LINKS: usize = 40;

/// `path` with every symbolic link at its end followed (a link's relative
/// target is read from the link's folder); the result may not exist yet.
pub fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) if target.is_relative() => parent.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links in a row"
    )))
}

/// Checks that [`write_atomic`] could write `path` now, by creating and
/// removing a temporary file beside it, so that a long job fails before its
/// work instead of after it.
pub fn check_writable(path: &Path) -> Result<(), WriteError> {
    let resolved = resolve_links(path).map_err(|source| WriteError {
        path: path.to_owned(),
        step: WriteStep::CreateTemporary,
        source,
    })?;
    if fs::metadata(&resolved).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        // A device or a pipe is written in place, not beside.
        return Ok(());
    }
    // A temporary file like the write's own, removed when dropped.
    create_temporary(&resolved).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("accum-core-fsio-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_the_target_and_leaves_no_temporary() {
        let dir = scratch("replace");
        let target = dir.join("out.json");
        for durability in [Durability::Synced, Durability::Buffered] {
            fs::write(&target, "old").unwrap();
            write_atomic(&target, b"new", durability).unwrap();
            assert_eq!(fs::read_to_string(&target).unwrap(), "new");
            assert_eq!(names(&dir), ["out.json"]);
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_replace_keeps_the_old_target_and_removes_the_temporary() {
        let dir = scratch("fail");
        // A non-empty folder at the target: the rename fails after the write.
        let target = dir.join("out");
        fs::create_dir_all(target.join("inside")).unwrap();
        let err = write_atomic(&target, b"new", Durability::Synced).unwrap_err();
        assert_eq!(err.step, WriteStep::Replace, "{err}");
        assert!(err.to_string().contains("out: cannot replace"), "{err}");
        assert_eq!(names(&dir), ["out"]);
        assert!(target.join("inside").is_dir());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_that_cannot_hold_files_fails_before_writing() {
        let dir = scratch("no-folder");
        let file = dir.join("file");
        fs::write(&file, "x").unwrap();
        // A path under a regular file: refused even for root.
        let err = check_writable(&file.join("out.json")).unwrap_err();
        assert_eq!(err.step, WriteStep::CreateTemporary, "{err}");
        check_writable(&dir.join("out.json")).unwrap();
        let err = write_atomic(&file.join("out.json"), b"new", Durability::Synced).unwrap_err();
        assert_eq!(err.step, WriteStep::CreateTemporary, "{err}");
        assert!(
            err.to_string().contains("cannot create a temporary file"),
            "{err}"
        );
        assert_eq!(names(&dir), ["file"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn links_are_written_through_and_devices_stay_devices() {
        use std::os::unix::fs::{FileTypeExt, symlink};
        let dir = scratch("links");
        fs::create_dir_all(dir.join("real")).unwrap();
        fs::write(dir.join("real/out.json"), "old").unwrap();
        // A relative link, and a link to a link.
        symlink("real/out.json", dir.join("link.json")).unwrap();
        symlink("link.json", dir.join("link2.json")).unwrap();
        write_atomic(&dir.join("link2.json"), b"new", Durability::Synced).unwrap();
        assert_eq!(
            fs::read_to_string(dir.join("real/out.json")).unwrap(),
            "new"
        );
        assert!(
            fs::symlink_metadata(dir.join("link.json"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            fs::symlink_metadata(dir.join("link2.json"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // A dangling link: its target is created.
        symlink("real/new.json", dir.join("dangling.json")).unwrap();
        write_atomic(&dir.join("dangling.json"), b"x", Durability::Buffered).unwrap();
        assert_eq!(fs::read_to_string(dir.join("real/new.json")).unwrap(), "x");
        assert_eq!(
            names(&dir),
            ["dangling.json", "link.json", "link2.json", "real"]
        );
        assert_eq!(names(&dir.join("real")), ["new.json", "out.json"]);
        // A device is written to, not replaced by a file.
        write_atomic(Path::new("/dev/null"), b"gone", Durability::Synced).unwrap();
        check_writable(Path::new("/dev/null")).unwrap();
        assert!(
            fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        // A loop of links is an error, not a hang.
        symlink("loop-b", dir.join("loop-a")).unwrap();
        symlink("loop-a", dir.join("loop-b")).unwrap();
        assert!(write_atomic(&dir.join("loop-a"), b"x", Durability::Synced).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
