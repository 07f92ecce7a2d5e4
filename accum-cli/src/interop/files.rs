//! Files named on the command line for an import (the imported file,
//! `--deepspeed-config`, `--accelerate-config`), read with the
//! configuration-file limit. Files named inside them go through
//! `source::named` instead.

use std::path::Path;

use crate::source::{MAX_FILE_BYTES, read_text};

/// Reads a file of at most [`MAX_FILE_BYTES`], or says why not.
pub(crate) fn read(path: &Path) -> Result<String, String> {
    // The import's error names the file: the reason comes without it.
    read_text(path, MAX_FILE_BYTES).map_err(|err| err.reason())
}
