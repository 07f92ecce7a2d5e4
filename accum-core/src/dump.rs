//! Dumps for cross-checking with other frameworks, format `accum-dump/1`
//! (`docs/dump-format.md`): a manifest, the initial parameters, every
//! microbatch of every update attempt (token ids, labels, example ids), the
//! group's full gradient and the parameters after the attempt, as `.npy`
//! files numpy and PyTorch load directly. With a batch ramp-up, the manifest
//! lists the stages and each attempt's `stats.json` names its stage and
//! accumulation.
//!
//! [`DumpWriter`] is an [`Observer`]: pass it among
//! [`RunOptions::observers`](crate::engine::RunOptions::observers); the
//! engine knows nothing of files.
//!
//! Every file is written atomically (a temporary file in the same folder,
//! then a rename), so a reader never sees half a file, and the manifest is
//! rewritten after each attempt so an interrupted run leaves a consistent
//! dump. The `.npy` writer is [`npy_bytes`]: format 1.0, little-endian, C
//! order, header padded to 64 bytes.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::data::PackedMicrobatch;
use crate::engine::{Engine, GroupView, Observer, ObserverError, UpdateView};
use crate::fsio::{Derived, Durability, Naming, Replaces};
use crate::model::Model;
use crate::report::UpdateStats;
use crate::tensor::{Tensors, flat};

/// The format tag in `manifest.json`.
pub const DUMP_FORMAT: &str = "accum-dump/1";

/// Writing a dump failed.
#[derive(Debug)]
pub struct DumpError {
    /// The file or folder that could not be written.
    pub path: PathBuf,
    /// The I/O error.
    pub source: io::Error,
    /// Why the folder cannot take the dump, when it is not an I/O failure:
    /// another run writes it, or it holds files that are not a dump's.
    pub refused: Option<String>,
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(why) = &self.refused {
            return write!(f, "{}: {why}", crate::shown::path(&self.path));
        }
        write!(
            f,
            "cannot write dump file {}: {}; check that the folder exists and is writable",
            crate::shown::path(&self.path),
            self.source
        )
    }
}

impl std::error::Error for DumpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// An element type `.npy` files can hold here.
pub(crate) trait NpyElement: Copy {
    /// The numpy `descr` string (`"<f4"`, `"<i8"`).
    const DESCR: &'static str;
    /// Appends the little-endian bytes of `self`.
    fn put(self, out: &mut Vec<u8>);
}

impl NpyElement for f32 {
    const DESCR: &'static str = "<f4";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl NpyElement for i64 {
    const DESCR: &'static str = "<i8";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

/// The bytes of a `.npy` file (format 1.0) holding `data` in C order with
/// `shape`.
///
/// # Panics
/// When `data.len()` is not the product of `shape`.
pub(crate) fn npy_bytes<T: NpyElement>(shape: &[usize], data: &[T]) -> Vec<u8> {
    assert_eq!(
        shape.iter().product::<usize>(),
        data.len(),
        "shape matches the element count"
    );
    let dims = match shape {
        [] => "()".to_owned(),
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {dims}, }}",
        T::DESCR
    );
    // magic (6) + version (2) + header length (2) + header, a multiple of 64,
    // the header ending in a newline.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len() * 8);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    let len = u16::try_from(header.len()).expect("an npy header of a few dimensions fits in u16");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for &x in data {
        x.put(&mut out);
    }
    out
}

/// A dump's files are named by accum inside a folder the dump took whole
/// ([`take_dir`]): any regular file there is this run's, and a link, a
/// folder or a device there (put there while the run went on) is refused.
const DUMP_FILE: Naming = Naming::Derived(Derived {
    what: "a file of the dump",
    replaces: Replaces::Any,
});

/// Writes `bytes` to `path` atomically: a temporary file beside it, then a
/// rename ([`crate::fsio::write_atomic`]; not synced, for speed over
/// hundreds of small files).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), DumpError> {
    crate::fsio::write_atomic(path, bytes, Durability::Buffered, DUMP_FILE).map_err(|err| {
        DumpError {
            refused: err.refused.as_ref().map(ToString::to_string),
            path: err.path,
            source: err.source,
        }
    })
}

fn create_dir(path: &Path) -> Result<(), DumpError> {
    fs::create_dir_all(path).map_err(|source| DumpError {
        path: path.to_path_buf(),
        source,
        refused: None,
    })
}

