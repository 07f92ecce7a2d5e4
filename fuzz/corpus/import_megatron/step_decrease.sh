# imitates: NVIDIA/Megatron-LM megatron/core/num_microbatches_calculator.py
# StepBatchsizeNumMicroBatchesCalculator raises on --decrease-batch-size-if-needed.
# options: --world-size 16
# expect: m=1 A=96 D=16 B=1536
# codes: engine-assert
# stages: 16:5859616 1536
--micro-batch-size 1 --seq-length 2048 --decrease-batch-size-if-needed \
--step-batch-size-schedule "0:16 12000493568:1536"
