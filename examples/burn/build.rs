//! Extracts the burn section of docs/loop.md for the crate's doc tests.
//!
//! examples/candle compiles the whole file as its doc tests, so the burn
//! section's code blocks are marked `rust,ignore` there; here they are
//! compiled and run as `rust`.

use std::path::Path;

const HEADING: &str = "## In burn";

fn main() {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/loop.md");
    println!("cargo::rerun-if-changed={}", guide.display());
    let text = std::fs::read_to_string(&guide).expect("docs/loop.md is readable");
    let start = text
        .find(&format!("\n{HEADING}\n"))
        .expect("docs/loop.md has a burn section");
    let rest = &text[start + 1..];
    let end = rest[HEADING.len()..]
        .find("\n## ")
        .map_or(rest.len(), |at| HEADING.len() + at + 1);
    let section = rest[..end].replace("```rust,ignore\n", "```rust\n");
    assert!(
        section.contains("```rust\n"),
        "the burn section of docs/loop.md has a Rust example"
    );
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("loop-burn.md"), section).expect("OUT_DIR is writable");
}
