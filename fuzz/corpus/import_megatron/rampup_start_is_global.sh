# imitates: NVIDIA/Megatron-LM examples/academic_paper_scripts/sc21/CONFIG.sh
# A ramp that starts at the global batch has 0 increments: the calculator
# divides by 0 at start-up.
# options: --world-size 8
# expect: refused
# codes: engine-assert, version
--micro-batch-size 2 --global-batch-size 512 --rampup-batch-size 512 64 2000000 --train-samples 10240000
