//! Compile-time guarantees, checked with trybuild: every case in `tests/ui/`
//! is a program the compiler must reject (or accept, for `pass_*`), with the
//! reviewed error text beside it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/units_*.rs");
}
