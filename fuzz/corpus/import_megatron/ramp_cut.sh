torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 --global-batch-size 1000 --rampup-batch-size 24 16 1000000 --train-samples 5000000 --zz-batch-size 3
