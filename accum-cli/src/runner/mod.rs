//! What `accum run` adds around the engine: Ctrl-C, the thread cap and the
//! backend (`process.rs`), checkpoints and resume (`checkpoints.rs`), the observers it runs with ([`Progress`],
//! [`Stream`](observers::Stream)), the progress bar's wording and the text
//! it prints at the end, and the run itself from a checked config to its
//! exit status ([`Run`], `run.rs`). The command loads the config and hands
//! it to [`Run`].

mod checkpoints;
mod observers;
mod process;
mod progress;
mod run;
mod summary;

pub(crate) use progress::TEMPLATE;
pub(crate) use run::Run;
