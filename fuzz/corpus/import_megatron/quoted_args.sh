#!/bin/bash
# imitates: NVIDIA/Megatron-LM examples/bert/train_bert_340m_distributed.sh (older form with quoted strings)
# options: --world-size 8
# expect: m=4 A=8 D=8 B=256
# codes: none
GPT_ARGS="--micro-batch-size 4 --global-batch-size 256 --seq-length 1024 --lr 0.00015 --train-iters 500000 --clip-grad 1.0 --fp16"
DATA_ARGS="--data-path my-gpt2_text_document --split 949,50,1"
OUTPUT_ARGS="--log-interval 100 --save-interval 10000 --eval-interval 1000"
python pretrain_gpt.py $GPT_ARGS $DATA_ARGS $OUTPUT_ARGS
