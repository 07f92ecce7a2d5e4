# imitates: NVIDIA/Megatron-LM examples/academic_paper_scripts/sc21/CONFIG.sh
# A ramp over 0 samples: the calculator divides by 0.0 at its first update.
# options: --world-size 8
# expect: refused
# codes: engine-assert, version
--micro-batch-size 2 --global-batch-size 512 --rampup-batch-size 64 64 0 --train-samples 10240000
