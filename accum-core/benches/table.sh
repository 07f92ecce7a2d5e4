#!/usr/bin/env bash
# Measures the table of docs/performance.md in one sitting: the machine, the
# PyTorch reference, the engine benchmark (which prints the FMA peak, the
# sgemm comparison and PyTorch's figures beside its own), and the peak
# memory of a 10,000- and a 1,000,000-update run of a tiny model.
#
#   accum-core/benches/table.sh [PYTHON [ROUNDS]]
#
# PYTHON is an interpreter with torch and numpy (default: python3); without
# torch the PyTorch column stays empty. ROUNDS (default 1) alternates
# PyTorch and the engine that many times, each engine round beside the
# PyTorch round just before it, and ends with the median of each plan's
# times and of its ratios over the rounds: on a busy machine, interleaved
# rounds see the same load, and their medians and ratios are the figures
# to quote. Best run on a quiet machine: nothing else compiling or running.
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${1:-python3}
rounds=${2:-1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== machine"
grep -m1 "model name" /proc/cpuinfo
echo "cores: $(nproc)"
uptime

cargo bench -p accum-core --bench engine --no-run --quiet
torch=no
"$py" -c "import torch" 2>/dev/null && torch=yes
for round in $(seq 1 "$rounds"); do
  echo "== round $round of $rounds: PyTorch reference"
  if [ "$torch" = yes ]; then
    "$py" accum-core/benches/pytorch_tokenmlp.py --out "$out/torch-$round.json"
    export ACCUM_PYTORCH_JSON="$out/torch-$round.json"
  else
    echo "no torch in $py: skipped"
  fi
  echo "== round $round of $rounds: engine (summary only; divan's tables: cargo bench -p accum-core --bench engine)"
  uptime
  cargo bench -p accum-core --bench engine --quiet -- no-divan-benchmark-matches-this \
    | tee "$out/engine-$round.txt"
done

if [ "$rounds" -gt 1 ]; then
  echo "== medians over $rounds rounds"
  "$py" accum-core/benches/medians.py "$out" "$rounds"
fi

echo "== peak memory of long runs (tiny model)"
cargo build --release -p accum-cli --quiet
accum=${CARGO_TARGET_DIR:-target}/release/accum
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
  /usr/bin/time -f "%M KiB peak RSS, %e s" "$accum" run "$out/tiny-$updates.toml" \
    --quiet --threads 1 --report "$out/run-$updates.json" > /dev/null
  echo "  $updates updates: report $(stat -c %s "$out/run-$updates.json") bytes"
done
