//! Engine benchmarks.
fn main() {}
