#!/bin/bash
# GPT pretraining on 8 nodes × 8 GPUs
torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py \
    --tensor-model-parallel-size 2 \
    --pipeline-model-parallel-size 2 \
    --micro-batch-size 8 \
    --global-batch-size 2048 \
    --seq-length 4096 \
    --train-iters 10000 \
    --lr-warmup-iters 500 \
    --log-interval 10 \
    --lr 3.0e-4 \
    --clip-grad 1.0 \
    --bf16 \
    --calculate-per-token-loss
