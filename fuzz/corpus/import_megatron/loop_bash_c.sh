while [[ $# -gt 0 ]]; do case "$1" in --tp) TP="$2"; shift 2;; *) exit 1;; esac; done
NNODES=${SLURM_NNODES:-1}
srun bash -c "torchrun --nproc_per_node 8 --nnodes $NNODES pretrain_gpt.py --micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size ${TP:-1} --ds-sequence-parallel-size 2 bash -c 'bash -c \"--x\"'"
