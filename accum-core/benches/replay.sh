#!/usr/bin/env bash
# Dumps 24 short runs with `accum run --dump` and replays every one in
# PyTorch (accum-core/benches/replay_dump.py): gradients must agree within
# 1e-5 relative, per stage for a ramp-up.
# - 18 with a constant plan: normalization per_token, per_example, sum ×
#   D = 1, 2, 4 × precision fp32, fp16; a last partial group in each;
# - 6 with a batch ramp-up in three stages (A = 1, 2, then 4; D = 2):
#   normalization × precision, partial groups at the epochs' ends.
#
#   accum-core/benches/replay.sh [PYTHON]
#
# PYTHON is an interpreter with torch and numpy (default: python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${1:-python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cargo build --release -p accum-cli --quiet
for norm in per_token per_example sum; do
  for d in 1 2 4; do
    for mode in fp32 fp16; do
      cat > "$out/$norm-d$d-$mode.toml" <<EOF
[run]
name = "replay $norm D=$d $mode"
[batch]
micro_batch = 3
accumulation = 2
replicas = $d
[loss]
normalization = "$norm"
[precision]
mode = "$mode"
[optimizer]
lr = 1e-2
[schedule]
kind = "constant"
total = "4 updates"
[data]
examples = $((22 * d + 5))
min_len = 2
max_len = 24
vocab = 48
seed = 3
[model]
hidden = 16
ffn = 32
EOF
      target/release/accum run "$out/$norm-d$d-$mode.toml" --dump "$out/dump-$norm-d$d-$mode" --quiet > /dev/null
    done
  done
  for mode in fp32 fp16; do
    cat > "$out/$norm-ramp-$mode.toml" <<EOF
[run]
name = "replay $norm ramp-up $mode"
[batch]
micro_batch = 3
accumulation = 4
replicas = 2
[[batch.stages]]
accumulation = 1
until = "18 examples"
[[batch.stages]]
accumulation = 2
until = "42 examples"
[loss]
normalization = "$norm"
[precision]
mode = "$mode"
[optimizer]
lr = 1e-2
[schedule]
kind = "constant"
total = "138 examples"
[data]
examples = 49
min_len = 2
max_len = 24
vocab = 48
seed = 3
[model]
hidden = 16
ffn = 32
EOF
    target/release/accum run "$out/$norm-ramp-$mode.toml" --dump "$out/dump-$norm-ramp-$mode" --quiet > /dev/null
  done
done
"$py" accum-core/benches/replay_dump.py "$out"/dump-*
