#!/usr/bin/env bash
# Writes api/<crate>.txt, the public surface of accum's library crates, from
# rustdoc's JSON (a nightly rustdoc feature). `.ci/run` runs this and fails
# when the checked-in listing differs: a change to the public API shows in a
# review as a diff of api/*.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
for package in accum-core accum-cli accum; do
  cargo +nightly rustdoc --quiet --locked -p "$package" --lib -- -Z unstable-options --output-format json
done
python3 api/listing.py api "$target/doc/accum_core.json" "$target/doc/accum_cli.json" "$target/doc/accum.json"
