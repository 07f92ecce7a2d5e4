//! Checkpoint folders: an [`EngineState`] on disk, written whole or not at
//! all, and the last complete one found again.
//!
//! A checkpoint folder `DIR` (a name the user gave) holds one folder per
//! checkpoint, `ckpt-<updates>` (the applied updates it was taken after),
//! each with `state.json` (the format [`CHECKPOINT_FORMAT`](crate::engine::CHECKPOINT_FORMAT), the settings,
//! the position, the report so far) and `tensors.bin` (the parameters and
//! the optimizer's state, little-endian `f32`). A checkpoint is written in
//! a temporary folder beside them (`.ckpt-tmp-<random>`), each file synced,
//! then the folder synced and renamed to its name, and `DIR` synced: a
//! process killed at any point leaves either the complete checkpoint or a
//! temporary folder, which is never read and is removed by the next write
//! or resume. So every `ckpt-<updates>` folder is complete, and the last
//! complete checkpoint is the one of the most updates.
//!
//! Names inside `DIR` are accum's: a link, a file or anything but a folder
//! at `ckpt-<updates>` is never followed, read or replaced, and files
//! inside a checkpoint are read with `O_NOFOLLOW`. Only the last
//! [`KEPT_CHECKPOINTS`] checkpoints are kept. One run writes to a folder
//! at a time.
//!
//! A run that writes a stats stream keeps it in parts beside the
//! checkpoints, `DIR/stats/<first>-<last>.jsonl`: the stream's lines of the
//! update attempts `first` to `last`, each part written whole (synced and
//! renamed) before the checkpoint it leads up to. The parts are the run's
//! history and are never removed with old checkpoints; a resume reads the
//! parts up to its checkpoint back into the new stream
//! ([`stats_until`]), so the stream covers the whole run, and removes the
//! parts past it (written by the run that was stopped before its next
//! checkpoint).

use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::engine::{EngineState, StateError, TENSORS_FILE};
use crate::fsio::{self, Durability};

/// The file of a checkpoint holding its JSON part.
pub const STATE_FILE: &str = "state.json";

/// The prefix of a checkpoint's folder: `ckpt-<updates>`.
pub const CHECKPOINT_PREFIX: &str = "ckpt-";

/// The folder in a checkpoint folder that keeps the stats stream's parts.
pub const STATS_FOLDER: &str = "stats";

/// The prefix of a checkpoint folder being written.
const TEMPORARY_PREFIX: &str = ".ckpt-tmp-";

/// Checkpoints kept in a folder: the newest, and the one before in case
/// the newest is damaged later.
pub const KEPT_CHECKPOINTS: usize = 2;

/// The most bytes of `state.json` read (its report is bounded).
const MAX_STATE_BYTES: u64 = 64 << 20;

/// A checkpoint could not be written or read.
#[derive(Debug)]
pub struct CheckpointError {
    /// The folder or file concerned.
    pub path: PathBuf,
    /// What went wrong.
    pub kind: CheckpointErrorKind,
}

/// What went wrong with a checkpoint.
#[derive(Debug)]
#[non_exhaustive]
pub enum CheckpointErrorKind {
    /// An I/O error, with what accum was doing.
    Io {
        /// `create`, `write`, `read`, `rename`, `sync`, `list`.
        doing: &'static str,
        /// The error.
        source: io::Error,
    },
    /// Something other than a folder stands at a checkpoint's name.
    NotAFolder,
    /// The folder holds no complete checkpoint.
    Empty,
    /// The checkpoint's files do not read, or do not fit the run.
    State(StateError),
}

impl CheckpointError {
    fn io(path: &Path, doing: &'static str, source: io::Error) -> CheckpointError {
        CheckpointError {
            path: path.to_owned(),
            kind: CheckpointErrorKind::Io { doing, source },
        }
    }

