//! How long checking a config of many items takes: the work is linear in
//! the input (docs/reliability.md, "Limits"), so 300,000 unknown keys are
//! checked, worded and rendered within 2 s. Reported, not asserted:
//!
//! ```sh
//! cargo bench -p accum-cli --bench limits
//! ```
//!
//! Each case is what `accum validate` does with the file's text: parse,
//! check against the built-in schema, word every finding and render them
//! (`accum_cli::harness::config`).

use accum_cli::harness::{ConfigFormat, config};
use divan::Bencher;

fn main() {
    divan::main();
}

/// A valid `[batch]`, for the keys to be unknown beside.
const BATCH: &str = "[batch]\nmicro_batch = 4\naccumulation = 2\nreplicas = 1\n";

/// `n` unknown keys in `[batch]`, in TOML.
fn unknown_toml(n: usize) -> String {
    let keys: String = (0..n).map(|i| format!("u{i} = 1\n")).collect();
    format!("{BATCH}{keys}")
}

/// `n` unknown keys in `batch`, in JSON.
fn unknown_json(n: usize) -> String {
    let keys: Vec<String> = (0..n).map(|i| format!("\"u{i}\": 1")).collect();
    format!(
        "{{\"batch\": {{\"micro_batch\": 4, \"accumulation\": 2, \"replicas\": 1, {}}}}}",
        keys.join(", ")
    )
}

/// `n` misspellings of `micro_batch`, each with a did-you-mean.
fn misspelt_toml(n: usize) -> String {
    let keys: String = (0..n).map(|i| format!("micro_bach{i} = 1\n")).collect();
    format!("{BATCH}{keys}")
}

#[divan::bench(args = [30_000, 300_000], sample_count = 3, sample_size = 1)]
fn unknown_keys_in_toml(bencher: Bencher<'_, '_>, n: usize) {
    let text = unknown_toml(n);
    bencher.bench(|| config(ConfigFormat::Toml, text.as_bytes()));
}

#[divan::bench(args = [30_000, 300_000], sample_count = 3, sample_size = 1)]
fn unknown_keys_in_json(bencher: Bencher<'_, '_>, n: usize) {
    let text = unknown_json(n);
    bencher.bench(|| config(ConfigFormat::Json, text.as_bytes()));
}

#[divan::bench(args = [30_000, 300_000], sample_count = 3, sample_size = 1)]
fn misspelt_keys_in_toml(bencher: Bencher<'_, '_>, n: usize) {
    let text = misspelt_toml(n);
    bencher.bench(|| config(ConfigFormat::Toml, text.as_bytes()));
}
