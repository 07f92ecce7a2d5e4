//! A process that ends at once (a second Ctrl-C) first removes the
//! temporary files of its unfinished writes: each target keeps its previous
//! bytes or its new ones whole, and no `.tmp` file stays beside it.
//!
//! Its own test binary: the list of temporary files is the process's, and
//! other tests writing files at the same time would see theirs removed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use accum_core::fsio::{self, Durability, Naming, WriteStep};

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("accum-core-abandon-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("file system");
    dir
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .expect("file system")
        .map(|e| {
            e.expect("file system")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn abandoned_writes_leave_the_previous_files_and_no_temporary() {
    let dir = scratch();
    let report = dir.join("run.json");
    let stream = dir.join("stats.jsonl");
    let done = dir.join("sheet.html");
    fs::write(&report, "previous").expect("file system");

    let mut half = fsio::create_temporary(&report, Naming::Given).expect("file system");
    half.write_all(b"{\"half\": ").expect("file system");
    let mut begun = fsio::create_temporary(&stream, Naming::Given).expect("file system");
    begun.write_all(b"{}\n").expect("file system");
    let mut whole = fsio::create_temporary(&done, Naming::Given).expect("file system");
    whole.write_all(b"<html>").expect("file system");
    fsio::persist(whole, Durability::Buffered).expect("file system");
    assert_eq!(names(&dir).len(), 4, "{:?}", names(&dir));

    let held = fsio::abandon_temporaries();
    assert_eq!(names(&dir), ["run.json", "sheet.html"]);
    assert_eq!(
        fs::read_to_string(&report).expect("file system"),
        "previous"
    );
    assert_eq!(fs::read_to_string(&done).expect("file system"), "<html>");

    // While the guard lives no new temporary file is begun.
    let (sent, created) = mpsc::channel();
    let target = dir.join("late.json");
    let late = std::thread::spawn(move || {
        let tmp = fsio::create_temporary(&target, Naming::Given);
        sent.send(()).expect("the test waits");
        tmp.map(drop)
    });
    assert!(created.recv_timeout(Duration::from_millis(100)).is_err());
    drop(held);
    late.join()
        .expect("joins")
        .expect("a temporary file once released");

    // An abandoned write fails at its rename and changes nothing.
    let err = fsio::persist(half, Durability::Synced).expect_err("an abandoned write fails");
    assert_eq!(err.step, WriteStep::Replace, "{err}");
    drop(begun);
    assert_eq!(names(&dir), ["run.json", "sheet.html"]);
    assert_eq!(
        fs::read_to_string(&report).expect("file system"),
        "previous"
    );
    fs::remove_dir_all(&dir).expect("file system");
}
