//! The `accum` command-line tool.

fn main() {}
