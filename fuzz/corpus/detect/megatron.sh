torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 --global-batch-size 64 --tensor-model-parallel-size 2
