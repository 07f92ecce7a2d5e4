# imitates: NVIDIA/Megatron-LM megatron/training/config/training_config.py
# A schedule whose second step is passed before any iteration reaches it: 128
# samples are consumed when the first iteration at or past 100 samples starts,
# and 120:128 already applies, so the batch 64 is never used.
# options: --world-size 8
# expect: m=4 A=8 D=8 B=256
# codes: rounds
# stages: 32:128 128:1024 256
torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 4 --seq-length 1024 \
    --step-batch-size-schedule "0:32 102400:64 122880:128 1024000:256"
