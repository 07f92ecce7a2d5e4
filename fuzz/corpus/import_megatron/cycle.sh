A=B+1
B=C*2
C=A
GBS=$((A))
torchrun pretrain_gpt.py --micro-batch-size 1 --global-batch-size $GBS
