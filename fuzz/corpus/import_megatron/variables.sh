#!/bin/bash
# imitates: NVIDIA/Megatron-LM examples/llama/train_llama3_8b_h100_fp8.sh
# Values from variables of the same file: plain, commented, defaulted, computed.
# options:
# expect: m=1 A=64 D=4 B=256
# codes: none
GPUS=${GPUS_PER_NODE:-8}
NNODES=1
MBS=1
TP_SIZE=2  # tensor parallel
GBS=$((MBS*64*4))
SEQ_LEN=${SEQ_LEN:-8192}
torchrun --nproc_per_node $GPUS --nnodes $NNODES pretrain_gpt.py \
    --micro-batch-size ${MBS} \
    --global-batch-size $GBS \
    --tensor-model-parallel-size $TP_SIZE \
    --seq-length $SEQ_LEN \
    --bf16