    /// The state error, when the checkpoint read but does not fit.
    pub fn state(&self) -> Option<&StateError> {
        match &self.kind {
            CheckpointErrorKind::State(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.kind {
            CheckpointErrorKind::Io { doing, source } => {
                write!(f, "{path}: cannot {doing} the checkpoint: {source}")
            }
            CheckpointErrorKind::NotAFolder => write!(
                f,
                "{path}: is not a folder, where accum keeps a checkpoint (it follows no link \
                 there): move it away, then run again"
            ),
            CheckpointErrorKind::Empty => write!(
                f,
                "{path}: holds no complete checkpoint (a `{CHECKPOINT_PREFIX}<updates>` folder); \
                 give the folder a run wrote with --checkpoint"
            ),
            CheckpointErrorKind::State(e) => write!(f, "{path}: {e}"),
        }
    }
}

impl std::error::Error for CheckpointError {}

/// The updates of a checkpoint folder's name, `ckpt-<updates>`.
fn updates_of(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(CHECKPOINT_PREFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The checkpoints in `dir` (folders only, no link), by updates, and
/// removes the temporary folders of interrupted writes.
fn survey(dir: &Path) -> Result<Vec<(u64, PathBuf)>, CheckpointError> {
    let entries = fs::read_dir(dir).map_err(|e| CheckpointError::io(dir, "list", e))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| CheckpointError::io(dir, "list", e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if name.starts_with(TEMPORARY_PREFIX) && kind.is_dir() {
            // A write that was killed: never read, and removed (a link
            // there is not a folder accum made, and stays).
            let _ = fs::remove_dir_all(entry.path());
            continue;
        }
        if let Some(updates) = updates_of(name) {
            if !kind.is_dir() {
                return Err(CheckpointError {
                    path: entry.path(),
                    kind: CheckpointErrorKind::NotAFolder,
                });
            }
            found.push((updates, entry.path()));
        }
    }
    found.sort_unstable_by_key(|(u, _)| *u);
    Ok(found)
}

/// Writes `state` as the checkpoint `dir/ckpt-<updates>`, atomically
/// (module header), creating `dir` if missing, and keeps the last
/// [`KEPT_CHECKPOINTS`]. Gives the checkpoint's folder.
pub fn write_checkpoint(dir: &Path, state: &EngineState) -> Result<PathBuf, CheckpointError> {
    write_checkpoint_then(dir, state, || {})
}

/// [`write_checkpoint`], calling `before_rename` once both files are
/// written and synced, before the folder gets its name: a test hook, to
/// stop a process there.
#[doc(hidden)]
pub fn write_checkpoint_then(
    dir: &Path,
    state: &EngineState,
    before_rename: impl FnOnce(),
) -> Result<PathBuf, CheckpointError> {
    fs::create_dir_all(dir).map_err(|e| CheckpointError::io(dir, "create", e))?;
    let existing = survey(dir)?;
    let target = dir.join(format!("{CHECKPOINT_PREFIX}{}", state.updates()));
    let tmp = tempfile::Builder::new()
        .prefix(TEMPORARY_PREFIX)
        .tempdir_in(dir)
        .map_err(|e| CheckpointError::io(dir, "create", e))?;
    let (json, bytes) = state.to_files();
    let write = |name: &str, bytes: &[u8]| {
        let path = tmp.path().join(name);
        fsio::write_new(&path, bytes, Durability::Synced).map_err(|e| CheckpointError {
            path: target.join(name),
            kind: CheckpointErrorKind::Io {
                doing: "write",
                source: e.source,
            },
        })
    };
    // The tensors first: a `state.json` is the last file a checkpoint gets.
    write(TENSORS_FILE, &bytes)?;
    write(STATE_FILE, json.as_bytes())?;
    sync(tmp.path()).map_err(|e| CheckpointError::io(&target, "sync", e))?;
    before_rename();
    if let Some((_, old)) = existing.iter().find(|(_, p)| *p == target) {
        // The same update written again (a run resumed from an earlier
        // checkpoint): the new one replaces it.
        fs::remove_dir_all(old).map_err(|e| CheckpointError::io(old, "replace", e))?;
    }
    let kept = tmp.keep();
    if let Err(e) = fs::rename(&kept, &target) {
        let _ = fs::remove_dir_all(&kept);
        return Err(CheckpointError::io(&target, "rename", e));
    }
    sync(dir).map_err(|e| CheckpointError::io(dir, "sync", e))?;
    let mut all: Vec<(u64, PathBuf)> = existing.into_iter().filter(|(_, p)| *p != target).collect();
    all.push((state.updates(), target.clone()));
    all.sort_unstable_by_key(|(u, _)| *u);
    let old = all.len().saturating_sub(KEPT_CHECKPOINTS);
    for (_, path) in &all[..old] {
        let _ = fs::remove_dir_all(path);
    }
    Ok(target)
}

/// `fsync` of a folder, so that what was renamed in it reaches the disk.
fn sync(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Keeps `lines`, the stats stream's lines of the update attempts after
/// `after` up to and including `through`, as the part
/// `dir/stats/<after + 1>-<through>.jsonl` (module header): written whole
/// or not at all, and before the checkpoint taken after attempt `through`.
pub fn write_stats_part(
    dir: &Path,
    after: u64,
    through: u64,
    lines: &[u8],
) -> Result<(), CheckpointError> {
    let folder = stats_folder(dir, true)?.expect("created");
    let path = folder.join(format!("{}-{through}.jsonl", after + 1));
    fsio::write_atomic(
        &path,
        lines,
        Durability::Synced,
        crate::report::stream::STREAM_NAME,
    )
    .map_err(|e| CheckpointError::io(&path, "write", e.source))?;
    sync(&folder).map_err(|e| CheckpointError::io(&folder, "sync", e))
}

/// The stats stream of a run before a resume, read back from its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EarlierStats {
    /// Every line of the attempts up to the checkpoint, in order.
    Whole(Vec<u8>),
    /// No part holds the attempts from `from` on (the run before the
    /// resume wrote no stream, or its parts were removed): a new stream
    /// covers the attempts after the checkpoint only.
    Missing {
        /// The first attempt no part holds.
        from: u64,
    },
}

/// The stats stream's lines of the attempts `1..=attempts`, read from the
/// parts in `dir/stats` (module header); the parts past `attempts` are
/// removed, so that the resumed run writes its own. Parts are read without
/// following links, at most [`MAX_STREAM_BYTES`](crate::report::MAX_STREAM_BYTES)
/// in all.
pub fn stats_until(dir: &Path, attempts: u64) -> Result<EarlierStats, CheckpointError> {
    let Some(folder) = stats_folder(dir, false)? else {
        return Ok(if attempts == 0 {
            EarlierStats::Whole(Vec::new())
        } else {
            EarlierStats::Missing { from: 1 }
        });
    };
    let entries = fs::read_dir(&folder).map_err(|e| CheckpointError::io(&folder, "list", e))?;
    let mut parts = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| CheckpointError::io(&folder, "list", e))?;
        let name = entry.file_name();
        let Some((first, last)) = name.to_str().and_then(part_of) else {
            continue;
        };
        if last > attempts {
            // Written by the run that stopped before its next checkpoint.
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                let _ = fs::remove_file(entry.path());
            }
            continue;
        }
        parts.push((first, last, entry.path()));
    }
    parts.sort_unstable();
    let mut lines = Vec::new();
    let mut next = 1;
    while next <= attempts {
        let Some((_, last, path)) = parts.iter().rev().find(|(first, ..)| *first == next) else {
            return Ok(EarlierStats::Missing { from: next });
        };
        let left = crate::report::MAX_STREAM_BYTES.saturating_sub(lines.len() as u64);
        lines.extend(read_file(path, left)?);
        next = last + 1;
    }
    Ok(EarlierStats::Whole(lines))
}

/// The attempts of a part's name, `<first>-<last>.jsonl`.
fn part_of(name: &str) -> Option<(u64, u64)> {
    let (first, last) = name.strip_suffix(".jsonl")?.split_once('-')?;
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (first, last) = (number(first)?, number(last)?);
    (first >= 1 && first <= last).then_some((first, last))
}

/// `dir/stats`, created when `create` and missing; `None` when missing.
/// Anything but a folder there (a link included) is refused.
fn stats_folder(dir: &Path, create: bool) -> Result<Option<PathBuf>, CheckpointError> {
    let folder = dir.join(STATS_FOLDER);
    match fs::symlink_metadata(&folder) {
        Ok(meta) if meta.is_dir() => Ok(Some(folder)),
        Ok(_) => Err(CheckpointError {
            path: folder,
            kind: CheckpointErrorKind::NotAFolder,
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
            fs::create_dir_all(&folder).map_err(|e| CheckpointError::io(&folder, "create", e))?;
            Ok(Some(folder))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CheckpointError::io(&folder, "list", e)),
    }
}

/// Reads a file of a checkpoint without following a link at its name, at
/// most `limit` bytes.
fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, CheckpointError> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|e| CheckpointError::io(path, "read", e))?;
    let meta = file
        .metadata()
        .map_err(|e| CheckpointError::io(path, "read", e))?;
    if !meta.is_file() {
        return Err(CheckpointError::io(
            path,
            "read",
            io::Error::other("not a regular file"),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(limit)).unwrap_or(0));
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| CheckpointError::io(path, "read", e))?;
    Ok(bytes)
}

