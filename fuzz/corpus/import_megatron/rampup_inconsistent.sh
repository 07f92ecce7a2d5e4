# imitates: NVIDIA/Megatron-LM examples/academic_paper_scripts/sc21/CONFIG.sh
# Start 24 is not a multiple of micro 2 × D 8 = 16: the calculator stops during the ramp.
# options: --world-size 8
# expect: m=2 A=32 D=8 B=512
# codes: engine-assert
--micro-batch-size 2 --global-batch-size 512 --rampup-batch-size 24 8 2000000 --train-samples 10240000
