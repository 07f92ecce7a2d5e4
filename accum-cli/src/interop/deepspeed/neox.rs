//! gpt-neox's DeepSpeed settings: YAML files (pythia, StableLM, llemma)
//! whose batch keys are DeepSpeed's, with gpt-neox's own arithmetic in
//! front of DeepSpeed's (`megatron/neox_arguments/arguments.py`):
//!
//! - `NeoXArgs.from_ymls` loads each file with `yaml.load` and reads `-` in
//!   a key as `_` (`pipe-parallel-size` is `pipe_parallel_size`);
//! - `NeoXArgs.calculate_derived` divides the GPUs by
//!   `max(pipe_parallel_size, 1) × max(model_parallel_size, 1)` for the
//!   data-parallel world, and fills the batch keys from it with
//!   `calculate_batch_parameters`, DeepSpeed's fill-in, where
//!   `gradient_accumulation_steps` is never missing: its default is 1
//!   (`megatron/neox_arguments/deepspeed_args.py`, `NeoXArgsDeepspeedConfig`);
//! - DeepSpeed then divides by that data-parallel world: gpt-neox builds a
//!   `PipelineModule` whenever `pipe_parallel_size >= 1` (`is_pipe_parallel`
//!   in `calculate_derived`) and passes its mpu otherwise
//!   (`megatron/training.py`, `setup_model_and_optimizer`).

use std::ops::Range;

use super::fill::GAS;
use crate::interop::reader::{At, Reader, owned};
use crate::source::NodeKind;

/// gpt-neox's model-parallel degrees, each at least 1.
pub(super) struct Neox {
    /// `max(pipe_parallel_size, 1)`.
    pub(super) pipe: u64,
    /// `max(model_parallel_size, 1)`.
    pub(super) model: u64,
}

impl Neox {
    /// `gradient_accumulation_steps` when the files do not set it: 1.
    pub(super) fn default_gas(&self, root: &Range<usize>) -> At<u64> {
        At {
            value: 1,
            range: root.clone(),
            path: owned(&[GAS]),
        }
    }
}

/// `global_num_gpus` when a gpt-neox file sets it: `calculate_derived`
/// takes it as the GPU count (`getattr(self, "global_num_gpus", None)`) and
/// counts the launch's GPUs only when it is not set.
pub(super) fn global_num_gpus(r: &mut Reader) -> Option<At<u64>> {
    const KEY: &str = "global_num_gpus";
    let neox = r.has(&["pipe_parallel_size"]) || r.has(&["model_parallel_size"]);
    if neox && r.has(&[KEY]) {
        r.uint(&[KEY], 1)
    } else {
        None
    }
}

/// The top-level keys with `-` read as `_`, as `NeoXArgs.from_ymls` does.
pub(super) fn dashes_to_underscores(r: &mut Reader) {
    if let NodeKind::Table(entries) = &mut r.doc.root.kind {
        for e in entries {
            if e.key.contains('-') {
                e.key = e.key.replace('-', "_");
            }
        }
    }
}

/// The degrees when the file is gpt-neox's (it sets `pipe_parallel_size`
/// or `model_parallel_size`); `Some(None)` for a DeepSpeed file, `None` when
/// a degree is not a number (the finding is pushed).
pub(super) fn degrees(r: &mut Reader) -> Option<Option<Neox>> {
    const PIPE: &str = "pipe_parallel_size";
    const MODEL: &str = "model_parallel_size";
    if !r.has(&[PIPE]) && !r.has(&[MODEL]) {
        return Some(None);
    }
    let mut degree = |key: &str| -> Option<u64> {
        if !r.has(&[key]) {
            return Some(1);
        }
        // `pp_size if pp_size >= 1 else 1`, and the same for mp_size.
        let v = r.int(&[key])?;
        Some(u64::try_from(v.value).ok().filter(|&d| d >= 1).unwrap_or(1))
    };
    let pipe = degree(PIPE)?;
    let model = degree(MODEL)?;
    Some(Some(Neox { pipe, model }))
}
