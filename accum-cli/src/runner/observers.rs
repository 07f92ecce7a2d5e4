//! The observers `accum run` hands the engine: the progress bar with the log
//! lines, and the stats stream beside the report.

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
}

impl Observer for Progress {
    fn on_update(&mut self, stats: &UpdateStats, counters: &Counters) {
        let secs = self.started.elapsed().as_secs_f64().max(1e-9);
        self.bar.set_position(counters.applied_updates.get());
        self.bar.set_message(super::progress::message(
            stats,
            counters,
            secs,
            self.loss_scaled,
        ));
    }

    fn on_log(&mut self, point: &CurvePoint, axis: LogAxis) {
        let line = format!(
            "{:>8} {}  loss {:.4}",
            group_digits(point.x),
            axis_name(axis),
            point.loss
        );
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

/// Writes the stats stream beside the report: every update attempt and
/// every log point, one JSON line each.
pub(crate) struct Stream {
    pub(crate) out: StatsStream,
    /// A failure to write a log line, reported at the next update.
    pub(crate) failed: Option<StatsError>,
}

impl Observer for Stream {
    fn on_parameters(&mut self, update: &UpdateView<'_>) -> Result<(), ObserverError> {
        if let Some(err) = self.failed.take() {
            return Err(Box::new(err));
        }
        Ok(self.out.update(update.stats)?)
    }

    fn on_log(&mut self, point: &CurvePoint, axis: LogAxis) {
        if self.failed.is_none()
            && let Err(err) = self.out.log(point, axis)
        {
            self.failed = Some(err);
        }
    }
}

fn axis_name(axis: LogAxis) -> &'static str {
    match axis {
        LogAxis::Updates => "updates",
        LogAxis::Examples => "examples",
        LogAxis::Tokens => "tokens",
    }
}
