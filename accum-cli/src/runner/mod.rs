//! What `accum run` adds around the engine: the observers it runs with
//! ([`Progress`], [`Stream`]), the progress bar's wording and the text it
//! prints at the end. The command itself loads, attaches the backend, runs
//! and writes.

mod observers;
mod progress;
mod summary;

pub(crate) use observers::{Progress, Stream, stream_path};
pub(crate) use progress::TEMPLATE;
pub(crate) use summary::{plural, ramp_text, summary};
