//! What `accum run` sets up around the engine in this process: Ctrl-C
//! handling (like cargo's), the threads the machine can run, and the
//! backend (threads, or MPI with one process per replica).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use accum_core::engine::Engine;
use indicatif::ProgressBar;

use crate::cli::Backend;
use crate::error::CliError;

/// The exit status of a run ended by Ctrl-C, as shells report SIGINT.
const INTERRUPTED: i32 = 130;

/// The stop flag set by Ctrl-C; installed once per process. Like cargo: the
/// first Ctrl-C is acknowledged and stops the run within a microbatch (the
/// report is still written); a second ends the process at once, before any
/// new output replaces the previous one. Every output is written to a
/// temporary file and renamed, so nothing is left half written, and the
/// temporary files alive are removed before the exit.
pub(crate) fn stop_flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let handler_flag = Arc::clone(&flag);
        // Without a handler Ctrl-C ends the process; the run then loses its
        // report, so a failure to install is worth a warning, not an abort.
        if let Err(err) = ctrlc::set_handler(move || {
            if handler_flag.swap(true, Ordering::SeqCst) {
                // Held until the exit: no output is renamed or begun after.
                let _held = accum_core::fsio::abandon_temporaries();
                say("interrupted again: stopping now; the previous outputs are kept");
                std::process::exit(INTERRUPTED);
            }
            say(
                "interrupted: stopping within the current microbatch, then writing the report\n\
                 press Ctrl-C again to stop at once",
            );
        }) {
            eprintln!("warning: Ctrl-C will not stop the run cleanly: {err}");
        }
        flag
    })
    .clone()
}

/// The status line while it is drawn, so that what Ctrl-C says is printed
/// above it: written beside it, the next redraw of the line would draw over
/// the message's last line.
static STATUS_LINE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Registers the drawn status line ([`forget_status_line`] when it ends).
pub(crate) fn show_status_line(bar: &ProgressBar) {
    *lock_status_line() = (!bar.is_hidden()).then(|| bar.clone());
}

/// The status line is cleared: messages go straight to stderr again.
pub(crate) fn forget_status_line() {
    *lock_status_line() = None;
}

fn lock_status_line() -> std::sync::MutexGuard<'static, Option<ProgressBar>> {
    STATUS_LINE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Prints a message of the Ctrl-C handler on lines of its own (each
/// shorter than 80 columns): above the status line while it is drawn.
fn say(message: &str) {
    match lock_status_line().as_ref() {
        Some(bar) => bar.println(message),
        None => eprintln!("\n{message}"),
    }
}

/// Threads per replica the machine can run at once: its cores shared by
/// the replicas of this process, at least one. More only adds threads that
/// wait (`--threads 100000` spawned thousands).
pub(crate) fn threads_cap(local_replicas: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (cores / local_replicas.max(1)).max(1)
}

/// What `run` keeps of the backend: with MPI, a handle to let every rank
/// say why it stops before any rank exits.
#[derive(Default)]
pub(crate) struct ExitSync {
    #[cfg(feature = "mpi")]
    mpi: Option<std::sync::Arc<accum_core::replica::mpi::Mpi>>,
}

impl ExitSync {
    /// With MPI: prints `err` now, in one write (so the ranks' lines do not
    /// interleave), and waits until every rank has printed its own, because
    /// `mpirun` ends the job at the first non-zero exit. Otherwise `err`.
    pub(crate) fn fail(&self, err: CliError) -> CliError {
        #[cfg(feature = "mpi")]
        if let Some(mpi) = &self.mpi {
            use std::io::Write;
            let line = crate::escape::terminal(&format!("error: {err}\n")).into_owned();
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
            mpi.barrier_at_exit();
            return CliError::reported(err.exit());
        }
        err
    }

    /// [`ExitSync::fail`] for an error of this rank alone, before the run:
    /// the others, already waiting in the run's first collective, are told
    /// through an abort and stop too.
    pub(crate) fn fail_alone(&self, err: CliError) -> CliError {
        #[cfg(feature = "mpi")]
        if let Some(mpi) = &self.mpi {
            use accum_core::replica::Reducer;
            mpi.abort(&err.to_string());
        }
        self.fail(err)
    }
}

/// Attaches the backend: threads need nothing, MPI starts MPI and checks
/// that the world has one process per replica before any work.
pub(crate) fn attach_backend(
    engine: Engine,
    backend: Backend,
    name: &str,
) -> Result<(Engine, ExitSync), CliError> {
    match backend {
        Backend::Threads => Ok((engine, ExitSync::default())),
        #[cfg(feature = "mpi")]
        Backend::Mpi => {
            let mpi = accum_core::replica::mpi::Mpi::init()
                .map_err(|err| CliError::usage(format!("cannot start mpi: {err}")))?;
            let mpi = std::sync::Arc::new(mpi);
            let (rank, world) = (mpi.rank(), mpi.world_size());
            let sync = ExitSync {
                mpi: Some(std::sync::Arc::clone(&mpi)),
            };
            match engine.with_reducer(Box::new(mpi)) {
                Ok(engine) => Ok((engine, sync)),
                Err(err) => Err(sync.fail(CliError::invalid(format!(
                    "rank {rank} of {world}: {name}: {err}"
                )))),
            }
        }
        #[cfg(not(feature = "mpi"))]
        Backend::Mpi => {
            let _ = (engine, name);
            Err(CliError::usage(
                "this accum was built without MPI; rebuild it with `--features mpi` \
                 (needs an MPI library such as Open MPI) or use `--backend threads`",
            ))
        }
    }
}