/// The lock file of a dump folder, held while a run writes it.
const LOCK_FILE: &str = ".accum-dump.lock";

/// Why a folder another run is writing is refused.
const IN_USE: &str =
    "another accum run is writing a dump here; wait for it to end or give another folder";

/// Whether `name` is something a dump writes (its files, and the hidden
/// temporaries and kept files of [`crate::fsio`]'s writes): what a previous
/// dump left is removed before a new one starts, and anything else keeps the
/// folder from being used.
fn dump_entry(name: &str) -> bool {
    name == "manifest.json"
        || name == "init"
        || name == LOCK_FILE
        || name.starts_with("update-")
        || (name.starts_with('.') && (name.ends_with(".tmp") || name.ends_with(".old")))
}

/// Takes `dir` whole for a new dump: creates it, locks it against another
/// run (the lock goes with the process, even when it is killed), and
/// removes what a previous dump left, so the folder holds this run's files
/// only. A folder in use, or holding files that are not a dump's, is refused.
fn take_dir(dir: &Path) -> Result<fs::File, DumpError> {
    create_dir(dir)?;
    let refuse = |why: String| DumpError {
        path: dir.to_path_buf(),
        source: io::Error::other(why.clone()),
        refused: Some(why),
    };
    let io_fail = |path: &Path, source| DumpError {
        path: path.to_path_buf(),
        source,
        refused: None,
    };
    let lock_path = dir.join(LOCK_FILE);
    // A run that is writing here is named first, whatever its files look
    // like at this moment.
    if fs::symlink_metadata(&lock_path).is_ok_and(|meta| meta.is_file()) {
        let held = crate::fsio::open_no_follow(&lock_path)
            .map_err(|e| io_fail(&lock_path, e))?
            .try_lock();
        if matches!(held, Err(fs::TryLockError::WouldBlock)) {
            return Err(refuse(IN_USE.to_owned()));
        }
    }
    // Another's files next: a refused folder gets no lock file either.
    let entries: Vec<fs::DirEntry> = fs::read_dir(dir)
        .map_err(|e| io_fail(dir, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| io_fail(dir, e))?;
    if let Some(other) = entries
        .iter()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|name| !dump_entry(name))
    {
        return Err(refuse(format!(
            "holds `{other}`, which is not part of an accum dump; give a new or empty folder (a previous dump there is replaced)"
        )));
    }
    // A lock accum made is a regular file; a link, a folder or a FIFO at
    // its name is not one to open.
    if fs::symlink_metadata(&lock_path).is_ok_and(|meta| !meta.is_file()) {
        return Err(refuse(format!(
            "holds `{LOCK_FILE}`, which is not a lock file accum made (a link, a folder or a FIFO); remove it, then run again"
        )));
    }
    // A link at the lock's name (left by take_dir's check above only if it
    // appeared since) is not followed: the lock is never a file elsewhere.
    let lock = crate::fsio::open_no_follow(&lock_path).map_err(|e| io_fail(&lock_path, e))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            return Err(refuse(IN_USE.to_owned()));
        }
        Err(fs::TryLockError::Error(e)) => return Err(io_fail(&lock_path, e)),
    }
    for entry in entries {
        let name = entry.file_name();
        if name == LOCK_FILE {
            continue;
        }
        let path = entry.path();
        let removed = match entry.file_type() {
            Ok(t) if t.is_dir() => fs::remove_dir_all(&path),
            _ => fs::remove_file(&path),
        };
        removed.map_err(|e| io_fail(&path, e))?;
    }
    Ok(lock)
}

fn write_tensors(dir: &Path, tensors: &Tensors) -> Result<(), DumpError> {
    create_dir(dir)?;
    for (name, value) in tensors.iter() {
        write_atomic(
            &dir.join(format!("{name}.npy")),
            &npy_bytes(value.shape(), flat(value)),
        )?;
    }
    Ok(())
}

/// Writes a dump while an engine runs: an [`Observer`]; add it to
/// [`RunOptions::observers`](crate::engine::RunOptions::observers).
#[derive(Debug)]
pub struct DumpWriter {
    dir: PathBuf,
    manifest: serde_json::Value,
    /// `A` of each stage.
    accumulation: Vec<u64>,
    updates: u64,
    /// The folder's lock, held until the writer is dropped.
    _lock: fs::File,
}

