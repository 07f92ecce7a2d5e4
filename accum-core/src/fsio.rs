//! The one writer of every file accum produces: reports, sheets and their
//! plots, configurations and their backups, schemas, stats streams and
//! dumps. Bytes go to a new temporary file in the target's folder, then a
//! rename replaces the target. A reader never sees half a file, and an
//! interrupted or failing write leaves the previous file intact; a failed
//! write removes its temporary file.
//!
//! Every write says who chose the name ([`Naming`]):
//! - a name the user typed ([`Naming::Given`]: `-o`, `--report`, a dump's
//!   folder) is written as the user has it: through a symbolic link (the
//!   link kept, its target written), in place for a device, a FIFO or a
//!   socket (`/dev/null`, `/dev/stdout`), replacing a regular file;
//! - a name accum made from another ([`Naming::Derived`]: a plot beside a
//!   sheet, a backup, the stats stream beside a report, a dump's files) is
//!   never followed: a symbolic link, a folder, a FIFO, a socket or a device
//!   there is refused, and so is a regular file accum cannot tell is its own
//!   ([`Replaces`]). The rename that ends the write replaces a name, never
//!   what a link there points to, so a link planted after the check is
//!   replaced itself, not followed; the check reads an existing file with
//!   `O_NOFOLLOW` and `O_NONBLOCK`.
//!
//! A new file gets `0666` less the process's umask (the temporary file is
//! created with that mode, and the system applies the umask); a replaced
//! file keeps its permission bits (a script keeps its exec bit), without
//! set-user-ID and set-group-ID. A command that writes several files stages
//! them all in a [`Batch`] and renames them only once each is written.
//!
//! The temporary file is `tempfile`'s [`NamedTempFile`]: created
//! exclusively under a random name, removed when dropped (an error, a
//! panic), renamed by `persist`. What stays ours is what a command-line tool
//! needs around it: the rules above, the folder's `fsync` after the rename
//! for [`Durability::Synced`], errors that name the target and the step, and
//! a list of the temporary files alive, so that a process ending at once
//! ([`abandon_temporaries`], a second Ctrl-C) removes them, which
//! `std::process::exit` would not.

use std::fmt;
use std::fs;
use std::io::{self, Read, Write};
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

/// Who chose the name of an output, which decides what may stand there.
#[derive(Clone, Copy, Debug)]
pub enum Naming {
    /// The user typed it: a symbolic link there is followed (the link kept,
    /// its target written), a device, FIFO or socket is written in place,
    /// a regular file is replaced.
    Given,
    /// accum made it from another name: never followed through a link, and
    /// it replaces only a regular file [`Derived::replaces`] allows.
    Derived(Derived),
}

/// A name accum made: what the file is and which existing file it may
/// replace.
#[derive(Clone, Copy, Debug)]
pub struct Derived {
    /// What the file is, for messages (`the stats stream beside the report`).
    pub what: &'static str,
    /// Which regular file at the name accum may replace.
    pub replaces: Replaces,
}

/// Which regular file at a derived name accum may replace.
#[derive(Clone, Copy, Debug)]
pub enum Replaces {
    /// One whose first [`RECOGNISED_BYTES`] bytes the function recognises as
    /// accum's (a plot's mark, a stream's first line).
    Recognised(fn(&[u8]) -> bool),
    /// Any: the name is inside a folder accum took whole at the start of
    /// the command (a dump), so every file there is the command's own.
    Any,
    /// None: accum cannot tell its file from the user's (a backup is a
    /// copy of the user's own file).
    Nothing,
}

/// The bytes of an existing file read to recognise it as accum's.
pub const RECOGNISED_BYTES: u64 = 4096;

