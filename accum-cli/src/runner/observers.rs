//! The observers `accum run` hands the engine: the progress bar with the log
//! lines, and the stats stream beside the report.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use accum_core::engine::{Observer, ObserverError, UpdateView};
use accum_core::group_digits;
use accum_core::report::{Counters, CurvePoint, StatsError, StatsStream, UpdateStats};
use accum_core::settings::LogAxis;
use indicatif::ProgressBar;

use crate::error::CliError;
use crate::output::eprintln_safe;
use crate::output::print_text;

/// The progress bar and, when the bar is off, the log lines on stdout.
pub(crate) struct Progress {
    pub(crate) bar: ProgressBar,
    pub(crate) started: Instant,
    /// Quiet text output: the log lines go to stdout as they come.
    pub(crate) print_lines: bool,
    pub(crate) quiet: bool,
    /// The first failure to print a log line.
    pub(crate) print_error: Option<CliError>,
    /// Whether the loss is scaled (fp16), so that the bar shows the scale.
    pub(crate) loss_scaled: bool,
    /// The last applied update's learning rate and gradient norm, and the
    /// supervised tokens so far, for the log lines.
    pub(crate) last: Option<(f64, f64, u64)>,
}

impl Observer for Progress {
    fn on_update(&mut self, stats: &UpdateStats, counters: &Counters) {
        let secs = self.started.elapsed().as_secs_f64().max(1e-9);
        if stats.applied {
            self.last = Some((stats.lr, stats.grad_norm, counters.supervised_tokens.get()));
        }
        self.bar.set_position(counters.applied_updates.get());
        self.bar.set_message(super::progress::message(
            stats,
            counters,
            secs,
            self.loss_scaled,
        ));
    }

    fn on_log(&mut self, point: &CurvePoint, axis: LogAxis) {
        let secs = self.started.elapsed().as_secs_f64();
        let mut line = format!(
            "{:>8} {}  loss {:.4}",
            group_digits(point.x),
            axis_name(axis),
            point.loss
        );
        // What a person watches beside the loss: the learning rate and
        // gradient norm of the last applied update, the throughput so far
        // and the time since the start.
        if let Some((lr, norm, tokens)) = self.last {
            line.push_str(&format!(
                "  lr {lr:.2e}  grad norm {norm:.4}  {} tok/s  {}",
                short_rate(tokens, secs),
                elapsed(secs)
            ));
        }
        if self.quiet {
            // The log lines are the run's output when the bar is off.
            if self.print_lines
                && self.print_error.is_none()
                && let Err(err) = print_text(&format!("{line}\n"))
            {
                self.print_error = Some(err);
            }
        } else if self.bar.is_hidden() {
            eprintln_safe!("{line}");
        } else {
            self.bar.println(&line);
        }
    }
}

/// A rate per second, short enough for a log line of 80 columns: whole
/// below 10,000, then in thousands (`396k`) or millions (`12.7M`).
fn short_rate(count: u64, secs: f64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let rate = count as f64 / secs.max(1e-9);
    if rate < 1e4 {
        format!("{rate:.0}")
    } else if rate < 1e7 {
        format!("{:.0}k", rate / 1e3)
    } else {
        format!("{:.1}M", rate / 1e6)
    }
}

/// Time since the start, as a clock: `0:07`, `12:34`, `1:02:03`.
fn elapsed(secs: f64) -> String {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let s = secs.max(0.0) as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Writes the stats stream beside the report: every update attempt and
/// every log point, one JSON line each.
pub(crate) struct Stream {
    pub(crate) out: StatsStream,
    /// A failure to write a log line, reported at the next update.
    pub(crate) failed: Option<StatsError>,
    /// The lines not yet kept by a checkpoint, when checkpoints are
    /// written ([`Checkpoints::keep_stats`](super::Checkpoints::keep_stats)).
    pub(crate) parts: Option<Arc<Mutex<Vec<u8>>>>,
}

impl Stream {
    /// Moves the lines just written to the part the next checkpoint keeps.
    fn move_to_parts(&mut self) {
        if let Some(parts) = &self.parts {
            parts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend_from_slice(&self.out.take_recent());
        }
    }
}

impl Observer for Stream {
    fn on_parameters(&mut self, update: &UpdateView<'_>) -> Result<(), ObserverError> {
        if let Some(err) = self.failed.take() {
            return Err(Box::new(err));
        }
        self.out.update(update.stats)?;
        self.move_to_parts();
        Ok(())
    }

    fn on_log(&mut self, point: &CurvePoint, axis: LogAxis) {
        if self.failed.is_none()
            && let Err(err) = self.out.log(point, axis)
        {
            self.failed = Some(err);
        }
        self.move_to_parts();
    }
}

fn axis_name(axis: LogAxis) -> &'static str {
    match axis {
        LogAxis::Updates => "updates",
        LogAxis::Examples => "examples",
        LogAxis::Tokens => "tokens",
    }
}