impl DumpWriter {
    /// Creates `dir` (and parents), or takes it over from a previous dump
    /// (locked against another run, the previous dump's files removed), and
    /// writes the manifest and the initial parameters of `engine`'s model.
    pub fn create<M: Model>(dir: &Path, engine: &Engine<M>) -> Result<DumpWriter, DumpError> {
        let lock = take_dir(dir)?;
        let config = engine.config();
        let o = &config.optimizer;
        let is_sgd = o.kind == crate::settings::OptimizerKind::Sgd;
        let stages: Vec<serde_json::Value> = engine
            .stages()
            .stages()
            .iter()
            .map(|stage| {
                serde_json::json!({
                    "accumulation": stage.plan().accumulation(),
                    "global_batch": stage.plan().effective_batch().get(),
                    "first_update": stage.start().get() + 1,
                    "last_update": stage.end().map(|end| end.get()),
                })
            })
            .collect();
        let manifest = serde_json::json!({
            "format": DUMP_FORMAT,
            "plan": engine.plan(),
            "stages": stages,
            "model": engine.model().describe(),
            "params": engine.model().params().names(),
            "loss": {
                "normalization": config.loss.normalization,
                "ignore_index": config.loss.ignore_index,
            },
            "optimizer": {
                "kind": o.kind,
                "betas": if is_sgd { serde_json::Value::Null } else { serde_json::json!(o.betas) },
                "eps": if is_sgd { serde_json::Value::Null } else { serde_json::json!(o.eps) },
                "weight_decay": o.weight_decay,
                "momentum": if is_sgd { serde_json::json!(o.momentum) } else { serde_json::Value::Null },
                "clip_norm": o.clip_norm,
            },
            "precision": { "mode": config.precision.mode },
            "last_group": config.data.last_group,
            "updates": 0,
            "data": {
                "seed": config.data.seed,
                "examples": config.data.examples,
                "min_len": config.data.min_len,
                "max_len": config.data.max_len,
                "vocab": config.data.vocab,
            },
        });
        let mut writer = DumpWriter {
            dir: dir.to_path_buf(),
            manifest,
            accumulation: engine
                .stages()
                .stages()
                .iter()
                .map(|stage| stage.plan().accumulation())
                .collect(),
            updates: 0,
            _lock: lock,
        };
        writer.write_manifest()?;
        write_tensors(&dir.join("init"), engine.model().params())?;
        Ok(writer)
    }

    /// The dump's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Update attempts written so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    fn write_manifest(&mut self) -> Result<(), DumpError> {
        self.manifest["updates"] = serde_json::json!(self.updates);
        let text = serde_json::to_string_pretty(&self.manifest).expect("a manifest serializes");
        write_atomic(&self.dir.join("manifest.json"), text.as_bytes())
    }

    fn update_dir(&self, attempt: u64) -> PathBuf {
        self.dir.join(format!("update-{attempt:06}"))
    }

    /// Writes one microbatch of attempt `attempt`.
    fn microbatch(
        &mut self,
        attempt: u64,
        replica: usize,
        index: usize,
        batch: &PackedMicrobatch,
        ignore_index: i64,
    ) -> Result<(), DumpError> {
        let dir = self.update_dir(attempt);
        create_dir(&dir)?;
        let (tokens, labels) = batch.padded(ignore_index);
        let stem = format!("r{replica}-m{index}");
        let shape = [tokens.nrows(), tokens.ncols()];
        write_atomic(
            &dir.join(format!("{stem}-tokens.npy")),
            &npy_bytes(&shape, tokens.as_slice().expect("fresh arrays are C order")),
        )?;
        write_atomic(
            &dir.join(format!("{stem}-labels.npy")),
            &npy_bytes(&shape, labels.as_slice().expect("fresh arrays are C order")),
        )?;
        let ids: Vec<i64> = batch
            .ids
            .iter()
            .map(|&id| i64::try_from(id).unwrap_or(i64::MAX))
            .collect();
        write_atomic(
            &dir.join(format!("{stem}-ids.npy")),
            &npy_bytes(&[ids.len()], &ids),
        )
    }

    /// Writes the group's full gradient (reduced, normalized, unscaled,
    /// before clipping).
    fn gradient(&mut self, attempt: u64, grads: &Tensors) -> Result<(), DumpError> {
        write_tensors(&self.update_dir(attempt).join("grad"), grads)
    }

    /// Writes the parameters after the attempt and its statistics, then the
    /// manifest with the new count.
    fn update(
        &mut self,
        attempt: u64,
        params: &Tensors,
        stats: &UpdateStats,
    ) -> Result<(), DumpError> {
        let dir = self.update_dir(attempt);
        write_tensors(&dir.join("param"), params)?;
        let json = serde_json::json!({
            "loss": stats.loss,
            "denominator": stats.denominator,
            "applied": stats.applied,
            "lr": stats.lr,
            "grad_norm": stats.grad_norm,
            "loss_scale": stats.loss_scale,
            "microbatches": stats.microbatches,
            "stage": stats.stage,
            "accumulation": self.accumulation.get(stats.stage),
        });
        let text = serde_json::to_string_pretty(&json).expect("stats serialize");
        write_atomic(&dir.join("stats.json"), text.as_bytes())?;
        self.updates = attempt;
        self.write_manifest()
    }
}

