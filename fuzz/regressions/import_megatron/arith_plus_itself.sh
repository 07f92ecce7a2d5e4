GBS=GBS+1
G=$((GBS))
torchrun pretrain_gpt.py --micro-batch-size 1 --global-batch-size $GBS
