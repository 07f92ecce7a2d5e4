#!/bin/bash
# imitates: NVIDIA/Megatron-LM examples/academic_paper_scripts/sc21/CONFIG.sh
# if/else branches set alternatives, and other commands pass batch options too:
# only the pretraining command is read, and no option counts twice.
# options: --world-size 8
# expect: m=2 A=16 D=8 B=256
# codes: none
if [ "$PRECISION" == "fp16" ]; then
    PREC_ARGS="--fp16"
else
    PREC_ARGS="--bf16"
fi
python tools/checkpoint/convert.py --micro-batch-size 1
python pretrain_gpt.py --micro-batch-size 2 --global-batch-size 256 $PREC_ARGS
python tasks/main.py --task LAMBADA --micro-batch-size 8
