//! The stats stream: every update attempt and log point of a run, one JSON
//! object per line (JSON Lines), written beside the run report while the
//! run goes on — so a run of any length keeps its full-resolution history on
//! disk while its memory and its report stay bounded.
//!
//! Each line is a [`StatsLine`]:
//! ```text
//! {"update":{"attempt":1,"epoch":0,"applied":true,"updates":1,"loss":5.61,…}}
//! {"log":{"axis":"updates","x":1,"loss":5.61}}
//! ```
//! `update` lines carry an [`UpdateStats`] (the same keys as the report's
//! `updates`), `log` lines a point of the loss curve in the declared axis,
//! written when the `[log] every` interval is reached.
//!
//! Reading, for sheets and tools: [`logged_points`] yields the loss curve's
//! points whichever form the run wrote — the `log` lines of the stream the
//! report names in [`RunReport::stats_stream`](super::RunReport::stats_stream)
//! (every point), or else the report's own bounded curve.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{CurvePoint, RunReport, UpdateStats};
use crate::settings::LogAxis;

/// The longest line a stats stream may have (a line is a few hundred bytes).
const MAX_LINE: u64 = 64 * 1024;

/// The largest stats stream read: ten million update lines of a few
/// hundred bytes. A report is an untrusted input, and so is the stream it
/// names.
pub const MAX_STREAM_BYTES: u64 = 4 << 30;

/// The stream `report` (read from `report_path`) names, checked like any
/// input: the name is a file in the report's folder (no absolute path, no
/// `..`, no link out of the folder), a regular file (never a device or a
/// FIFO, which would be read without end or block) of at most
/// [`MAX_STREAM_BYTES`]. `None` when the report names no stream.
pub fn stream_file(report: &RunReport, report_path: &Path) -> Result<Option<PathBuf>, StatsError> {
    use std::path::Component;
    let Some(name) = &report.stats_stream else {
        return Ok(None);
    };
    let folder = report_path.parent().unwrap_or_else(|| Path::new(""));
    let path = folder.join(name);
    let refuse = |why: String| StatsError {
        path: path.clone(),
        line: None,
        kind: StatsErrorKind::Refused(why),
    };
    if !Path::new(name)
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(refuse(format!(
            "the report names its stream as `{name}`, which leaves the report's folder"
        )));
    }
    let meta = std::fs::metadata(&path).map_err(|e| StatsError::io(&path, e))?;
    readable_stream(&path, &meta)?;
    // A link in the folder may point anywhere: the file it reaches must be
    // in the report's folder too.
    let real_folder = if folder.as_os_str().is_empty() {
        Path::new(".").canonicalize()
    } else {
        folder.canonicalize()
    }
    .map_err(|e| StatsError::io(&path, e))?;
    let real = path.canonicalize().map_err(|e| StatsError::io(&path, e))?;
    if !real.starts_with(&real_folder) {
        return Err(refuse(format!(
            "a link to {}, outside the report's folder",
            crate::shown::path(&real)
        )));
    }
    Ok(Some(path))
}

/// A stream accum reads: a regular file (never a device or a FIFO, which
/// would be read without end or block) of at most [`MAX_STREAM_BYTES`].
fn readable_stream(path: &Path, meta: &std::fs::Metadata) -> Result<(), StatsError> {
    let why = if !meta.is_file() {
        "not a regular file (a pipe, socket or device)".to_owned()
    } else if meta.len() > MAX_STREAM_BYTES {
        format!(
            "{} bytes is larger than the {MAX_STREAM_BYTES}-byte limit of a stats stream",
            meta.len()
        )
    } else {
        return Ok(());
    };
    Err(StatsError {
        path: path.to_path_buf(),
        line: None,
        kind: StatsErrorKind::Refused(why),
    })
}

/// The stats stream that belongs beside the report `report`: `run.json` →
/// `run.stats.jsonl`, in the same folder (a report names its stream by file
/// name, relative to its own folder).
pub fn stats_stream_beside(report: &Path) -> PathBuf {
    let stem = report
        .file_stem()
        .map_or_else(|| "run".into(), |s| s.to_string_lossy().into_owned());
    report.with_file_name(format!("{stem}.stats.jsonl"))
}

