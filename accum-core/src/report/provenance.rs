//! Where a run report comes from: the run's name, its configuration file
//! and that file's hash, the accum version, when the run started, how long
//! it took and how fast it went, and the commit of the repository the
//! configuration sits in. A sheet checks a report against its
//! configuration with the hash, and a comparison labels runs by their
//! names.
//!
//! Nothing here needs a dependency or a process: the start time is
//! formatted from the system clock by the civil-date algorithm, the hash
//! is FNV-1a, and the commit is read from `.git/HEAD` and the ref it names
//! (bounded reads; git is never run, and nothing leaves the machine).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::Counters;

/// Where a run report comes from. Every field may be absent: a report
/// written before provenance was recorded has none, and a user's loop
/// ([`Recorder`](crate::driver::Recorder)) knows its configuration file
/// only when told.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The run's name: the configuration's own name, else its file stem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_name: Option<String>,
    /// The configuration file, as it was given to the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_path: Option<String>,
    /// The configuration file's hash: `fnv1a64:` and the 16 hex digits of
    /// FNV-1a over its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_hash: Option<String>,
    /// The accum version that wrote the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accum_version: Option<String>,
    /// When the run (this segment of it, after a resume) started, in RFC
    /// 3339 UTC: `2026-12-03T17:51:30Z`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Seconds from the start to the report, on a monotonic clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
    /// Examples processed per second of wall time, over all replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples_per_second: Option<f64>,
    /// Supervised tokens processed per second of wall time, over all
    /// replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_second: Option<f64>,
    /// Applied updates per second of wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updates_per_second: Option<f64>,
    /// The commit checked out in the repository the configuration sits in
    /// (40 hex digits), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
}

impl Provenance {
    /// The provenance of a run (or of its last segment, after a resume)
    /// that started at `started` (wall clock) and took `wall`: the accum
    /// version, the start time and the throughput of what the counters
    /// grew by since `before` (the counters at the start).
    pub fn timed(
        started: SystemTime,
        wall: Duration,
        before: &Counters,
        after: &Counters,
    ) -> Provenance {
        let seconds = wall.as_secs_f64();
        let rate = |(before, after): (u64, u64)| {
            (seconds > 0.0).then(|| after.saturating_sub(before) as f64 / seconds)
        };
        Provenance {
            accum_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            started_at: Some(rfc3339_utc(started)),
            wall_seconds: Some(seconds),
            examples_per_second: rate((before.examples.get(), after.examples.get())),
            tokens_per_second: rate((
                before.supervised_tokens.get(),
                after.supervised_tokens.get(),
            )),
            updates_per_second: rate((before.applied_updates.get(), after.applied_updates.get())),
            ..Provenance::default()
        }
    }

    /// Adds the configuration file `path`, whose bytes are `bytes`: its
    /// path as given, its hash, the run's name (`name`, else the file's
    /// stem) and the commit of the repository it sits in.
    pub fn with_config(mut self, path: &Path, bytes: &[u8], name: Option<&str>) -> Provenance {
        self.config_path = Some(path.display().to_string());
        self.config_hash = Some(config_hash(bytes));
        self.run_name = name
            .map(str::to_owned)
            .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()));
        self.git_commit = git_commit(path);
        self
    }
}

/// The hash a report records of its configuration file: `fnv1a64:` and
/// the 16 hex digits of FNV-1a over the file's bytes. It tells two files
/// apart, nothing more: it is not a digest against tampering.
pub fn config_hash(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("fnv1a64:{hash:016x}")
}

