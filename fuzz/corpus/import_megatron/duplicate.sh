# a later --micro-batch-size overrides the first one (argparse keeps the last)
--micro-batch-size 8 --global-batch-size 256 \
--micro-batch-size 4