/// One line of a stats stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatsLine {
    /// An update attempt, applied or skipped.
    Update(UpdateStats),
    /// A point of the loss curve.
    Log {
        /// The curve's axis.
        axis: LogAxis,
        /// Position on the axis.
        x: u64,
        /// The group's normalized loss (`null` when not finite).
        #[serde(with = "super::non_finite_as_null")]
        loss: f64,
    },
}

/// The stream is a name accum makes beside the report: never followed
/// through a link, and it replaces only a previous stream (a file whose
/// first line is a stats line, or an empty one).
pub(crate) const STREAM_NAME: crate::fsio::Naming =
    crate::fsio::Naming::Derived(crate::fsio::Derived {
        what: "the stats stream beside the report",
        replaces: crate::fsio::Replaces::Recognised(is_stream),
    });

/// Whether `head`, the start of a file, is the start of a stats stream.
fn is_stream(head: &[u8]) -> bool {
    let line = match head.iter().position(|&b| b == b'\n') {
        Some(end) => &head[..end],
        None if (head.len() as u64) < crate::fsio::RECOGNISED_BYTES => head,
        None => return false,
    };
    head.is_empty() || serde_json::from_slice::<StatsLine>(line).is_ok()
}

/// Writes a stats stream (buffered; nothing is kept in memory but the
/// buffer) to a temporary file beside its path, renamed over it when the
/// stream is finished, like the report: a run that is killed or fails keeps
/// the previous run's stream whole, and a stream is never half a line.
#[derive(Debug)]
pub struct StatsStream {
    path: PathBuf,
    /// The temporary file written until [`StatsStream::finish`], removed
    /// when the stream is dropped unfinished (the run failed): the previous
    /// stream stays as it was.
    out: Option<BufWriter<crate::fsio::Temporary>>,
    /// The lines written since the last [`StatsStream::take_recent`], when
    /// [`StatsStream::keep_recent`] asked for them: what a checkpoint keeps
    /// of the stream.
    recent: Option<Vec<u8>>,
}

impl StatsStream {
    /// Starts the stream for `path`; the file at `path` is replaced by
    /// [`StatsStream::finish`] only. The name is one accum made beside a
    /// report: a link, a folder, a FIFO or a device there is refused, and so
    /// is a file that is not a previous stats stream.
    pub fn create(path: &Path) -> Result<StatsStream, StatsError> {
        let tmp = crate::fsio::create_temporary(path, STREAM_NAME)
            .map_err(|e| StatsError::write(path, e))?;
        Ok(StatsStream {
            path: path.to_owned(),
            out: Some(BufWriter::with_capacity(64 * 1024, tmp)),
            recent: None,
        })
    }

    /// Keeps a copy of each line written from now on until
    /// [`StatsStream::take_recent`] takes it: the part of the stream a
    /// checkpoint keeps (`checkpoint::write_stats_part`).
    pub fn keep_recent(&mut self) {
        self.recent.get_or_insert_with(Vec::new);
    }

