# imitates: NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh
# The 175B step schedule with the run, warmup and decay in iterations (and
# without --global-batch-size, which Megatron refuses next to it). The
# learning-rate scheduler counts samples: each of its iterations is micro × DP
# = 16 samples, so the warmup of 100,000 is 1,600,000 samples, reached after
# 74,581 iterations through the stages.
# options: --world-size 16
# expect: m=1 A=96 D=16 B=1536
# codes: rounds, schedule-shift, schedule-shift
# stages: 16:1171888 320:2344048 624:3515920 928:4687984 1232:5859616 1536
--micro-batch-size 1 --seq-length 2048 \
--step-batch-size-schedule "0:16 2.4B:320 4.8B:624 7.2B:928 9.6B:1232 12B:1536" \
--train-iters 500000 --lr-warmup-iters 100000 --lr-decay-iters 430000 \
--lr-decay-style cosine --log-interval 100