/// `time` in RFC 3339, UTC, to the second: `2026-12-03T17:51:30Z`. Days
/// become a civil date by Howard Hinnant's `civil_from_days`; a time before
/// 1970 reads as 1970-01-01T00:00:00Z.
pub(crate) fn rfc3339_utc(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    let (hour, minute, second) = (rest / 3600, rest % 3600 / 60, rest % 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

/// The most bytes read of `HEAD`, a ref file or `packed-refs`.
const MAX_GIT_FILE: u64 = 1 << 20;

/// How many folders up from the configuration a repository is looked for.
const MAX_GIT_DEPTH: usize = 64;

/// The commit checked out in the repository `config` sits in: the first
/// `.git` found going up from its folder (a folder, or a file
/// `gitdir: …` as in a worktree or a submodule), its `HEAD`, and the ref
/// `HEAD` names (a loose ref file, else `packed-refs`; a worktree's
/// branches are in the common folder its `commondir` names). `None` when
/// there is no repository or any of that does not read as expected.
pub(crate) fn git_commit(config: &Path) -> Option<String> {
    let start = std::fs::canonicalize(config).ok()?;
    let mut dir = start.parent()?.to_path_buf();
    for _ in 0..MAX_GIT_DEPTH {
        let dot = dir.join(".git");
        if let Ok(meta) = std::fs::symlink_metadata(&dot) {
            let git_dir = if meta.is_dir() {
                dot
            } else if meta.is_file() {
                let text = read_small(&dot)?;
                let target = text.trim().strip_prefix("gitdir:")?.trim();
                dir.join(target)
            } else {
                return None;
            };
            return head_commit(&git_dir);
        }
        dir = dir.parent()?.to_path_buf();
    }
    None
}

/// The commit `HEAD` of `git_dir` points at.
fn head_commit(git_dir: &Path) -> Option<String> {
    let head = read_small(&git_dir.join("HEAD"))?;
    let head = head.trim();
    let Some(name) = head.strip_prefix("ref:").map(str::trim) else {
        return is_commit(head).then(|| head.to_owned());
    };
    // A ref name never climbs out of the repository.
    if !name.starts_with("refs/") || name.split('/').any(|part| part == ".." || part.is_empty()) {
        return None;
    }
    let common: PathBuf = match read_small(&git_dir.join("commondir")) {
        Some(rel) => git_dir.join(rel.trim()),
        None => git_dir.to_path_buf(),
    };
    for base in [git_dir, common.as_path()] {
        if let Some(text) = read_small(&base.join(name)) {
            let id = text.trim();
            return is_commit(id).then(|| id.to_owned());
        }
    }
    let packed = read_small(&common.join("packed-refs"))?;
    packed.lines().find_map(|line| {
        let (id, reference) = line.split_once(' ')?;
        (reference.trim() == name && is_commit(id)).then(|| id.to_owned())
    })
}

/// Whether `text` is a full commit id (40 or 64 hex digits).
fn is_commit(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A regular file's text, at most [`MAX_GIT_FILE`] bytes; `None` for
/// anything else.
fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_GIT_FILE {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_GIT_FILE)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_rfc3339_utc() {
        let at = |secs: u64| rfc3339_utc(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_796_320_290), "2026-12-03T17:51:30Z");
        assert_eq!(at(4_107_542_399), "2100-02-28T23:59:59Z");
    }

    #[test]
    fn the_hash_tells_files_apart() {
        assert_eq!(config_hash(b""), "fnv1a64:cbf29ce484222325");
        assert_eq!(config_hash(b"a"), "fnv1a64:af63dc4c8601ec8c");
        assert_ne!(config_hash(b"m = 2\n"), config_hash(b"m = 3\n"));
    }

    #[test]
    fn the_commit_is_read_from_head_and_its_ref() {
        let dir = tempfile::tempdir().expect("a folder");
        let root = dir.path();
        let commit = "0123456789abcdef0123456789abcdef01234567";
        std::fs::create_dir_all(root.join(".git/refs/heads")).expect("refs");
        std::fs::create_dir_all(root.join("configs")).expect("configs");
        std::fs::write(root.join("configs/run.toml"), "m = 2\n").expect("config");
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        let config = root.join("configs/run.toml");
        // No ref file and no packed ref: not known.
        assert_eq!(git_commit(&config), None);
        std::fs::write(
            root.join(".git/packed-refs"),
            format!("# pack-refs with: peeled\n{commit} refs/heads/main\n"),
        )
        .expect("packed");
        assert_eq!(git_commit(&config).as_deref(), Some(commit));
        let loose = "fedcba9876543210fedcba9876543210fedcba98";
        std::fs::write(root.join(".git/refs/heads/main"), format!("{loose}\n")).expect("ref");
        assert_eq!(git_commit(&config).as_deref(), Some(loose));
        // A detached HEAD names the commit itself; a ref outside refs/ is refused.
        std::fs::write(root.join(".git/HEAD"), format!("{commit}\n")).expect("HEAD");
        assert_eq!(git_commit(&config).as_deref(), Some(commit));
        std::fs::write(root.join(".git/HEAD"), "ref: ../../secret\n").expect("HEAD");
        assert_eq!(git_commit(&config), None);
    }
}