    /// The lines written since the last call (or since
    /// [`StatsStream::keep_recent`]); empty when no copy is kept.
    pub fn take_recent(&mut self) -> Vec<u8> {
        self.recent.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Writes the lines of the stream before a resume (read back from a
    /// checkpoint's parts), so that the stream covers the whole run. Every
    /// line must read as a [`StatsLine`]: nothing else is copied into a
    /// stream. They are not kept by [`StatsStream::keep_recent`]: the
    /// checkpoints have them already.
    pub fn write_earlier(&mut self, lines: &[u8]) -> Result<(), StatsError> {
        for (i, line) in lines.split_inclusive(|&b| b == b'\n').enumerate() {
            let text = line.strip_suffix(b"\n").ok_or_else(|| StatsError {
                path: self.path.clone(),
                line: Some(i as u64 + 1),
                kind: StatsErrorKind::Refused(
                    "the earlier part of the stream ends inside a line".to_owned(),
                ),
            })?;
            serde_json::from_slice::<StatsLine>(text).map_err(|e| StatsError {
                path: self.path.clone(),
                line: Some(i as u64 + 1),
                kind: StatsErrorKind::Parse(e),
            })?;
        }
        let out = self
            .out
            .as_mut()
            .expect("a stream is written until it is finished");
        out.write_all(lines)
            .map_err(|e| StatsError::io(&self.path, e))
    }

    /// The stream's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends an update line.
    pub fn update(&mut self, stats: &UpdateStats) -> Result<(), StatsError> {
        self.line(&StatsLine::Update(stats.clone()))
    }

    /// Appends a log line.
    pub fn log(&mut self, point: &CurvePoint, axis: LogAxis) -> Result<(), StatsError> {
        self.line(&StatsLine::Log {
            axis,
            x: point.x,
            loss: point.loss,
        })
    }

    fn line(&mut self, line: &StatsLine) -> Result<(), StatsError> {
        let out = self
            .out
            .as_mut()
            .expect("a stream is written until it is finished");
        let written = match &mut self.recent {
            Some(recent) => {
                let start = recent.len();
                serde_json::to_writer(&mut *recent, line)
                    .map_err(io::Error::from)
                    .and_then(|()| {
                        recent.push(b'\n');
                        out.write_all(&recent[start..])
                    })
            }
            None => serde_json::to_writer(&mut *out, line)
                .map_err(io::Error::from)
                .and_then(|()| out.write_all(b"\n")),
        };
        written.map_err(|e| StatsError::io(&self.path, e))
    }

    /// Flushes the buffer, syncs the file and renames it over the path
    /// (then syncs the folder).
    pub fn finish(self) -> Result<(), StatsError> {
        let path = self.path.clone();
        let tmp = self.into_temporary()?;
        crate::fsio::persist(tmp, crate::fsio::Durability::Synced)
            .map_err(|e| StatsError::write(&path, e))
    }

    /// The finished stream's temporary file, flushed, for a
    /// [`crate::fsio::Batch`] that renames it with the report.
    #[doc(hidden)]
    pub fn into_temporary(mut self) -> Result<crate::fsio::Temporary, StatsError> {
        let out = self.out.take().expect("a stream is finished once");
        out.into_inner()
            .map_err(|e| StatsError::io(&self.path, e.into_error()))
    }
}

/// Reading or writing a stats stream failed.
#[derive(Debug)]
pub struct StatsError {
    /// The stream file.
    pub path: PathBuf,
    /// The 1-based line, for a line that is not a stats line.
    pub line: Option<u64>,
    /// What went wrong.
    pub kind: StatsErrorKind,
}

/// What went wrong with a stats stream.
#[derive(Debug)]
#[non_exhaustive]
pub enum StatsErrorKind {
    /// The file could not be read or written.
    Io(io::Error),
    /// A line is not a stats line.
    Parse(serde_json::Error),
    /// A line is longer than any stats line.
    LineTooLong,
    /// The report names a stream accum will not read: outside the report's
    /// folder, not a regular file, or larger than any stream.
    Refused(String),
    /// The stream's file could not be created or replaced, or its name is
    /// refused (a link, a folder, a file that is not a stream).
    Write(crate::fsio::WriteError),
}

impl StatsError {
    fn write(path: &Path, e: crate::fsio::WriteError) -> StatsError {
        StatsError {
            path: path.to_path_buf(),
            line: None,
            kind: StatsErrorKind::Write(e),
        }
    }

    fn io(path: &Path, e: io::Error) -> StatsError {
        StatsError {
            path: path.to_path_buf(),
            line: None,
            kind: StatsErrorKind::Io(e),
        }
    }
}

impl fmt::Display for StatsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let StatsErrorKind::Write(e) = &self.kind {
            // It names the file already.
            return write!(f, "{e}");
        }
        write!(f, "{}", crate::shown::path(&self.path))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        match &self.kind {
            StatsErrorKind::Io(e) => write!(
                f,
                ": {e}; the stats stream is written beside the report: keep the two files together"
            ),
            StatsErrorKind::Parse(e) => write!(
                f,
                ": not a stats line ({e}); the file must be the stream `accum run` wrote"
            ),
            StatsErrorKind::LineTooLong => write!(
                f,
                ": a line longer than {MAX_LINE} bytes is not a stats line; the file must be the stream `accum run` wrote"
            ),
            StatsErrorKind::Refused(why) => write!(
                f,
                ": {why}; a report names its stream by a file name beside it, as `accum run` writes it"
            ),
            StatsErrorKind::Write(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for StatsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            StatsErrorKind::Io(e) => Some(e),
            StatsErrorKind::Parse(e) => Some(e),
            StatsErrorKind::Write(e) => Some(e),
            StatsErrorKind::LineTooLong | StatsErrorKind::Refused(_) => None,
        }
    }
}

/// The lines of a stats stream, read one at a time into one buffer: a
/// stream of any length is never held in memory, and a line longer than
/// any stats line ends the reading with an error instead of growing the
/// buffer.
#[derive(Debug)]
struct Lines {
    path: PathBuf,
    reader: BufReader<File>,
    buf: String,
    line: u64,
    failed: bool,
}

impl Lines {
    /// Opens the stream at `path` without blocking, and checks on the open
    /// handle (not the name, which another file can take in between) that
    /// it is a regular file of at most [`MAX_STREAM_BYTES`].
    fn open(path: &Path) -> Result<Lines, StatsError> {
        let file = crate::fsio::open_input(path, crate::fsio::Links::Followed)
            .map_err(|e| StatsError::io(path, e))?;
        let meta = file.metadata().map_err(|e| StatsError::io(path, e))?;
        readable_stream(path, &meta)?;
        Ok(Lines {
            path: path.to_path_buf(),
            reader: BufReader::new(file),
            buf: String::new(),
            line: 0,
            failed: false,
        })
    }

