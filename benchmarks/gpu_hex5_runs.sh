#!/usr/bin/env bash
# Hex 5x5 trained three ways at once on one GPU, for the opening analysis (issue 22: the CPU's
# self-play at 32-128 simulations labels some opening lines wrongly, e.g. a2 c3, which the second
# player wins). Three processes keep a GPU busy that one small network's launches leave idle:
#   fresh128  a new network, self-play at 128 simulations (32 for the unrecorded moves)
#   fresh256  a new network, self-play at 256 (64)
#   warm256   checkpoints/hex5-l4h64.pt warm-started (--init), self-play at 256 (64), lower rate
# Every run plays 4,096 games at once (a GPU step costs about the same for 1,024 or 4,096 small
# boards), records 16,384 positions an iteration, keeps a constant learning rate and writes a
# checkpoint every 3 iterations (6 kept), to average at the end; each stops at MINUTES.
#
#   OUT=DIR bash benchmarks/gpu_hex5_runs.sh cuda MINUTES       # on the GPU
#   OUT=DIR bash benchmarks/gpu_hex5_runs.sh cpu 1              # a dry run of the same commands, shrunk
#   CONFIG=configs/hex4.yaml INIT=checkpoints/hex4-l3h32.pt OUT=DIR bash benchmarks/gpu_hex5_runs.sh cuda 3
#                                    # another board: its config, and the checkpoint warm256 starts from
#
# Leaves $OUT/<run>.tar (checkpoints and metrics, no state), $OUT/<run>.log and $OUT/gpu.txt.
set -u
DEV=$1; MIN=$2
OUT=${OUT:-runs/gpu-hex5}
CONFIG=${CONFIG:-configs/hex5.yaml}
INIT=${INIT:-checkpoints/hex5-l4h64.pt}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [ "$DEV" = cuda ]; then
    G=4096; P=16384; MS=32768; BS=1024; COMPILE=true
else
    G=16; P=128; MS=128; BS=32; COMPILE=false
fi
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null
  python3 -c "import torch; print('torch', torch.__version__)"; date -u; } >"$OUT/gpu.txt" 2>&1
OPTS="--config $CONFIG --device $DEV --quiet"
COMMON="iterations=1000 max_minutes=$MIN keep_checkpoints=6
 selfplay.games=$G selfplay.positions_per_iteration=$P replay.min_size=$MS replay.capacity=400000
 optim.batch_size=$BS optim.sample_reuse=4 optim.schedule=constant optim.warmup_steps=20
 eval.every=3 eval.games=0 eval.previous_games=0 eval.references=[] selfplay.compile=$COMPILE
 selfplay.full_fraction=0.5 selfplay.random_first_moves=1 selfplay.temperature_moves=3"
# shellcheck disable=SC2086
python3 train.py $OPTS --run-dir "$OUT/fresh128" $COMMON optim.lr=0.001 \
    selfplay.full_sims=128 selfplay.cheap_sims=32 >"$OUT/fresh128.log" 2>&1 &
# shellcheck disable=SC2086
python3 train.py $OPTS --run-dir "$OUT/fresh256" $COMMON optim.lr=0.001 \
    selfplay.full_sims=256 selfplay.cheap_sims=64 >"$OUT/fresh256.log" 2>&1 &
# shellcheck disable=SC2086
python3 train.py $OPTS --run-dir "$OUT/warm256" --init "$INIT" $COMMON optim.lr=0.0003 \
    selfplay.full_sims=256 selfplay.cheap_sims=64 >"$OUT/warm256.log" 2>&1 &
wait
nvidia-smi --query-gpu=memory.used --format=csv >>"$OUT/gpu.txt" 2>/dev/null
for run in fresh128 fresh256 warm256; do
    tar cf "$OUT/$run.tar" -C "$OUT" --exclude=state --exclude=tb "$run" && rm -rf "${OUT:?}/$run"
done
ls -la "$OUT"
