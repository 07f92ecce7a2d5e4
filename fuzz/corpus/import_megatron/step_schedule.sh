# imitates: NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh
# Thresholds in tokens (the sequence length is known): the last batch is the plan.
# options: --world-size 16
# expect: m=1 A=96 D=16 B=1536
# codes: none
--micro-batch-size 1 --seq-length 2048 \
--step-batch-size-schedule "0:16 2.4B:320 4.8B:624 7.2B:928 9.6B:1232 12B:1536" \
--train-samples 100000000