    /// The next stats line; `None` at the end or after an error.
    fn next_line(&mut self) -> Option<Result<StatsLine, StatsError>> {
        if self.failed {
            return None;
        }
        loop {
            self.buf.clear();
            self.line += 1;
            let read = self
                .reader
                .by_ref()
                .take(MAX_LINE + 1)
                .read_line(&mut self.buf);
            let kind = match read {
                Ok(0) => return None,
                Ok(n) if n as u64 > MAX_LINE => StatsErrorKind::LineTooLong,
                Ok(_) if self.buf.trim().is_empty() => continue,
                Ok(_) => match serde_json::from_str::<StatsLine>(&self.buf) {
                    Ok(line) => return Some(Ok(line)),
                    Err(e) => StatsErrorKind::Parse(e),
                },
                Err(e) => StatsErrorKind::Io(e),
            };
            self.failed = true;
            return Some(Err(StatsError {
                path: self.path.clone(),
                line: Some(self.line),
                kind,
            }));
        }
    }
}

/// The logged points of a run, in order (see [`logged_points`]).
#[derive(Debug)]
pub struct LoggedPoints<'a> {
    axis: LogAxis,
    source: Source<'a>,
}

#[derive(Debug)]
enum Source<'a> {
    Curve(std::slice::Iter<'a, CurvePoint>),
    Stream(Lines),
}

impl LoggedPoints<'_> {
    /// The axis of the points.
    pub fn axis(&self) -> LogAxis {
        self.axis
    }

    /// Whether the points come from a stats stream (every log point) rather
    /// than the report's bounded curve.
    pub fn from_stream(&self) -> bool {
        matches!(self.source, Source::Stream(_))
    }
}

/// The loss-curve points of `report`, whichever form the run wrote: when
/// the report names a stats stream ([`RunReport::stats_stream`]), the `log`
/// lines of that file, resolved against the folder of `report_path` (every
/// log point of the run); otherwise the report's own curve (at most
/// [`CURVE_CAPACITY`](super::CURVE_CAPACITY) points, evenly spread).
///
/// The iterator reads the stream lazily, one line at a time, so a
/// million-point run is never held in memory; an unreadable or malformed
/// line ends it with an error naming the file and line.
///
/// ```
/// use accum_core::report::logged_points;
/// # fn show(report: &accum_core::report::RunReport) -> Result<(), accum_core::report::StatsError> {
/// let points = logged_points(report, std::path::Path::new("run.json"))?;
/// let axis = points.axis();
/// for point in points {
///     let point = point?;
///     println!("{} {axis}: loss {}", point.x, point.loss);
/// }
/// # Ok(()) }
/// ```
pub fn logged_points<'a>(
    report: &'a RunReport,
    report_path: &Path,
) -> Result<LoggedPoints<'a>, StatsError> {
    let axis = report.loss_curve.axis;
    let Some(path) = stream_file(report, report_path)? else {
        return Ok(LoggedPoints {
            axis,
            source: Source::Curve(report.loss_curve.points.iter()),
        });
    };
    Ok(LoggedPoints {
        axis,
        source: Source::Stream(Lines::open(&path)?),
    })
}

