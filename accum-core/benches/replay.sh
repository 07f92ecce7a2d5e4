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
accum=${CARGO_TARGET_DIR:-target}/release/accum

# Writes $out/KEY.toml and dumps its run to $out/dump-KEY. Every run shares
# the model, optimizer and data but its size; the arguments are what differs:
#   replay KEY NAME BATCH NORM MODE TOTAL EXAMPLES
# where BATCH is the body of the [batch] section.
replay() {
  local key=$1 name=$2 batch=$3 norm=$4 mode=$5 total=$6 examples=$7
  cat > "$out/$key.toml" <<EOF
[run]
name = "$name"
[batch]
$batch
[loss]
normalization = "$norm"
[precision]
mode = "$mode"
[optimizer]
lr = 1e-2
[schedule]
kind = "constant"
total = "$total"
[data]
examples = $examples
min_len = 2
max_len = 24
vocab = 48
seed = 3
[model]
hidden = 16
ffn = 32
EOF
  "$accum" run "$out/$key.toml" --dump "$out/dump-$key" --quiet > /dev/null
}

ramp='micro_batch = 3
accumulation = 4
replicas = 2
[[batch.stages]]
accumulation = 1
until = "18 examples"
[[batch.stages]]
accumulation = 2
until = "42 examples"'
for norm in per_token per_example sum; do
  for d in 1 2 4; do
    for mode in fp32 fp16; do
      constant="micro_batch = 3
accumulation = 2
replicas = $d"
      replay "$norm-d$d-$mode" "replay $norm D=$d $mode" "$constant" "$norm" "$mode" \
        "4 updates" $((22 * d + 5))
    done
  done
  for mode in fp32 fp16; do
    replay "$norm-ramp-$mode" "replay $norm ramp-up $mode" "$ramp" "$norm" "$mode" \
      "138 examples" 49
  done
done
"$py" accum-core/benches/replay_dump.py "$out"/dump-*
