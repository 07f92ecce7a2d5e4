//! Compile-time guarantees, checked with trybuild: every case in `tests/ui/`
//! is a program the compiler must reject, with the reviewed error text beside
//! it — except `pass_*.rs`, which must compile and run.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    let mut cases: Vec<_> = std::fs::read_dir("tests/ui")
        .expect("tests/ui exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    cases.sort();
    for case in cases {
        let name = case
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with("pass_") {
            t.pass(&case);
        } else {
            t.compile_fail(&case);
        }
    }
}