/// The last complete checkpoint in `dir`: its folder and its state. An
/// unreadable last checkpoint is an error, not a reason to take an older
/// one silently.
pub fn last_checkpoint(dir: &Path) -> Result<(PathBuf, EngineState), CheckpointError> {
    let found = survey(dir)?;
    let Some((_, path)) = found.last() else {
        return Err(CheckpointError {
            path: dir.to_owned(),
            kind: CheckpointErrorKind::Empty,
        });
    };
    read_checkpoint(path).map(|state| (path.clone(), state))
}

/// Reads the checkpoint in the folder `path` (a `ckpt-<updates>` folder).
pub fn read_checkpoint(path: &Path) -> Result<EngineState, CheckpointError> {
    let state_path = path.join(STATE_FILE);
    let json = read_file(&state_path, MAX_STATE_BYTES)?;
    let json = String::from_utf8(json).map_err(|_| CheckpointError {
        path: state_path.clone(),
        kind: CheckpointErrorKind::State(StateError::Unreadable {
            reason: "state.json is not UTF-8".to_owned(),
        }),
    })?;
    // The format first, so that another version is named as such even
    // when its tensors would not read.
    let bytes = read_file(&path.join(TENSORS_FILE), u64::MAX)?;
    EngineState::from_files(&json, &bytes).map_err(|e| CheckpointError {
        path: state_path,
        kind: CheckpointErrorKind::State(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{CHECKPOINT_FORMAT, Engine, RunOptions};
    use crate::plan::Plan;
    use crate::units::Updates;

    fn state_after(updates: u64) -> EngineState {
        let config = crate::engine::tests::small_for(16, "6 updates");
        let mut engine = Engine::new(Plan::new(2, 2, 1).unwrap(), &config).unwrap();
        engine
            .run_until(&mut RunOptions::default(), Updates::new(updates))
            .unwrap();
        engine.state()
    }

    #[test]
    fn the_last_complete_checkpoint_is_read_and_temporaries_removed() {
        let dir = tempfile::tempdir().unwrap();
        for n in [1, 2, 3] {
            write_checkpoint(dir.path(), &state_after(n)).unwrap();
        }
        // A write killed before its rename.
        let killed = dir.path().join(".ckpt-tmp-abc");
        fs::create_dir(&killed).unwrap();
        fs::write(killed.join(STATE_FILE), "{").unwrap();
        let (path, state) = last_checkpoint(dir.path()).unwrap();
        assert_eq!(path, dir.path().join("ckpt-3"));
        assert!(
            state.to_files() == state_after(3).to_files(),
            "read back as written"
        );
        assert!(!killed.exists(), "removed");
        assert!(!dir.path().join("ckpt-1").exists(), "two are kept");
        assert!(dir.path().join("ckpt-2").exists());
    }

    #[test]
    fn a_link_at_a_checkpoint_name_is_refused_and_an_empty_folder_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = last_checkpoint(dir.path()).unwrap_err();
        assert!(matches!(err.kind, CheckpointErrorKind::Empty), "{err}");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/", dir.path().join("ckpt-9")).unwrap();
            let err = last_checkpoint(dir.path()).unwrap_err();
            assert!(matches!(err.kind, CheckpointErrorKind::NotAFolder), "{err}");
        }
    }

    #[test]
    fn format_is_checked_before_the_tensors() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_checkpoint(dir.path(), &state_after(1)).unwrap();
        let json = fs::read_to_string(path.join(STATE_FILE)).unwrap();
        fs::write(
            path.join(STATE_FILE),
            json.replace(CHECKPOINT_FORMAT, "accum-checkpoint/2"),
        )
        .unwrap();
        fs::write(path.join(TENSORS_FILE), b"").unwrap();
        let err = last_checkpoint(dir.path()).unwrap_err();
        assert!(
            err.to_string().contains(
                "is of format `accum-checkpoint/2`, and this accum reads `accum-checkpoint/1`"
            ),
            "{err}"
        );
    }
}
