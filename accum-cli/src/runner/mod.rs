//! What `accum run` adds around the engine: Ctrl-C, the thread cap and the
//! backend (`process.rs`), checkpoints and resume (`checkpoints.rs`), the observers it runs with ([`Progress`],
//! [`Stream`]), the progress bar's wording and the text it
//! prints at the end. The command itself loads, attaches the backend, runs
//! and writes.

mod checkpoints;
mod observers;
mod process;
mod progress;
mod summary;

pub(crate) use checkpoints::{Checkpoints, KillInGroup, resume};
pub(crate) use observers::{Progress, Stream};
pub(crate) use process::{attach_backend, stop_flag, threads_cap};
pub(crate) use progress::TEMPLATE;
pub(crate) use summary::{plural, ramp_text, summary};
