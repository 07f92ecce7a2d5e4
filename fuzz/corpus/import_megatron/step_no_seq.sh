# imitates: NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh
# Without the sequence length the thresholds (tokens) cannot be converted to
# samples; Megatron itself requires --seq-length or --encoder-seq-length.
# options: --world-size 16
# expect: refused
# codes: missing
--micro-batch-size 1 --step-batch-size-schedule "0:16 2.4B:320 12B:1536" --train-iters 500000
