#!/bin/bash
# imitates: NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh
# Python's int() reads 220_000_000; train_iters = 220000000 // 1024 floors.
# options: --world-size 64
# expect: m=2 A=8 D=64 B=1024
# codes: rounds
torchrun pretrain_gpt.py --micro-batch-size 2 --global-batch-size 1_024 \
    --train-samples 220_000_000 --lr-warmup-samples 1_000_000 --lr-decay-samples 200_000_000
