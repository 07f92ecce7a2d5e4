//! Files named inside an imported file: where they are looked for, and
//! reading them with the configuration-file limit.

use std::path::{Path, PathBuf};

use crate::source::{MAX_FILE_BYTES, read_text};

/// Reads a file of at most [`MAX_FILE_BYTES`], or says why not.
pub(crate) fn read(path: &Path) -> Result<String, String> {
    // The import's error names the file: the reason comes without it.
    read_text(path, MAX_FILE_BYTES).map_err(|err| err.reason())
}

/// The directories a file named inside `path` is looked for in, after the
/// ones given: the working directory (the framework resolves it there), then
/// the file's directory and its ancestors (a recipe names files relative to
/// its repository's root).
pub(crate) fn search_dirs(path: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from(".")];
    let mut dir = path.parent();
    while let Some(d) = dir {
        let d = if d.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            d.to_owned()
        };
        if !dirs.contains(&d) {
            dirs.push(d);
        }
        dir = dir.and_then(Path::parent);
    }
    dirs
}

/// The first existing file `name` in `dirs` (or `name` itself when it is
/// absolute), with every place tried, for the message when none exists.
pub(crate) fn find(name: &str, dirs: &[PathBuf]) -> Result<PathBuf, Vec<PathBuf>> {
    let given = Path::new(name);
    // A device or a pipe there is found, and `read` says what it is: "not
    // found" would send the user looking for a file that exists.
    let present = |p: &Path| p.exists() && !p.is_dir();
    if given.is_absolute() {
        return if present(given) {
            Ok(given.to_owned())
        } else {
            Err(vec![given.to_owned()])
        };
    }
    let mut tried = Vec::new();
    for dir in dirs {
        let candidate = dir.join(given);
        if present(&candidate) {
            return Ok(candidate);
        }
        tried.push(candidate);
    }
    Err(tried)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestors_are_searched_after_the_working_directory() {
        let dirs = search_dirs(Path::new("a/b/recipe.yaml"));
        assert_eq!(
            dirs,
            vec![PathBuf::from("."), PathBuf::from("a/b"), PathBuf::from("a")]
        );
        let tried = find("no/such/file.json", &dirs).expect_err("missing");
        assert_eq!(tried[1], PathBuf::from("a/b/no/such/file.json"));
    }
}