impl Iterator for LoggedPoints<'_> {
    type Item = Result<CurvePoint, StatsError>;

    fn next(&mut self) -> Option<Self::Item> {
        let lines = match &mut self.source {
            Source::Curve(points) => return points.next().copied().map(Ok),
            Source::Stream(lines) => lines,
        };
        loop {
            match lines.next_line()? {
                Ok(StatsLine::Log { x, loss, .. }) => return Some(Ok(CurvePoint { x, loss })),
                Ok(StatsLine::Update(_)) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// The update lines of a stats stream, in order, read one line at a time
/// (see [`streamed_updates`]).
#[derive(Debug)]
pub struct StreamedUpdates {
    lines: Lines,
}

/// The update attempts of the stats stream at `path`, read lazily: a
/// sheet of a run of ten million attempts holds one line at a time. An
/// unreadable, malformed or overlong line ends the iterator with an error
/// naming the file and line.
pub fn streamed_updates(path: &Path) -> Result<StreamedUpdates, StatsError> {
    Ok(StreamedUpdates {
        lines: Lines::open(path)?,
    })
}

impl Iterator for StreamedUpdates {
    type Item = Result<UpdateStats, StatsError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.lines.next_line()? {
                Ok(StatsLine::Update(update)) => return Some(Ok(update)),
                Ok(StatsLine::Log { .. }) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// Reads every update line of the stats stream at `path`, in order, into
/// memory: for a stream of any length, iterate [`streamed_updates`].
pub fn read_updates(path: &Path) -> Result<Vec<UpdateStats>, StatsError> {
    streamed_updates(path)?.collect()
}

#[cfg(test)]
#[cfg(feature = "engine")]
mod tests {
    use super::*;
    use crate::engine::{Engine, RunOptions};
    use crate::plan::Plan;
    use crate::settings::{DataSection, EngineConfig, ModelSection};

    fn small_report() -> RunReport {
        let config = EngineConfig {
            data: DataSection {
                examples: 8,
                min_len: 2,
                max_len: 4,
                vocab: 8,
                ..DataSection::default()
            },
            model: ModelSection { hidden: 4, ffn: 4 },
            ..EngineConfig::default()
        };
        let mut config = config;
        config.schedule.total = Some("5 updates".parse().expect("a span"));
        Engine::new(Plan::new(2, 2, 1).expect("a plan"), &config)
            .expect("an engine")
            .with_threads(1)
            .run(&mut RunOptions::default())
            .expect("a run")
    }

    #[test]
    fn logged_points_come_from_the_stream_or_the_report() {
        let dir = std::env::temp_dir().join(format!("accum-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut report = small_report();
        let report_path = dir.join("run.json");
        // Without a stream: the report's own curve.
        let from_report: Vec<CurvePoint> = logged_points(&report, &report_path)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(from_report, report.loss_curve.points);
        assert_eq!(from_report.len(), 5);

        // With a stream: its log lines, every one, in order.
        let mut stream = StatsStream::create(&dir.join("run.stats.jsonl")).unwrap();
        for (i, u) in report.updates.iter().enumerate() {
            stream.update(u).unwrap();
            let point = CurvePoint {
                x: i as u64 * 10,
                loss: u.loss,
            };
            stream.log(&point, LogAxis::Tokens).unwrap();
        }
        stream.finish().unwrap();
        report.stats_stream = Some("run.stats.jsonl".into());
        let points = logged_points(&report, &report_path).unwrap();
        assert!(points.from_stream());
        let xs: Vec<u64> = points.map(|p| p.unwrap().x).collect();
        assert_eq!(xs, vec![0, 10, 20, 30, 40]);
        let updates = read_updates(&dir.join("run.stats.jsonl")).unwrap();
        assert_eq!(updates.len(), report.updates.len());
        for (read, kept) in updates.iter().zip(&report.updates) {
            assert_eq!((read.attempt, read.tokens), (kept.attempt, kept.tokens));
            // serde_json reads floats to within one unit in the last place.
            assert!((read.loss - kept.loss).abs() <= 1e-15 * kept.loss.abs());
        }

        // A malformed line names its file and line.
        std::fs::write(
            dir.join("run.stats.jsonl"),
            "{\"log\":{\"axis\":\"updates\",\"x\":1,\"loss\":2.0}}\nnot json\n",
        )
        .unwrap();
        let mut points = logged_points(&report, &report_path).unwrap();
        assert_eq!(points.next().unwrap().unwrap().x, 1);
        let err = points.next().unwrap().unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.to_string().contains("run.stats.jsonl:2"), "{err}");
        assert!(points.next().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
