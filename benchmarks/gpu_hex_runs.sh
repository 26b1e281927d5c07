#!/usr/bin/env bash
# Hex 5x5 and 7x7 trained side by side on one GPU (small networks: two processes keep it busier
# than one). OUT=DIR bash benchmarks/gpu_hex_runs.sh cuda MINUTES 1   (cpu MINUTES 0: a quick dry run)
# Each run stops at MINUTES (max_minutes) or 60 iterations; run directories go to $OUT/hex5g, $OUT/hex7g.
# A checkpoint and the training state are written every 5 iterations (eval.every; no evaluation games):
# the first GPU try set eval.every=1000 and, killed by its time limit before the end, kept nothing.
# Give the device call a limit above MINUTES plus about a minute of start-up and compilation.
DEV=$1; MIN=$2; Q=$3
if [ "$Q" = 1 ]; then G=1024; P=16384; MS=16384; BS=1024; else G=16; P=256; MS=256; BS=64; fi
COMMON="--device $DEV --quiet max_minutes=$MIN keep_checkpoints=4 selfplay.games=$G selfplay.positions_per_iteration=$P replay.min_size=$MS optim.batch_size=$BS optim.sample_reuse=4 optim.warmup_steps=20 eval.every=5 eval.games=0 eval.previous_games=0 eval.references=[] selfplay.compile=$([ $DEV = cuda ] && echo true || echo false)"
python3 train.py --config configs/hex5.yaml --run-dir $OUT/hex5g $COMMON iterations=60 replay.capacity=250000 \
  selfplay.full_sims=128 selfplay.cheap_sims=32 selfplay.full_fraction=0.5 selfplay.random_first_moves=1 > $OUT/hex5g.log 2>&1 &
python3 train.py --config configs/hex7.yaml --run-dir $OUT/hex7g $COMMON iterations=60 replay.capacity=250000 \
  selfplay.full_sims=64 selfplay.cheap_sims=16 selfplay.full_fraction=0.5 > $OUT/hex7g.log 2>&1 &
wait
cd $OUT && for r in hex5g hex7g; do tar cf $r.tar --exclude=state --exclude=tb $r; done
