#!/bin/bash
# imitates: NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh
# The 175B example as it was before the ramp-up was replaced: 16 → 1536 over
# 5,859,375 samples, with --train-iters, which the versions that run the ramp
# refuse. 128 nodes here, so that tp 8 × pp 16 leaves D = 8.
# options:
# expect: m=1 A=192 D=8 B=1536
# codes: engine-assert, not-converted, schedule-shift, version
# stages: 16:61680 32:123376 48:185056 … 1536
GPUS_PER_NODE=8
NUM_NODES=128
GPT_MODEL_ARGS=(
    --num-layers 96
    --hidden-size 12288
    --num-attention-heads 96
    --seq-length 2048
)
TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 1536
    --rampup-batch-size 16 16 5859375
    --train-iters 500000
    --clip-grad 1.0
    --fp16
    --lr 6.0e-5
    --lr-decay-style cosine
    --lr-warmup-fraction .001
    --lr-decay-iters 430000
)
MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size 8
    --pipeline-model-parallel-size 16
)
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    ${GPT_MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]}
