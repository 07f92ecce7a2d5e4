//! A fixture repository copied where a test may use it: shared by the unit
//! tests of the interop readers and the command-line tests.

use std::fs;
use std::path::Path;

/// Copies the tree `from` into `to`, `*.py.in` files as `*.py` (the fixture
/// trees keep their Python as `.py.in`, so that no tool of this repository
/// reads it as the project's own code).
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("a folder");
    for entry in fs::read_dir(from).expect("a fixture folder") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        if path.is_dir() {
            copy_tree(&path, &to.join(&name));
        } else {
            let name = name
                .strip_suffix(".py.in")
                .map_or(name.clone(), |n| format!("{n}.py"));
            fs::copy(&path, to.join(name)).expect("a copy");
        }
    }
}