/// Why a write was refused before anything was written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// A derived name is a symbolic link.
    Link {
        /// What the file would have been.
        what: &'static str,
    },
    /// A derived name is a folder, a FIFO, a socket or a device.
    NotAFile {
        /// What the file would have been.
        what: &'static str,
        /// What is there: `directory`, `FIFO`, `socket`, `device`.
        kind: &'static str,
    },
    /// A derived name holds a regular file accum cannot tell is its own.
    NotOurs {
        /// What the file would have been.
        what: &'static str,
    },
    /// A file that must be new exists ([`write_new`]).
    Exists,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Link { what } => write!(
                f,
                "is a symbolic link, and accum follows no link at a name it chose ({what}): remove the link, then run again"
            ),
            Refusal::NotAFile { what, kind } => write!(
                f,
                "is a {kind}, where accum writes a file at a name it chose ({what}): move it away, then run again"
            ),
            Refusal::NotOurs { what } => write!(
                f,
                "is a file accum did not write, and accum replaces none at a name it chose ({what}): move it away, then run again"
            ),
            Refusal::Exists => f.write_str("already exists; not overwritten"),
        }
    }
}

/// A temporary file beside a target, from [`create_temporary`]: written
/// like a file, renamed over the target by [`persist`] or a [`Batch`],
/// removed when dropped.
#[derive(Debug)]
pub struct Temporary {
    /// `None` once renamed.
    file: Option<NamedTempFile>,
    /// Where the rename goes: the name itself, or for a given name the end
    /// of its links.
    target: PathBuf,
    /// The path as the caller gave it, for messages.
    shown: PathBuf,
    naming: Naming,
}

impl Temporary {
    fn file(&mut self) -> &mut NamedTempFile {
        self.file
            .as_mut()
            .expect("a temporary file is written until it is renamed")
    }

    /// The path the temporary file replaces, as given.
    pub fn path(&self) -> &Path {
        &self.shown
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
    /// Looking at what stands at the name (see [`WriteError::refused`]).
    Check,
    /// Creating the temporary file beside the target (the folder is
    /// missing, not a folder, read-only or full).
    CreateTemporary,
    /// Writing or syncing the bytes.
    Write,
    /// Renaming the temporary file over the target.
    Replace,
}

/// An atomic write failed or was refused; the target is unchanged.
#[derive(Debug)]
pub struct WriteError {
    /// The target, as given.
    pub path: PathBuf,
    /// The step that failed.
    pub step: WriteStep,
    /// The I/O error (for a refusal, one that says it).
    pub source: io::Error,
    /// Why the write was refused, when it was.
    pub refused: Option<Refusal>,
}

impl WriteError {
    fn io(path: &Path, step: WriteStep, source: io::Error) -> WriteError {
        WriteError {
            path: path.to_owned(),
            step,
            source,
            refused: None,
        }
    }

    fn refuse(path: &Path, refusal: Refusal) -> WriteError {
        WriteError {
            path: path.to_owned(),
            step: WriteStep::Check,
            source: io::Error::other(refusal.to_string()),
            refused: Some(refusal),
        }
    }