impl Observer for DumpWriter {
    fn on_group(&mut self, group: &GroupView<'_>) -> Result<(), ObserverError> {
        for replica in 0..group.replicas() {
            for (index, batch) in group.microbatches(replica).iter().enumerate() {
                self.microbatch(group.attempt, replica, index, batch, group.ignore_index)?;
            }
        }
        Ok(())
    }

    fn wants_gradient(&self) -> bool {
        true
    }

    fn on_gradient(&mut self, attempt: u64, grads: &Tensors) -> Result<(), ObserverError> {
        Ok(self.gradient(attempt, grads)?)
    }

    fn on_parameters(&mut self, update: &UpdateView<'_>) -> Result<(), ObserverError> {
        Ok(self.update(update.stats.attempt, update.params, update.stats)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_folder_may_hold_what_its_writes_leave_and_nothing_else() {
        for ours in [
            "manifest.json",
            "init",
            "update-000012",
            LOCK_FILE,
            ".manifest.json.Xa9f.tmp",
            ".manifest.json.4242-7.old",
        ] {
            assert!(dump_entry(ours), "{ours}");
        }
        for theirs in ["notes.txt", "manifest.json.old", ".git", "tmp"] {
            assert!(!dump_entry(theirs), "{theirs}");
        }
    }

    #[test]
    fn a_folder_another_writer_holds_is_refused_as_in_use_whatever_it_holds() {
        let dir = tempfile::tempdir().expect("temp");
        let held = take_dir(dir.path()).expect("the first writer takes it");
        // Mid-write, a foreign-looking name is there too.
        fs::write(dir.path().join("notes.txt"), "x").expect("write");
        let err = take_dir(dir.path()).expect_err("in use");
        assert_eq!(err.refused.as_deref(), Some(IN_USE));
        drop(held);
        let err = take_dir(dir.path()).expect_err("not a dump's file");
        assert!(err.refused.expect("refused").contains("notes.txt"));
    }

    #[test]
    fn npy_header_is_numpy_format_1_0() {
        let bytes = npy_bytes(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(
            header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"),
            "{header}"
        );
        assert!(header.ends_with('\n'));
        assert_eq!(bytes.len(), 10 + header_len + 24);
        assert_eq!(
            &bytes[10 + header_len..10 + header_len + 4],
            &1.0f32.to_le_bytes()
        );

        let ids = npy_bytes(&[2], &[7i64, -100]);
        let header_len = u16::from_le_bytes([ids[8], ids[9]]) as usize;
        let header = std::str::from_utf8(&ids[10..10 + header_len]).unwrap();
        assert!(header.contains("'descr': '<i8'") && header.contains("'shape': (2,)"));
        assert_eq!(&ids[ids.len() - 8..], &(-100i64).to_le_bytes());
        let scalar = npy_bytes::<f32>(&[], &[1.5]);
        assert!(
            std::str::from_utf8(&scalar[10..74])
                .unwrap()
                .contains("'shape': ()")
        );
    }

    #[test]
    fn atomic_write_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("accum-dump-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.npy");
        write_atomic(&path, b"abc").unwrap();
        write_atomic(&path, b"abcd").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"abcd");
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        fs::remove_dir_all(&dir).unwrap();
        let err = write_atomic(&dir.join("missing").join("y.npy"), b"").unwrap_err();
        assert!(err.to_string().contains("cannot write dump file"), "{err}");
    }
}
