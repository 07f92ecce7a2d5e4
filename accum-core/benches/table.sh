#!/usr/bin/env bash
# Measures the table of docs/performance.md in one sitting: the machine, the
# PyTorch reference, the engine benchmark (which prints PyTorch's figures
# beside its own), and the peak memory of a 10,000- and a 1,000,000-update
# run of a tiny model.
#
#   accum-core/benches/table.sh [PYTHON]
#
# PYTHON is an interpreter with torch and numpy (default: python3); without
# torch the PyTorch column stays empty. Run it on a quiet machine: nothing
# else compiling or running.
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${1:-python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== machine"
grep -m1 "model name" /proc/cpuinfo
echo "cores: $(nproc)"
uptime

echo "== PyTorch reference"
if "$py" -c "import torch" 2>/dev/null; then
  "$py" accum-core/benches/pytorch_tokenmlp.py --out "$out/torch.json"
  export ACCUM_PYTORCH_JSON="$out/torch.json"
else
  echo "no torch in $py: skipped"
fi

echo "== engine (summary only; divan's tables: cargo bench -p accum-core --bench engine)"
cargo bench -p accum-core --bench engine -- no-divan-benchmark-matches-this

echo "== peak memory of long runs (tiny model)"
cargo build --release -p accum-cli --quiet
for updates in 10000 1000000; do
  cat > "$out/tiny-$updates.toml" <<EOF
[run]
name = "tiny, $updates updates"
[batch]
micro_batch = 2
accumulation = 2
replicas = 1
[schedule]
kind = "constant"
total = "$updates updates"
[data]
examples = 64
min_len = 4
max_len = 8
vocab = 16
[model]
hidden = 8
ffn = 16
EOF
  /usr/bin/time -f "%M KiB peak RSS, %e s" target/release/accum run "$out/tiny-$updates.toml" \
    --quiet --threads 1 --report "$out/run-$updates.json" > /dev/null
  echo "  $updates updates: report $(stat -c %s "$out/run-$updates.json") bytes"
done
