# imitates: NVIDIA/Megatron-LM examples/academic_paper_scripts/sc21/CONFIG.sh
# With --decrease-batch-size-if-needed the calculator rounds each batch of the
# ramp down to a multiple of micro × D instead of stopping: not planned.
# options: --world-size 8
# expect: m=2 A=32 D=8 B=512
# codes: rounds, version
--micro-batch-size 2 --global-batch-size 512 --rampup-batch-size 24 8 2000000 \
--decrease-batch-size-if-needed --train-samples 10240000
