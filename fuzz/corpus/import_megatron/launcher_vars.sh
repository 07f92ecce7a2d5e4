#!/bin/bash
# imitates: NVIDIA/Megatron-LM examples/academic_paper_scripts/detxoify_lm/finetune_gpt_distributed-1.3b.sh
# The launcher's values come from the environment; --world-size gives the run's.
# options: --world-size 16
# expect: m=4 A=4 D=16 B=256
# codes: none
DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --node_rank $NODE_RANK --master_addr $MASTER_ADDR"
python -m torch.distributed.run $DISTRIBUTED_ARGS finetune_gpt.py \
    --micro-batch-size 4 \
    --global-batch-size 256 \
    --train-iters 2000
