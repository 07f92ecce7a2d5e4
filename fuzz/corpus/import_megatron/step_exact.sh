# imitates: NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh
# The 175B step schedule with each threshold where Megatron really changes the
# batch (a whole iteration of the stage before), and --train-samples at a whole
# iteration: nothing rounds, and the stages round-trip.
# options: --world-size 16
# expect: m=1 A=96 D=16 B=1536
# codes: none
# stages: 16:1171888 320:2344048 624:3515920 928:4687984 1232:5859616 1536
--micro-batch-size 1 --seq-length 2048 \
--step-batch-size-schedule "0:16 2400026624:320 4800610304:624 7200604160:928 9600991232:1232 12000493568:1536" \
--train-samples 99939616 --lr-warmup-samples 1171888 --lr-decay-style cosine
