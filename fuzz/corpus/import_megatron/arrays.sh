#!/bin/bash
# imitates: NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh
# Arguments in bash arrays, the launcher's from variables set above.
# options:
# expect: m=1 A=96 D=16 B=1536
# codes: none
GPUS_PER_NODE=8
NUM_NODES=16
DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
)
TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 1536
    --train-iters 500000
    --clip-grad 1.0
    --fp16
    --lr 6.0e-5
    --lr-decay-style cosine
)
MODEL_PARALLEL_ARGS=(
	--tensor-model-parallel-size 8
)
torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]}
