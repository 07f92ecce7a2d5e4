X=${A:-${B:-$((1+2*(3-4)))}}
if [ "$X" == 1 ]; then Y=(a "b c" $X); elif [ -z "$Z" ]; then Y+=(d); else :; fi
cat <<-EOF
--micro-batch-size 9
EOF
torchrun --nproc_per_node=$X pretrain_gpt.py ${Y[@]} "${Y[0]}" --micro-batch-size $((X*2)) --global-batch-size ${G:=16}