    /// The same error, naming `path` (the path the user gave).
    fn at(mut self, path: &Path) -> WriteError {
        path.clone_into(&mut self.path);
        self
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(refusal) = &self.refused {
            return write!(f, "{}: {refusal}", crate::shown::path(&self.path));
        }
        let what = match self.step {
            WriteStep::Check => "look at it",
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
        write!(
            f,
            "{}: cannot {what}: {reason}",
            crate::shown::path(&self.path)
        )
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Writes `bytes` to `path` atomically, by the rules of `naming`: a new
/// temporary file (`.<name>.<random>.tmp`, created exclusively, so
/// concurrent writers never share one) in the same folder, then a rename
/// over `path`.
pub fn write_atomic(
    path: &Path,
    bytes: &[u8],
    durability: Durability,
    naming: Naming,
) -> Result<(), WriteError> {
    let mut batch = Batch::new();
    batch.add(path, bytes, naming)?;
    batch.commit(durability)
}

/// Several files written all or none: each is checked and written to its
/// temporary file by [`Batch::add`] or [`Batch::push`], and
/// [`Batch::commit`] renames them in the order added only when every one
/// is written. A batch dropped before its commit removes its temporary
/// files and leaves every target as it was.
#[derive(Debug, Default)]
pub struct Batch {
    items: Vec<Item>,
}

#[derive(Debug)]
enum Item {
    Staged(Temporary),
    /// A device, FIFO or socket the user named, written in place at the
    /// commit.
    InPlace {
        shown: PathBuf,
        device: PathBuf,
        bytes: Vec<u8>,
    },
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Checks `path` by the rules of `naming` and writes `bytes` to a
    /// temporary file beside it.
    pub fn add(&mut self, path: &Path, bytes: &[u8], naming: Naming) -> Result<(), WriteError> {
        if let Naming::Given = naming {
            let resolved = resolve_links(path)
                .map_err(|err| WriteError::io(path, WriteStep::CreateTemporary, err))?;
            if let Ok(meta) = fs::metadata(&resolved)
                && !meta.is_file()
                && !meta.is_dir()
            {
                self.items.push(Item::InPlace {
                    shown: path.to_owned(),
                    device: resolved,
                    bytes: bytes.to_vec(),
                });
                return Ok(());
            }
        }
        let mut tmp = create_temporary(path, naming)?;
        tmp.write_all(bytes)
            .map_err(|err| WriteError::io(path, WriteStep::Write, err))?;
        self.push(tmp);
        Ok(())
    }

    /// Adds a temporary file written by the caller (a stream).
    pub fn push(&mut self, tmp: Temporary) {
        self.items.push(Item::Staged(tmp));
    }

    /// Renames every temporary file over its target, in the order added,
    /// after syncing each for [`Durability::Synced`], then writes the
    /// devices in place. Each derived name is checked again just before the
    /// renames begin.
    ///
    /// All or none: the file a rename replaces is kept under a hard link
    /// beside it until every rename is done, and a rename that fails puts
    /// back what the earlier ones replaced (and removes what they created)
    /// before the error is returned.
    pub fn commit(mut self, durability: Durability) -> Result<(), WriteError> {
        for item in &mut self.items {
            if let Item::Staged(tmp) = item {
                prepare(tmp, durability)?;
            }
        }
        let mut folders: Vec<PathBuf> = Vec::new();
        let mut done: Vec<(PathBuf, Previous)> = Vec::new();
        for item in std::mem::take(&mut self.items) {
            match item {
                Item::Staged(tmp) => {
                    let folder = folder_of(&tmp.target);
                    let shown = tmp.shown.clone();
                    let target = tmp.target.clone();
                    let previous = Previous::keep(&target);
                    if let Err(err) = rename(tmp) {
                        previous.discard();
                        roll_back(done);
                        return Err(err);
                    }
                    done.push((target, previous));
                    if durability == Durability::Synced && !folders.contains(&folder) {
                        sync_folder(&folder)
                            .map_err(|err| WriteError::io(&shown, WriteStep::Replace, err))?;
                        folders.push(folder);
                    }
                }
                Item::InPlace {
                    shown,
                    device,
                    bytes,
                } => fs::OpenOptions::new()
                    .write(true)
                    .open(&device)
                    .and_then(|mut f| f.write_all(&bytes).and_then(|()| f.flush()))
                    .map_err(|err| WriteError::io(&shown, WriteStep::Write, err))?,
            }
        }
        for (_, previous) in done {
            previous.discard();
        }
        Ok(())
    }
}

/// What stood at a name before a [`Batch`] renamed a file over it.
#[derive(Debug)]
enum Previous {
    /// Nothing: a rollback removes the new file.
    Nothing,
    /// A file, kept under this hard link until the batch is done.
    Kept(PathBuf),
    /// Something that could not be kept (a file system without hard
    /// links): a rollback leaves the new file.
    Lost,
}

impl Previous {
    /// Keeps the regular file at `target`, if any, under a hard link
    /// beside it (`.<name>.<pid>-<n>.old`).
    fn keep(target: &Path) -> Previous {
        static KEPT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        match fs::symlink_metadata(target) {
            Err(_) => return Previous::Nothing,
            Ok(meta) if !meta.is_file() => return Previous::Lost,
            Ok(_) => {}
        }
        let name = target
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        let n = KEPT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let backup = folder_of(target).join(format!(".{name}.{}-{n}.old", std::process::id()));
        let mut alive = alive();
        match fs::hard_link(target, &backup) {
            Ok(()) => {
                // Removed with the temporaries if the command is stopped.
                alive.push(backup.clone());
                Previous::Kept(backup)
            }
            Err(_) => Previous::Lost,
        }
    }

    /// Removes the kept link: the batch is done, or its rename failed and
    /// the name still holds the file.
    fn discard(self) {
        if let Previous::Kept(backup) = self {
            let mut alive = alive();
            let _ = fs::remove_file(&backup);
            forget(&mut alive, &backup);
        }
    }
}

/// Puts back what the renames in `done` replaced, last first: a kept file
/// is renamed over its name again, a new file is removed.
fn roll_back(done: Vec<(PathBuf, Previous)>) {
    for (target, previous) in done.into_iter().rev() {
        match previous {
            Previous::Kept(backup) => {
                let mut alive = alive();
                if fs::rename(&backup, &target).is_ok() {
                    forget(&mut alive, &backup);
                } else {
                    drop(alive);
                    Previous::Kept(backup).discard();
                }
            }
            Previous::Nothing => {
                let _ = fs::remove_file(&target);
            }
            Previous::Lost => {}
        }
    }
}

/// A new temporary file beside `path` (`.<name>.<random>.tmp`, created
/// exclusively with mode `0666` less the umask), to be renamed over `path`
/// by [`persist`] or a [`Batch`]; dropped, it is removed. The name is
/// checked by the rules of `naming` first; a given name's links are
/// followed, and the file goes beside their target.
pub fn create_temporary(path: &Path, naming: Naming) -> Result<Temporary, WriteError> {
    let target = match naming {
        Naming::Given => resolve_links(path)
            .map_err(|err| WriteError::io(path, WriteStep::CreateTemporary, err))?,
        Naming::Derived(derived) => {
            check_derived(path, derived)?;
            path.to_owned()
        }
    };
    let file = new_temporary(&target).map_err(|err| err.at(path))?;
    Ok(Temporary {
        file: Some(file),
        target,
        shown: path.to_owned(),
        naming,
    })
}

/// The temporary file beside `target`, listed as alive.
fn new_temporary(target: &Path) -> Result<NamedTempFile, WriteError> {
    let name = target
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The system takes the umask off: a new output gets the mode any
        // other program's new file gets, not tempfile's private 0600.
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut alive = alive();
    let file = builder
        .tempfile_in(folder_of(target))
        .map_err(|source| WriteError::io(target, WriteStep::CreateTemporary, source))?;
    alive.push(file.path().to_owned());
    Ok(file)
}

/// Renames a complete temporary file from [`create_temporary`] over its
/// target, after an `fsync` of its bytes and followed by one of the folder
/// for [`Durability::Synced`]. On failure the temporary file is removed and
/// the target is unchanged.
pub fn persist(mut tmp: Temporary, durability: Durability) -> Result<(), WriteError> {
    prepare(&mut tmp, durability)?;
    let folder = folder_of(&tmp.target);
    let shown = tmp.shown.clone();
    rename(tmp)?;
    if durability == Durability::Synced {
        sync_folder(&folder).map_err(|err| WriteError::io(&shown, WriteStep::Replace, err))?;
    }
    Ok(())
}

/// Before the rename: the bytes synced, the derived name checked again,
/// and the mode of the file replaced given to the new one.
fn prepare(tmp: &mut Temporary, durability: Durability) -> Result<(), WriteError> {
    let shown = tmp.shown.clone();
    match durability {
        Durability::Synced => tmp.file().as_file().sync_all(),
        Durability::Buffered => Ok(()),
    }
    .map_err(|err| WriteError::io(&shown, WriteStep::Write, err))?;
    let replaced = match tmp.naming {
        Naming::Given => fs::symlink_metadata(&tmp.target)
            .ok()
            .filter(fs::Metadata::is_file),
        Naming::Derived(derived) => check_derived(&tmp.target, derived)?,
    };
    if let Some(meta) = replaced {
        keep_mode(tmp.file().as_file(), &meta)
            .map_err(|err| WriteError::io(&shown, WriteStep::Write, err))?;
    }
    Ok(())
}

/// The permission bits of the file replaced, without set-user-ID and
/// set-group-ID.
#[cfg(unix)]
fn keep_mode(file: &fs::File, replaced: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = replaced.permissions().mode() & 0o1777;
    file.set_permissions(fs::Permissions::from_mode(mode))
}

/// Only read-only is kept here.
#[cfg(not(unix))]
fn keep_mode(file: &fs::File, replaced: &fs::Metadata) -> io::Result<()> {
    file.set_permissions(replaced.permissions())
}

fn rename(mut tmp: Temporary) -> Result<(), WriteError> {
    let mut alive = alive();
    let file = tmp.file.take().expect("a temporary file is renamed once");
    let at = file.path().to_owned();
    let renamed = file.persist(&tmp.target);
    // Renamed, or removed with the error's file when it drops.
    forget(&mut alive, &at);
    renamed.map_err(|err| WriteError::io(&tmp.shown, WriteStep::Replace, err.error))?;
    Ok(())
}

/// Writes a new file at `path`, atomically, never over anything at that
/// name, a link included (a dangling one too): the bytes go to a temporary
/// file beside it, which is then renamed to `path` only if the name is
/// still free (`renameat2`'s `RENAME_NOREPLACE`, or a hard link).
pub fn write_new(path: &Path, bytes: &[u8], durability: Durability) -> Result<(), WriteError> {
    if fs::symlink_metadata(path).is_ok() {
        return Err(WriteError::refuse(path, Refusal::Exists));
    }
    let mut file = new_temporary(path)?;
    file.write_all(bytes)
        .and_then(|()| match durability {
            Durability::Synced => file.as_file().sync_all(),
            Durability::Buffered => Ok(()),
        })
        .map_err(|err| WriteError::io(path, WriteStep::Write, err))?;
    {
        let mut alive = alive();
        let at = file.path().to_owned();
        let renamed = file.persist_noclobber(path);
        forget(&mut alive, &at);
        match renamed {
            Ok(_) => {}
            Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => {
                return Err(WriteError::refuse(path, Refusal::Exists));
            }
            Err(err) => return Err(WriteError::io(path, WriteStep::Replace, err.error)),
        }
    }
    if durability == Durability::Synced {
        sync_folder(&folder_of(path))
            .map_err(|err| WriteError::io(path, WriteStep::Replace, err))?;
    }
    Ok(())
}

/// What stands at a derived name, by the rules of [`Naming::Derived`]: the
/// metadata of a regular file accum may replace, `None` for a free name,
/// or the refusal.
fn check_derived(path: &Path, derived: Derived) -> Result<Option<fs::Metadata>, WriteError> {
    let what = derived.what;
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(WriteError::io(path, WriteStep::Check, err)),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err(WriteError::refuse(path, Refusal::Link { what }));
    }
    if !kind.is_file() {
        let kind = if kind.is_dir() {
            "directory"
        } else {
            special_kind(&kind)
        };
        return Err(WriteError::refuse(path, Refusal::NotAFile { what, kind }));
    }
    let ours = match derived.replaces {
        Replaces::Any => true,
        Replaces::Nothing => false,
        Replaces::Recognised(recognise) => match read_head(path) {
            Ok(head) => recognise(&head),
            Err(err) if is_link_error(&err) => {
                return Err(WriteError::refuse(path, Refusal::Link { what }));
            }
            // A file accum cannot read is not one it wrote.
            Err(err) if err.kind() == io::ErrorKind::PermissionDenied => false,
            Err(err) => return Err(WriteError::io(path, WriteStep::Check, err)),
        },
    };
    if ours {
        Ok(Some(meta))
    } else {
        Err(WriteError::refuse(path, Refusal::NotOurs { what }))
    }
}

#[cfg(unix)]
fn special_kind(kind: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else {
        "device"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &fs::FileType) -> &'static str {
    "device"
}

/// The first [`RECOGNISED_BYTES`] bytes of the regular file at `path`,
/// opened without following a link and without blocking (a FIFO put there
/// meanwhile), and checked to be a regular file once open.
fn read_head(path: &Path) -> io::Result<Vec<u8>> {
    let file = open_regular(fs::OpenOptions::new().read(true), path)?;
    let mut head = Vec::new();
    file.take(RECOGNISED_BYTES).read_to_end(&mut head)?;
    Ok(head)
}

/// `ELOOP`: `O_NOFOLLOW` met a link.
fn is_link_error(err: &io::Error) -> bool {
    #[cfg(unix)]
    {
        err.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}

/// Opens `path` for writing, creating it if missing, without following a
/// link at the name: for a lock file at a derived name.
pub fn open_no_follow(path: &Path) -> io::Result<fs::File> {
    open_regular(
        fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
        path,
    )
}

/// Opens `path` with `options`, neither following a link at the name
/// (`O_NOFOLLOW`) nor blocking on a FIFO put there (`O_NONBLOCK`), and
/// checks on the open handle that it is a regular file.
fn open_regular(options: &mut fs::OpenOptions, path: &Path) -> io::Result<fs::File> {
    let file = open_with(options, path, Links::Refused)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// Whether opening a name follows a symbolic link at its last component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// The link is followed: a name the user typed, or one already
    /// checked to stay where it may.
    Followed,
    /// A link at the name fails the open (`O_NOFOLLOW`, `ELOOP`).
    Refused,
}

/// Opens the input at `path` for reading without blocking on a FIFO or a
/// device put there (`O_NONBLOCK`, which a regular file ignores), following
/// a link at the name only as `links` says. The one way accum opens a file
/// it reads: the caller checks the type and size on the handle it gets
/// (`File::metadata`), never on the path, so that nothing swapped in
/// between the check and the open is read.
pub fn open_input(path: &Path, links: Links) -> io::Result<fs::File> {
    open_with(fs::OpenOptions::new().read(true), path, links)
}

/// `options.open(path)` with `O_NONBLOCK`, and `O_NOFOLLOW` when links
/// are refused.
fn open_with(options: &mut fs::OpenOptions, path: &Path, links: Links) -> io::Result<fs::File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let follow = match links {
            Links::Followed => 0,
            Links::Refused => libc::O_NOFOLLOW,
        };
        options.custom_flags(libc::O_NONBLOCK | follow);
    }
    #[cfg(not(unix))]
    let _ = links;
    options.open(path)
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

/// Checks that a write of `path` by the rules of `naming` could be made
/// now, by checking the name and creating and removing a temporary file
/// beside it, so that a long job fails before its work instead of after
/// it.
pub fn check_writable(path: &Path, naming: Naming) -> Result<(), WriteError> {
    if let Naming::Given = naming {
        let resolved = resolve_links(path)
            .map_err(|source| WriteError::io(path, WriteStep::CreateTemporary, source))?;
        if fs::metadata(&resolved).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            // A device or a pipe is written in place, not beside.
            return Ok(());
        }
    }
    // A temporary file like the write's own, removed when dropped.
    create_temporary(path, naming).map(drop)
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
            write_atomic(&target, b"new", durability, Naming::Given).unwrap();
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
        let err = write_atomic(&target, b"new", Durability::Synced, Naming::Given).unwrap_err();
        assert_eq!(err.step, WriteStep::Replace, "{err}");
        assert!(err.to_string().contains("out: cannot replace"), "{err}");
        assert_eq!(names(&dir), ["out"]);
        assert!(target.join("inside").is_dir());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_batch_whose_rename_fails_puts_back_what_it_replaced() {
        let dir = scratch("batch-rollback");
        // A replaced file, a new file, then a rename that fails: a
        // non-empty folder put at the last name after the batch was staged.
        let kept = dir.join("sheet.md");
        fs::write(&kept, "old sheet").unwrap();
        let created = dir.join("sheet.loss.svg");
        let blocked = dir.join("sheet.lr.svg");
        let mut batch = Batch::new();
        batch.add(&kept, b"new sheet", Naming::Given).unwrap();
        batch.add(&created, b"<svg/>", Naming::Given).unwrap();
        batch.add(&blocked, b"<svg/>", Naming::Given).unwrap();
        fs::create_dir_all(blocked.join("inside")).unwrap();
        let err = batch.commit(Durability::Synced).unwrap_err();
        assert_eq!(err.step, WriteStep::Replace, "{err}");
        assert_eq!(fs::read_to_string(&kept).unwrap(), "old sheet");
        // Nothing else is left: no new file, no temporary, no kept link.
        assert_eq!(names(&dir), ["sheet.lr.svg", "sheet.md"]);
        // Done whole, the batch leaves no kept link either.
        fs::remove_dir_all(&blocked).unwrap();
        let mut batch = Batch::new();
        batch.add(&kept, b"new sheet", Naming::Given).unwrap();
        batch.add(&created, b"<svg/>", Naming::Given).unwrap();
        batch.commit(Durability::Buffered).unwrap();
        assert_eq!(fs::read_to_string(&kept).unwrap(), "new sheet");
        assert_eq!(names(&dir), ["sheet.loss.svg", "sheet.md"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_that_cannot_hold_files_fails_before_writing() {
        let dir = scratch("no-folder");
        let file = dir.join("file");
        fs::write(&file, "x").unwrap();
        // A path under a regular file: refused even for root.
        let err = check_writable(&file.join("out.json"), Naming::Given).unwrap_err();
        assert_eq!(err.step, WriteStep::CreateTemporary, "{err}");
        check_writable(&dir.join("out.json"), Naming::Given).unwrap();
        let err = write_atomic(
            &file.join("out.json"),
            b"new",
            Durability::Synced,
            Naming::Given,
        )
        .unwrap_err();
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
        write_atomic(
            &dir.join("link2.json"),
            b"new",
            Durability::Synced,
            Naming::Given,
        )
        .unwrap();
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
        write_atomic(
            &dir.join("dangling.json"),
            b"x",
            Durability::Buffered,
            Naming::Given,
        )
        .unwrap();
        assert_eq!(fs::read_to_string(dir.join("real/new.json")).unwrap(), "x");
        assert_eq!(
            names(&dir),
            ["dangling.json", "link.json", "link2.json", "real"]
        );
        assert_eq!(names(&dir.join("real")), ["new.json", "out.json"]);
        // A device is written to, not replaced by a file.
        write_atomic(
            Path::new("/dev/null"),
            b"gone",
            Durability::Synced,
            Naming::Given,
        )
        .unwrap();
        check_writable(Path::new("/dev/null"), Naming::Given).unwrap();
        assert!(
            fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        // A loop of links is an error, not a hang.
        symlink("loop-b", dir.join("loop-a")).unwrap();
        symlink("loop-a", dir.join("loop-b")).unwrap();
        assert!(
            write_atomic(&dir.join("loop-a"), b"x", Durability::Synced, Naming::Given).is_err()
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    const PLOT: Derived = Derived {
        what: "a plot",
        replaces: Replaces::Recognised(|head| head.starts_with(b"MARK")),
    };

    #[cfg(unix)]
    #[test]
    fn a_derived_name_is_never_followed_and_replaces_only_its_own_files() {
        use std::os::unix::fs::symlink;
        let dir = scratch("derived");
        fs::write(dir.join("outside"), "keep").unwrap();
        let derived = Naming::Derived(PLOT);
        for (name, link) in [("abs", dir.join("outside")), ("rel", "outside".into())] {
            symlink(&link, dir.join(name)).unwrap();
            let err = write_atomic(&dir.join(name), b"MARK new", Durability::Synced, derived)
                .unwrap_err();
            assert_eq!(err.refused, Some(Refusal::Link { what: "a plot" }), "{err}");
            assert!(
                err.to_string()
                    .ends_with("is a symbolic link, and accum follows no link at a name it chose (a plot): remove the link, then run again"),
                "{err}"
            );
        }
        symlink("missing", dir.join("dangling")).unwrap();
        assert!(check_writable(&dir.join("dangling"), derived).is_err());
        fs::create_dir(dir.join("folder")).unwrap();
        let err =
            write_atomic(&dir.join("folder"), b"MARK", Durability::Synced, derived).unwrap_err();
        assert!(err.to_string().contains("is a directory, where"), "{err}");
        // Not accum's: refused; accum's: replaced.
        fs::write(dir.join("mine"), "user's notes").unwrap();
        let err =
            write_atomic(&dir.join("mine"), b"MARK", Durability::Synced, derived).unwrap_err();
        assert_eq!(err.refused, Some(Refusal::NotOurs { what: "a plot" }));
        fs::write(dir.join("plot"), "MARK old").unwrap();
        write_atomic(&dir.join("plot"), b"MARK new", Durability::Synced, derived).unwrap();
        assert_eq!(fs::read_to_string(dir.join("plot")).unwrap(), "MARK new");
        assert_eq!(fs::read_to_string(dir.join("outside")).unwrap(), "keep");
        assert_eq!(
            fs::read_to_string(dir.join("mine")).unwrap(),
            "user's notes"
        );
        assert_eq!(
            names(&dir),
            [
                "abs", "dangling", "folder", "mine", "outside", "plot", "rel"
            ]
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_new_one_is_not_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("modes");
        let script = dir.join("run.sh");
        fs::write(&script, "old").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).unwrap();
        write_atomic(&script, b"new", Durability::Synced, Naming::Given).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&script), 0o750);
        // New files: 0666 less the umask, which holds at least the
        // owner's read and write here (the test process's umask is not
        // changed: other tests run beside it).
        write_atomic(
            &dir.join("new.json"),
            b"x",
            Durability::Synced,
            Naming::Given,
        )
        .unwrap();
        assert_eq!(mode(&dir.join("new.json")) & 0o600, 0o600);
        assert_eq!(mode(&dir.join("new.json")) & 0o111, 0);
        write_new(&dir.join("fresh.toml"), b"x", Durability::Synced).unwrap();
        assert_eq!(mode(&dir.join("new.json")), mode(&dir.join("fresh.toml")));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_batch_writes_all_or_none() {
        let dir = scratch("batch");
        fs::write(dir.join("a"), "old a").unwrap();
        fs::write(dir.join("mine"), "user's").unwrap();
        let mut batch = Batch::new();
        batch.add(&dir.join("a"), b"new a", Naming::Given).unwrap();
        // The second file is refused: the first is not written either.
        assert!(
            batch
                .add(&dir.join("mine"), b"MARK", Naming::Derived(PLOT))
                .is_err()
        );
        drop(batch);
        assert_eq!(fs::read_to_string(dir.join("a")).unwrap(), "old a");
        assert_eq!(names(&dir), ["a", "mine"]);
        let mut batch = Batch::new();
        batch.add(&dir.join("a"), b"new a", Naming::Given).unwrap();
        batch
            .add(&dir.join("b"), b"MARK b", Naming::Derived(PLOT))
            .unwrap();
        batch.commit(Durability::Synced).unwrap();
        assert_eq!(fs::read_to_string(dir.join("a")).unwrap(), "new a");
        assert_eq!(fs::read_to_string(dir.join("b")).unwrap(), "MARK b");
        assert_eq!(names(&dir), ["a", "b", "mine"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_never_replaces_anything_at_its_name() {
        let dir = scratch("new");
        std::os::unix::fs::symlink("elsewhere", dir.join("dangling")).unwrap();
        let err = write_new(&dir.join("dangling"), b"x", Durability::Synced).unwrap_err();
        assert_eq!(err.refused, Some(Refusal::Exists));
        assert!(!dir.join("elsewhere").exists());
        write_new(&dir.join("new"), b"x", Durability::Synced).unwrap();
        assert!(write_new(&dir.join("new"), b"y", Durability::Synced).is_err());
        assert_eq!(fs::read_to_string(dir.join("new")).unwrap(), "x");
        assert_eq!(names(&dir), ["dangling", "new"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
