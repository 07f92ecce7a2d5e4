//! Diagnostic codes of the importers, stable for tools.

/// A batch value does not divide (`B` not a multiple of `m·D`).
pub const NOT_DIVISIBLE: &str = "accum::interop::not-divisible";
/// `world_size` is not divisible by the model-parallel degrees.
pub const LAYOUT: &str = "accum::interop::layout";
/// The framework would silently round a value down (or up).
pub const ROUNDS: &str = "accum::interop::rounds";
/// The framework's own start-up check would fail: it refuses the file.
pub const ENGINE_ASSERT: &str = "accum::interop::engine-assert";
/// A value the batch needs is not known; the finding names what supplies it.
pub const MISSING: &str = "accum::interop::missing";
/// A value has the wrong type, is out of range, or is not finite.
pub const VALUE: &str = "accum::interop::value";
/// A key counts microbatches where updates are likely meant.
pub const STEP_UNIT: &str = "accum::interop::step-unit";
/// The batch changes during the run, and lengths counted in updates cover
/// different numbers of examples in each phase.
pub const SCHEDULE_SHIFT: &str = "accum::interop::schedule-shift";
/// The data ends in a partial group.
pub const PARTIAL_GROUP: &str = "accum::interop::partial-group";
/// The loss is not normalized by the group's tokens.
pub const PER_TOKEN: &str = "accum::interop::per-token";
/// Model-parallel devices are counted as replicas.
pub const MODEL_PARALLEL: &str = "accum::interop::model-parallel-replicas";
/// The world size given disagrees with the file.
pub const WORLD_SIZE: &str = "accum::interop::world-size";
/// A key is understood but not carried into accum's config.
pub const NOT_CONVERTED: &str = "accum::interop::not-converted";
/// A value is left to another tool (`"auto"`) that is not part of the import.
pub const AUTO: &str = "accum::interop::auto";
/// The file is another framework's, or a shape accum does not read.
pub const DIALECT: &str = "accum::interop::dialect";
/// A file named by the imported one (or, in `--format json`, the imported
/// file itself) could not be read.
pub const FILE: &str = "accum::interop::file";
/// The file makes the reader do more work than any real file needs
/// (nesting, self-reference or expansion past a limit).
pub const LIMIT: &str = "accum::interop::limit";
/// What the framework does with a setting depends on its version.
pub const VERSION: &str = "accum::interop::version";
/// The framework stops the run at each change of the batch and restarts
/// its count of consumed samples, so its ramp-up runs later than the
/// calculator's rule.
pub const RAMP_RESTARTS: &str = "accum::interop::ramp-restarts";
/// A key or argument of the batch vocabulary that the reader did not read:
/// the batch is reported without confidence.
pub const UNREAD: &str = "accum::interop::unread";
