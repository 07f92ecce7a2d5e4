A=B
B=A
GBS=$((A))
torchrun pretrain_gpt.py --micro-batch-size 1 --global-batch-size $GBS
